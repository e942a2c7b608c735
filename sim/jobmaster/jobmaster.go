package jobmaster

import (
	"strconv"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/heartbeat"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/restart"
	"github.com/flinksim/flinksim/sim/source"
	"github.com/flinksim/flinksim/sim/status"
	"github.com/flinksim/flinksim/sim/vt"
)

// NoResourceAvailableMessage is the text of the exception the JobMaster's
// slot pool fails a job with when its slot request bulk times out
// (org.apache.flink.runtime.jobmaster.slotpool.PhysicalSlotRequestBulkCheckerImpl).
const NoResourceAvailableMessage = "org.apache.flink.runtime.jobmanager.scheduler.NoResourceAvailableException: " +
	"Slot request bulk is not fulfillable! Could not allocate the required slot within slot request timeout"

type vertexIndex struct {
	vertex string
	index  int
}

// JobMaster is the JobMaster of the one job (DefaultScheduler with one
// slot-sharing group and one pipelined region) together with the Kafka
// source's SplitEnumerator, which Flink runs in the JobManager's
// SourceCoordinator (KafkaSourceEnumerator). Its pieces, as Flink's: the
// slot pool (slots), the executions of the current attempt with where
// they run (executions: the ExecutionGraph's Executions and the
// DefaultExecutionDeploymentTracker), the heartbeat monitors of the
// TaskManagers (HeartbeatManager, failover.go), the SourceCoordinator
// (sourceCoordinator) and the link to the CheckpointCoordinator actor
// (checkpointGateway, checkpoint.go).
type JobMaster struct {
	cfg     *config.Config
	graph   jobgraph.JobGraph
	bounded bool
	status  status.Job
	slots   []Slot // the slot pool (DeclarativeSlotPool): every slot offered while the job lives
	exec    executions
	deploy  bool

	// the split enumerator and the watermark alignment
	source sourceCoordinator

	// failover (see failover.go)
	attempt  int                           // execution attempt of the current deployment
	restarts int                           // restarts so far
	strategy restart.Strategy              // restart strategy
	monitors map[string]*heartbeat.Monitor // heartbeat monitor per task manager with slots
	lost     map[string]bool               // task managers whose heartbeat timed out

	// checkpoints (see checkpoint.go)
	base           *config.Config         // the cluster's configuration (cfg becomes the job's after a set action)
	ckpt           checkpointGateway      // the CheckpointCoordinator actor
	restoreFrom    *messages.RestoreState // what the next deployment restores (nil: nothing)
	pendingRescale bool                   // waiting for the savepoint a new job starts from
	rescaleTo      int                    // parallelism of the job to start after the stop-with-savepoint (0: none)
	reconfig       *messages.Setting      // the setting of the job to start after the stop-with-savepoint (nil: none)
	overrides      []*messages.Setting    // the job's configuration changed by set actions, shipped with every deployment
	rescaleMaxP    int                    // its configured max parallelism (0: not configured)
	jobs           int                    // jobs submitted from a savepoint so far (each gets a new jobgraph.JobID)
	ended          bool                   // the run was told to end
}

// jobID is the current job's jobgraph.JobID: job-1, then job-2 ... for each job
// started from a savepoint (a resubmitted job is a new job in Flink).
func (j *JobMaster) jobID() string {
	if j.jobs == 0 {
		return jobgraph.JobID
	}
	return "job-" + strconv.Itoa(j.jobs+1)
}

// New returns the JobManager for graph. bounded makes the source
// stop at the end offsets it finds at start (KafkaSource.setBounded(latest)).
func New(cfg *config.Config, graph jobgraph.JobGraph, bounded bool) *JobMaster {
	return &JobMaster{cfg: cfg, base: cfg, source: sourceCoordinator{enum: source.NewEnumerator(cfg.SourceTopic, cfg.SourcePartitions, bounded), bounded: bounded},
		graph: graph, bounded: bounded, exec: newExecutions(), monitors: map[string]*heartbeat.Monitor{}, lost: map[string]bool{}}
}

const (
	reqStartOffsets = 1
	reqStopOffsets  = 2
	reqOutputView   = 3 // the sink topic's end offset where a rescaled job's output view starts
)

// Step implements kernel.Component. When the job is in a terminal status at
// the end of a delivery (a rescale's FINISHED is followed by the new job's
// RUNNING in the same delivery), the run ends.
func (j *JobMaster) Step(o *kernel.Out, env *messages.Envelope) {
	j.receive(o, env)
	if j.status.Terminal() && !j.ended && !j.pendingRescale {
		j.ended = true
		o.EndRun()
	}
}

