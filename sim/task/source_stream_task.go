package task

import (
	"math"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/source"
	"github.com/flinksim/flinksim/sim/vt"
)

// sourceStreamTask is the head of a source task: Flink's SourceStreamTask
// (FLIP-27: a SourceOperator with its KafkaSourceReader, sim/source.Reader)
// feeding ParseOrder and Filter where the chain holds them. It registers
// with the enumerator, fetches from the broker, emits its watermarks
// (pipeline.auto-watermark-interval) and watermark status, takes part in
// watermark alignment (FLIP-182), and ends a bounded input with the final
// watermark.
type sourceStreamTask struct {
	t          *StreamTask
	src        *source.Reader // nil until the task starts
	sentWm     int64          // last watermark broadcast downstream
	sentIdle   bool           // last watermark status broadcast downstream
	endOfInput bool           // the reader's input ended: the final watermark was emitted
}

var _ streamTaskHead = (*sourceStreamTask)(nil)

// init builds the reader and registers it with the enumerator
// (ReaderRegistrationEvent), and starts the periodic watermark and
// watermark alignment timers.
func (s *sourceStreamTask) init(o *kernel.Out) bool {
	t := s.t
	src, err := source.NewReader(source.ReaderConfig{Topic: t.cfg.SourceTopic, MaxPollRecords: t.cfg.MaxPollRecords,
		OutOfOrdernessMs: t.cfg.OutOfOrderness.Milliseconds(), IdleTimeoutMs: t.cfg.Idleness.Milliseconds(),
		EventTime: t.cfg.TimeCharacteristic != config.ProcessingTime})
	if err != nil {
		o.Invariant("watermark_config", "%v", err)
		return false
	}
	s.src = src
	s.sentWm = math.MinInt64
	o.Send(jobgraph.JobManagerName, vt.FromDuration(t.cfg.RPCLatency()), &messages.Envelope_ReaderRegistration{ReaderRegistration: &messages.ReaderRegistration{
		SubtaskIndex: int32(t.index), Location: t.tm}})
	if t.cfg.TimeCharacteristic != config.ProcessingTime && t.cfg.AutoWatermarkInterval > 0 {
		o.Timer(vt.FromDuration(t.cfg.AutoWatermarkInterval), timerWatermark, 0)
	}
	if s.aligned() {
		o.Timer(s.alignmentInterval(), timerAlignment, 0)
	}
	return true
}

func (s *sourceStreamTask) addSplits(o *kernel.Out, m *messages.AddSplits) {
	for _, st := range s.src.AddSplits(m.Splits) {
		logSplitFinished(o, st)
	}
	s.fetch(o)
}

func logSplitFinished(o *kernel.Out, st *source.Split) {
	o.Log(eventlog.SplitFinished{Partition: int64(st.Partition), Offset: st.Offset})
}

// aligned reports whether the source takes part in watermark alignment.
func (s *sourceStreamTask) aligned() bool {
	return s.t.cfg.AlignmentGroup != "" && s.t.cfg.TimeCharacteristic != config.ProcessingTime
}

func (s *sourceStreamTask) alignmentInterval() vt.Time {
	return vt.FromDuration(s.t.cfg.AlignmentUpdateInterval)
}

// reportWatermark is SourceOperator reporting its watermark to the
// coordinator every update interval (ReportedWatermarkEvent).
func (s *sourceStreamTask) reportWatermark(o *kernel.Out) {
	if wm, ok := s.src.ReportedWatermark(); ok {
		o.Send(jobgraph.JobManagerName, vt.FromDuration(s.t.cfg.RPCLatency()), &messages.Envelope_ReportedWatermarkEvent{
			ReportedWatermarkEvent: &messages.ReportedWatermarkEvent{SubtaskIndex: int32(s.t.index), Watermark: wm}})
	}
}

