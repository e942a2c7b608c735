package actors

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/checkpoint"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kafka"
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

	// incremental snapshots: the snapshot epoch in which each key last changed
	keyMod         map[string]int64
	epoch          int64
	epochOf        map[int64]int64
	completedEpoch int64

	// the exactly-once sink's transactions
	txn          string // open transaction written into
	precommitted []committable
	lastKafka    vt.Time // delivery time of the last message to the broker, to keep them in order

	replayIn  []*messages.InFlightRecord // restored input channel state, processed first
	resume    []bool                     // per channel: its producer blocked after an aligned barrier, to resume
	beforeEnd []*messages.Buffer         // per channel: a barrier to queue before its EndOfPartition
	lastAlign int64                      // alignment duration of the last completed alignment (ms)
}

type committable struct {
	id         string
	checkpoint int64
}

// pendingAck is an unaligned snapshot whose input channel state is not yet
// complete: channels whose barrier is still to come keep adding what they
// deliver until it arrives.
type pendingAck struct {
	ack   *messages.AcknowledgeCheckpoint
	delay vt.Time // upload time of the operator state
}

func (s *Subtask) exactlyOnce() bool { return s.hasSink && s.cfg.DeliveryGuarantee == "exactly-once" }

// initCheckpointing sets the barrier handler up and restores the state the
// SubmitTask carries.
func (s *Subtask) initCheckpointing(o *Out) {
	c := &s.ck
	c.enabled = s.d.Checkpointing
	if s.cfg.StateBackend == "rocksdb" && s.cfg.IncrementalCheckpoints {
		c.keyMod = map[string]int64{} // changed keys, only where snapshots are incremental
	}
	c.epochOf = map[int64]int64{}
	if !s.isSource {
		c.handler = checkpoint.NewBarrierHandler(checkpoint.BarrierHandlerConfig{NumChannels: len(s.channels),
			Unaligned: s.cfg.UnalignedCheckpoints, AlignedTimeoutMs: s.cfg.AlignedCheckpointTimeout.Milliseconds()})
		c.blocked = make([]bool, len(s.channels))
		c.resume = make([]bool, len(s.channels))
		c.barrierQueued = make([]int, len(s.channels))
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
			s.rp.AddRecord(s.target(rec.Key), rec.Key, rec.Timestamp, rec.Value)
			s.m.recordsOut++
		}
		o.Log(eventlog.KindStateRestored, messages.Int("checkpoint_id", s.d.RestoreCheckpointId),
			messages.Int("window_keys", int64(len(r.Windows))), messages.Int("value_keys", int64(len(r.Values))),
			messages.Int("input_channel_records", int64(len(r.InputChannelState))),
			messages.Int("output_channel_records", int64(len(r.OutputChannelState))),
			messages.Raw("committables", jsonStrings(r.Committables)))
	}
	if s.exactlyOnce() {
		// KafkaSink recovery: commit what the restored checkpoint
		// pre-committed, abort what later checkpoints of the old subtasks
		// left open (TransactionAborter, from checkpoint 1 on a fresh
		// start), then open the next transaction
		next, oldP := int64(1), int(s.d.Parallelism)
		if r != nil {
			for _, id := range r.Committables {
				s.txnRequest(o, messages.TxnRequest_COMMIT, id)
			}
			next, oldP = s.d.RestoreCheckpointId+1, int(s.d.RestoreParallelism)
		}
		for old := s.index; old < max(oldP, s.index+1); old += int(s.d.Parallelism) {
			if brokenRecovery {
				// the deliberately broken build (brokenbuild_abort.go)
				s.txnRequest(o, messages.TxnRequest_COMMIT, kafka.TransactionalID(s.cfg.TransactionalIDPrefix, old, next))
				continue
			}
			s.sendKafka(o, 0, &messages.Envelope_TxnRequest{TxnRequest: &messages.TxnRequest{Op: messages.TxnRequest_ABORT_LINGERING,
				Prefix: s.cfg.TransactionalIDPrefix, Subtask: int32(old), FromCheckpoint: next}})
		}
		s.beginTxn(o, next)
	}
}

