package checkpoint

import (
	"slices"
	"strconv"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/status"
	"github.com/flinksim/flinksim/sim/vt"
)

// Service is Flink's CheckpointCoordinator as a component of its own (the
// checkpoint-coordinator actor, the design card's) (the design card's): it triggers checkpoints at the sources
// (TriggerCheckpoint), collects AcknowledgeCheckpoint / DeclineCheckpoint
// from the tasks, completes, expires and aborts checkpoints with the rules
// of sim/checkpoint (Coordinator, Plan, Assign), notifies the tasks
// (NotifyCheckpointComplete / NotifyCheckpointAborted), keeps the
// completed checkpoints and savepoints (CompletedCheckpointStore), hands
// the JobMaster the state to restore (RestoreRequest), and tells it when the
// CheckpointFailureManager fails the job (FailJob). The JobMaster tells it
// of submitted jobs, execution and job status changes
// (CheckpointCoordinatorDeActivator starts and stops the periodic trigger).
// In Flink it runs on the JobMaster's main thread: the messages between the
// two take no virtual time.
type Service struct {
	base     *config.Config // the cluster's configuration
	cfg      *config.Config // the job's: the cluster's with the job configuration over it
	jobID    string
	vertices []*messages.CheckpointVertex
	maxP     int
	execs    []Execution // the current attempt, in deployment order
	status   status.Job  // the job's status

	coord         *Coordinator
	pendingStates map[int64]map[string]*messages.TaskStateSnapshot // pending checkpoint -> task -> state
	taskStates    map[string]*messages.TaskStateSnapshot           // task -> state of its last acknowledged snapshot
	latest        *Saved                                           // latest completed checkpoint (or the savepoint a job started from)
	savepoint     *Saved                                           // latest completed savepoint
	timerSet      bool
	timerAt       int64 // ms

	completed, failed int64
	offsets           map[int64]string // completed checkpoint -> its source offsets (JSON), for the view

	// finalizing is the checkpoint whose _metadata file is being written
	// (nil: none); held is what reached the coordinator meanwhile, in order
	finalizing *finalizing
	held       []*messages.Envelope
}

// finalizing is a checkpoint every task acknowledged, with the states and
// the executions it was taken of, while the coordinator writes its metadata
// (PendingCheckpoint.finalizeCheckpoint runs under the coordinator's lock:
// nothing else happens at the coordinator until it is done).
type finalizing struct {
	cp     *CompletedCheckpoint
	states map[string]*messages.TaskStateSnapshot
	execs  []Execution
}

// NewService returns the coordinator component.
func NewService(cfg *config.Config) *Service {
	return &Service{base: cfg, cfg: cfg, offsets: map[int64]string{}}
}

// Step implements kernel.Component.
func (c *Service) Step(o *kernel.Out, env *messages.Envelope) {
	if t, ok := env.Body.(*messages.Envelope_Timer); ok && t.Timer.Kind == timerFinalized {
		c.finalized(o)
		return
	}
	if _, end := env.Body.(*messages.Envelope_EndOfRun); c.finalizing != nil && !end {
		c.held = append(c.held, env)
		return
	}
	c.step(o, env)
}

// finalized ends the metadata write of the finalizing checkpoint: it
// completes, then what waited meanwhile is handled in order.
func (c *Service) finalized(o *kernel.Out) {
	f := c.finalizing
	if f == nil {
		return
	}
	c.finalizing = nil
	c.complete(o, f)
	c.ready(o)
	c.scheduleDuty(o)
	for len(c.held) > 0 && c.finalizing == nil {
		env := c.held[0]
		c.held[0] = nil
		c.held = c.held[1:]
		c.step(o, env)
	}
	if len(c.held) == 0 {
		c.held = nil
	}
}

