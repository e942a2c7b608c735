package task

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/checkpoint"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// singleCheckpointBarrierHandler is the checkpoint barriers of a task with
// an InputGate: Flink's SingleCheckpointBarrierHandler with its
// CheckpointedInputGate. Its rules (which barrier starts, blocks, times out
// or completes an alignment) are sim/checkpoint's BarrierHandler; this type
// carries out what that decides on the gate: channels blocked by an aligned
// barrier, barriers queued behind data, an unaligned (priority) barrier's
// channel state, an aligned barrier that times out and overtakes its
// channel (FLIP-76), barriers before an EndOfPartition (FLIP-147), and the
// producers to resume after an alignment.
type singleCheckpointBarrierHandler struct {
	in            *oneInputStreamTask
	handler       *checkpoint.BarrierHandler // nil until the task starts
	blocked       []bool                     // per input channel: blocked by an aligned barrier
	barrierQueued []int                      // per input channel: aligned barriers queued, not yet processed
	current       *messages.Buffer           // the barrier of the checkpoint the handler works on
	resume        []bool                     // per channel: its producer blocked after an aligned barrier, to resume
	beforeEnd     []*messages.Buffer         // per channel: a barrier to queue before its EndOfPartition
	lastAlign     int64                      // alignment duration of the last completed alignment (ms)
}

// init builds the handler for the gate's channels.
func (h *singleCheckpointBarrierHandler) init(cfg checkpoint.BarrierHandlerConfig) {
	h.handler = checkpoint.NewBarrierHandler(cfg)
	h.blocked = make([]bool, cfg.NumChannels)
	h.resume = make([]bool, cfg.NumChannels)
	h.barrierQueued = make([]int, cfg.NumChannels)
}

// isBlocked reports whether checkpoint alignment blocks channel ci.
func (h *singleCheckpointBarrierHandler) isBlocked(ci int) bool { return h.blocked[ci] }

// insertBarriers is a trigger of a task whose upstream tasks all finished
// (FLIP-147): the barrier goes right before the EndOfPartition of every
// channel still open, behind the data queued there, so that data is
// processed (or, unaligned, persisted) before the snapshot
// (InputChannel.insertBarrierBeforeEndOfPartition). An EndOfPartition still
// on its way gets the barrier in front when it arrives. It returns false
// when every channel has ended: the snapshot is taken at once.
func (h *singleCheckpointBarrierHandler) insertBarriers(o *kernel.Out, b *messages.Buffer) bool {
	gate := h.in.gate
	inserted := false
	for ci := 0; ci < gate.NumChannels(); ci++ {
		if gate.Channel(ci).Ended {
			continue
		}
		inserted = true
		if gate.HasEndQueued(ci) {
			// unaligned: handled at once, overtaking the channel's queue
			// (triggerUnfinishedChannelsCheckpoint); aligned: right
			// before the EndOfPartition
			if h.current == nil || b.CheckpointId > h.current.CheckpointId {
				h.current = b
			}
			h.in.t.spend(o, h.barrierBeforeEnd(o, ci, b))
			continue
		}
		if h.beforeEnd == nil {
			h.beforeEnd = make([]*messages.Buffer, gate.NumChannels())
		}
		h.beforeEnd[ci] = insertedBarrier(b)
	}
	return inserted
}

// insertedBarrier is a barrier of checkpoint b the task puts into one of
// its own channels (its producer finished and sends none).
func insertedBarrier(b *messages.Buffer) *messages.Buffer {
	bb := exchange.BarrierBuffer(b)
	bb.Inserted = true
	return bb
}

// resumeChannel asks channel ci's producer to send again after an aligned
// barrier (ResumeConsumption through the InputChannel).
func (h *singleCheckpointBarrierHandler) resumeChannel(o *kernel.Out, ci int) {
	h.resume[ci] = false
	o.Send(jobgraph.ChannelName(o.Name(), ci), 0, &messages.Envelope_ResumeConsumption{ResumeConsumption: &messages.ResumeConsumption{}})
}

// endOfPartitionArrives puts a barrier waiting for channel ci's
// EndOfPartition in front of it.
func (h *singleCheckpointBarrierHandler) endOfPartitionArrives(o *kernel.Out, ci int) {
	if h.beforeEnd == nil || h.beforeEnd[ci] == nil {
		return
	}
	if b := h.beforeEnd[ci]; b.Unaligned {
		h.beforeEnd[ci] = nil
		h.in.t.spend(o, h.onChannelBarrier(o, ci, b, false))
		return
	}
	h.in.gate.Enqueue(ci, h.beforeEnd[ci])
	h.beforeEnd[ci] = nil
	h.barrierQueued[ci]++
}

// barrierOf reads a barrier buffer as the handler takes it.
func barrierOf(b *messages.Buffer) checkpoint.Barrier {
	return checkpoint.Barrier{ID: b.CheckpointId, TimestampMs: b.CheckpointTimestampMs,
		Savepoint: b.CheckpointKind != messages.CheckpointKind_CHECKPOINT, Unaligned: b.Unaligned}
}