// sendKafka sends a message to the broker delay after now, never before an
// earlier one (the producer's requests arrive in order).
func (s *Subtask) sendKafka(o *Out, delay vt.Time, body messages.Body) {
	at := max(o.Now()+delay+rpcLatency(s.cfg), s.ck.lastKafka)
	s.ck.lastKafka = at
	o.SendAt(KafkaName, at, body)
}

func (s *Subtask) txnRequest(o *Out, op messages.TxnRequest_Op, id string) {
	s.sendKafka(o, 0, &messages.Envelope_TxnRequest{TxnRequest: &messages.TxnRequest{Op: op, TransactionalId: id}})
}

func (s *Subtask) beginTxn(o *Out, checkpointID int64) {
	s.ck.txn = kafka.TransactionalID(s.cfg.TransactionalIDPrefix, s.index, checkpointID)
	s.txnRequest(o, messages.TxnRequest_BEGIN, s.ck.txn)
}

// flushSink sends the sink records of the slice so far, delay after now.
func (s *Subtask) flushSink(o *Out, delay vt.Time) {
	if len(s.sinkOut) == 0 {
		return
	}
	p := &messages.Produce{Topic: s.cfg.SinkTopic, Records: s.sinkOut}
	if s.exactlyOnce() {
		p.TransactionalId = s.ck.txn
	}
	s.sendKafka(o, delay, &messages.Envelope_Produce{Produce: p})
	s.sinkOut = nil
}

// ---- source: TriggerCheckpoint -------------------------------------------

// triggerCheckpoint is a source subtask's part of a checkpoint
// (StreamTask.triggerCheckpointAsync on a source): snapshot the split
// offsets, then emit the barrier into every output subpartition behind the
// records emitted so far.
func (s *Subtask) triggerCheckpoint(o *Out, m *messages.TriggerCheckpoint) {
	if (s.status != "RUNNING" && s.status != "FINISHED") || s.ck.stopping {
		s.decline(o, m.CheckpointId, checkpoint.ReasonCheckpointDeclinedTaskNotReady)
		return
	}
	// a task that finished after its final checkpoint, the JobManager not
	// knowing yet, acknowledges with its final state and emits no barrier,
	// as the JobManager does for a FINISHED task (FLIP-147)
	b := &messages.Buffer{CheckpointId: m.CheckpointId, CheckpointTimestampMs: m.TimestampMs, CheckpointKind: m.Kind,
		Unaligned: m.Unaligned}
	if !s.isSource && s.insertBarriers(o, b) {
		return
	}
	s.spend(o, s.snapshot(o, b, m.Unaligned, nil, 0))
}

// insertBarriers is a trigger of a task whose upstream tasks all finished
// (FLIP-147): the barrier goes right before the EndOfPartition of every
// channel still open, behind the data queued there, so that data is
// processed (or, unaligned, persisted) before the snapshot
// (InputChannel.insertBarrierBeforeEndOfPartition). An EndOfPartition still
// on its way gets the barrier in front when it arrives. It returns false
// when every channel has ended: the snapshot is taken at once.
func (s *Subtask) insertBarriers(o *Out, b *messages.Buffer) bool {
	inserted := false
	for ci, ch := range s.channels {
		if ch.ended {
			continue
		}
		inserted = true
		if s.hasEndQueued(ci) {
			// unaligned: handled at once, overtaking the channel's queue
			// (triggerUnfinishedChannelsCheckpoint); aligned: right
			// before the EndOfPartition
			if s.ck.current == nil || b.CheckpointId > s.ck.current.CheckpointId {
				s.ck.current = b
			}
			s.spend(o, s.barrierBeforeEnd(o, ci, b))
			continue
		}
		if s.ck.beforeEnd == nil {
			s.ck.beforeEnd = make([]*messages.Buffer, len(s.channels))
		}
		s.ck.beforeEnd[ci] = insertedBarrier(b)
	}
	return inserted
}