func (c *Service) step(o *kernel.Out, env *messages.Envelope) {
	switch b := env.Body.(type) {
	case *messages.Envelope_CheckpointCoordinatorStart:
		c.startJob(o, b.CheckpointCoordinatorStart)
	case *messages.Envelope_ExecutionStates:
		c.executions(b.ExecutionStates)
	case *messages.Envelope_JobStatusChanged:
		was := c.status
		st, ok := status.JobOf(b.JobStatusChanged.Status)
		if !ok {
			o.Invariant("job_status", "the JobMaster reported job status %v", b.JobStatusChanged.Status)
			return
		}
		c.status = st
		if was == status.JobRunning && c.status != status.JobRunning {
			c.jobLeftRunning(o)
		}
		if c.status == status.JobRunning && was != status.JobRunning {
			c.jobRunning(o)
		}
	case *messages.Envelope_TriggerCheckpointRequest:
		c.trigger(o, kindOf(b.TriggerCheckpointRequest.Kind))
	case *messages.Envelope_AcknowledgeCheckpoint:
		if c.fenced(o, env.From, b.AcknowledgeCheckpoint) {
			return
		}
		c.acknowledge(o, b.AcknowledgeCheckpoint)
	case *messages.Envelope_DeclineCheckpoint:
		c.decline(o, b.DeclineCheckpoint)
	case *messages.Envelope_RestoreRequest:
		o.Send(env.From, 0, &messages.Envelope_RestoreState{RestoreState: c.restore(b.RestoreRequest)})
	case *messages.Envelope_Timer:
		if b.Timer.Kind == timerCheckpointDuty && c.coord != nil {
			c.duty(o, b.Timer.Arg)
		}
	case *messages.Envelope_EndOfRun:
		o.Log(eventlog.FinalCounters{List: []eventlog.Value{eventlog.I("checkpoints_completed", c.completed), eventlog.I("checkpoints_failed", c.failed)}})
	}
}

// startJob creates the coordinator for a submitted job; every task
// acknowledges every checkpoint.
func (c *Service) startJob(o *kernel.Out, m *messages.CheckpointCoordinatorStart) {
	c.jobID, c.vertices, c.maxP = m.JobId, m.Vertices, int(m.MaxParallelism)
	c.cfg = c.base
	if len(m.JobConfiguration) > 0 {
		jc := *c.base
		for _, kv := range m.JobConfiguration {
			if err := jc.Set(kv.Key, kv.Value); err != nil {
				o.Invariant("job_configuration", "%s=%s: %v", kv.Key, kv.Value, err)
				return
			}
		}
		c.cfg = &jc
	}
	var tasks []string
	for _, v := range c.vertices {
		for i := 0; i < int(v.Parallelism); i++ {
			tasks = append(tasks, jobgraph.SubtaskName(v.Id, i, 0))
		}
	}
	k := c.cfg
	co, err := NewCoordinator(CoordinatorConfig{IntervalMs: k.CheckpointInterval.Milliseconds(),
		TimeoutMs: k.CheckpointTimeout.Milliseconds(), MinPauseMs: k.CheckpointMinPause.Milliseconds(),
		MaxConcurrent: k.MaxConcurrentCheckpoints, TolerableFailures: k.TolerableFailedCheckpoints,
		Unaligned: k.UnalignedCheckpoints, FinalizeMs: k.CheckpointFileTime.Milliseconds()}, tasks)
	if err != nil {
		o.Invariant("checkpoint_config", "%v", err)
		return
	}
	co.SetTasksRunning(false)
	if id := m.RestoredCheckpointId; id > 0 {
		co.RestoreIDCounter(id + 1)
		if c.savepoint != nil && c.savepoint.ID == id {
			c.latest = c.savepoint // the job started from it: the latest completed
		}
	}
	c.coord = co
	c.execs, c.status = nil, 0
	c.pendingStates = map[int64]map[string]*messages.TaskStateSnapshot{}
	c.taskStates = map[string]*messages.TaskStateSnapshot{}
	c.timerSet = false
}

// executions takes the current attempt's executions: checkpoints are
// triggered only while every task runs or finished after its final
// checkpoint, and not all finished; with
// execution.checkpointing.checkpoints-after-tasks-finish off only while every
// task runs (DefaultCheckpointPlanCalculator: NOT_ALL_REQUIRED_TASKS_RUNNING).
func (c *Service) executions(m *messages.ExecutionStates) {
	c.execs = c.execs[:0]
	running, finished := true, 0
	for _, m := range m.Executions {
		e := Execution{Name: m.Name, Vertex: m.Vertex, Index: int(m.Index), State: status.Execution(m.State)}
		c.execs = append(c.execs, e)
		running = running && (e.State == status.Running ||
			(e.State == status.Finished && c.cfg.CheckpointsAfterTasksFinish))
		if e.State == status.Finished {
			finished++
		}
	}
	if c.coord != nil {
		c.coord.SetTasksRunning(running && len(c.execs) == len(c.coord.Tasks()) && finished < len(c.execs))
	}
}