// alignWatermarks applies the coordinator's max allowed watermark and logs
// the splits it paused and resumed.
func (s *sourceStreamTask) alignWatermarks(o *kernel.Out, maxAllowed int64) {
	paused, resumed := s.src.OnWatermarkAlignment(maxAllowed, vt.Millis(s.t.mb.ActivityClock(o.Now())))
	for _, c := range paused {
		o.Log(eventlog.SplitPaused{Split: c.Split.ID, SplitWatermark: c.Watermark, MaxAllowedWatermark: maxAllowed})
	}
	for _, c := range resumed {
		o.Log(eventlog.SplitResumed{Split: c.Split.ID, SplitWatermark: c.Watermark, MaxAllowedWatermark: maxAllowed})
	}
	s.fetch(o)
}

// fetch sends the reader's next Fetch, if it wants one.
func (s *sourceStreamTask) fetch(o *kernel.Out) {
	if req := s.src.NextFetch(s.t.ck.stopping); req != nil {
		o.Send(jobgraph.KafkaName, vt.FromDuration(s.t.cfg.KafkaLatency()), &messages.Envelope_Fetch{Fetch: req})
	}
}

// processInput is one slice of the source: what was fetched goes into the
// chain, then the next fetch, then a bounded input that is done ends.
func (s *sourceStreamTask) processInput(o *kernel.Out) vt.Time {
	t := s.t
	if t.rp.Available() || s.src.Queued() == 0 {
		t.unblock(o)
	}
	cost := s.emitNext(o)
	s.fetch(o)
	s.maybeFinish(o)
	return cost
}

// hasInput reports whether fetched records wait, or a bounded input that
// is done still has to end.
func (s *sourceStreamTask) hasInput() bool {
	return s.src.Queued() > 0 || (s.src.HasNoMoreSplits() && !s.t.finishedAll)
}

// emitNext emits up to sim.buffer.records fetched records into the chain,
// at the parse (and filter) cost each, until the output has no room
// (SourceOperator.emitNext). A source without ParseOrder in its chain
// (chaining off) hands each Kafka record on as it is, its value as the
// payload, at no cost of its own (sim.cost.parse is ParseOrder's): it emits
// everything fetched until the output has no room.
func (s *sourceStreamTask) emitNext(o *kernel.Out) (cost vt.Time) {
	t, c := s.t, &s.t.chain
	var perRecord vt.Time
	limit := math.MaxInt
	if c.parse {
		perRecord = vt.FromDuration(t.cfg.CostParse)
		limit = t.cfg.RecordsPerBuffer()
	}
	if c.filter != nil {
		perRecord += vt.FromDuration(t.cfg.CostFilter)
	}
	if s.aligned() && s.src.WaitingForAlignment() {
		return 0 // a single-split reader ahead of the group waits
	}
	if t.ck.stopping || t.ck.awaitFinal {
		return 0 // stop-with-savepoint: the source reads no more
	}
	for n := 0; n < limit; n++ {
		r, ok := s.src.Peek()
		if !ok {
			break
		}
		if !t.rp.Available() {
			// the mailbox checks the output before each record
			// (StreamTask.processInput: RecordWriter.isAvailable)
			t.block(o)
			break
		}
		sub := t.target(r.Key)
		cost += perRecord
		t.m.recordsIn++
		finished := s.src.Consume(vt.Millis(o.Now() + cost))
		if !c.parse {
			t.rp.AddPayloadRecord(sub, r.Key, r.Timestamp, 0, r.Value)
			t.m.recordsOut++
		} else if c.filter == nil || c.filter.Match(r.Key, r.Value) {
			t.rp.AddRecord(sub, r.Key, r.Timestamp, c.parsedValue(r.Value))
			t.m.recordsOut++
		}
		if finished != nil {
			logSplitFinished(o, finished)
		}
	}
	s.src.Compact()
	return cost
}

// periodicWatermark runs the reader's watermark generators
// (pipeline.auto-watermark-interval) and broadcasts a changed watermark or
// watermark status downstream.
func (s *sourceStreamTask) periodicWatermark(o *kernel.Out) {
	t := s.t
	if s.src == nil || t.finishedAll || t.ck.awaitFinal || t.ck.stopping {
		return // stop-with-savepoint (no drain): no watermark after the savepoint
	}
	// idleness counts only time the task was not backpressured
	// (ProgressiveTimestampsAndWatermarks' inputActivityClock)
	wm, idle, changed := s.src.PeriodicEmit(vt.Millis(t.mb.ActivityClock(o.Now())))
	if !changed {
		return
	}
	s.broadcastStatus(o, idle)
	if !idle && wm > s.sentWm {
		s.sentWm = wm
		t.rp.Broadcast(exchange.KindWatermark, wm)
	}
}