func (s *Subtask) hasEndQueued(ci int) bool {
	for _, q := range s.channels[ci].buffers {
		if q.IsEvent && q.Kinds[0] == exchange.KindEndOfPartition {
			return true
		}
	}
	return false
}

// insertedBarrier is a barrier of checkpoint b the task puts into one of
// its own channels (its producer finished and sends none).
func insertedBarrier(b *messages.Buffer) *messages.Buffer {
	bb := exchange.BarrierBuffer(b)
	bb.Inserted = true
	return bb
}

// spend makes the task busy for cost more (work done outside a slice, such
// as a snapshot's synchronous part or a priority barrier).
func (s *Subtask) spend(o *Out, cost vt.Time) {
	s.busyUntil = max(s.busyUntil, o.Now()) + cost
	s.m.busyAcc += cost
}

// resumeChannel asks channel ci's producer to send again after an aligned
// barrier (ResumeConsumption through the InputChannel).
func (s *Subtask) resumeChannel(o *Out, ci int) {
	s.ck.resume[ci] = false
	o.Send(jobgraph.ChannelName(o.Name(), ci), 0, &messages.Envelope_ResumeConsumption{ResumeConsumption: &messages.ResumeConsumption{}})
}

// endOfPartitionArrives puts a barrier waiting for channel ci's
// EndOfPartition in front of it.
func (s *Subtask) endOfPartitionArrives(o *Out, ci int) {
	if s.ck.beforeEnd == nil || s.ck.beforeEnd[ci] == nil {
		return
	}
	if b := s.ck.beforeEnd[ci]; b.Unaligned {
		s.ck.beforeEnd[ci] = nil
		s.spend(o, s.onChannelBarrier(o, ci, b))
		return
	}
	ch := s.channels[ci]
	if len(ch.buffers) == 0 {
		s.ready = append(s.ready, ci)
	}
	ch.buffers = append(ch.buffers, s.ck.beforeEnd[ci])
	s.ck.beforeEnd[ci] = nil
	s.ck.barrierQueued[ci]++
}

func (s *Subtask) decline(o *Out, id int64, r checkpoint.FailureReason) {
	o.Log(eventlog.KindCheckpointDeclinedByTask, messages.Int("checkpoint_id", id), messages.Str("reason", r.String()))
	o.Send(JobManagerName, rpcLatency(s.cfg), &messages.Envelope_DeclineCheckpoint{DeclineCheckpoint: &messages.DeclineCheckpoint{
		CheckpointId: id, Task: jobgraph.BaseSubtaskName(o.Name()), Reason: r.String()}})
}

// ---- gate: barriers --------------------------------------------------------

// barrierOf reads a barrier buffer as the handler takes it.
func barrierOf(b *messages.Buffer) checkpoint.Barrier {
	return checkpoint.Barrier{ID: b.CheckpointId, TimestampMs: b.CheckpointTimestampMs,
		Savepoint: b.CheckpointKind != messages.CheckpointKind_CHECKPOINT, Unaligned: b.Unaligned}
}