// jobRunning starts periodic checkpointing when the job (re)enters RUNNING
// (CheckpointCoordinatorDeActivator): the first trigger after a random delay
// in [min pause, interval] drawn from the coordinator's seeded generator.
func (c *Service) jobRunning(o *kernel.Out) {
	if c.coord == nil {
		return
	}
	lo, hi, ok := c.coord.Config().InitialDelayRange()
	if !ok {
		return
	}
	delay := lo + o.Rand().Int64N(hi-lo+1)
	if err := c.coord.StartScheduler(vt.Millis(o.Now()), delay); err != nil {
		o.Invariant("checkpoint_scheduler", "%v", err)
		return
	}
	c.ready(o)
	c.scheduleDuty(o)
}

// jobLeftRunning stops periodic checkpointing; pending checkpoints are
// aborted (CHECKPOINT_COORDINATOR_SUSPEND).
func (c *Service) jobLeftRunning(o *kernel.Out) {
	if c.coord == nil {
		return
	}
	c.coord.SetTasksRunning(false)
	for _, f := range c.coord.StopScheduler(vt.Millis(o.Now())) {
		c.checkpointFailed(o, f)
	}
}

// scheduleDuty sets a timer for the next periodic trigger or timeout,
// unless one is set for an earlier time.
func (c *Service) scheduleDuty(o *kernel.Out) {
	now := vt.Millis(o.Now())
	next, ok := c.coord.NextPeriodicTrigger(now)
	if t, tok := c.coord.NextTimeout(); tok && (!ok || t < next) {
		next, ok = t, true
	}
	if !ok || (c.timerSet && c.timerAt <= next) {
		return
	}
	c.timerSet, c.timerAt = true, next
	o.Timer(max(0, vt.FromMillis(next)-o.Now()), timerCheckpointDuty, next)
}

// duty runs the coordinator's timers: expire checkpoints past their
// timeout, then fire the periodic trigger when due.
func (c *Service) duty(o *kernel.Out, at int64) {
	if !c.timerSet || at != c.timerAt {
		return // superseded by an earlier timer
	}
	c.timerSet = false
	now := vt.Millis(o.Now())
	for _, f := range c.coord.CheckTimeouts(now) {
		c.checkpointFailed(o, f)
	}
	if t, ok := c.coord.NextPeriodicTrigger(now); ok && t <= now {
		c.trigger(o, KindPeriodic)
		return
	}
	c.ready(o)
	c.scheduleDuty(o)
}

// trigger asks the coordinator for a checkpoint or savepoint of kind. A
// stop-with-savepoint first stops the periodic scheduler, which aborts
// pending checkpoints (SchedulerBase.stopWithSavepoint).
func (c *Service) trigger(o *kernel.Out, kind Kind) {
	if c.coord == nil {
		return
	}
	if kind == KindStopWithSavepoint {
		for _, f := range c.coord.StopScheduler(vt.Millis(o.Now())) {
			c.checkpointFailed(o, f)
		}
	}
	c.triggered(o, c.coord.Trigger(vt.Millis(o.Now()), kind))
	c.ready(o)
	c.scheduleDuty(o)
}

func protoKind(k Kind) messages.CheckpointKind {
	switch k {
	case KindSavepoint:
		return messages.CheckpointKind_SAVEPOINT
	case KindStopWithSavepoint:
		return messages.CheckpointKind_STOP_WITH_SAVEPOINT
	}
	return messages.CheckpointKind_CHECKPOINT
}

// kindOf is the kind of a requested checkpoint (a CHECKPOINT request is a
// manual one).
func kindOf(k messages.CheckpointKind) Kind {
	switch k {
	case messages.CheckpointKind_SAVEPOINT:
		return KindSavepoint
	case messages.CheckpointKind_STOP_WITH_SAVEPOINT:
		return KindStopWithSavepoint
	}
	return KindManual
}

