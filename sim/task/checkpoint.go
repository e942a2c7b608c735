package task

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/checkpoint"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/status"
	"github.com/flinksim/flinksim/sim/vt"
)

// subtaskCheckpoint is a subtask's part in checkpoints: barrier handling on
// its InputGate (SingleCheckpointBarrierHandler), snapshots of its state,
// the channel state of unaligned checkpoints, the final checkpoint after its
// input ended (FLIP-147), stop-with-savepoint, the changed keys of
// incremental snapshots and the exactly-once KafkaSink's transactions
// (KafkaWriter with KafkaCommitter).
type subtaskCheckpoint struct {
	enabled       bool // execution.checkpointing.interval > 0: wait for a final checkpoint
	handler       *checkpoint.BarrierHandler
	blocked       []bool           // per input channel: blocked by an aligned barrier
	barrierQueued []int            // per input channel: aligned barriers queued, not yet processed
	current       *messages.Buffer // the barrier of the checkpoint the handler works on
	pending       *pendingAck      // an unaligned snapshot still collecting channel state
	pendingOut    *pendingAck      // an aligned snapshot whose timeoutable barrier still waits in the output

	awaitFinal bool  // input ended: finish once a checkpoint taken after it completes
	finalID    int64 // that checkpoint (0: none taken yet)
	stopping   bool  // stop-with-savepoint: no more input after the savepoint's barrier
	stopID     int64

	changes *checkpoint.ChangeTracker // incremental snapshots: keys changed since the last completed checkpoint (nil: full snapshots)

	lastKafka vt.Time // delivery time of the last message to the broker, to keep them in order

	replayIn  []*messages.InFlightRecord // restored input channel state, processed first
	resume    []bool                     // per channel: its producer blocked after an aligned barrier, to resume
	beforeEnd []*messages.Buffer         // per channel: a barrier to queue before its EndOfPartition
	lastAlign int64                      // alignment duration of the last completed alignment (ms)
}

// pendingAck is an unaligned snapshot whose input channel state is not yet
// complete: channels whose barrier is still to come keep adding what they
// deliver until it arrives.
type pendingAck struct {
	ack        *messages.AcknowledgeCheckpoint
	syncEnd    vt.Time // when the synchronous part ends, and the asynchronous one starts (µs)
	stateBytes int64   // what the state upload writes (the channel state is the ack's PersistedBytes)
}

// initCheckpointing sets the barrier handler up and restores the state the
// SubmitTask carries.
func (s *Subtask) initCheckpointing(o *kernel.Out) {
	c := &s.ck
	// a task waits for a final checkpoint once its input ended only when
	// checkpoints go on after tasks finish (FLIP-147)
	c.enabled = s.d.Checkpointing && s.cfg.CheckpointsAfterTasksFinish
	if s.cfg.StateBackend == config.BackendRocksDB && s.cfg.IncrementalCheckpoints {
		c.changes = checkpoint.NewChangeTracker() // changed keys, only where snapshots are incremental
	}
	if !s.isSource {
		c.handler = checkpoint.NewBarrierHandler(checkpoint.BarrierHandlerConfig{NumChannels: s.gate.NumChannels(),
			Unaligned: s.cfg.UnalignedCheckpoints, AlignedTimeoutMs: s.cfg.AlignedCheckpointTimeout.Milliseconds(),
			DisableCheckpointsAfterTasksFinish: !s.cfg.CheckpointsAfterTasksFinish})
		c.blocked = make([]bool, s.gate.NumChannels())
		c.resume = make([]bool, s.gate.NumChannels())
		c.barrierQueued = make([]int, s.gate.NumChannels())
	}
	r := s.d.Restore
	if r != nil {
		if s.op != nil && len(r.Windows) > 0 {
			if err := s.op.Restore(windowStateFromProto(r.Windows)); err != nil {
				o.Invariant("restore", "%s: %v", o.Name(), err)
				return
			}
		}
		if s.proc != nil && len(r.Values) > 0 {
			if err := s.proc.Restore(valueStateFromProto(r.Values)); err != nil {
				o.Invariant("restore", "%s: %v", o.Name(), err)
				return
			}
		}
		c.replayIn = r.InputChannelState
		for _, rec := range r.OutputChannelState {
			// re-emit the output channel state before anything new
			s.rp.AddPayloadRecord(s.target(rec.Key), rec.Key, rec.Timestamp, rec.Value, rec.Payload)
			s.m.recordsOut++
		}
		o.Log(eventlog.KindStateRestored, messages.Int("checkpoint_id", s.d.RestoreCheckpointId),
			messages.Int("window_keys", int64(len(r.Windows))), messages.Int("value_keys", int64(len(r.Values))),
			messages.Int("input_channel_records", int64(len(r.InputChannelState))),
			messages.Int("output_channel_records", int64(len(r.OutputChannelState))),
			messages.Raw("committables", eventlog.JSONStrings(r.Committables)))
	}
	if s.w != nil {
		// KafkaSink recovery: commit what the restored checkpoint
		// pre-committed, abort what later checkpoints left open, begin
		s.sendTxn(o, s.w.Init(r.GetCommittables(), s.d.RestoreCheckpointId, int(s.d.Parallelism), int(s.d.RestoreParallelism), r == nil))
	}
}