// onChannelBarrier processes a barrier from channel ci: an aligned one when
// the task reaches it in the channel, an unaligned (priority) one as soon as
// it arrives. It returns the cost of a snapshot it triggers.
func (s *Subtask) onChannelBarrier(o *Out, ci int, b *messages.Buffer) vt.Time {
	first := s.ck.current == nil || b.CheckpointId > s.ck.current.CheckpointId
	if first || b.CheckpointId == s.ck.current.CheckpointId {
		s.ck.current = b
	}
	act := s.ck.handler.OnBarrier(ci, barrierOf(b), vt.Millis(o.Now()))
	if act.Ignored && s.ck.resume[ci] {
		// an obsolete barrier starts no alignment: its channel goes on at once
		s.resumeChannel(o, ci)
	}
	cost := s.applyBarrierAction(o, act, ci, !b.Unaligned)
	if first && !act.Ignored {
		// channels whose producer finished send no barrier: the barrier
		// goes before their queued EndOfPartition (FLIP-147)
		for k := range s.channels {
			if k != ci && !s.channels[k].ended && s.hasEndQueued(k) && !s.barrierIn(k, b.CheckpointId) {
				cost += s.barrierBeforeEnd(o, k, b)
			}
		}
	}
	return cost
}

// barrierIn reports whether a barrier of checkpoint id is queued in channel ci.
func (s *Subtask) barrierIn(ci int, id int64) bool {
	for _, q := range s.channels[ci].buffers {
		if q.IsEvent && q.Kinds[0] == exchange.KindBarrier && q.CheckpointId == id {
			return true
		}
	}
	return false
}

// barrierBeforeEnd gives channel ci, whose EndOfPartition is queued, the
// barrier b: an unaligned one at once, an aligned one right before the
// EndOfPartition, behind the data.
func (s *Subtask) barrierBeforeEnd(o *Out, ci int, b *messages.Buffer) vt.Time {
	bb := insertedBarrier(b)
	if b.Unaligned {
		act := s.ck.handler.OnBarrier(ci, barrierOf(bb), vt.Millis(o.Now()))
		return s.applyBarrierAction(o, act, ci, false)
	}
	ch := s.channels[ci]
	for k, q := range ch.buffers {
		if q.IsEvent && q.Kinds[0] == exchange.KindEndOfPartition {
			ch.buffers = append(ch.buffers[:k], append([]*messages.Buffer{bb}, ch.buffers[k:]...)...)
			s.ck.barrierQueued[ci]++
			break
		}
	}
	return 0
}

// checkpointTimer is the aligned-checkpoint-timeout firing.
func (s *Subtask) checkpointTimer(o *Out) {
	if s.ck.handler == nil {
		return
	}
	act := s.ck.handler.OnTimer(vt.Millis(o.Now()))
	s.spend(o, s.applyBarrierAction(o, act, -1, false))
}

// applyBarrierAction carries out what the barrier handler decided. from is
// the channel whose barrier caused it (-1 for a timer); queued says the
// barrier was taken from its channel's queue (aligned) rather than
// overtaking it.
func (s *Subtask) applyBarrierAction(o *Out, act checkpoint.BarrierAction, from int, queued bool) vt.Time {
	c := &s.ck
	if act.Ignored {
		return 0
	}
	if act.Abort {
		s.decline(o, act.AbortCheckpointID, act.FailureReason)
		if c.pending != nil && c.pending.ack.CheckpointId == act.AbortCheckpointID {
			c.pending = nil
		}
	}
	if act.UnblockAll || act.Abort || act.AllBarriersReceived {
		s.resumeConsumption(o)
	}
	if act.UnblockAll {
		clear(c.blocked)
	}
	for _, ch := range act.BlockChannels {
		c.blocked[ch] = true
	}
	var cost vt.Time
	if act.TriggerSnapshot && c.current != nil && c.current.CheckpointId == act.CheckpointID {
		var persisted []*messages.InFlightRecord
		if act.Unaligned {
			for _, ch := range act.PersistChannels {
				persisted = s.queuedRecords(ch, act.CheckpointID, persisted, ch == from && !queued)
			}
		}
		b := c.current
		if act.Unaligned != b.Unaligned {
			b = &messages.Buffer{CheckpointId: b.CheckpointId, CheckpointTimestampMs: b.CheckpointTimestampMs,
				CheckpointKind: b.CheckpointKind, Unaligned: act.Unaligned}
		}
		align := int64(0)
		if act.AllBarriersReceived {
			align = act.AlignmentDurationMs
		}
		cost = s.snapshot(o, b, act.Unaligned, persisted, align)
		if act.Unaligned && !act.AllBarriersReceived {
			return cost
		}
	}
	if act.AllBarriersReceived {
		c.lastAlign = act.AlignmentDurationMs
		if c.pending != nil && c.pending.ack.CheckpointId == act.CheckpointID {
			c.pending.ack.AlignmentMs = act.AlignmentDurationMs
			s.sendAck(o, c.pending.ack, c.pending.delay)
			c.pending = nil
		}
	}
	if at, ok := c.handler.NextTimer(); ok {
		o.Timer(max(0, vt.FromMillis(at)-o.Now()), timerCheckpointAlignment, at)
	}
	return cost
}