// triggered acts on a trigger decision: a started checkpoint's barriers are
// injected at the tasks its plan triggers; a declined request is logged with
// Flink's reason.
func (c *Service) triggered(o *kernel.Out, res TriggerResult) {
	switch {
	case res.Declined:
		o.Log(eventlog.CheckpointDeclined{CheckpointKind: res.Kind.String(), Reason: res.FailureReason.String(), Message: res.Reason})
		if res.Kind == KindStopWithSavepoint {
			c.requestFailed(o, res.Kind, res.Reason)
			if c.status == status.JobRunning {
				// the savepoint never started, and trigger stopped the
				// periodic scheduler for it: it starts again
				// (StopWithSavepointTerminationHandlerImpl's handling of a
				// savepoint creation failure)
				c.jobRunning(o)
			}
		}
	case res.Queued:
	default:
		if !slices.Contains(c.coord.Pending(), res.CheckpointID) {
			return // started and aborted in the same call (a failover): nothing to inject
		}
		unaligned := c.cfg.UnalignedCheckpoints && c.cfg.AlignedCheckpointTimeout == 0 && !res.Savepoint
		c.pendingStates[res.CheckpointID] = map[string]*messages.TaskStateSnapshot{}
		o.Log(eventlog.CheckpointTriggered{CheckpointID: res.CheckpointID, CheckpointKind: res.Kind.String(), TimestampMs: res.AtMs, Unaligned: unaligned})
		trigger, finished := Plan(c.vertices, c.execs)
		for _, e := range trigger {
			o.Send(e.Name, vt.FromDuration(c.cfg.RPCLatency()), &messages.Envelope_TriggerCheckpoint{TriggerCheckpoint: &messages.TriggerCheckpoint{
				CheckpointId: res.CheckpointID, TimestampMs: res.AtMs, Kind: protoKind(res.Kind), Unaligned: unaligned}})
		}
		for _, e := range finished {
			// a finished task's state is what its last snapshot left,
			// without channel state: everything in flight then has been
			// delivered
			base := jobgraph.BaseSubtaskName(e.Name)
			st := &messages.TaskStateSnapshot{}
			if last := c.taskStates[base]; last != nil {
				st = &messages.TaskStateSnapshot{Splits: last.Splits, Windows: last.Windows, Values: last.Values,
					Committables: last.Committables}
			}
			c.acknowledge(o, &messages.AcknowledgeCheckpoint{CheckpointId: res.CheckpointID, Task: base, State: st})
		}
	}
}

// ready handles what the coordinator decided as a side effect.
func (c *Service) ready(o *kernel.Out) {
	r := c.coord.TakeReady()
	for _, t := range r.Triggered {
		c.triggered(o, t)
	}
	for _, f := range r.Failed {
		c.checkpointFailed(o, f)
	}
}

// acknowledge is AcknowledgeCheckpoint from a task. An acknowledgement that
// does not count is logged with the sentence Flink logs for it.
func (c *Service) acknowledge(o *kernel.Out, m *messages.AcknowledgeCheckpoint) {
	if c.coord == nil {
		return
	}
	ack := TaskAck{StateSizeBytes: m.StateSizeBytes, IncrementalSizeBytes: m.IncrementalSizeBytes,
		PersistedInFlightRecords: m.PersistedRecords, PersistedInFlightBytes: m.PersistedBytes,
		AlignmentDurationMs: m.AlignmentMs, SyncDurationMs: m.SyncMs, AsyncDurationMs: m.AsyncMs}
	for _, sp := range m.GetState().GetSplits() {
		ack.SourceOffsets = append(ack.SourceOffsets, SourceOffset{Split: c.cfg.SourceTopic + "-" + strconv.Itoa(int(sp.Partition)), Offset: sp.Offset})
	}
	cp, err := c.coord.Acknowledge(m.CheckpointId, m.Task, ack, vt.Millis(o.Now()))
	if err != nil {
		o.Log(eventlog.CheckpointAckIgnored{CheckpointID: m.CheckpointId, Task: m.Task, Message: err.Error()})
	} else {
		if states := c.pendingStates[m.CheckpointId]; states != nil {
			states[m.Task] = m.State
		}
		c.taskStates[m.Task] = m.State
	}
	if cp != nil {
		// every task acknowledged: the coordinator writes the checkpoint's
		// _metadata file (one file of the checkpoint storage), then it is
		// complete
		f := &finalizing{cp: cp, states: c.pendingStates[cp.ID], execs: slices.Clone(c.execs)}
		delete(c.pendingStates, cp.ID)
		if d := vt.FromMillis(cp.CompletionMs) - o.Now(); d > 0 {
			c.finalizing = f
			o.Timer(d, timerFinalized, cp.ID)
			return
		}
		c.complete(o, f)
	}
	c.ready(o)
	c.scheduleDuty(o)
}

