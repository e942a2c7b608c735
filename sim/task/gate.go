package task

// The gate head of a subtask: its InputGate (sim/exchange) feeding the
// operator chain, watermarks through the StatusWatermarkValve.

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// grantFloating tells channels of the floating buffers the gate's pool
// granted them (LocalBufferPool with BufferListeners).
func (s *Subtask) grantFloating(o *kernel.Out, grants []exchange.Grant) {
	for _, g := range grants {
		o.Send(jobgraph.ChannelName(o.Name(), g.Channel), 0, &messages.Envelope_FloatingBuffers{FloatingBuffers: &messages.FloatingBuffers{Count: int32(g.Count)}})
	}
}

// gateReady reports whether a buffer is being read, or a channel not
// blocked by an aligned barrier has a buffer queued.
func (s *Subtask) gateReady() bool { return s.in.buf != nil || s.gate.Ready(s.alignmentBlocked) }

// alignmentBlocked reports whether checkpoint alignment blocks channel ci.
func (s *Subtask) alignmentBlocked(ci int) bool { return s.ck.blocked[ci] }

// deserializing is the buffer a task reads element by element
// (StreamTaskNetworkInput's record deserializer): a task whose output
// becomes unavailable stops between two records and goes on with the same
// buffer once it is available again.
type deserializing struct {
	buf *messages.Buffer // nil: none
	ch  int              // its channel
	pos int              // the next element
}

// gateSlice processes the buffer being read, or the next buffer of the
// InputGate, until it ends or the output has no room for another record
// (the mailbox checks RecordWriter.isAvailable between records).
func (s *Subtask) gateSlice(o *kernel.Out) (cost vt.Time) {
	if s.in.buf == nil && !s.gate.HasData() {
		return 0
	}
	if s.rp != nil && !s.rp.Available() {
		s.block(o)
		return 0
	}
	if s.in.buf == nil {
		// the first channel with data that no aligned barrier blocks
		ci, buf, ok := s.gate.Next(s.alignmentBlocked)
		if !ok {
			return 0
		}
		s.in = deserializing{buf: buf, ch: ci}
	}
	ci, buf := s.in.ch, s.in.buf
	ch := s.gate.Channel(ci)
	perRecord := s.recordCost()
	for s.in.pos < len(buf.Kinds) {
		i := s.in.pos
		s.in.pos++
		if s.rp != nil && i > 0 && buf.Kinds[i] == exchange.KindRecord && !s.rp.Available() {
			s.in.pos--
			s.block(o)
			return cost // the rest of the buffer waits for room in the output
		}
		switch kind := buf.Kinds[i]; kind {
		case exchange.KindRecord:
			cost += perRecord + s.processRecord(o, buf.Keys[i], buf.Timestamps[i], buf.Values[i], exchange.PayloadAt(buf, i))
		case exchange.KindWatermark:
			if wm, changed := s.valve.InputWatermark(ci, buf.Timestamps[i]); changed {
				cost += s.advanceWatermark(o, wm)
			}
		case exchange.KindStatusIdle, exchange.KindStatusActive:
			wm, wmChanged, idle, statusChanged := s.valve.InputWatermarkStatus(ci, kind == exchange.KindStatusIdle)
			if statusChanged {
				st := "ACTIVE"
				if idle {
					st = "IDLE"
				}
				o.Log(eventlog.KindWatermarkStatus, messages.Str("status", st))
				if s.rp != nil {
					k := exchange.KindStatusActive
					if idle {
						k = exchange.KindStatusIdle
					}
					s.rp.Broadcast(k, 0)
				}
			}
			if wmChanged {
				cost += s.advanceWatermark(o, wm)
			}
		case exchange.KindEndOfData:
			ch.DataEnded = true
		case exchange.KindBarrier:
			s.ck.barrierQueued[ci]--
			if !buf.Unaligned && !buf.Inserted {
				s.ck.resume[ci] = true // its producer blocked the subpartition after it
			}
			cost += s.onChannelBarrier(o, ci, buf, !buf.Unaligned)
		case exchange.KindEndOfPartition:
			ch.Ended, ch.DataEnded = true, true
			o.Log(eventlog.KindChannelFinished, messages.Int("channel", int64(ci)), messages.Str("producer", s.d.InputGate.Producers[ci]))
			cost += s.applyBarrierAction(o, s.ck.handler.OnEndOfPartition(ci, vt.Millis(o.Now())), ci, true)
		}
	}
	s.in = deserializing{}
	if !buf.IsEvent {
		o.Send(jobgraph.ChannelName(o.Name(), ci), cost, &messages.Envelope_RecycleBuffers{RecycleBuffers: &messages.RecycleBuffers{Count: 1}})
	}
	return cost
}

// advanceWatermark hands a new input watermark to the operator and forwards
// it downstream; it returns the cost of the firings.
func (s *Subtask) advanceWatermark(o *kernel.Out, wm int64) vt.Time {
	if wm < s.lastInputWm {
		o.Invariant("watermark_monotonic", "%s: input watermark went back from %d to %d", o.Name(), s.lastInputWm, wm)
		return 0
	}
	s.lastInputWm = wm
	var cost vt.Time
	if s.op != nil {
		cost = s.emitResults(o, s.op.AdvanceWatermark(wm))
	}
	if s.rp != nil {
		s.rp.Broadcast(exchange.KindWatermark, wm)
	}
	return cost
}

func (s *Subtask) maybeFinishGate(o *kernel.Out) {
	if s.finishedAll || s.ck.awaitFinal || s.in.buf != nil || s.gate.HasData() || len(s.ck.replayIn) > 0 || !s.gate.AllDataEnded() ||
		(s.rp != nil && s.rp.Blocked()) {
		return
	}
	if s.ck.enabled {
		s.ck.awaitFinal = true
		if s.rp != nil {
			s.rp.EndOfData()
		}
		return
	}
	if !s.gate.AllEnded() {
		return
	}
	if s.exactlyOnce() {
		s.flushSink(o, 0)
		if s.d.Checkpointing {
			// checkpoints-after-tasks-finish off: no final checkpoint, so
			// the last transaction is pre-committed and never committed
			s.sendTxn(o, s.w.EndInputPreCommit())
		} else {
			// without checkpoints the sink commits at the end of its input
			// (CommitterOperator.endInput)
			s.sendTxn(o, s.w.EndInput())
		}
	}
	s.finishTask(o)
}