func (j *JobMaster) receive(o *kernel.Out, env *messages.Envelope) {
	switch b := env.Body.(type) {
	case *messages.Envelope_Start:
		j.start(o)
	case *messages.Envelope_OfferSlots:
		j.offerSlots(o, env.From, b.OfferSlots)
	case *messages.Envelope_Timer:
		switch b.Timer.Kind {
		case timerAlignment:
			if j.status == status.JobRunning {
				j.source.announceAlignment(o, j.cfg, j.graph, j.attempt)
			}
			return
		case timerHeartbeat:
			j.heartbeat(o, true)
			return
		case heartbeat.TimerCheck:
			j.heartbeat(o, false)
			return
		case timerRestart:
			j.restart(o)
			return
		case timerSubmitTask:
			j.submitTimedOut(o, b.Timer.Arg)
			return
		}
		if b.Timer.Kind == timerSlotRequestTimeout && b.Timer.Arg == int64(j.attempt) && !j.deploy && j.status == status.JobRunning {
			o.Log(eventlog.NoResourceAvailable{SlotsNeeded: int64(j.graph.SlotsNeeded), SlotsOffered: int64(len(j.slots)), SlotRequestTimeout: config.FormatDuration(j.cfg.SlotRequestTimeout), Exception: NoResourceAvailableMessage})
			// a task failure like any other: the restart strategy decides
			// (DefaultScheduler.handleTaskFailure); without restarts the
			// job fails
			j.failover(o, NoResourceAvailableMessage)
		}
	case *messages.Envelope_ReportedWatermarkEvent:
		// only the current execution's readers count: a reader of a job
		// that ended (a rescale's stop-with-savepoint) may report once more
		if _, current := j.exec.location[env.From]; current {
			j.source.reportWatermark(b.ReportedWatermarkEvent)
		}
	case *messages.Envelope_TaskExecutionState:
		j.taskState(o, b.TaskExecutionState)
	case *messages.Envelope_ListOffsetsResult:
		m := b.ListOffsetsResult
		if m.RequestId == reqOutputView {
			// a job started from a savepoint writes to a fresh view of the
			// output: what a consumer starting at the sink's end now reads
			for _, po := range m.Offsets {
				o.Log(eventlog.OutputView{Topic: m.Topic, FromOffset: po.Offset})
			}
			return
		}
		j.source.offsets(m)
		j.source.assignSplits(o, j.cfg, j.graph, j.attempt)
	case *messages.Envelope_ReaderRegistration:
		// SchedulerBase.deliverOperatorEventToCoordinator discards an
		// operator event of an execution that is not registered and
		// running: a zombie reader registering as it wakes must not have
		// the current reader of its index assigned its splits again
		if _, current := j.exec.location[env.From]; !current && jobgraph.FenceStaleAttempts {
			return
		}
		j.source.enum.Register(b.ReaderRegistration.SubtaskIndex)
		j.source.assignSplits(o, j.cfg, j.graph, j.attempt)
	case *messages.Envelope_HeartbeatResponse:
		if m := j.monitors[b.HeartbeatResponse.TaskManagerId]; m != nil {
			m.ReportHeartbeat(vt.Millis(o.Now()))
		}
	case *messages.Envelope_Action:
		j.action(o, b.Action)
	case *messages.Envelope_RestoreState:
		j.restored(o, b.RestoreState)
	case *messages.Envelope_CheckpointRequestFailed:
		j.checkpointRequestFailed(o, b.CheckpointRequestFailed)
	case *messages.Envelope_FailJob:
		j.failover(o, b.FailJob.Cause)
	case *messages.Envelope_EndOfRun:
		o.Log(eventlog.FinalCounters{List: []eventlog.Value{eventlog.S("job_status", j.status.String()), eventlog.I("restarts", int64(j.restarts))}})
	}
}

func (j *JobMaster) setStatus(o *kernel.Out, to status.Job, cause string) {
	if j.status == to {
		return
	}
	ev := eventlog.JobStatus{JobID: j.jobID(), Status: to.String(), Cause: cause}
	if j.status != 0 {
		ev.Previous = j.status.String()
	}
	j.status = to
	o.Log(ev)
	j.ckpt.sendStatus(o, j.status)
}

