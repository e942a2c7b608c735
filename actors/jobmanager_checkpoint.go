package actors

import (
	"slices"
	"strconv"
	"strings"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/checkpoint"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/keygroup"
	"github.com/flinksim/flinksim/sim/vt"
)

// savedState is a completed checkpoint or savepoint as the JobManager keeps
// it for restores: every task's TaskStateSnapshot with the parallelism and
// max parallelism it was taken with (CompletedCheckpoint with its
// OperatorStates).
type savedState struct {
	id          int64
	kind        checkpoint.Kind
	maxP        int
	parallelism map[string]int                         // JobVertex id -> parallelism
	tasks       map[string]*messages.TaskStateSnapshot // base task name -> state
}

// startCoordinator creates the CheckpointCoordinator for the current job
// graph; every task acknowledges every checkpoint.
func (j *JobManager) startCoordinator(o *Out) {
	var tasks []string
	for _, v := range j.graph.Vertices {
		for i := 0; i < v.Parallelism; i++ {
			tasks = append(tasks, jobgraph.SubtaskName(v.ID, i, 0))
		}
	}
	c := j.cfg
	co, err := checkpoint.NewCoordinator(checkpoint.CoordinatorConfig{IntervalMs: c.CheckpointInterval.Milliseconds(),
		TimeoutMs: c.CheckpointTimeout.Milliseconds(), MinPauseMs: c.CheckpointMinPause.Milliseconds(),
		MaxConcurrent: c.MaxConcurrentCheckpoints, TolerableFailures: c.TolerableFailedCheckpoints,
		Unaligned: c.UnalignedCheckpoints}, tasks)
	if err != nil {
		o.Invariant("checkpoint_config", "%v", err)
		return
	}
	co.SetTasksRunning(false)
	j.coord = co
	j.pendingStates = map[int64]map[string]*messages.TaskStateSnapshot{}
	j.taskStates = map[string]*messages.TaskStateSnapshot{}
}

// jobRunning starts periodic checkpointing when the job (re)enters RUNNING
// (CheckpointCoordinatorDeActivator): the first trigger after a random delay
// in [min pause, interval] drawn from the JobManager's seeded generator.
func (j *JobManager) jobRunning(o *Out) {
	if j.coord == nil {
		return
	}
	lo, hi, ok := j.coord.Config().InitialDelayRange()
	if !ok {
		return
	}
	delay := lo + o.Rand().Int64N(hi-lo+1)
	_ = j.coord.StartScheduler(vt.Millis(o.Now()), delay)
	j.checkpointReady(o)
	j.scheduleCheckpointDuty(o)
}

// jobLeftRunning stops periodic checkpointing; pending checkpoints are
// aborted (CHECKPOINT_COORDINATOR_SUSPEND).
func (j *JobManager) jobLeftRunning(o *Out) {
	if j.coord == nil {
		return
	}
	j.coord.SetTasksRunning(false)
	for _, f := range j.coord.StopScheduler(vt.Millis(o.Now())) {
		j.checkpointFailed(o, f)
	}
}

// scheduleCheckpointDuty sets a timer for the coordinator's next periodic
// trigger or timeout, unless one is set for an earlier time.
func (j *JobManager) scheduleCheckpointDuty(o *Out) {
	if j.coord == nil {
		return
	}
	now := vt.Millis(o.Now())
	next, ok := j.coord.NextPeriodicTrigger(now)
	if t, tok := j.coord.NextTimeout(); tok && (!ok || t < next) {
		next, ok = t, true
	}
	if !ok || (j.ckTimerSet && j.ckTimerAt <= next) {
		return
	}
	j.ckTimerSet, j.ckTimerAt = true, next
	o.Timer(max(0, vt.FromMillis(next)-o.Now()), timerCheckpoint, next)
}