// onChannelBarrier processes a barrier from channel ci: an aligned one when
// the task reaches it in the channel, an unaligned (priority) one as soon as
// it arrives. It returns the cost of a snapshot it triggers.
func (h *singleCheckpointBarrierHandler) onChannelBarrier(o *kernel.Out, ci int, b *messages.Buffer, queued bool) vt.Time {
	first := h.current == nil || b.CheckpointId > h.current.CheckpointId
	if first || b.CheckpointId == h.current.CheckpointId {
		h.current = b
	}
	act := h.handler.OnBarrier(ci, barrierOf(b), vt.Millis(o.Now()))
	if act.Ignored && h.resume[ci] {
		// an obsolete barrier starts no alignment: its channel goes on at once
		h.resumeChannel(o, ci)
	}
	cost := h.apply(o, act, ci, queued)
	if first && !act.Ignored {
		// channels whose producer finished send no barrier: the barrier
		// goes before their queued EndOfPartition (FLIP-147)
		gate := h.in.gate
		for k := 0; k < gate.NumChannels(); k++ {
			if k != ci && !gate.Channel(k).Ended && gate.HasEndQueued(k) && !gate.BarrierQueued(k, b.CheckpointId) {
				cost += h.barrierBeforeEnd(o, k, b)
			}
		}
	}
	return cost
}

// barrierBeforeEnd gives channel ci, whose EndOfPartition is queued, the
// barrier b: an unaligned one at once, an aligned one right before the
// EndOfPartition, behind the data.
func (h *singleCheckpointBarrierHandler) barrierBeforeEnd(o *kernel.Out, ci int, b *messages.Buffer) vt.Time {
	bb := insertedBarrier(b)
	if b.Unaligned {
		act := h.handler.OnBarrier(ci, barrierOf(bb), vt.Millis(o.Now()))
		return h.apply(o, act, ci, false)
	}
	if h.in.gate.InsertBeforeEnd(ci, bb) {
		h.barrierQueued[ci]++
	}
	return 0
}

// onTimer is the aligned-checkpoint-timeout firing.
func (h *singleCheckpointBarrierHandler) onTimer(o *kernel.Out) {
	if h.handler == nil {
		return
	}
	act := h.handler.OnTimer(vt.Millis(o.Now()))
	h.in.t.spend(o, h.apply(o, act, -1, false))
}

// abort is notifyCheckpointAborted reaching the handler: an alignment for
// checkpoint id ends.
func (h *singleCheckpointBarrierHandler) abort(o *kernel.Out, id int64) {
	if h.handler == nil {
		return
	}
	if act := h.handler.OnCancellation(id); !act.Ignored {
		h.apply(o, act, -1, false)
	}
}

// apply carries out what the barrier handler decided. from is the channel
// whose barrier caused it (-1 for a timer); queued says the barrier was
// taken from its channel's queue (aligned) rather than overtaking it.
func (h *singleCheckpointBarrierHandler) apply(o *kernel.Out, act checkpoint.BarrierAction, from int, queued bool) vt.Time {
	cost := h.applyNow(o, act, from, queued)
	for _, ch := range act.PrioritizeChannels {
		cost += h.prioritizeBarrier(o, ch)
	}
	return cost
}

// prioritizeBarrier is an announced aligned barrier queued in channel ch
// that must now overtake the data ahead of it (the alignment timed out:
// RemoteInputChannel.convertToPriorityEvent, CheckpointBarrier.asUnaligned):
// it is processed at once as an unaligned barrier, the records ahead of it
// becoming channel state, and leaves the queue; its producer, blocked since
// it sent an aligned barrier, resumes when the checkpoint's barriers are
// all in.
func (h *singleCheckpointBarrierHandler) prioritizeBarrier(o *kernel.Out, ch int) vt.Time {
	id := h.handler.CurrentCheckpoint()
	b, ok := h.in.gate.QueuedBarrier(ch, id)
	if !ok {
		return 0 // processed already
	}
	pb := exchange.BarrierBuffer(b)
	pb.Unaligned = true
	h.resume[ch] = true
	cost := h.onChannelBarrier(o, ch, pb, true)
	if h.in.gate.RemoveBarrier(ch, id) {
		h.barrierQueued[ch]--
	}
	return cost
}

