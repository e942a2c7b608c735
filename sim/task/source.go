package task

import (
	"math"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/source"
	"github.com/flinksim/flinksim/sim/vt"
)

// The source head of a subtask: the SourceOperator with its
// KafkaSourceReader (sim/source.Reader) feeding the chain.

func (s *Subtask) addSplits(o *kernel.Out, m *messages.AddSplits) {
	for _, st := range s.src.AddSplits(m.Splits) {
		s.logSplitFinished(o, st)
	}
	s.fetch(o)
}

func (s *Subtask) logSplitFinished(o *kernel.Out, st *source.Split) {
	o.Log(eventlog.KindSplitFinished, messages.Int("partition", int64(st.Partition)), messages.Int("offset", st.Offset))
}

// aligned reports whether the source takes part in watermark alignment.
func (s *Subtask) aligned() bool {
	return s.cfg.AlignmentGroup != "" && s.cfg.TimeCharacteristic != config.ProcessingTime
}

func (s *Subtask) alignmentInterval() vt.Time {
	return vt.FromDuration(s.cfg.AlignmentUpdateInterval)
}

// alignWatermarks applies the coordinator's max allowed watermark and logs
// the splits it paused and resumed.
func (s *Subtask) alignWatermarks(o *kernel.Out, maxAllowed int64) {
	paused, resumed := s.src.OnWatermarkAlignment(maxAllowed)
	for _, c := range paused {
		o.Log(eventlog.KindSplitPaused, messages.Str("split", c.Split.ID), messages.Int("split_watermark", c.Watermark),
			messages.Int("max_allowed_watermark", maxAllowed))
	}
	for _, c := range resumed {
		o.Log(eventlog.KindSplitResumed, messages.Str("split", c.Split.ID), messages.Int("split_watermark", c.Watermark),
			messages.Int("max_allowed_watermark", maxAllowed))
	}
	s.fetch(o)
}

// fetch sends the reader's next Fetch, if it wants one.
func (s *Subtask) fetch(o *kernel.Out) {
	if req := s.src.NextFetch(s.ck.stopping); req != nil {
		o.Send(jobgraph.KafkaName, vt.FromDuration(s.cfg.KafkaLatency()), &messages.Envelope_Fetch{Fetch: req})
	}
}

// sourceSlice emits up to sim.buffer.records fetched records into the
// chain, at the parse (and filter) cost each, until the output has no room.
// A source without ParseOrder in its chain (chaining off) hands each Kafka
// record on as it is, its value as the payload, at no cost of its own
// (sim.cost.parse is ParseOrder's): it emits everything fetched until the
// output has no room.
func (s *Subtask) sourceSlice(o *kernel.Out) (cost vt.Time) {
	var perRecord vt.Time
	limit := math.MaxInt
	if s.parse {
		perRecord = vt.FromDuration(s.cfg.CostParse)
		limit = s.cfg.RecordsPerBuffer()
	}
	if s.filter != nil {
		perRecord += vt.FromDuration(s.cfg.CostFilter)
	}
	if s.aligned() && s.src.WaitingForAlignment() {
		return 0 // a single-split reader ahead of the group waits
	}
	if s.ck.stopping || s.ck.awaitFinal {
		return 0 // stop-with-savepoint: the source reads no more
	}
	for n := 0; n < limit; n++ {
		r, ok := s.src.Peek()
		if !ok {
			break
		}
		if !s.rp.Available() {
			// the mailbox checks the output before each record
			// (StreamTask.processInput: RecordWriter.isAvailable)
			s.block(o)
			break
		}
		sub := s.target(r.Key)
		cost += perRecord
		s.m.recordsIn++
		finished := s.src.Consume(vt.Millis(o.Now() + cost))
		if !s.parse {
			s.rp.AddPayloadRecord(sub, r.Key, r.Timestamp, 0, r.Value)
			s.m.recordsOut++
		} else if s.filter == nil || s.filter.Match(r.Key, r.Value) {
			s.rp.AddRecord(sub, r.Key, r.Timestamp, s.parsedValue(r.Value))
			s.m.recordsOut++
		}
		if finished != nil {
			s.logSplitFinished(o, finished)
		}
	}
	s.src.Compact()
	return cost
}

// parsedValue is what ParseOrder makes of a record's value for the
// aggregate: its job.window.aggregate-field (0 when missing), or 1 for a
// count, which reads no field.
func (s *Subtask) parsedValue(payload []byte) float64 {
	if !s.needValue {
		return 1
	}
	v, _ := events.NumericField(payload, s.cfg.AggregateField)
	return v
}

// periodicWatermark runs the reader's watermark generators
// (pipeline.auto-watermark-interval) and broadcasts a changed watermark or
// watermark status downstream.
func (s *Subtask) periodicWatermark(o *kernel.Out) {
	if s.src == nil || s.finishedAll || s.ck.awaitFinal || s.ck.stopping {
		return // stop-with-savepoint (no drain): no watermark after the savepoint
	}
	// idleness counts only time the task was not backpressured
	// (ProgressiveTimestampsAndWatermarks' inputActivityClock)
	wm, idle, changed := s.src.PeriodicEmit(vt.Millis(s.mb.ActivityClock(o.Now())))
	if !changed {
		return
	}
	s.broadcastStatus(o, idle)
	if !idle && wm > s.sentWm {
		s.sentWm = wm
		s.rp.Broadcast(exchange.KindWatermark, wm)
	}
}

// broadcastStatus sends a WatermarkStatus change downstream.
func (s *Subtask) broadcastStatus(o *kernel.Out, idle bool) {
	if idle == s.sentIdle {
		return
	}
	s.sentIdle = idle
	kind, name := exchange.KindStatusActive, "ACTIVE"
	if idle {
		kind, name = exchange.KindStatusIdle, "IDLE"
	}
	s.rp.Broadcast(kind, 0)
	o.Log(eventlog.KindWatermarkStatus, messages.Str("status", name))
}

// maybeFinishSource ends a bounded source whose reader emitted everything:
// the final watermark Long.MAX_VALUE, then (with checkpointing, FLIP-147)
// EndOfData and a wait for a final checkpoint, else EndOfPartition.
func (s *Subtask) maybeFinishSource(o *kernel.Out) {
	if s.finishedAll || !s.src.Done() || s.ck.awaitFinal {
		return
	}
	if s.cfg.TimeCharacteristic != config.ProcessingTime && !s.endOfInput {
		s.endOfInput = true
		if wm, err := s.src.EndOfInput(); err == nil {
			s.broadcastStatus(o, false)
			s.sentWm = wm
			s.rp.Broadcast(exchange.KindWatermark, wm)
		}
	}
	if s.rp.Blocked() {
		return // the final watermark waits for a buffer: the events follow it
	}
	if s.ck.enabled {
		s.ck.awaitFinal = true
		s.rp.EndOfData()
		return
	}
	s.finishedAll = true
	s.rp.EndOfPartition()
}