// triggerCheckpoint is a source subtask's part of a checkpoint
// (StreamTask.triggerCheckpointAsync on a source): snapshot the split
// offsets, then emit the barrier into every output subpartition behind the
// records emitted so far.
func (s *Subtask) triggerCheckpoint(o *kernel.Out, m *messages.TriggerCheckpoint) {
	switch {
	case s.status != status.Running || s.ck.stopping:
		// Task.triggerCheckpointBarrier declines for a task that is not
		// RUNNING: one that finished after its final checkpoint, the
		// coordinator not knowing yet, among them
		s.decline(o, m.CheckpointId, checkpoint.ReasonCheckpointDeclinedTaskNotReady)
		return
	case s.finishedAll:
		// its operators finished after the final checkpoint: the task is
		// closing (StreamTask.triggerCheckpointAsync on a finishing task)
		s.decline(o, m.CheckpointId, checkpoint.ReasonCheckpointDeclinedTaskClosing)
		return
	}
	b := &messages.Buffer{CheckpointId: m.CheckpointId, CheckpointTimestampMs: m.TimestampMs, CheckpointKind: m.Kind,
		Unaligned: m.Unaligned}
	if !s.isSource && s.insertBarriers(o, b) {
		return
	}
	s.spend(o, s.snapshot(o, b, m.Unaligned, nil, 0))
}

// spend makes the task busy for cost more (work done outside a slice, such
// as a snapshot's synchronous part or a priority barrier).
func (s *Subtask) spend(o *kernel.Out, cost vt.Time) {
	s.mb.Spend(o.Now(), cost)
}

func (s *Subtask) decline(o *kernel.Out, id int64, r checkpoint.FailureReason) {
	o.Log(eventlog.KindCheckpointDeclinedByTask, messages.Int("checkpoint_id", id), messages.Str("reason", r.String()))
	o.Send(jobgraph.CheckpointCoordinatorName, vt.FromDuration(s.cfg.RPCLatency()), &messages.Envelope_DeclineCheckpoint{DeclineCheckpoint: &messages.DeclineCheckpoint{
		CheckpointId: id, Task: jobgraph.BaseSubtaskName(o.Name()), Reason: r.String()}})
}

// cancel is CancelTask for a running task: the operators close, so the
// exactly-once writer aborts the transaction it has open
// (KafkaWriter.close), then the task is CANCELED and its TaskManager stops it.
func (s *Subtask) cancel(o *kernel.Out) {
	if s.exactlyOnce() && !s.finishedAll {
		s.sinkOut = nil
		s.sendTxn(o, s.w.Abort())
	}
	s.setState(o, status.Canceled, "")
}