// applyNow is apply before the prioritized barriers.
func (h *singleCheckpointBarrierHandler) applyNow(o *kernel.Out, act checkpoint.BarrierAction, from int, queued bool) vt.Time {
	c := &h.in.t.ck
	if act.Ignored {
		return 0
	}
	if act.Abort {
		c.decline(o, act.AbortCheckpointID, act.FailureReason)
		if c.pending != nil && c.pending.ack.CheckpointId == act.AbortCheckpointID {
			c.pending = nil
		}
	}
	if act.UnblockAll || act.Abort || act.AllBarriersReceived {
		h.resumeConsumption(o)
	}
	if act.UnblockAll {
		clear(h.blocked)
	}
	for _, ch := range act.BlockChannels {
		h.blocked[ch] = true
	}
	var cost vt.Time
	if act.TriggerSnapshot && h.current != nil && h.current.CheckpointId == act.CheckpointID {
		var persisted []*messages.InFlightRecord
		if act.Unaligned {
			for _, ch := range act.PersistChannels {
				persisted = h.queuedRecords(ch, act.CheckpointID, persisted, ch == from && !queued)
			}
		}
		b := h.current
		if act.Unaligned != b.Unaligned {
			b = &messages.Buffer{CheckpointId: b.CheckpointId, CheckpointTimestampMs: b.CheckpointTimestampMs,
				CheckpointKind: b.CheckpointKind, Unaligned: act.Unaligned}
		}
		align := int64(0)
		if act.AllBarriersReceived {
			align = act.AlignmentDurationMs
		}
		cost = c.snapshot(o, b, act.Unaligned, persisted, align)
		if act.Unaligned && !act.AllBarriersReceived {
			return cost
		}
	}
	if act.AllBarriersReceived {
		h.lastAlign = act.AlignmentDurationMs
		if c.pending != nil && c.pending.ack.CheckpointId == act.CheckpointID {
			c.pending.ack.AlignmentMs = act.AlignmentDurationMs
			c.sendAck(o, c.pending)
			c.pending = nil
		}
	}
	if at, ok := h.handler.NextTimer(); ok {
		o.Timer(max(0, vt.FromMillis(at)-o.Now()), timerCheckpointAlignment, at)
	}
	return cost
}

// resumeConsumption asks the producers that blocked a subpartition after
// an aligned barrier to send again, once the alignment has ended
// (CheckpointedInputGate.resumeConsumption -> ResumeConsumption).
func (h *singleCheckpointBarrierHandler) resumeConsumption(o *kernel.Out) {
	for ch, r := range h.resume {
		if r {
			h.resumeChannel(o, ch)
		}
	}
}

// queuedRecords appends the records queued in channel ch ahead of the
// barrier of checkpoint id (all of them when the barrier is not queued,
// i.e. it overtook them).
func (h *singleCheckpointBarrierHandler) queuedRecords(ch int, id int64, dst []*messages.InFlightRecord, all bool) []*messages.InFlightRecord {
	if in := h.in.in; in.buf != nil && in.ch == ch {
		// the rest of the buffer being read comes first
		// (StreamTaskNetworkInput.prepareSnapshot: the deserializer's
		// unconsumed buffer)
		for k := in.pos; k < len(in.buf.Kinds); k++ {
			if in.buf.Kinds[k] == exchange.KindRecord {
				dst = append(dst, &messages.InFlightRecord{Key: in.buf.Keys[k], Timestamp: in.buf.Timestamps[k], Value: in.buf.Values[k],
					Payload: exchange.PayloadAt(in.buf, k)})
			}
		}
	}
	for _, b := range h.in.gate.Channel(ch).Buffers {
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
			dst = append(dst, &messages.InFlightRecord{Key: b.Keys[k], Timestamp: b.Timestamps[k], Value: b.Values[k], Payload: exchange.PayloadAt(b, k)})
		}
	}
	return dst
}

// onDataArrived adds a data buffer that arrives on a channel still
// persisting for an unaligned snapshot to its channel state.
func (h *singleCheckpointBarrierHandler) onDataArrived(ci int, b *messages.Buffer) {
	c := &h.in.t.ck
	if c.pending == nil || h.barrierQueued[ci] > 0 || !h.handler.Persisting(ci) {
		return
	}
	st := c.pending.ack.State
	n := len(st.InputChannelState)
	st.InputChannelState = appendRecords(st.InputChannelState, b)
	added := int64(len(st.InputChannelState) - n)
	bytes := added * int64(h.in.t.cfg.RecordBytes)
	c.pending.ack.PersistedRecords += added
	c.pending.ack.PersistedBytes += bytes
	c.pending.ack.StateSizeBytes += bytes
	c.pending.ack.IncrementalSizeBytes += bytes
}

// announceBarrier tells the barrier handler of an aligned barrier that
// reached channel ci and waits behind its data (RemoteInputChannel adds an
// EventAnnouncement for a barrier that may time out; CheckpointedInputGate
// hands it to processBarrierAnnouncement): the checkpoint's alignment timer
// starts now, and once the alignment times out the barrier overtakes the
// data ahead of it. Barriers that cannot time out are ignored by the
// handler.
func (h *singleCheckpointBarrierHandler) announceBarrier(o *kernel.Out, ci int, b *messages.Buffer) {
	if h.handler == nil {
		return
	}
	first := h.current == nil || b.CheckpointId > h.current.CheckpointId
	act := h.handler.OnAnnouncement(ci, barrierOf(b), vt.Millis(o.Now()))
	if act.Ignored {
		return
	}
	if first {
		h.current = b
	}
	h.in.t.spend(o, h.apply(o, act, -1, false))
}