// broadcastStatus sends a WatermarkStatus change downstream.
func (s *sourceStreamTask) broadcastStatus(o *kernel.Out, idle bool) {
	if idle == s.sentIdle {
		return
	}
	s.sentIdle = idle
	kind, name := exchange.KindStatusActive, "ACTIVE"
	if idle {
		kind, name = exchange.KindStatusIdle, "IDLE"
	}
	s.t.rp.Broadcast(kind, 0)
	o.Log(eventlog.WatermarkStatus{Status: name})
}

// maybeFinish ends a bounded source whose reader emitted everything:
// the final watermark Long.MAX_VALUE, then (with checkpointing, FLIP-147)
// EndOfData and a wait for a final checkpoint, else EndOfPartition.
func (s *sourceStreamTask) maybeFinish(o *kernel.Out) {
	t := s.t
	if t.finishedAll || !s.src.Done() || t.ck.awaitFinal {
		return
	}
	if t.cfg.TimeCharacteristic != config.ProcessingTime && !s.endOfInput {
		s.endOfInput = true
		if wm, err := s.src.EndOfInput(); err == nil {
			s.broadcastStatus(o, false)
			s.sentWm = wm
			t.rp.Broadcast(exchange.KindWatermark, wm)
		}
	}
	if t.rp.Blocked() {
		return // the final watermark waits for a buffer: the events follow it
	}
	if t.ck.enabled {
		t.ck.awaitFinal = true
		t.rp.EndOfData()
		return
	}
	t.finishedAll = true
	t.rp.EndOfPartition()
}

// snapshotState puts the reader's split offsets into st and returns their
// size in bytes and their number.
func (s *sourceStreamTask) snapshotState(id int64, st *messages.TaskStateSnapshot) (bytes int64, entries int) {
	st.Splits = s.src.Snapshot(id)
	return int64(len(st.Splits)) * splitStateBytes, len(st.Splits)
}

// commitOffsets commits to the consumer group, for monitoring only, the
// offsets the snapshot of checkpoint id stored, not the reader's position
// now (KafkaSourceReader.notifyCheckpointComplete).
func (s *sourceStreamTask) commitOffsets(o *kernel.Out, id int64) {
	if offs := s.src.OffsetsToCommit(id); offs != nil {
		m := &messages.CommitOffsets{Group: s.t.cfg.SourceTopic + "-flinksim", CheckpointId: id, Offsets: offs}
		s.t.sendKafka(o, 0, &messages.Envelope_CommitOffsets{CommitOffsets: m})
	}
}

func (s *sourceStreamTask) addMetrics(m *eventlog.TaskMetrics) {
	m.Watermark, m.HasWatermark, m.AssignedSplits = s.sentWm, true, int64(len(s.src.Splits()))
}

func (s *sourceStreamTask) appendFinal(fields []eventlog.Value) []eventlog.Value {
	return append(fields, eventlog.I("records_read", s.t.m.recordsIn), eventlog.I("records_emitted", s.t.m.recordsOut))
}

func (s *sourceStreamTask) inspect(v *SubtaskView) {
	v.Watermark, v.Idle = s.sentWm, s.sentIdle
	if s.src == nil {
		return // INITIALIZING: no reader yet
	}
	for _, sp := range s.src.Splits() {
		sv := SplitView{Partition: int(sp.Partition), Offset: sp.Offset, Stop: sp.Stop, Paused: sp.Paused,
			Finished: sp.Finished, Watermark: math.MinInt64}
		if wm, idle, ok := s.src.SplitWatermark(sp.ID); ok {
			sv.Watermark, sv.Idle = wm, idle
		}
		v.Splits = append(v.Splits, sv)
	}
}