// touch records that key's state changed (for incremental snapshots).
func (s *Subtask) touch(key string) {
	if s.ck.changes != nil {
		s.ck.changes.Touch(key)
	}
}

// snapshot takes the task's snapshot for barrier b: the synchronous part
// (copying the state, 1 µs per entry, returned as cost) and then the
// asynchronous upload of what this checkpoint writes at
// sim.checkpoint.upload-speed, after which the task acknowledges. It
// forwards the barrier downstream (unaligned: overtaking the output queue,
// whose records become output channel state) and, for the exactly-once sink,
// pre-commits the open transaction and opens the next one
// (KafkaWriter.snapshotState / prepareCommit).
func (s *Subtask) snapshot(o *kernel.Out, b *messages.Buffer, unaligned bool, inputState []*messages.InFlightRecord, alignMs int64) vt.Time {
	c := &s.ck
	id := b.CheckpointId
	// restored channel state not yet replayed stays channel state: it comes
	// before anything the channels hold now
	var in []*messages.InFlightRecord
	if len(c.replayIn) > 0 {
		in = append(append(in, c.replayIn...), inputState...)
	} else {
		in = inputState
	}
	st := &messages.TaskStateSnapshot{InputChannelState: in}
	var full, changed int64
	entries := 0
	incremental := s.cfg.StateBackend == config.BackendRocksDB && s.cfg.IncrementalCheckpoints
	addKeyed := func(sizes map[string]int64) {
		for k, sz := range sizes {
			full += sz
			entries++
			if c.changes != nil && c.changes.Changed(k) {
				changed += sz
			}
		}
	}
	if s.isSource {
		st.Splits = s.src.Snapshot(id)
		full += int64(len(st.Splits)) * splitStateBytes
		entries += len(st.Splits)
		changed = full
	}
	if s.op != nil {
		ws, sizes := windowStateToProto(s.op.Snapshot(), s.maxP)
		st.Windows = ws
		addKeyed(sizes)
	}
	if s.proc != nil {
		vs, sizes := valueStateToProto(s.proc.Snapshot(s.procTimeMs(o)), s.maxP)
		st.Values = vs
		addKeyed(sizes)
	}
	if !incremental {
		changed = full
	}
	if c.changes != nil {
		c.changes.Snapshot(id)
	}
	if s.rp != nil {
		for _, r := range s.rp.Barrier(b) {
			st.OutputChannelState = append(st.OutputChannelState, inFlightRecord(r))
		}
	}
	// the synchronous part: its fixed cost and 1 µs per state entry
	sync := vt.FromDuration(s.cfg.CheckpointSyncTime) + vt.Time(entries)
	if s.hasSink && !s.finishedAll {
		s.flushSink(o, sync)
		if s.exactlyOnce() {
			reqs, committables := s.w.PrepareCommit(id)
			st.Committables = committables
			s.sendTxn(o, reqs)
		}
	}
	persistedRecords := int64(len(st.InputChannelState) + len(st.OutputChannelState))
	persistedBytes := persistedRecords * int64(s.cfg.RecordBytes)
	pa := &pendingAck{syncEnd: o.Now() + sync, stateBytes: changed, ack: &messages.AcknowledgeCheckpoint{CheckpointId: id,
		Task: jobgraph.BaseSubtaskName(o.Name()), StateSizeBytes: full + persistedBytes, IncrementalSizeBytes: changed + persistedBytes,
		PersistedRecords: persistedRecords, PersistedBytes: persistedBytes, AlignmentMs: alignMs, SyncMs: vt.Millis(sync), State: st}}
	ack := pa.ack
	// checkpointStartDelay: from the trigger to the first barrier here
	// (the trigger itself at a source)
	startDelay := max(0, vt.Millis(o.Now())-alignMs-b.CheckpointTimestampMs)
	o.Log(eventlog.KindCheckpointSnapshot, messages.Int("checkpoint_id", id), messages.Str("kind", kindName(b.CheckpointKind)),
		messages.Bool("unaligned", unaligned), messages.Int("state_size", ack.StateSizeBytes),
		messages.Int("checkpointed_size", ack.IncrementalSizeBytes), messages.Int("persisted_records", persistedRecords),
		messages.Int("start_delay_ms", startDelay), messages.Int("alignment_ms", alignMs), messages.Int("sync_ms", vt.Millis(sync)))
	if s.ck.awaitFinal && c.finalID == 0 && (s.rp == nil || s.rp.Drained()) {
		// the final checkpoint: taken after the input ended and, as Flink
		// waits for ResultPartition.getAllDataProcessedFuture, once the
		// output is sent, so the EndOfPartition that follows it is not
		// stuck behind data
		c.finalID = id
	}
	if b.CheckpointKind == messages.CheckpointKind_STOP_WITH_SAVEPOINT {
		c.stopping, c.stopID = true, id
	}
	if unaligned && s.ck.handler != nil && s.ck.handler.CheckpointPending() {
		c.pending = pa
		return sync
	}
	if s.rp != nil && !unaligned && b.CheckpointKind == messages.CheckpointKind_CHECKPOINT && s.cfg.UnalignedCheckpoints &&
		s.cfg.AlignedCheckpointTimeout > 0 && s.rp.BarrierQueued(id) {
		// a timeoutable aligned barrier: the channel state is complete when
		// it has left every output queue, or when it times out there and
		// overtakes what is ahead of it
		c.pendingOut = pa
		at := b.CheckpointTimestampMs + s.cfg.AlignedCheckpointTimeout.Milliseconds()
		o.Timer(max(0, vt.FromMillis(at)-o.Now()), timerCheckpointOutput, id)
		return sync
	}
	s.sendAck(o, pa)
	return sync
}

