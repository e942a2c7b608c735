package jobmaster

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/spawn"
	"github.com/flinksim/flinksim/sim/status"
	"github.com/flinksim/flinksim/sim/vt"
)

// The JobMaster's side of checkpoints: it starts the CheckpointCoordinator
// actor (sim/checkpoint.Service) for each job, keeps it informed of the
// executions and the job status, forwards checkpoint requests, and asks it
// for the state to restore. The coordinator is spawned when the job first
// needs it: at submission when periodic checkpointing is configured,
// otherwise with the first checkpoint request (a run that never checkpoints
// has no coordinator to message).

// checkpointGateway is the JobMaster's link to the CheckpointCoordinator
// actor: the job's status it hears of (CheckpointCoordinatorDeActivator, a
// JobStatusListener), the executions and their states it plans checkpoints
// with (the ExecutionGraph it reads in Flink), and the requests for the
// state a deployment restores (SchedulerBase.restoreState).
type checkpointGateway struct {
	started    bool  // the CheckpointCoordinator actor is there
	restoreReq int64 // the last RestoreRequest's id
}

// sendStatus tells the coordinator the job's status st.
func (c *checkpointGateway) sendStatus(o *kernel.Out, st status.Job) {
	if c.started {
		o.Send(jobgraph.CheckpointCoordinatorName, 0, &messages.Envelope_JobStatusChanged{JobStatusChanged: &messages.JobStatusChanged{Status: st.Proto()}})
	}
}

// sendExecutions tells the coordinator the current attempt's executions and
// their states.
func (c *checkpointGateway) sendExecutions(o *kernel.Out, ex *executions) {
	if c.started {
		o.Send(jobgraph.CheckpointCoordinatorName, 0, &messages.Envelope_ExecutionStates{ExecutionStates: ex.states()})
	}
}

// requestRestore asks the coordinator for the state of the next
// deployment; the answer comes back as RestoreState (JobMaster.restored).
func (c *checkpointGateway) requestRestore(o *kernel.Out, m *messages.RestoreRequest) {
	c.restoreReq++
	m.RequestId = c.restoreReq
	o.Send(jobgraph.CheckpointCoordinatorName, 0, &messages.Envelope_RestoreRequest{RestoreRequest: m})
}

// ensureCoordinator spawns the coordinator if it is not there yet and
// hands it the current job.
func (j *JobMaster) ensureCoordinator(o *kernel.Out) {
	if j.ckpt.started {
		return
	}
	j.ckpt.started = true
	o.Spawn(jobgraph.CheckpointCoordinatorName, spawn.CoordinatorSpec{})
	j.startCoordinatorJob(o, 0)
	if j.status != 0 {
		j.ckpt.sendStatus(o, j.status)
	}
	j.ckpt.sendExecutions(o, &j.exec)
}

// startCoordinatorJob tells the coordinator about the submitted job, which
// restored checkpoint restoredID (0: none).
func (j *JobMaster) startCoordinatorJob(o *kernel.Out, restoredID int64) {
	if !j.ckpt.started {
		return
	}
	m := &messages.CheckpointCoordinatorStart{JobId: j.jobID(), MaxParallelism: int32(j.graph.MaxParallelism),
		JobConfiguration: j.overrides, RestoredCheckpointId: restoredID, Vertices: checkpointVertices(j.graph)}
	o.Send(jobgraph.CheckpointCoordinatorName, 0, &messages.Envelope_CheckpointCoordinatorStart{CheckpointCoordinatorStart: m})
}

// checkpointVertices is g as the coordinator plans and assigns state with
// it: each vertex with its parallelism, its upstream vertex and edge, and
// whether it holds the sink.
func checkpointVertices(g jobgraph.JobGraph) []*messages.CheckpointVertex {
	var out []*messages.CheckpointVertex
	for _, v := range g.Vertices {
		cv := &messages.CheckpointVertex{Id: v.ID, Parallelism: int32(v.Parallelism), Sink: v.HoldsSink()}
		if e, ok := g.Input(v.ID); ok {
			cv.Upstream, cv.Forward = e.From, e.Partitioner == jobgraph.PartitionForward
		}
		out = append(out, cv)
	}
	return out
}

