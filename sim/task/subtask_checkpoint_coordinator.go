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

// subtaskCheckpointCoordinator is a task's part in checkpoints: Flink's
// SubtaskCheckpointCoordinatorImpl with the AsyncCheckpointRunnable. It
// restores the state the SubmitTask carries, takes snapshots of the task's
// state (the synchronous part, then the upload), forwards the barrier into
// the output (unaligned: overtaking it, the records overtaken becoming
// output channel state), acknowledges or declines to the
// CheckpointCoordinator, and handles the notifications: the exactly-once
// KafkaSink's commits, the source's offset commits, the final checkpoint
// after the input ended (FLIP-147) and stop-with-savepoint. The barriers on
// an InputGate are the singleCheckpointBarrierHandler's, which calls
// snapshot when they are aligned.
type subtaskCheckpointCoordinator struct {
	t          *StreamTask
	enabled    bool        // execution.checkpointing.interval > 0: wait for a final checkpoint
	pending    *pendingAck // an unaligned snapshot still collecting channel state
	pendingOut *pendingAck // an aligned snapshot whose timeoutable barrier still waits in the output

	awaitFinal bool  // input ended: finish once a checkpoint taken after it completes
	finalID    int64 // that checkpoint (0: none taken yet)
	stopping   bool  // stop-with-savepoint: no more input after the savepoint's barrier
	stopID     int64

	changes *checkpoint.ChangeTracker // incremental snapshots: keys changed since the last completed checkpoint (nil: full snapshots)
}

// pendingAck is an unaligned snapshot whose input channel state is not yet
// complete: channels whose barrier is still to come keep adding what they
// deliver until it arrives.
type pendingAck struct {
	ack        *messages.AcknowledgeCheckpoint
	syncEnd    vt.Time // when the synchronous part ends, and the asynchronous one starts (µs)
	stateBytes int64   // what the state upload writes (the channel state is the ack's PersistedBytes)
}

// init sets checkpointing up and restores the state the SubmitTask
// carries (StreamTask.restore): the keyed state, the input channel state
// to replay, the output channel state to send again, and the KafkaSink's
// transactions.
func (c *subtaskCheckpointCoordinator) init(o *kernel.Out) {
	t := c.t
	// a task waits for a final checkpoint once its input ended only when
	// checkpoints go on after tasks finish (FLIP-147)
	c.enabled = t.d.Checkpointing && t.cfg.CheckpointsAfterTasksFinish
	if t.cfg.StateBackend == config.BackendRocksDB && t.cfg.IncrementalCheckpoints {
		c.changes = checkpoint.NewChangeTracker() // changed keys, only where snapshots are incremental
	}
	r := t.d.Restore
	if r != nil {
		if !t.chain.restore(o, r) {
			return
		}
		if t.input != nil {
			t.input.replayIn = r.InputChannelState
		}
		for _, rec := range r.OutputChannelState {
			// re-emit the output channel state before anything new
			t.rp.AddPayloadRecord(t.target(rec.Key), rec.Key, rec.Timestamp, rec.Value, rec.Payload)
			t.m.recordsOut++
		}
		o.Log(eventlog.StateRestored{CheckpointID: t.d.RestoreCheckpointId, WindowKeys: int64(len(r.Windows)), ValueKeys: int64(len(r.Values)), InputChannelRecords: int64(len(r.InputChannelState)), OutputChannelRecords: int64(len(r.OutputChannelState)), Committables: eventlog.JSONStrings(r.Committables)})
	}
	if sink := t.chain.sink; sink != nil {
		// KafkaSink recovery: commit what the restored checkpoint
		// pre-committed, abort what later checkpoints left open, begin
		sink.sendTxn(o, sink.w.Init(r.GetCommittables(), t.d.RestoreCheckpointId, int(t.d.Parallelism), int(t.d.RestoreParallelism), r == nil))
	}
}

// triggerCheckpoint is TriggerCheckpoint reaching the task
// (StreamTask.triggerCheckpointAsync): a source snapshots its split
// offsets, then emits the barrier into every output subpartition behind
// the records emitted so far; a task whose upstream tasks all finished puts
// the barrier into its own channels (FLIP-147).
func (c *subtaskCheckpointCoordinator) triggerCheckpoint(o *kernel.Out, m *messages.TriggerCheckpoint) {
	t := c.t
	switch {
	case t.status != status.Running || c.stopping:
		// Task.triggerCheckpointBarrier declines for a task that is not
		// RUNNING: one that finished after its final checkpoint, the
		// coordinator not knowing yet, among them
		c.decline(o, m.CheckpointId, checkpoint.ReasonCheckpointDeclinedTaskNotReady)
		return
	case t.finishedAll:
		// its operators finished after the final checkpoint: the task is
		// closing (StreamTask.triggerCheckpointAsync on a finishing task)
		c.decline(o, m.CheckpointId, checkpoint.ReasonCheckpointDeclinedTaskClosing)
		return
	}
	b := &messages.Buffer{CheckpointId: m.CheckpointId, CheckpointTimestampMs: m.TimestampMs, CheckpointKind: m.Kind,
		Unaligned: m.Unaligned}
	if t.input != nil && t.input.barriers.insertBarriers(o, b) {
		return
	}
	t.spend(o, c.snapshot(o, b, m.Unaligned, nil, 0))
}