// checkpointDuty runs the coordinator's timers: expire checkpoints past
// their timeout, then fire the periodic trigger when due.
func (j *JobManager) checkpointDuty(o *Out, at int64) {
	if !j.ckTimerSet || at != j.ckTimerAt {
		return // superseded by an earlier timer
	}
	j.ckTimerSet = false
	now := vt.Millis(o.Now())
	for _, f := range j.coord.CheckTimeouts(now) {
		j.checkpointFailed(o, f)
	}
	if t, ok := j.coord.NextPeriodicTrigger(now); ok && t <= now {
		j.triggerCheckpoint(o, checkpoint.KindPeriodic)
	}
	j.checkpointReady(o)
	j.scheduleCheckpointDuty(o)
}

// triggerCheckpoint asks the coordinator for a checkpoint or savepoint of
// kind. A stop-with-savepoint first stops the periodic scheduler, which
// aborts pending checkpoints (SchedulerBase.stopWithSavepoint).
func (j *JobManager) triggerCheckpoint(o *Out, kind checkpoint.Kind) {
	if kind == checkpoint.KindStopWithSavepoint {
		for _, f := range j.coord.StopScheduler(vt.Millis(o.Now())) {
			j.checkpointFailed(o, f)
		}
	}
	res := j.coord.Trigger(vt.Millis(o.Now()), kind)
	j.triggered(o, res)
	j.checkpointReady(o)
	j.scheduleCheckpointDuty(o)
}

func protoKind(k checkpoint.Kind) messages.CheckpointKind {
	switch k {
	case checkpoint.KindSavepoint:
		return messages.CheckpointKind_SAVEPOINT
	case checkpoint.KindStopWithSavepoint:
		return messages.CheckpointKind_STOP_WITH_SAVEPOINT
	}
	return messages.CheckpointKind_CHECKPOINT
}

// triggered acts on a trigger decision: a started checkpoint's barriers are
// injected at the source subtasks (TriggerCheckpoint); a declined request is
// logged with Flink's reason.
func (j *JobManager) triggered(o *Out, res checkpoint.TriggerResult) {
	switch {
	case res.Declined:
		o.Log(eventlog.KindCheckpointDeclined, messages.Str("kind", res.Kind.String()),
			messages.Str("reason", res.FailureReason.String()), messages.Str("message", res.Reason))
		if res.Kind == checkpoint.KindStopWithSavepoint {
			j.restartFailed(o, res.Reason)
		}
	case res.Queued:
	default:
		if !slices.Contains(j.coord.Pending(), res.CheckpointID) {
			return // started and aborted in the same call (a failover): nothing to inject
		}
		unaligned := j.cfg.UnalignedCheckpoints && j.cfg.AlignedCheckpointTimeout == 0 && !res.Savepoint
		j.pendingStates[res.CheckpointID] = map[string]*messages.TaskStateSnapshot{}
		o.Log(eventlog.KindCheckpointTriggered, messages.Int("checkpoint_id", res.CheckpointID), messages.Str("kind", res.Kind.String()),
			messages.Int("timestamp_ms", res.AtMs), messages.Bool("unaligned", unaligned))
		j.injectBarriers(o, res, unaligned)
	}
}