// outputBarrierSent acknowledges an aligned snapshot once its barrier has
// left every output queue (called after each Poll).
func (s *Subtask) outputBarrierSent(o *kernel.Out) {
	p := s.ck.pendingOut
	if p == nil || s.rp.BarrierQueued(p.ack.CheckpointId) {
		return
	}
	s.ck.pendingOut = nil
	s.sendAck(o, p)
}

// outputBarrierTimeout is the aligned-checkpoint-timeout of a barrier still
// in the output: it turns unaligned, and what it overtakes is channel state.
func (s *Subtask) outputBarrierTimeout(o *kernel.Out, id int64) {
	p := s.ck.pendingOut
	if p == nil || p.ack.CheckpointId != id {
		return
	}
	s.ck.pendingOut = nil
	recs := s.rp.TimeoutBarrier(id)
	for _, r := range recs {
		p.ack.State.OutputChannelState = append(p.ack.State.OutputChannelState, inFlightRecord(r))
	}
	bytes := int64(len(recs)) * int64(s.cfg.RecordBytes)
	p.ack.PersistedRecords += int64(len(recs))
	p.ack.PersistedBytes += bytes
	p.ack.StateSizeBytes += bytes
	p.ack.IncrementalSizeBytes += bytes
	o.Log(eventlog.KindBarrierTimedOut, messages.Int("checkpoint_id", id), messages.Int("persisted_records", int64(len(recs))))
	s.sendAck(o, p)
}

// inFlightRecord is a record of output channel state as a checkpoint
// stores it.
func inFlightRecord(r exchange.InFlight) *messages.InFlightRecord {
	return &messages.InFlightRecord{Key: r.Key, Timestamp: r.Timestamp, Value: r.Value, Payload: r.Payload}
}