// fenced reports whether an acknowledgement of a pending checkpoint comes
// from an execution attempt that is not the current one (a zombie's, from a
// TaskManager that stalled or was cut off while the job restarted), and
// logs that it is ignored: PendingCheckpoint.acknowledgeTask knows the
// attempts it waits for by ExecutionAttemptID and answers UNKNOWN for any
// other, which CheckpointCoordinator.receiveAcknowledgeMessage logs and
// discards. An acknowledgement of a checkpoint that is not pending goes on
// to the coordinator, which tells why it does not count.
func (c *Service) fenced(o *kernel.Out, from string, m *messages.AcknowledgeCheckpoint) bool {
	if c.coord == nil || !jobgraph.FenceStaleAttempts || !slices.Contains(c.coord.Pending(), m.CheckpointId) {
		return false
	}
	for _, e := range c.execs {
		if e.Name == from {
			return false
		}
	}
	o.Log(eventlog.CheckpointAckIgnored{CheckpointID: m.CheckpointId, Task: m.Task,
		Message: "Could not acknowledge the checkpoint " + strconv.FormatInt(m.CheckpointId, 10) + " for task " + m.Task +
			", because the task's execution attempt id (" + from + ") was unknown. Discarding the state handle to avoid lingering state."})
	return true
}

// decline is DeclineCheckpoint from a task.
func (c *Service) decline(o *kernel.Out, m *messages.DeclineCheckpoint) {
	if c.coord == nil {
		return
	}
	r, ok := ParseFailureReason(m.Reason)
	if !ok {
		r = ReasonCheckpointDeclined
	}
	if f := c.coord.Decline(m.CheckpointId, m.Task, r, vt.Millis(o.Now())); f != nil {
		c.checkpointFailed(o, *f)
	}
	c.ready(o)
	c.scheduleDuty(o)
}

// complete logs a completed checkpoint, keeps its state for restores and
// notifies the tasks (notifyCheckpointComplete).
func (c *Service) complete(o *kernel.Out, f *finalizing) {
	cp := f.cp
	saved := &Saved{ID: cp.ID, Kind: cp.Kind, MaxParallelism: c.maxP, Parallelism: map[string]int{},
		Tasks: f.states}
	for _, v := range c.vertices {
		saved.Parallelism[v.Id] = int(v.Parallelism)
		if v.Sink {
			saved.SinkVertex = v.Id
		}
	}
	var offs []string
	for _, t := range cp.Tasks {
		for _, so := range t.Ack.SourceOffsets {
			offs = append(offs, `{"split":`+eventlog.JSONString(so.Split)+`,"offset":`+eventlog.Itoa(so.Offset)+`}`)
		}
	}
	slices.Sort(offs)
	// each task's part, as the web UI's checkpoint details list its
	// subtasks (SubtaskCheckpointStatistics: alignment, sync and async
	// durations, persisted data)
	tasks := make([]string, 0, len(cp.Tasks))
	for _, t := range cp.Tasks {
		tasks = append(tasks, `{"task":`+eventlog.JSONString(t.Task)+`,"alignment_ms":`+eventlog.Itoa(t.Ack.AlignmentDurationMs)+
			`,"sync_ms":`+eventlog.Itoa(t.Ack.SyncDurationMs)+`,"async_ms":`+eventlog.Itoa(t.Ack.AsyncDurationMs)+
			`,"state_size":`+eventlog.Itoa(t.Ack.StateSizeBytes)+`,"persisted_bytes":`+eventlog.Itoa(t.Ack.PersistedInFlightBytes)+`}`)
	}
	ev := eventlog.CheckpointCompleted{CheckpointID: cp.ID, CheckpointKind: cp.Kind.String(), DurationMs: cp.CompletionMs - cp.TriggerMs,
		StateSize: cp.StateSizeBytes, CheckpointedSize: cp.IncrementalSizeBytes, PersistedRecords: cp.PersistedInFlightRecords,
		PersistedBytes: cp.PersistedInFlightBytes, MaxAlignmentMs: cp.MaxAlignmentDurationMs,
		SourceOffsets: "[" + eventlog.JoinRaw(offs) + "]", Tasks: "[" + eventlog.JoinRaw(tasks) + "]"}
	if cp.Kind.IsSavepoint() {
		ev.SavepointPath = SavepointPath(cp.ID)
	}
	o.Log(ev)
	c.completed++
	c.offsets[cp.ID] = "[" + eventlog.JoinRaw(offs) + "]"
	if cp.Kind == KindPeriodic || cp.Kind == KindManual {
		c.latest = saved
	} else {
		c.savepoint = saved
	}
	if cp.NotifyTasks {
		for _, e := range f.execs {
			o.Send(e.Name, vt.FromDuration(c.cfg.RPCLatency()), &messages.Envelope_NotifyCheckpointComplete{NotifyCheckpointComplete: &messages.NotifyCheckpointComplete{
				CheckpointId: cp.ID, Kind: protoKind(cp.Kind)}})
		}
	}
}