// injectBarriers sends TriggerCheckpoint to the tasks a checkpoint starts
// at and acknowledges for the finished ones, as Flink 1.20 does with
// checkpoints after tasks finished (DefaultCheckpointPlanCalculator,
// FLIP-147): a running task is triggered when it is a source or all its
// upstream tasks have finished; a finished task counts with the state of
// its last snapshot (its final checkpoint).
func (j *JobManager) injectBarriers(o *Out, res checkpoint.TriggerResult, unaligned bool) {
	finished := func(name string) bool { return j.tasks[name] == "FINISHED" }
	var finishedAcks []string
	for _, v := range j.graph.Vertices {
		var up *jobgraph.Edge
		for k := range j.graph.Edges {
			if j.graph.Edges[k].To == v.ID {
				up = &j.graph.Edges[k]
			}
		}
		for i := 0; i < v.Parallelism; i++ {
			name := j.name(v.ID, i)
			if finished(name) {
				finishedAcks = append(finishedAcks, name)
				continue
			}
			trigger := up == nil
			if up != nil {
				pv, _ := j.graph.Vertex(up.From)
				trigger = true
				for p := 0; p < pv.Parallelism; p++ {
					if (up.Partitioner != jobgraph.PartitionForward || p == i) && !finished(j.name(pv.ID, p)) {
						trigger = false
					}
				}
			}
			if trigger {
				o.Send(name, rpcLatency(j.cfg), &messages.Envelope_TriggerCheckpoint{TriggerCheckpoint: &messages.TriggerCheckpoint{
					CheckpointId: res.CheckpointID, TimestampMs: res.AtMs, Kind: protoKind(res.Kind), Unaligned: unaligned}})
			}
		}
	}
	for _, name := range finishedAcks {
		// a finished task's state is what its last snapshot left, without
		// channel state: everything in flight then has been delivered
		base := jobgraph.BaseSubtaskName(name)
		st := &messages.TaskStateSnapshot{}
		if last := j.taskStates[base]; last != nil {
			st = &messages.TaskStateSnapshot{Splits: last.Splits, Windows: last.Windows, Values: last.Values,
				Committables: last.Committables}
		}
		j.acknowledge(o, &messages.AcknowledgeCheckpoint{CheckpointId: res.CheckpointID, Task: base, State: st})
	}
}

// checkpointReady handles what the coordinator decided as a side effect.
func (j *JobManager) checkpointReady(o *Out) {
	r := j.coord.TakeReady()
	for _, t := range r.Triggered {
		j.triggered(o, t)
	}
	for _, f := range r.Failed {
		j.checkpointFailed(o, f)
	}
}

// acknowledge is AcknowledgeCheckpoint from a task.
func (j *JobManager) acknowledge(o *Out, m *messages.AcknowledgeCheckpoint) {
	if j.coord == nil {
		return
	}
	ack := checkpoint.TaskAck{StateSizeBytes: m.StateSizeBytes, IncrementalSizeBytes: m.IncrementalSizeBytes,
		PersistedInFlightRecords: m.PersistedRecords, PersistedInFlightBytes: m.PersistedBytes,
		AlignmentDurationMs: m.AlignmentMs, SyncDurationMs: m.SyncMs, AsyncDurationMs: m.AsyncMs}
	for _, sp := range m.GetState().GetSplits() {
		ack.SourceOffsets = append(ack.SourceOffsets, checkpoint.SourceOffset{Split: j.cfg.SourceTopic + "-" + strconv.Itoa(int(sp.Partition)), Offset: sp.Offset})
	}
	cp, err := j.coord.Acknowledge(m.CheckpointId, m.Task, ack, vt.Millis(o.Now()))
	if err == nil {
		if states := j.pendingStates[m.CheckpointId]; states != nil {
			states[m.Task] = m.State
		}
		j.taskStates[m.Task] = m.State
	}
	if cp != nil {
		j.completed(o, cp)
	}
	j.checkpointReady(o)
	j.scheduleCheckpointDuty(o)
}

// decline is DeclineCheckpoint from a task.
func (j *JobManager) decline(o *Out, m *messages.DeclineCheckpoint) {
	if j.coord == nil {
		return
	}
	r, ok := checkpoint.ParseFailureReason(m.Reason)
	if !ok {
		r = checkpoint.ReasonCheckpointDeclined
	}
	if f := j.coord.Decline(m.CheckpointId, m.Task, r, vt.Millis(o.Now())); f != nil {
		j.checkpointFailed(o, *f)
	}
	j.checkpointReady(o)
	j.scheduleCheckpointDuty(o)
}