// resumeConsumption asks the producers that blocked a subpartition after
// an aligned barrier to send again, once the alignment has ended
// (CheckpointedInputGate.resumeConsumption -> ResumeConsumption).
func (s *Subtask) resumeConsumption(o *Out) {
	for ch, r := range s.ck.resume {
		if r {
			s.resumeChannel(o, ch)
		}
	}
}

// cancel is CancelTask for a running task: the operators close, so the
// exactly-once writer aborts the transaction it has open
// (KafkaWriter.close), then the task is CANCELED and its TaskManager stops it.
func (s *Subtask) cancel(o *Out) {
	if s.exactlyOnce() && s.ck.txn != "" && !s.finishedAll {
		s.sinkOut = nil
		s.txnRequest(o, messages.TxnRequest_ABORT, s.ck.txn)
	}
	s.setState(o, "CANCELED", "")
}

// queuedRecords appends the records queued in channel ch ahead of the
// barrier of checkpoint id (all of them when the barrier is not queued,
// i.e. it overtook them).
func (s *Subtask) queuedRecords(ch int, id int64, dst []*messages.InFlightRecord, all bool) []*messages.InFlightRecord {
	for _, b := range s.channels[ch].buffers {
		if !all && b.IsEvent && b.Kinds[0] == exchange.KindBarrier && b.CheckpointId >= id {
			break
		}
		dst = appendRecords(dst, b)
	}
	return dst
}

func appendRecords(dst []*messages.InFlightRecord, b *messages.Buffer) []*messages.InFlightRecord {
	if b.IsEvent {
		return dst
	}
	for k, kind := range b.Kinds {
		if kind == exchange.KindRecord {
			dst = append(dst, &messages.InFlightRecord{Key: b.Keys[k], Timestamp: b.Timestamps[k], Value: b.Values[k]})
		}
	}
	return dst
}

// onDataArrived adds a data buffer that arrives on a channel still
// persisting for an unaligned snapshot to its channel state.
func (s *Subtask) onDataArrived(ci int, b *messages.Buffer) {
	c := &s.ck
	if c.pending == nil || c.barrierQueued[ci] > 0 || !c.handler.Persisting(ci) {
		return
	}
	st := c.pending.ack.State
	n := len(st.InputChannelState)
	st.InputChannelState = appendRecords(st.InputChannelState, b)
	added := int64(len(st.InputChannelState) - n)
	bytes := added * int64(s.cfg.RecordBytes)
	c.pending.ack.PersistedRecords += added
	c.pending.ack.PersistedBytes += bytes
	c.pending.ack.StateSizeBytes += bytes
	c.pending.ack.IncrementalSizeBytes += bytes
	if s.cfg.UploadSpeed > 0 {
		up := vt.Time(bytes * 1_000_000 / s.cfg.UploadSpeed)
		c.pending.delay += up
		c.pending.ack.AsyncMs = vt.Millis(vt.FromMillis(c.pending.ack.AsyncMs) + up)
	}
}

// ---- snapshots ------------------------------------------------------------