// checkpointFailed logs a failed checkpoint, tells the tasks to abort it and
// has the JobMaster fail the job when the failure manager says so.
func (c *Service) checkpointFailed(o *kernel.Out, f FailedCheckpoint) {
	if f.CheckpointID == 0 {
		// a queued request dropped before it started: no checkpoint
		o.Log(eventlog.CheckpointDeclined{CheckpointKind: f.Kind.String(), Reason: f.Reason.String(), Message: f.Message})
		return
	}
	if _, known := c.pendingStates[f.CheckpointID]; !known && f.Reason == ReasonCheckpointCoordinatorSuspend {
		return // never injected (see triggered)
	}
	delete(c.pendingStates, f.CheckpointID)
	c.failed++
	o.Log(eventlog.CheckpointFailed{CheckpointID: f.CheckpointID, CheckpointKind: f.Kind.String(), Reason: f.Reason.String(),
		Message: f.Message, Task: f.Task})
	if f.Kind == KindStopWithSavepoint {
		c.requestFailed(o, f.Kind, f.Message)
		if c.status == status.JobRunning && f.Reason != ReasonCheckpointCoordinatorSuspend {
			// the job goes on: periodic checkpoints resume
			// (SchedulerBase.stopWithSavepoint's failure handling)
			c.jobRunning(o)
		}
	}
	if f.NotifyTasks && f.CheckpointID > 0 {
		for _, e := range c.execs {
			o.Send(e.Name, vt.FromDuration(c.cfg.RPCLatency()), &messages.Envelope_NotifyCheckpointAborted{NotifyCheckpointAborted: &messages.NotifyCheckpointAborted{
				CheckpointId: f.CheckpointID}})
		}
	}
	if f.JobFailure != "" {
		o.Send(jobgraph.JobManagerName, 0, &messages.Envelope_FailJob{FailJob: &messages.FailJob{Cause: f.JobFailure}})
	}
}

// requestFailed tells the JobMaster that a stop-with-savepoint it asked
// for did not happen (a rescale or reconfiguration waiting for it fails).
func (c *Service) requestFailed(o *kernel.Out, k Kind, message string) {
	o.Send(jobgraph.JobManagerName, 0, &messages.Envelope_CheckpointRequestFailed{CheckpointRequestFailed: &messages.CheckpointRequestFailed{
		Kind: protoKind(k), Message: message}})
}

// restore answers the JobMaster's RestoreRequest: the latest completed
// checkpoint (or the latest savepoint), checked and assigned to the new
// deployment's subtasks (StateAssignmentOperation).
func (c *Service) restore(m *messages.RestoreRequest) *messages.RestoreState {
	out := &messages.RestoreState{RequestId: m.RequestId}
	saved := c.latest
	if m.Savepoint {
		saved = c.savepoint
	}
	if saved == nil {
		return out
	}
	out.Found, out.CheckpointId, out.Kind = true, saved.ID, protoKind(saved.Kind)
	out.SavepointPath = SavepointPath(saved.ID)
	out.SourceOffsets = RestoredOffsets(saved)
	out.RestoredParallelism = map[string]int32{}
	for v, p := range saved.Parallelism {
		out.RestoredParallelism[v] = int32(p)
	}
	out.MaxParallelism = int32(saved.MaxParallelism)
	out.SinkParallelism = int32(saved.Parallelism[saved.SinkVertex])
	vertices := c.vertices
	if len(m.Vertices) > 0 {
		vertices = m.Vertices // the new job's
	}
	if m.Savepoint {
		p := saved.Parallelism[jobgraph.VertexKeyed]
		for _, v := range vertices {
			if v.Id == jobgraph.VertexKeyed {
				p = int(v.Parallelism)
			}
		}
		maxP, refusal := CheckRestore(saved, p, int(m.MaxParallelism))
		out.MaxParallelism = int32(maxP)
		if refusal != "" {
			out.Error = refusal
			return out
		}
		c.latest = saved // the new job starts from it
	}
	for _, v := range vertices {
		for i := 0; i < int(v.Parallelism); i++ {
			out.Subtasks = append(out.Subtasks, &messages.SubtaskRestore{Vertex: v.Id, Index: int32(i), State: Assign(saved, v, i)})
		}
	}
	return out
}