// completed logs a completed checkpoint, keeps its state for restores and
// notifies the tasks (notifyCheckpointComplete).
func (j *JobManager) completed(o *Out, cp *checkpoint.CompletedCheckpoint) {
	saved := &savedState{id: cp.ID, kind: cp.Kind, maxP: j.graph.MaxParallelism, parallelism: map[string]int{},
		tasks: j.pendingStates[cp.ID]}
	delete(j.pendingStates, cp.ID)
	for _, v := range j.graph.Vertices {
		saved.parallelism[v.ID] = v.Parallelism
	}
	var offs []string
	for _, t := range cp.Tasks {
		for _, so := range t.Ack.SourceOffsets {
			offs = append(offs, `{"split":`+jsonString(so.Split)+`,"offset":`+itoa(so.Offset)+`}`)
		}
	}
	slices.Sort(offs)
	fields := []*messages.Field{messages.Int("checkpoint_id", cp.ID), messages.Str("kind", cp.Kind.String()),
		messages.Int("duration_ms", cp.CompletionMs-cp.TriggerMs), messages.Int("state_size", cp.StateSizeBytes),
		messages.Int("checkpointed_size", cp.IncrementalSizeBytes), messages.Int("persisted_records", cp.PersistedInFlightRecords),
		messages.Int("persisted_bytes", cp.PersistedInFlightBytes), messages.Int("max_alignment_ms", cp.MaxAlignmentDurationMs),
		messages.Raw("source_offsets", "["+joinRaw(offs)+"]")}
	if cp.Kind.IsSavepoint() {
		fields = append(fields, messages.Str("savepoint_path", "file:/flinksim/savepoints/savepoint-"+itoa(cp.ID)))
	}
	o.Log(eventlog.KindCheckpointCompleted, fields...)
	if cp.Kind == checkpoint.KindPeriodic || cp.Kind == checkpoint.KindManual {
		j.latest = saved
	} else {
		j.savepoint = saved
	}
	if cp.NotifyTasks {
		for _, name := range j.order {
			o.Send(name, rpcLatency(j.cfg), &messages.Envelope_NotifyCheckpointComplete{NotifyCheckpointComplete: &messages.NotifyCheckpointComplete{
				CheckpointId: cp.ID, Kind: protoKind(cp.Kind)}})
		}
	}
}

// checkpointFailed logs a failed checkpoint, tells the tasks to abort it and
// fails the job when the failure manager says so.
func (j *JobManager) checkpointFailed(o *Out, f checkpoint.FailedCheckpoint) {
	if f.CheckpointID == 0 {
		// a queued request dropped before it started: no checkpoint
		o.Log(eventlog.KindCheckpointDeclined, messages.Str("kind", f.Kind.String()),
			messages.Str("reason", f.Reason.String()), messages.Str("message", f.Message))
		return
	}
	if _, known := j.pendingStates[f.CheckpointID]; !known && f.Reason == checkpoint.ReasonCheckpointCoordinatorSuspend {
		return // never injected (see triggered)
	}
	delete(j.pendingStates, f.CheckpointID)
	fields := []*messages.Field{messages.Int("checkpoint_id", f.CheckpointID), messages.Str("kind", f.Kind.String()),
		messages.Str("reason", f.Reason.String()), messages.Str("message", f.Message)}
	if f.Task != "" {
		fields = append(fields, messages.Str("task", f.Task))
	}
	o.Log(eventlog.KindCheckpointFailed, fields...)
	if f.Kind == checkpoint.KindStopWithSavepoint {
		j.restartFailed(o, f.Message)
		if j.status == "RUNNING" && f.Reason != checkpoint.ReasonCheckpointCoordinatorSuspend {
			// the job goes on: periodic checkpoints resume
			// (SchedulerBase.stopWithSavepoint's failure handling)
			j.jobRunning(o)
		}
	}
	if f.NotifyTasks && f.CheckpointID > 0 {
		for _, name := range j.order {
			o.Send(name, rpcLatency(j.cfg), &messages.Envelope_NotifyCheckpointAborted{NotifyCheckpointAborted: &messages.NotifyCheckpointAborted{
				CheckpointId: f.CheckpointID}})
		}
	}
	if f.JobFailure != "" {
		j.failover(o, f.JobFailure)
	}
}