// touch records that key's state changed (for incremental snapshots).
func (s *Subtask) touch(key string) {
	if s.ck.keyMod != nil {
		s.ck.keyMod[key] = s.ck.epoch
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
func (s *Subtask) snapshot(o *Out, b *messages.Buffer, unaligned bool, inputState []*messages.InFlightRecord, alignMs int64) vt.Time {
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
	incremental := s.cfg.StateBackend == "rocksdb" && s.cfg.IncrementalCheckpoints
	addKeyed := func(sizes map[string]int64) {
		for k, sz := range sizes {
			full += sz
			entries++
			if mod, ok := c.keyMod[k]; ok && mod >= c.completedEpoch {
				changed += sz
			}
		}
	}
	if s.isSource {
		for _, sp := range s.splits {
			st.Splits = append(st.Splits, &messages.SplitState{Partition: sp.partition, Offset: sp.offset, StoppingOffset: sp.stop})
			full += splitStateBytes
			entries++
		}
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
	c.epoch++
	c.epochOf[id] = c.epoch
	if s.rp != nil {
		for _, r := range s.rp.Barrier(b) {
			st.OutputChannelState = append(st.OutputChannelState, &messages.InFlightRecord{Key: r.Key, Timestamp: r.Timestamp, Value: r.Value})
		}
	}
	sync := vt.Time(entries) // 1 µs per state entry
	if s.hasSink && !s.finishedAll {
		s.flushSink(o, sync)
		if s.exactlyOnce() {
			s.txnRequest(o, messages.TxnRequest_PRE_COMMIT, c.txn)
			c.precommitted = append(c.precommitted, committable{id: c.txn, checkpoint: id})
			for _, p := range c.precommitted {
				st.Committables = append(st.Committables, p.id)
			}
			s.beginTxn(o, id+1)
		}
	}
	persistedRecords := int64(len(st.InputChannelState) + len(st.OutputChannelState))
	persistedBytes := persistedRecords * int64(s.cfg.RecordBytes)
	upload := changed + persistedBytes
	async := vt.Time(0)
	if s.cfg.UploadSpeed > 0 {
		async = vt.Time(upload * 1_000_000 / s.cfg.UploadSpeed)
	}
	ack := &messages.AcknowledgeCheckpoint{CheckpointId: id, Task: jobgraph.BaseSubtaskName(o.Name()),
		StateSizeBytes: full + persistedBytes, IncrementalSizeBytes: upload, PersistedRecords: persistedRecords,
		PersistedBytes: persistedBytes, AlignmentMs: alignMs, SyncMs: vt.Millis(sync), AsyncMs: vt.Millis(async), State: st}
	o.Log(eventlog.KindCheckpointSnapshot, messages.Int("checkpoint_id", id), messages.Str("kind", kindName(b.CheckpointKind)),
		messages.Bool("unaligned", unaligned), messages.Int("state_size", ack.StateSizeBytes),
		messages.Int("checkpointed_size", ack.IncrementalSizeBytes), messages.Int("persisted_records", persistedRecords),
		messages.Int("alignment_ms", alignMs))
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
		c.pending = &pendingAck{ack: ack, delay: sync + async}
		return sync
	}
	if s.rp != nil && !unaligned && b.CheckpointKind == messages.CheckpointKind_CHECKPOINT && s.cfg.UnalignedCheckpoints &&
		s.cfg.AlignedCheckpointTimeout > 0 && s.rp.BarrierQueued(id) {
		// a timeoutable aligned barrier: the channel state is complete when
		// it has left every output queue, or when it times out there and
		// overtakes what is ahead of it
		c.pendingOut = &pendingAck{ack: ack, delay: sync + async}
		at := b.CheckpointTimestampMs + s.cfg.AlignedCheckpointTimeout.Milliseconds()
		o.Timer(max(0, vt.FromMillis(at)-o.Now()), timerCheckpointOutput, id)
		return sync
	}
	s.sendAck(o, ack, sync+async)
	return sync
}

// outputBarrierSent acknowledges an aligned snapshot once its barrier has
// left every output queue (called after each Poll).
func (s *Subtask) outputBarrierSent(o *Out) {
	p := s.ck.pendingOut
	if p == nil || s.rp.BarrierQueued(p.ack.CheckpointId) {
		return
	}
	s.ck.pendingOut = nil
	s.sendAck(o, p.ack, p.delay)
}

// outputBarrierTimeout is the aligned-checkpoint-timeout of a barrier still
// in the output: it turns unaligned, and what it overtakes is channel state.
func (s *Subtask) outputBarrierTimeout(o *Out, id int64) {
	p := s.ck.pendingOut
	if p == nil || p.ack.CheckpointId != id {
		return
	}
	s.ck.pendingOut = nil
	recs := s.rp.TimeoutBarrier(id)
	for _, r := range recs {
		p.ack.State.OutputChannelState = append(p.ack.State.OutputChannelState, &messages.InFlightRecord{Key: r.Key, Timestamp: r.Timestamp, Value: r.Value})
	}
	bytes := int64(len(recs)) * int64(s.cfg.RecordBytes)
	p.ack.PersistedRecords += int64(len(recs))
	p.ack.PersistedBytes += bytes
	p.ack.StateSizeBytes += bytes
	p.ack.IncrementalSizeBytes += bytes
	o.Log(eventlog.KindBarrierTimedOut, messages.Int("checkpoint_id", id), messages.Int("persisted_records", int64(len(recs))))
	s.sendAck(o, p.ack, p.delay)
}

func (s *Subtask) sendAck(o *Out, ack *messages.AcknowledgeCheckpoint, delay vt.Time) {
	o.Send(JobManagerName, delay+rpcLatency(s.cfg), &messages.Envelope_AcknowledgeCheckpoint{AcknowledgeCheckpoint: ack})
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
func (s *Subtask) checkpointComplete(o *Out, id int64) {
	c := &s.ck
	if e, ok := c.epochOf[id]; ok && e > c.completedEpoch {
		c.completedEpoch = e
	}
	for k := range c.epochOf {
		if k <= id {
			delete(c.epochOf, k)
		}
	}
	if s.exactlyOnce() {
		kept := c.precommitted[:0]
		for _, p := range c.precommitted {
			if p.checkpoint <= id {
				s.txnRequest(o, messages.TxnRequest_COMMIT, p.id)
				continue
			}
			kept = append(kept, p)
		}
		c.precommitted = kept
	}
	if s.isSource && len(s.splits) > 0 {
		m := &messages.CommitOffsets{Group: s.cfg.SourceTopic + "-flinksim", CheckpointId: id}
		for _, sp := range s.splits {
			m.Offsets = append(m.Offsets, &messages.PartitionOffset{Partition: sp.partition, Offset: sp.offset})
		}
		s.sendKafka(o, 0, &messages.Envelope_CommitOffsets{CommitOffsets: m})
	}
	if (c.awaitFinal && c.finalID > 0 && id >= c.finalID) || (c.stopping && id >= c.stopID) {
		s.finishTask(o)
	}
}

// checkpointAborted is notifyCheckpointAborted: a stop-with-savepoint that
// failed lets the sources go on.
func (s *Subtask) checkpointAborted(o *Out, id int64) {
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
func (s *Subtask) finishTask(o *Out) {
	if s.finishedAll {
		return
	}
	s.finishedAll = true
	if s.exactlyOnce() && s.ck.enabled || s.exactlyOnce() && s.ck.stopping {
		// KafkaWriter.close aborts the transaction still open (the one
		// begun after the last snapshot)
		s.flushSink(o, 0)
		s.txnRequest(o, messages.TxnRequest_ABORT, s.ck.txn)
	}
	if s.rp != nil {
		s.rp.EndOfPartition()
		return
	}
	s.report(o)
}