func (j *JobMaster) start(o *kernel.Out) {
	g := j.graph
	var vs []string
	for _, v := range g.Vertices {
		vs = append(vs, `{"id":`+eventlog.JSONString(v.ID)+`,"name":`+eventlog.JSONString(v.Name)+`,"parallelism":`+
			strconv.Itoa(v.Parallelism)+`,"operators":`+eventlog.JSONStrings(v.Operators)+`}`)
	}
	var es []string
	for _, e := range g.Edges {
		es = append(es, `{"from":`+eventlog.JSONString(e.From)+`,"to":`+eventlog.JSONString(e.To)+`,"partitioner":`+eventlog.JSONString(e.Partitioner)+`}`)
	}
	if j.cfg.CheckpointInterval > 0 {
		j.ensureCoordinator(o) // periodic checkpointing is configured
	}
	o.Log(eventlog.JobGraph{JobName: g.JobName, Vertices: "[" + eventlog.JoinRaw(vs) + "]", Edges: "[" + eventlog.JoinRaw(es) + "]", MaxParallelism: int64(g.MaxParallelism), SlotsNeeded: int64(g.SlotsNeeded), Bounded: j.bounded})
	j.setStatus(o, status.JobCreated, "")
	// DefaultScheduler.startScheduling: the job is RUNNING while its
	// executions wait in SCHEDULED for slots.
	j.setStatus(o, status.JobRunning, "")
	for _, v := range g.Vertices {
		for i := 0; i < v.Parallelism; i++ {
			o.Log(eventlog.TaskState{Task: jobgraph.SubtaskName(v.ID, i, 0), State: "SCHEDULED", Note: "waiting for a slot"})
		}
	}
	o.Send(jobgraph.ResourceManagerName, vt.FromDuration(j.cfg.RPCLatency()), &messages.Envelope_DeclareResourceRequirements{
		DeclareResourceRequirements: &messages.DeclareResourceRequirements{JobId: j.jobID(), NumSlots: int32(g.SlotsNeeded)}})
	o.Timer(vt.FromDuration(j.cfg.SlotRequestTimeout), timerSlotRequestTimeout, 0)
	j.startFailover(o)
	if j.cfg.AlignmentGroup != "" && j.cfg.TimeCharacteristic != config.ProcessingTime && j.source.startAlignment(o, j.cfg) {
		o.Timer(vt.FromDuration(j.cfg.AlignmentUpdateInterval), timerAlignment, 0)
	}
	// the source coordinator resolves the starting (and, bounded, stopping)
	// offsets of every partition (KafkaSourceEnumerator with its
	// OffsetsInitializers)
	o.Send(jobgraph.KafkaName, vt.FromDuration(j.cfg.KafkaLatency()), &messages.Envelope_ListOffsets{ListOffsets: &messages.ListOffsets{
		Topic: j.cfg.SourceTopic, Spec: string(j.cfg.StartingOffsets), RequestId: reqStartOffsets}})
	if j.bounded {
		// KafkaSource.setBounded(OffsetsInitializer.latest()); when the
		// events are paced by event time the file's final offsets are
		// given explicitly instead (OffsetsInitializer.offsets(...)), so
		// the job reads the whole file as it arrives
		spec := "latest"
		if j.cfg.EventsPace != config.PaceBackfill {
			spec = "final"
		}
		o.Send(jobgraph.KafkaName, vt.FromDuration(j.cfg.KafkaLatency()), &messages.Envelope_ListOffsets{ListOffsets: &messages.ListOffsets{
			Topic: j.cfg.SourceTopic, Spec: spec, RequestId: reqStopOffsets}})
	}
}

func (j *JobMaster) offerSlots(o *kernel.Out, from string, m *messages.OfferSlots) {
	var accepted []string
	for _, off := range m.Offers {
		if j.status.Terminal() {
			continue
		}
		// the slot pool keeps every slot offered while the job lives, also
		// spare ones (a slot offered to a deployed or restarting job is used
		// by the next deployment)
		j.slots = append(j.slots, Slot{TaskManager: m.TaskManagerId, Index: off.SlotIndex, AllocationID: off.AllocationId})
		accepted = append(accepted, off.AllocationId)
		if j.monitors[m.TaskManagerId] == nil {
			// JobMaster.registerTaskManager starts monitoring its heartbeat
			// (again, for one whose heartbeat timed out behind a network cut)
			j.monitors[m.TaskManagerId] = heartbeat.NewMonitor(j.cfg.HeartbeatTimeout.Milliseconds(), vt.Millis(o.Now()))
			delete(j.lost, m.TaskManagerId)
		}
	}
	o.Send(from, vt.FromDuration(j.cfg.RPCLatency()), &messages.Envelope_SlotOfferResponse{SlotOfferResponse: &messages.SlotOfferResponse{Accepted: accepted}})
	if !j.deploy && len(j.slots) >= j.graph.SlotsNeeded && j.status == status.JobRunning {
		j.deployAll(o)
	}
}