// restoreFor builds the state subtask index of vertex v gets from saved when
// the vertex now runs with parallelism p: keyed state and channel state by
// key group (the contiguous ranges of KeyGroupRangeAssignment), the output
// channel state and sink committables of old subtask k going to k mod p. A
// source's split offsets go through the enumerator instead.
func restoreFor(saved *savedState, v string, index, p int) *messages.TaskStateSnapshot {
	out := &messages.TaskStateSnapshot{}
	oldP := saved.parallelism[v]
	var r keygroup.KeyGroupRange
	keyed := v != jobgraph.VertexSource
	if keyed {
		var err error
		if r, err = keygroup.RangeForOperatorIndex(saved.maxP, p, index); err != nil {
			return out
		}
	}
	in := func(key string) bool {
		kg := int(keyGroupOf(key, saved.maxP))
		return kg >= r.Start && kg <= r.End
	}
	for k := 0; k < oldP; k++ {
		st := saved.tasks[jobgraph.SubtaskName(v, k, 0)]
		if st == nil {
			continue
		}
		if k%p == index {
			out.Committables = append(out.Committables, st.Committables...)
			if !keyed {
				out.OutputChannelState = append(out.OutputChannelState, st.OutputChannelState...)
			}
		}
		if !keyed {
			continue
		}
		for _, w := range st.Windows {
			if int(w.KeyGroup) >= r.Start && int(w.KeyGroup) <= r.End {
				out.Windows = append(out.Windows, w)
			}
		}
		for _, e := range st.Values {
			if int(e.KeyGroup) >= r.Start && int(e.KeyGroup) <= r.End {
				out.Values = append(out.Values, e)
			}
		}
		for _, rec := range st.InputChannelState {
			if in(rec.Key) {
				out.InputChannelState = append(out.InputChannelState, rec)
			}
		}
		for _, rec := range st.OutputChannelState {
			if in(rec.Key) {
				out.OutputChannelState = append(out.OutputChannelState, rec)
			}
		}
	}
	slices.SortStableFunc(out.Windows, func(a, b *messages.KeyedWindowState) int { return strings.Compare(a.Key, b.Key) })
	slices.SortStableFunc(out.Values, func(a, b *messages.ValueStateEntry) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// restoredOffsets are the source split offsets stored in saved, by partition.
func restoredOffsets(saved *savedState) map[int32]int64 {
	offs := map[int32]int64{}
	for _, st := range saved.tasks {
		for _, sp := range st.Splits {
			offs[sp.Partition] = sp.Offset
		}
	}
	return offs
}

// numTasks is the number of subtasks of the job graph.
func (j *JobManager) numTasks() int {
	n := 0
	for _, v := range j.graph.Vertices {
		n += v.Parallelism
	}
	return n
}

// startRescaled submits the job anew from the savepoint its
// stop-with-savepoint took, with the rescale's parallelism: keyed state moves
// with its key groups, splits go to their new owners (getSplitOwner). The
// new job keeps the savepoint's max parallelism unless one is configured; a
// parallelism above it or a different configured one is refused with
// Flink's message (StateAssignmentOperation.checkParallelismPreconditions,
// Checkpoints.loadAndValidateCheckpoint) and the new job fails.
func (j *JobManager) startRescaled(o *Out) {
	sp := j.savepoint
	n := j.rescaleTo
	j.rescaleTo = 0
	if sp == nil {
		return
	}
	rescaling := n > 0
	if !rescaling {
		n = sp.parallelism[jobgraph.VertexKeyed] // a reconfiguration keeps the parallelism
	}
	if set := j.reconfig; set != nil {
		j.reconfig = nil
		c := *j.cfg
		if err := c.Set(set.Key, set.Value); err != nil { // validated by the action's parser
			o.Invariant("reconfigure", "%s=%s: %v", set.Key, set.Value, err)
			return
		}
		j.cfg = &c
		j.overrides = append(j.overrides, set)
		o.Log(eventlog.KindReconfigure, messages.Str("step", "submit from savepoint"), messages.Str("setting", set.Key),
			messages.Str("value", set.Value), messages.Str("savepoint_path", "file:/flinksim/savepoints/savepoint-"+itoa(sp.id)))
	}
	maxP := sp.maxP
	if j.rescaleMaxP > 0 {
		maxP = j.rescaleMaxP
	} else if j.cfg.MaxParallelism != -1 {
		maxP = j.cfg.MaxParallelism
	}
	path := "file:/flinksim/savepoints/savepoint-" + itoa(sp.id)
	if rescaling {
		o.Log(eventlog.KindRescale, messages.Str("step", "submit from savepoint"), messages.Str("savepoint_path", path),
			messages.Int("from_parallelism", int64(sp.parallelism[jobgraph.VertexKeyed])), messages.Int("to_parallelism", int64(n)),
			messages.Int("max_parallelism", int64(maxP)))
	}
	j.jobs++
	j.status = "" // a new job: no previous status
	j.setStatus(o, "CREATED", "")
	keyed := jobgraph.VertexKeyed
	switch {
	case maxP != sp.maxP:
		j.setStatus(o, "FAILED", "java.lang.IllegalStateException: Failed to rollback to checkpoint/savepoint "+path+
			". Max parallelism mismatch between checkpoint/savepoint state and new program. Cannot map operator "+keyed+
			" with max parallelism "+strconv.Itoa(sp.maxP)+" to new program with max parallelism "+strconv.Itoa(maxP)+
			". This indicates that the program has been changed in a non-compatible way after the checkpoint/savepoint.")
		return
	case n > sp.maxP:
		j.setStatus(o, "FAILED", "java.lang.IllegalStateException: The state for task "+keyed+
			" can not be restored. The maximum parallelism ("+strconv.Itoa(sp.maxP)+
			") of the restored state is lower than the configured parallelism ("+strconv.Itoa(n)+
			"). Please reduce the parallelism of the task to be lower or equal to the maximum parallelism.")
		return
	}
	cfg := *j.cfg
	cfg.Parallelism, cfg.MaxParallelism = n, maxP
	g, err := jobgraph.Build(cfg)
	if err != nil {
		j.setStatus(o, "FAILED", err.Error())
		return
	}
	j.graph = g
	j.attempt++
	clear(j.location)
	clear(j.tasks)
	j.order = j.order[:0]
	j.deploy = false
	j.readers = nil
	j.restoreFrom, j.latest = sp, sp
	if j.startOffsets == nil {
		j.startOffsets = map[int32]int64{}
	}
	for p, off := range restoredOffsets(sp) {
		j.startOffsets[p] = off
	}
	j.startCoordinator(o)
	if j.coord != nil {
		j.coord.RestoreIDCounter(sp.id + 1)
	}
	// the new job's output: a consumer reading from the sink topic's end now
	o.Send(KafkaName, rpcLatency(j.cfg), &messages.Envelope_ListOffsets{ListOffsets: &messages.ListOffsets{
		Topic: j.cfg.SinkTopic, Spec: "latest", RequestId: reqOutputView}})
	j.setStatus(o, "RUNNING", "")
	if len(j.slots) >= g.SlotsNeeded {
		j.deployAll(o)
		return
	}
	o.Send(ResourceManagerName, rpcLatency(j.cfg), &messages.Envelope_DeclareResourceRequirements{
		DeclareResourceRequirements: &messages.DeclareResourceRequirements{JobId: j.jobID(), NumSlots: int32(g.SlotsNeeded - len(j.slots))}})
	o.Timer(vt.FromDuration(j.cfg.SlotRequestTimeout), timerSlotRequestTimeout, int64(j.attempt))
}

// restartFailed ends a rescale or reconfiguration whose stop-with-savepoint
// failed: the job goes on as it was.
func (j *JobManager) restartFailed(o *Out, cause string) {
	if j.rescaleTo > 0 {
		j.rescaleTo = 0
		o.Log(eventlog.KindRescale, messages.Str("result", "failed"), messages.Str("cause", cause))
	}
	if j.reconfig != nil {
		o.Log(eventlog.KindReconfigure, messages.Str("result", "failed"), messages.Str("setting", j.reconfig.Key), messages.Str("cause", cause))
		j.reconfig = nil
	}
}