func (c *subtaskCheckpointCoordinator) decline(o *kernel.Out, id int64, r checkpoint.FailureReason) {
	o.Log(eventlog.CheckpointDeclinedByTask{CheckpointID: id, Reason: r.String()})
	o.Send(jobgraph.CheckpointCoordinatorName, vt.FromDuration(c.t.cfg.RPCLatency()), &messages.Envelope_DeclineCheckpoint{DeclineCheckpoint: &messages.DeclineCheckpoint{
		CheckpointId: id, Task: jobgraph.BaseSubtaskName(o.Name()), Reason: r.String()}})
}

// touch records that key's state changed (for incremental snapshots).
func (c *subtaskCheckpointCoordinator) touch(key string) {
	if c.changes != nil {
		c.changes.Touch(key)
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
func (c *subtaskCheckpointCoordinator) snapshot(o *kernel.Out, b *messages.Buffer, unaligned bool, inputState []*messages.InFlightRecord, alignMs int64) vt.Time {
	t := c.t
	id := b.CheckpointId
	// restored channel state not yet replayed stays channel state: it comes
	// before anything the channels hold now
	var in []*messages.InFlightRecord
	if t.input != nil && len(t.input.replayIn) > 0 {
		in = append(append(in, t.input.replayIn...), inputState...)
	} else {
		in = inputState
	}
	st := &messages.TaskStateSnapshot{InputChannelState: in}
	var full, changed int64
	entries := 0
	incremental := t.cfg.StateBackend == config.BackendRocksDB && t.cfg.IncrementalCheckpoints
	if t.source != nil {
		full, entries = t.source.snapshotState(id, st)
		changed = full
	}
	kFull, kChanged, kEntries := t.chain.snapshotState(o, st, c.changes)
	full, changed, entries = full+kFull, changed+kChanged, entries+kEntries
	if !incremental {
		changed = full
	}
	if c.changes != nil {
		c.changes.Snapshot(id)
	}
	if t.rp != nil {
		for _, r := range t.rp.Barrier(b) {
			st.OutputChannelState = append(st.OutputChannelState, inFlightRecord(r))
		}
	}
	// the synchronous part: its fixed cost and 1 µs per state entry
	sync := vt.FromDuration(t.cfg.CheckpointSyncTime) + vt.Time(entries)
	if sink := t.chain.sink; sink != nil && !t.finishedAll {
		sink.flush(o, sync)
		if sink.exactlyOnce() {
			reqs, committables := sink.w.PrepareCommit(id)
			st.Committables = committables
			sink.sendTxn(o, reqs)
		}
	}
	persistedRecords := int64(len(st.InputChannelState) + len(st.OutputChannelState))
	persistedBytes := persistedRecords * int64(t.cfg.RecordBytes)
	pa := &pendingAck{syncEnd: o.Now() + sync, stateBytes: changed, ack: &messages.AcknowledgeCheckpoint{CheckpointId: id,
		Task: jobgraph.BaseSubtaskName(o.Name()), StateSizeBytes: full + persistedBytes, IncrementalSizeBytes: changed + persistedBytes,
		PersistedRecords: persistedRecords, PersistedBytes: persistedBytes, AlignmentMs: alignMs, SyncMs: vt.Millis(sync), State: st}}
	ack := pa.ack
	// checkpointStartDelay: from the trigger to the first barrier here
	// (the trigger itself at a source)
	startDelay := max(0, vt.Millis(o.Now())-alignMs-b.CheckpointTimestampMs)
	o.Log(eventlog.CheckpointSnapshot{CheckpointID: id, CheckpointKind: kindName(b.CheckpointKind), Unaligned: unaligned, StateSize: ack.StateSizeBytes, CheckpointedSize: ack.IncrementalSizeBytes, PersistedRecords: persistedRecords, StartDelayMs: startDelay, AlignmentMs: alignMs, SyncMs: vt.Millis(sync)})
	if c.awaitFinal && c.finalID == 0 && (t.rp == nil || t.rp.Drained()) {
		// the final checkpoint: taken after the input ended and, as Flink
		// waits for ResultPartition.getAllDataProcessedFuture, once the
		// output is sent, so the EndOfPartition that follows it is not
		// stuck behind data
		c.finalID = id
	}
	if b.CheckpointKind == messages.CheckpointKind_STOP_WITH_SAVEPOINT {
		c.stopping, c.stopID = true, id
	}
	if unaligned && t.input != nil && t.input.barriers.handler != nil && t.input.barriers.handler.CheckpointPending() {
		c.pending = pa
		return sync
	}
	if t.rp != nil && !unaligned && b.CheckpointKind == messages.CheckpointKind_CHECKPOINT && t.cfg.UnalignedCheckpoints &&
		t.cfg.AlignedCheckpointTimeout > 0 && t.rp.BarrierQueued(id) {
		// a timeoutable aligned barrier: the channel state is complete when
		// it has left every output queue, or when it times out there and
		// overtakes what is ahead of it
		c.pendingOut = pa
		at := b.CheckpointTimestampMs + t.cfg.AlignedCheckpointTimeout.Milliseconds()
		o.Timer(max(0, vt.FromMillis(at)-o.Now()), timerCheckpointOutput, id)
		return sync
	}
	c.sendAck(o, pa)
	return sync
}

// outputBarrierSent acknowledges an aligned snapshot once its barrier has
// left every output queue (called after each Poll).
func (c *subtaskCheckpointCoordinator) outputBarrierSent(o *kernel.Out) {
	p := c.pendingOut
	if p == nil || c.t.rp.BarrierQueued(p.ack.CheckpointId) {
		return
	}
	c.pendingOut = nil
	c.sendAck(o, p)
}

// outputBarrierTimeout is the aligned-checkpoint-timeout of a barrier still
// in the output: it turns unaligned, and what it overtakes is channel state.
func (c *subtaskCheckpointCoordinator) outputBarrierTimeout(o *kernel.Out, id int64) {
	p := c.pendingOut
	if p == nil || p.ack.CheckpointId != id {
		return
	}
	c.pendingOut = nil
	recs := c.t.rp.TimeoutBarrier(id)
	for _, r := range recs {
		p.ack.State.OutputChannelState = append(p.ack.State.OutputChannelState, inFlightRecord(r))
	}
	bytes := int64(len(recs)) * int64(c.t.cfg.RecordBytes)
	p.ack.PersistedRecords += int64(len(recs))
	p.ack.PersistedBytes += bytes
	p.ack.StateSizeBytes += bytes
	p.ack.IncrementalSizeBytes += bytes
	o.Log(eventlog.BarrierTimedOut{CheckpointID: id, PersistedRecords: int64(len(recs))})
	c.sendAck(o, p)
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
func (c *subtaskCheckpointCoordinator) sendAck(o *kernel.Out, p *pendingAck) {
	cfg := c.t.cfg
	async := max(c.storageTime(p.stateBytes, cfg.UploadSpeed), c.storageTime(p.ack.PersistedBytes, cfg.ChannelStateSpeed))
	p.ack.AsyncMs = vt.Millis(async)
	// the asynchronous part starts after the synchronous one, and ends no
	// earlier than the channel state it waited for is complete (now)
	delay := max(p.syncEnd-o.Now(), 0) + async + vt.FromDuration(cfg.CheckpointAckTime) + vt.FromDuration(cfg.RPCLatency())
	o.Send(jobgraph.CheckpointCoordinatorName, delay, &messages.Envelope_AcknowledgeCheckpoint{AcknowledgeCheckpoint: p.ack})
}

// storageTime is the virtual time writing a state stream of n bytes at
// speed bytes per second takes, with the file it needs when it is larger
// than state.storage.fs.memory-threshold (smaller streams travel inline in
// the acknowledgement, ByteStreamStateHandle).
func (c *subtaskCheckpointCoordinator) storageTime(n, speed int64) vt.Time {
	var d vt.Time
	if speed > 0 {
		d = vt.Time(n * 1_000_000 / speed)
	}
	if n > c.t.cfg.MemoryThreshold {
		d += vt.FromDuration(c.t.cfg.CheckpointFileTime)
	}
	return d
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
func (c *subtaskCheckpointCoordinator) checkpointComplete(o *kernel.Out, id int64) {
	t := c.t
	if c.changes != nil {
		c.changes.Complete(id)
	}
	if sink := t.chain.sink; sink.exactlyOnce() {
		sink.sendTxn(o, sink.w.Commit(id))
	}
	if t.source != nil {
		t.source.commitOffsets(o, id)
	}
	if (c.awaitFinal && c.finalID > 0 && id >= c.finalID) || (c.stopping && id >= c.stopID) {
		t.finishTask(o)
	}
}

// checkpointAborted is notifyCheckpointAborted: a stop-with-savepoint that
// failed lets the sources go on, and an alignment for it ends.
func (c *subtaskCheckpointCoordinator) checkpointAborted(o *kernel.Out, id int64) {
	if c.stopping && c.stopID == id {
		c.stopping = false
	}
	if c.t.input != nil {
		c.t.input.barriers.abort(o, id)
	}
}