// requestCheckpoint asks the coordinator for a checkpoint of kind.
func (j *JobMaster) requestCheckpoint(o *kernel.Out, k messages.CheckpointKind) {
	j.ensureCoordinator(o)
	o.Send(jobgraph.CheckpointCoordinatorName, 0, &messages.Envelope_TriggerCheckpointRequest{TriggerCheckpointRequest: &messages.TriggerCheckpointRequest{Kind: k}})
}

// restored takes the coordinator's answer to the last RestoreRequest.
func (j *JobMaster) restored(o *kernel.Out, m *messages.RestoreState) {
	if m.RequestId != j.ckpt.restoreReq {
		return // an answer for an attempt that is gone
	}
	if j.pendingRescale {
		j.pendingRescale = false
		j.submitFromSavepoint(o, m)
		return
	}
	if j.status != status.JobRunning {
		return
	}
	j.restoreFrom = nil
	if m.Found {
		j.useRestore(m)
		o.Log(eventlog.Restore{From: "checkpoint", CheckpointID: m.CheckpointId})
	} else {
		j.logFreshStart(o)
	}
	j.deployOrWait(o)
}

// useRestore makes m what the next deployment restores: keyed and channel
// state by subtask, the source offsets through the enumerator.
func (j *JobMaster) useRestore(m *messages.RestoreState) {
	j.restoreFrom = m
	j.source.enum.Restore(m.SourceOffsets)
}

// restoreOf is the state subtask index of vertex v restores from r (nil:
// none).
func restoreOf(r *messages.RestoreState, v string, index int) *messages.TaskStateSnapshot {
	for _, s := range r.GetSubtasks() {
		if s.Vertex == v && int(s.Index) == index {
			return s.State
		}
	}
	return nil
}

// logFreshStart: like Flink without a completed checkpoint, the new attempt
// starts from the starting offsets with empty state.
func (j *JobMaster) logFreshStart(o *kernel.Out) {
	o.Log(eventlog.Restore{From: "starting offsets", Reason: "no completed checkpoint"})
}

// checkpointRequestFailed is the coordinator telling that a
// stop-with-savepoint did not happen.
func (j *JobMaster) checkpointRequestFailed(o *kernel.Out, m *messages.CheckpointRequestFailed) {
	if m.Kind == messages.CheckpointKind_STOP_WITH_SAVEPOINT {
		j.restartFailed(o, m.Message)
	}
}

// startRescaled asks the coordinator for the savepoint the
// stop-with-savepoint took, checked and assigned for the new job;
// submitFromSavepoint goes on with the answer. The new job is the old one
// with parallelism.default set to the rescale's parallelism (so every
// operator that follows parallelism.default moves, and one with its own
// job.*.parallelism keeps it, as Flink's rescale of a job's parallelism
// does), or with the changed setting; its max parallelism is the rescale's,
// or the one configured, or (0) the savepoint's.
func (j *JobMaster) startRescaled(o *kernel.Out) {
	maxP := 0
	if j.rescaleMaxP > 0 {
		maxP = j.rescaleMaxP
	} else if j.cfg.MaxParallelism != -1 {
		maxP = j.cfg.MaxParallelism
	}
	req := &messages.RestoreRequest{Savepoint: true, MaxParallelism: int32(maxP)}
	cfg, err := j.nextJobConfig()
	if err == nil {
		cfg.MaxParallelism = -1 // the vertices' parallelism does not depend on it; the checks come with the answer
		var g jobgraph.JobGraph
		if g, err = jobgraph.Build(cfg); err == nil {
			req.Vertices = checkpointVertices(g)
		}
	}
	// a graph that does not build is refused once the answer is there
	j.pendingRescale = true
	j.ckpt.requestRestore(o, req)
}

// nextJobConfig is the configuration of the job a rescale or a
// reconfiguration submits: the current job's with the rescale's
// parallelism.default or the changed setting.
func (j *JobMaster) nextJobConfig() (config.Config, error) {
	c := *j.cfg
	if j.rescaleTo > 0 {
		c.Parallelism = j.rescaleTo
	}
	if set := j.reconfig; set != nil {
		if err := c.Set(set.Key, set.Value); err != nil { // validated by the action's parser
			return c, err
		}
	}
	return c, nil
}

