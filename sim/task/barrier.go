package task

// Checkpoint barriers on the gate (SingleCheckpointBarrierHandler,
// sim/checkpoint.BarrierHandler): alignment, unaligned barriers and their
// channel state, barriers before an EndOfPartition (FLIP-147).

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/checkpoint"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// insertBarriers is a trigger of a task whose upstream tasks all finished
// (FLIP-147): the barrier goes right before the EndOfPartition of every
// channel still open, behind the data queued there, so that data is
// processed (or, unaligned, persisted) before the snapshot
// (InputChannel.insertBarrierBeforeEndOfPartition). An EndOfPartition still
// on its way gets the barrier in front when it arrives. It returns false
// when every channel has ended: the snapshot is taken at once.
func (s *Subtask) insertBarriers(o *kernel.Out, b *messages.Buffer) bool {
	inserted := false
	for ci := 0; ci < s.gate.NumChannels(); ci++ {
		if s.gate.Channel(ci).Ended {
			continue
		}
		inserted = true
		if s.gate.HasEndQueued(ci) {
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
			s.ck.beforeEnd = make([]*messages.Buffer, s.gate.NumChannels())
		}
		s.ck.beforeEnd[ci] = insertedBarrier(b)
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
func (s *Subtask) resumeChannel(o *kernel.Out, ci int) {
	s.ck.resume[ci] = false
	o.Send(jobgraph.ChannelName(o.Name(), ci), 0, &messages.Envelope_ResumeConsumption{ResumeConsumption: &messages.ResumeConsumption{}})
}

// endOfPartitionArrives puts a barrier waiting for channel ci's
// EndOfPartition in front of it.
func (s *Subtask) endOfPartitionArrives(o *kernel.Out, ci int) {
	if s.ck.beforeEnd == nil || s.ck.beforeEnd[ci] == nil {
		return
	}
	if b := s.ck.beforeEnd[ci]; b.Unaligned {
		s.ck.beforeEnd[ci] = nil
		s.spend(o, s.onChannelBarrier(o, ci, b, false))
		return
	}
	s.gate.Enqueue(ci, s.ck.beforeEnd[ci])
	s.ck.beforeEnd[ci] = nil
	s.ck.barrierQueued[ci]++
}

// barrierOf reads a barrier buffer as the handler takes it.
func barrierOf(b *messages.Buffer) checkpoint.Barrier {
	return checkpoint.Barrier{ID: b.CheckpointId, TimestampMs: b.CheckpointTimestampMs,
		Savepoint: b.CheckpointKind != messages.CheckpointKind_CHECKPOINT, Unaligned: b.Unaligned}
}

// onChannelBarrier processes a barrier from channel ci: an aligned one when
// the task reaches it in the channel, an unaligned (priority) one as soon as
// it arrives. It returns the cost of a snapshot it triggers.
func (s *Subtask) onChannelBarrier(o *kernel.Out, ci int, b *messages.Buffer, queued bool) vt.Time {
	first := s.ck.current == nil || b.CheckpointId > s.ck.current.CheckpointId
	if first || b.CheckpointId == s.ck.current.CheckpointId {
		s.ck.current = b
	}
	act := s.ck.handler.OnBarrier(ci, barrierOf(b), vt.Millis(o.Now()))
	if act.Ignored && s.ck.resume[ci] {
		// an obsolete barrier starts no alignment: its channel goes on at once
		s.resumeChannel(o, ci)
	}
	cost := s.applyBarrierAction(o, act, ci, queued)
	if first && !act.Ignored {
		// channels whose producer finished send no barrier: the barrier
		// goes before their queued EndOfPartition (FLIP-147)
		for k := 0; k < s.gate.NumChannels(); k++ {
			if k != ci && !s.gate.Channel(k).Ended && s.gate.HasEndQueued(k) && !s.gate.BarrierQueued(k, b.CheckpointId) {
				cost += s.barrierBeforeEnd(o, k, b)
			}
		}
	}
	return cost
}

// barrierBeforeEnd gives channel ci, whose EndOfPartition is queued, the
// barrier b: an unaligned one at once, an aligned one right before the
// EndOfPartition, behind the data.
func (s *Subtask) barrierBeforeEnd(o *kernel.Out, ci int, b *messages.Buffer) vt.Time {
	bb := insertedBarrier(b)
	if b.Unaligned {
		act := s.ck.handler.OnBarrier(ci, barrierOf(bb), vt.Millis(o.Now()))
		return s.applyBarrierAction(o, act, ci, false)
	}
	if s.gate.InsertBeforeEnd(ci, bb) {
		s.ck.barrierQueued[ci]++
	}
	return 0
}

// checkpointTimer is the aligned-checkpoint-timeout firing.
func (s *Subtask) checkpointTimer(o *kernel.Out) {
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
func (s *Subtask) applyBarrierAction(o *kernel.Out, act checkpoint.BarrierAction, from int, queued bool) vt.Time {
	cost := s.applyBarrierActionNow(o, act, from, queued)
	for _, ch := range act.PrioritizeChannels {
		cost += s.prioritizeBarrier(o, ch)
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
func (s *Subtask) prioritizeBarrier(o *kernel.Out, ch int) vt.Time {
	id := s.ck.handler.CurrentCheckpoint()
	b, ok := s.gate.QueuedBarrier(ch, id)
	if !ok {
		return 0 // processed already
	}
	pb := exchange.BarrierBuffer(b)
	pb.Unaligned = true
	s.ck.resume[ch] = true
	cost := s.onChannelBarrier(o, ch, pb, true)
	if s.gate.RemoveBarrier(ch, id) {
		s.ck.barrierQueued[ch]--
	}
	return cost
}

// applyBarrierActionNow is applyBarrierAction before the prioritized
// barriers.
func (s *Subtask) applyBarrierActionNow(o *kernel.Out, act checkpoint.BarrierAction, from int, queued bool) vt.Time {
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
			s.sendAck(o, c.pending)
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
func (s *Subtask) resumeConsumption(o *kernel.Out) {
	for ch, r := range s.ck.resume {
		if r {
			s.resumeChannel(o, ch)
		}
	}
}

// queuedRecords appends the records queued in channel ch ahead of the
// barrier of checkpoint id (all of them when the barrier is not queued,
// i.e. it overtook them).
func (s *Subtask) queuedRecords(ch int, id int64, dst []*messages.InFlightRecord, all bool) []*messages.InFlightRecord {
	if in := s.in; in.buf != nil && in.ch == ch {
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
	for _, b := range s.gate.Channel(ch).Buffers {
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
}

// announceBarrier tells the barrier handler of an aligned barrier that
// reached channel ci and waits behind its data (RemoteInputChannel adds an
// EventAnnouncement for a barrier that may time out; CheckpointedInputGate
// hands it to processBarrierAnnouncement): the checkpoint's alignment timer
// starts now, and once the alignment times out the barrier overtakes the
// data ahead of it. Barriers that cannot time out are ignored by the
// handler.
func (s *Subtask) announceBarrier(o *kernel.Out, ci int, b *messages.Buffer) {
	if s.ck.handler == nil {
		return
	}
	first := s.ck.current == nil || b.CheckpointId > s.ck.current.CheckpointId
	act := s.ck.handler.OnAnnouncement(ci, barrierOf(b), vt.Millis(o.Now()))
	if act.Ignored {
		return
	}
	if first {
		s.ck.current = b
	}
	s.spend(o, s.applyBarrierAction(o, act, -1, false))
}