// sendAck acknowledges the snapshot p once its asynchronous part is done
// (AsyncCheckpointRunnable): the state upload and the ChannelStateWriter's
// channel state, each with the checkpoint storage's per-file work, run side
// by side, and the acknowledgement waits for both; it then takes
// sim.checkpoint.ack-time and the RPC to reach the coordinator.
func (s *Subtask) sendAck(o *kernel.Out, p *pendingAck) {
	async := max(s.storageTime(p.stateBytes, s.cfg.UploadSpeed), s.storageTime(p.ack.PersistedBytes, s.cfg.ChannelStateSpeed))
	p.ack.AsyncMs = vt.Millis(async)
	// the asynchronous part starts after the synchronous one, and ends no
	// earlier than the channel state it waited for is complete (now)
	delay := max(p.syncEnd-o.Now(), 0) + async + vt.FromDuration(s.cfg.CheckpointAckTime) + vt.FromDuration(s.cfg.RPCLatency())
	o.Send(jobgraph.CheckpointCoordinatorName, delay, &messages.Envelope_AcknowledgeCheckpoint{AcknowledgeCheckpoint: p.ack})
}

// storageTime is the virtual time writing a state stream of n bytes at
// speed bytes per second takes, with the file it needs when it is larger
// than state.storage.fs.memory-threshold (smaller streams travel inline in
// the acknowledgement, ByteStreamStateHandle).
func (s *Subtask) storageTime(n, speed int64) vt.Time {
	var t vt.Time
	if speed > 0 {
		t = vt.Time(n * 1_000_000 / speed)
	}
	if n > s.cfg.MemoryThreshold {
		t += vt.FromDuration(s.cfg.CheckpointFileTime)
	}
	return t
}

func kindName(k messages.CheckpointKind) string {
	switch k {
	case messages.CheckpointKind_SAVEPOINT:
		return "savepoint"
	case messages.CheckpointKind_STOP_WITH_SAVEPOINT:
		return "stop-with-savepoint"
	}
	return "checkpoint"
}

// checkpointComplete is notifyCheckpointComplete: the exactly-once sink
// commits what it pre-committed up to that checkpoint, the source reader
// commits its offsets to the consumer group (for monitoring only), and a
// task waiting for its final checkpoint or stopping finishes.
func (s *Subtask) checkpointComplete(o *kernel.Out, id int64) {
	c := &s.ck
	if c.changes != nil {
		c.changes.Complete(id)
	}
	if s.exactlyOnce() {
		s.sendTxn(o, s.w.Commit(id))
	}
	if s.isSource {
		// the offsets the snapshot of this checkpoint stored, not the
		// reader's position now
		if offs := s.src.OffsetsToCommit(id); offs != nil {
			m := &messages.CommitOffsets{Group: s.cfg.SourceTopic + "-flinksim", CheckpointId: id, Offsets: offs}
			s.sendKafka(o, 0, &messages.Envelope_CommitOffsets{CommitOffsets: m})
		}
	}
	if (c.awaitFinal && c.finalID > 0 && id >= c.finalID) || (c.stopping && id >= c.stopID) {
		s.finishTask(o)
	}
}

// checkpointAborted is notifyCheckpointAborted: a stop-with-savepoint that
// failed lets the sources go on.
func (s *Subtask) checkpointAborted(o *kernel.Out, id int64) {
	if s.ck.stopping && s.ck.stopID == id {
		s.ck.stopping = false
	}
	if s.ck.handler != nil {
		act := s.ck.handler.OnCancellation(id)
		if !act.Ignored {
			s.applyBarrierAction(o, act, -1, false)
		}
	}
}

// finishTask ends the task's output after its final checkpoint or
// savepoint: EndOfPartition downstream, FINISHED once it is sent.
func (s *Subtask) finishTask(o *kernel.Out) {
	if s.finishedAll {
		return
	}
	s.finishedAll = true
	if s.exactlyOnce() && s.ck.enabled || s.exactlyOnce() && s.ck.stopping {
		// KafkaWriter.close aborts the transaction still open (the one
		// begun after the last snapshot)
		s.flushSink(o, 0)
		s.sendTxn(o, s.w.Abort())
	}
	if s.rp != nil {
		s.rp.EndOfPartition()
		return
	}
	s.report(o)
}