// submitFromSavepoint submits the job anew from the savepoint its
// stop-with-savepoint took, with the rescale's parallelism or the changed
// setting: keyed state moves with its key groups, splits go to their new
// owners (getSplitOwner). The new job keeps the savepoint's max parallelism
// unless one is configured; a parallelism above it or a different
// configured one is refused with Flink's message (the coordinator's checks)
// and the new job fails.
func (j *JobMaster) submitFromSavepoint(o *kernel.Out, sp *messages.RestoreState) {
	n := j.rescaleTo
	if !sp.Found {
		j.rescaleTo = 0
		j.restartFailed(o, "no savepoint to start the new job from")
		return
	}
	next, err := j.nextJobConfig()
	j.rescaleTo = 0
	if set := j.reconfig; set != nil {
		j.reconfig = nil
		if err != nil {
			o.Invariant("reconfigure", "%s=%s: %v", set.Key, set.Value, err)
			return
		}
		j.overrides = append(j.overrides, set)
		o.Log(eventlog.Reconfigure{Step: eventlog.RescaleSubmit, Setting: set.Key, Value: set.Value, SavepointPath: sp.SavepointPath})
	}
	j.cfg = &next
	maxP := int(sp.MaxParallelism)
	if n > 0 {
		o.Log(eventlog.Rescale{Step: eventlog.RescaleSubmit, SavepointPath: sp.SavepointPath,
			FromParallelism: int64(sp.RestoredParallelism[jobgraph.VertexKeyed]), ToParallelism: int64(n), MaxParallelism: int64(maxP)})
	}
	j.jobs++
	j.status = 0 // a new job: no previous status
	j.setStatus(o, status.JobCreated, "")
	if sp.Error != "" {
		j.setStatus(o, status.JobFailed, sp.Error)
		return
	}
	cfg := *j.cfg
	if j.rescaleMaxP > 0 {
		cfg.MaxParallelism = j.rescaleMaxP
	}
	g, err := jobgraph.BuildRestored(cfg, maxP)
	if err != nil {
		j.setStatus(o, status.JobFailed, err.Error())
		return
	}
	j.graph = g
	j.attempt++
	clear(j.exec.location)
	clear(j.exec.tasks)
	j.exec.order = j.exec.order[:0]
	j.exec.canceled = nil
	j.deploy = false
	j.source.enum.Reset()
	if j.source.alignment != nil {
		// the new job's SourceCoordinator aligns its own readers: the old
		// job's reported watermarks (of readers it may no longer have) go
		j.source.startAlignment(o, j.cfg)
	}
	j.useRestore(sp)
	j.startCoordinatorJob(o, sp.CheckpointId)
	// the new job's output: a consumer reading from the sink topic's end now
	o.Send(jobgraph.KafkaName, vt.FromDuration(j.cfg.KafkaLatency()), &messages.Envelope_ListOffsets{ListOffsets: &messages.ListOffsets{
		Topic: j.cfg.SinkTopic, Spec: "latest", RequestId: reqOutputView}})
	j.setStatus(o, status.JobRunning, "")
	j.deployOrWait(o)
}

// deployOrWait deploys the job when the slot pool has enough slots, else
// declares what is missing to the ResourceManager and waits, bounded by
// slot.request.timeout.
func (j *JobMaster) deployOrWait(o *kernel.Out) {
	if len(j.slots) >= j.graph.SlotsNeeded {
		j.deployAll(o)
		return
	}
	need := j.graph.SlotsNeeded - len(j.slots)
	o.Send(jobgraph.ResourceManagerName, vt.FromDuration(j.cfg.RPCLatency()), &messages.Envelope_DeclareResourceRequirements{
		DeclareResourceRequirements: &messages.DeclareResourceRequirements{JobId: j.jobID(), NumSlots: int32(need)}})
	o.Timer(vt.FromDuration(j.cfg.SlotRequestTimeout), timerSlotRequestTimeout, int64(j.attempt))
}

// restartFailed ends a rescale or reconfiguration whose stop-with-savepoint
// failed: the job goes on as it was.
func (j *JobMaster) restartFailed(o *kernel.Out, cause string) {
	if j.rescaleTo > 0 {
		j.rescaleTo = 0
		o.Log(eventlog.Rescale{Result: "failed", Cause: cause})
	}
	if j.reconfig != nil {
		o.Log(eventlog.Reconfigure{Result: "failed", Setting: j.reconfig.Key, Cause: cause})
		j.reconfig = nil
	}
}