// deployAll puts subtask i of every vertex into the i-th slot (slot
// sharing), slots ordered by task manager and slot index.
func (j *JobMaster) deployAll(o *kernel.Out) {
	j.deploy = true
	SortSlots(j.slots)
	deps, err := Deploy(j.graph, j.slots, j.attempt)
	if err != nil {
		o.Invariant("deployment", "%v", err)
		return
	}
	clear(j.exec.location)
	j.exec.order = j.exec.order[:0]
	j.exec.canceled = nil
	for _, d := range deps {
		j.exec.location[d.Task.ExecutionId] = d.Slot.TaskManager
	}
	for _, d := range deps {
		st, v, i := d.Task, d.Task.JobVertex, int(d.Task.SubtaskIndex)
		st.Checkpointing = j.cfg.CheckpointInterval > 0
		st.JobConfiguration = j.overrides
		if r := j.restoreFrom; r != nil {
			st.Restore = restoreOf(r, v, i)
			if st.Restore == nil {
				st.Restore = &messages.TaskStateSnapshot{}
			}
			st.RestoreCheckpointId = r.CheckpointId
			st.RestoreParallelism = r.RestoredParallelism[v]
			if v == j.graph.SinkVertex() {
				// the sink's lingering transactions are those of the
				// subtasks of whichever vertex held it then
				st.RestoreParallelism = r.SinkParallelism
			}
		}
		name := st.ExecutionId
		j.exec.tasks[name] = status.Scheduled
		j.exec.order = append(j.exec.order, name)
		j.exec.vertexOf[name] = vertexIndex{v, i}
		o.Log(eventlog.SubmitTask{Task: name, TaskName: st.TaskName, Attempt: int64(j.attempt), TaskManager: d.Slot.TaskManager, Slot: int64(d.Slot.Index), AllocationID: d.Slot.AllocationID})
		o.Send(d.Slot.TaskManager, vt.FromDuration(j.cfg.RPCLatency()), &messages.Envelope_SubmitTask{SubmitTask: st})
	}
	// every submitTask of this deployment waits pekko.ask.timeout for its
	// acknowledgement: one timer for the lot, as they are sent together
	o.Timer(vt.FromDuration(j.cfg.AskTimeout), timerSubmitTask, int64(j.attempt))
	j.ckpt.sendExecutions(o, &j.exec)
}

// submitTimedOut fails the first task of attempt that never reported back
// since its deployment (Execution.deploy: the submitTask future failed with
// a TimeoutException, and markFailed fails the task over). A task that
// reported any state was acknowledged: the TaskExecutor answers submitTask
// before the task runs.
func (j *JobMaster) submitTimedOut(o *kernel.Out, attempt int64) {
	if attempt != int64(j.attempt) || !j.deploy || j.status != status.JobRunning {
		return
	}
	for _, name := range j.exec.order {
		if j.exec.tasks[name] != status.Scheduled {
			continue
		}
		tm := j.exec.location[name]
		reason := "java.lang.Exception: Cannot deploy task " + name + " - TaskManager (" + tm + ") not responding after a rpcTimeout of " +
			strconv.FormatInt(j.cfg.AskTimeout.Milliseconds(), 10) + " ms\nCaused by: java.util.concurrent.TimeoutException: Invocation of [RemoteRpcInvocation(TaskExecutorGateway.submitTask(TaskDeploymentDescriptor, JobMasterId, Duration))] at recipient [" + tm + "] timed out."
		j.exec.tasks[name] = status.Failed
		o.Log(eventlog.TaskState{Task: name, State: status.Failed.String(), Reason: reason})
		j.failover(o, reason)
		return
	}
}

func (j *JobMaster) taskState(o *kernel.Out, m *messages.TaskExecutionState) {
	if _, current := j.exec.location[m.ExecutionId]; !current && jobgraph.FenceStaleAttempts {
		return // a report of an earlier attempt (a zombie's): fenced
	}
	st, ok := status.ExecutionOf(m.State)
	if !ok {
		o.Invariant("execution_state", "%s reported state %v", m.ExecutionId, m.State)
		return
	}
	j.exec.tasks[m.ExecutionId] = st
	j.ckpt.sendExecutions(o, &j.exec)
	o.Log(eventlog.TaskState{Task: m.ExecutionId, State: st.String(), Reason: m.Reason})
	switch st {
	case status.Failed:
		j.failover(o, m.Reason)
	case status.Finished:
		for _, name := range j.exec.order {
			if j.exec.tasks[name] != status.Finished {
				return
			}
		}
		j.setStatus(o, status.JobFinished, "")
		if j.rescaleTo > 0 || j.reconfig != nil {
			j.startRescaled(o)
		}
	}
}
