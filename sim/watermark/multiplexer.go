package watermark

import (
	"errors"
	"sort"
)

// ErrSplitNotRegistered is returned for a record of a split the reader does not hold;
// the text is the checkState message SourceReaderBase fails with in that case.
var ErrSplitNotRegistered = errors.New("Have records for a split that was not registered")

// ErrNotEndOfInput is returned by SplitMultiplexer.EndOfInput while the reader can still
// get records: it has splits, or the enumerator has not signalled NoMoreSplits
// (SourceReaderBase only answers END_OF_INPUT when both hold).
var ErrNotEndOfInput = errors.New("source reader has not reached END_OF_INPUT: splits remain or no NoMoreSplits signal yet")

// SplitMultiplexerConfig is the watermark strategy of a source with per-split watermarks.
type SplitMultiplexerConfig struct {
	// OutOfOrdernessMs is the forBoundedOutOfOrderness bound in virtual ms; negative is
	// refused with ErrNegativeOutOfOrderness.
	OutOfOrdernessMs int64
	// IdleTimeoutMs is the withIdleness timeout in virtual ms of processing time; 0 means
	// withIdleness is not configured; negative is refused with ErrNonPositiveIdleTimeout.
	IdleTimeoutMs int64
}

// splitOutput is one split's SourceOutputWithWatermarks with its PartialWatermark.
type splitOutput struct {
	id  string
	gen generator
	// clock is the split's input activity clock, which its idleness timer reads.
	clock pausableClock
	// PartialWatermark state (CombinedWatermarkStatus.PartialWatermark).
	watermark int64
	idle      bool
}

// SplitMultiplexer is one source reader (one SourceOperator subtask) of a source with
// per-split watermarks, such as the Kafka source, under a bounded-out-of-orderness
// strategy with optional idleness. It reproduces how Flink 1.20 combines the splits into
// the reader's output:
//
//   - Each split has its own generator (ProgressiveTimestampsAndWatermarks.SplitLocalOutputs);
//     its periodic proposals and idle marks go to a deferred output of a
//     WatermarkOutputMultiplexer, which on each periodic emit combines them
//     (CombinedWatermarkStatus.updateCombinedWatermark): the combined watermark is the
//     minimum over non-idle splits and is forwarded only when it grows; when every split
//     is idle the split side is marked idle; with no split at all nothing happens.
//   - The reader also has a main output with its own generator
//     (ProgressiveTimestampsAndWatermarks.StreamingReaderOutput). The Kafka reader never
//     emits records through it, so it only ever proposes Long.MIN_VALUE, or, with
//     withIdleness, marks itself idle once its own timer, started at the first periodic
//     emit, expires.
//   - Both feed an IdlenessManager (ProgressiveTimestampsAndWatermarks.IdlenessManager)
//     whose two sides start idle; the reader's output (WatermarkToDataOutput, an Emitter)
//     is marked IDLE only when both sides are idle, and a side stops being idle only when
//     it offers a watermark.
//
// The consequence for a reader with NO split assigned (more readers than partitions):
// without withIdleness the main output keeps offering Long.MIN_VALUE, so the reader never
// goes idle and holds every downstream watermark at Long.MIN_VALUE forever; with
// withIdleness the main output's timer expires (first idle at the first periodic emit
// more than the timeout after the first periodic emit) and, the split side being idle
// from the start, the reader is marked IDLE and leaves the downstream minimum.
//
// Other 1.20 behaviours kept on purpose: a split that becomes active again after being
// idle counts again only from the next periodic emit (records do not mark a split
// active); an IDLE reader becomes ACTIVE again only when its combined watermark grows
// past the last one it forwarded; the reader's watermark never goes backwards, even when
// a slower split is added.
//
// Watermark alignment (FLIP-182/FLIP-217, SourceOperator) is tracked too: see
// OnWatermarkAlignment, WaitingForAlignment, ReportedWatermark and PausedSplits.
// Time spent held back by alignment does not count toward idleness (FLIP-471,
// FLINK-35886 and FLINK-36751, in 1.20.1): the main output's activity clock
// (SourceOperator's mainInputActivityClock) stands still while the reader waits for
// alignment, and a split's (ProgressiveTimestampsAndWatermarks' per-split
// inputActivityClock) while alignment pauses the split, or, for a reader given a single
// split, while the reader waits. The times passed in are already the task's activity
// clock (backpressure left out by the caller).
//
// Costs: OnPeriodicEmit is O(splits); the others are O(1) except RemoveSplit (O(splits))
// and the alignment calls (O(splits log splits)). The zero value is not usable; use
// NewSplitMultiplexer.
type SplitMultiplexer struct {
	cfg SplitMultiplexerConfig

	// SplitLocalOutputs: outputs in registration order (a LinkedHashMap in Flink).
	splits []*splitOutput
	byID   map[string]*splitOutput

	// CombinedWatermarkStatus.
	combinedWatermark int64
	combinedIdle      bool

	// StreamingReaderOutput's generator and SourceOperator's mainInputActivityClock.
	main      generator
	mainClock pausableClock

	// IdlenessManager: both IdlenessAwareWatermarkOutputs start idle.
	splitLocalIdle bool
	mainIdle       bool

	// WatermarkToDataOutput.
	out *Emitter

	// SourceOperator alignment bookkeeping. numSplits counts every split ever added and,
	// as in 1.20.0, is never decreased; splitWatermarks keeps finished splits too.
	numSplits           int
	splitWatermarks     map[string]int64
	paused              map[string]bool
	maxDesiredWatermark int64

	noMoreSplits bool
	finished     bool
}

// NewSplitMultiplexer returns a reader with no split, ACTIVE, at Long.MIN_VALUE, with no
// alignment limit (max desired watermark Long.MAX_VALUE). It refuses a negative bound
// (ErrNegativeOutOfOrderness) or a negative idle timeout (ErrNonPositiveIdleTimeout).
func NewSplitMultiplexer(cfg SplitMultiplexerConfig) (*SplitMultiplexer, error) {
	if cfg.IdleTimeoutMs < 0 {
		return nil, ErrNonPositiveIdleTimeout
	}
	main, err := newGenerator(cfg.OutOfOrdernessMs, cfg.IdleTimeoutMs)
	if err != nil {
		return nil, err
	}
	return &SplitMultiplexer{
		cfg:                 cfg,
		byID:                make(map[string]*splitOutput),
		combinedWatermark:   MinWatermark,
		main:                main,
		splitLocalIdle:      true,
		mainIdle:            true,
		out:                 NewEmitter(),
		splitWatermarks:     make(map[string]int64),
		paused:              make(map[string]bool),
		maxDesiredWatermark: MaxWatermark,
	}, nil
}

// AddSplit assigns a split (SourceOperator.handleAddSplitsEvent, then
// SplitLocalOutputs.createOutputForSplit): it gets a fresh generator and a partial
// watermark at Long.MIN_VALUE, active. Adding an ID the reader already holds keeps the
// existing output, as Flink does, but still counts toward the split count used by
// alignment. Nothing is forwarded until the next periodic emit.
func (m *SplitMultiplexer) AddSplit(splitID string) {
	m.numSplits++
	if _, ok := m.byID[splitID]; ok {
		return
	}
	// The config was validated by NewSplitMultiplexer, so this cannot fail.
	gen, _ := newGenerator(m.cfg.OutOfOrdernessMs, m.cfg.IdleTimeoutMs)
	s := &splitOutput{id: splitID, gen: gen, watermark: MinWatermark}
	m.splits = append(m.splits, s)
	m.byID[splitID] = s
}

// RemoveSplit releases a finished split the way SourceReaderBase does when a bounded
// split reaches its stopping offset (ReaderOutput.releaseOutputForSplit →
// WatermarkOutputMultiplexer.unregisterOutput): the split stops holding the minimum, but
// nothing is recomputed or forwarded until the next periodic emit, and the reader's
// watermark never goes back. It reports whether the split was held. As in 1.20.0 the
// alignment bookkeeping keeps the split's last watermark (no split-finished hook yet).
func (m *SplitMultiplexer) RemoveSplit(splitID string) bool {
	if _, ok := m.byID[splitID]; !ok {
		return false
	}
	delete(m.byID, splitID)
	for i, s := range m.splits {
		if s.id == splitID {
			m.splits = append(m.splits[:i], m.splits[i+1:]...)
			break
		}
	}
	return true
}

// OnEvent hands a record of splitID with event timestamp eventTs (event-time ms) to the
// split's generator (SourceOutputWithWatermarks.collect): the maximum timestamp and the
// idleness activity counter are updated. Nothing is forwarded: bounded out-of-orderness
// emits only periodically, and a record does not mark an idle split or reader active.
// nowMs (virtual processing time) is accepted for symmetry with OnPeriodicEmit but, as in
// Flink's IdlenessTimer, no clock is read at an event. A split the reader does not hold
// gives ErrSplitNotRegistered.
func (m *SplitMultiplexer) OnEvent(splitID string, eventTs int64, nowMs int64) error {
	_ = nowMs
	s, ok := m.byID[splitID]
	if !ok {
		return ErrSplitNotRegistered
	}
	s.gen.onEvent(eventTs)
	return nil
}

// OnPeriodicEmit runs one periodic watermark emission at virtual time nowMs
// (ProgressiveTimestampsAndWatermarks.emitImmediateWatermark, every
// pipeline.auto-watermark-interval, default 200 ms): first every split's generator in
// registration order, then the multiplexer's combination, then the main output's
// generator. It returns the reader's last forwarded watermark, whether the reader's
// output is IDLE, and whether anything (a watermark or a status toggle) was forwarded
// during this call. After EndOfInput the reader is finished and nothing happens.
func (m *SplitMultiplexer) OnPeriodicEmit(nowMs int64) (wm int64, idle bool, changed bool) {
	before := m.out.forwarded
	if !m.finished {
		for _, s := range m.splits {
			e := s.gen.onPeriodicEmit(s.clock.at(nowMs))
			switch e.Kind {
			case EmissionWatermark:
				m.setSplitWatermark(s, e.Watermark)
			case EmissionIdle:
				s.idle = true
			}
		}
		m.updateCombinedWatermark()

		e := m.main.onPeriodicEmit(m.mainClock.at(nowMs))
		switch e.Kind {
		case EmissionWatermark:
			m.out.EmitWatermark(e.Watermark)
			m.mainIdle = false
		case EmissionIdle:
			m.mainIdle = true
			m.maybeMarkIdle()
		}
		m.syncClocks(nowMs)
	}
	return m.out.current, m.out.idle, m.out.forwarded != before
}

// syncClocks pauses or resumes the activity clocks at nowMs after the alignment state
// may have changed (SourceOperator.checkWatermarkAlignment pausing
// mainInputActivityClock; pauseOrResumeSplits pausing a split's clock, a single split
// with the reader since FLINK-36751).
func (m *SplitMultiplexer) syncClocks(nowMs int64) {
	waiting := m.WaitingForAlignment()
	m.mainClock.set(waiting, nowMs)
	for _, s := range m.splits {
		s.clock.set(m.paused[s.id] || (m.numSplits <= 1 && waiting), nowMs)
	}
}

// setSplitWatermark is a deferred-output emitWatermark (PartialWatermark.setWatermark):
// it always clears the split's idleness and raises its watermark only upward, telling
// the alignment bookkeeping when it did (SourceOperator.updateCurrentSplitWatermark).
func (m *SplitMultiplexer) setSplitWatermark(s *splitOutput, wm int64) {
	s.idle = false
	if wm > s.watermark {
		s.watermark = wm
		m.splitWatermarks[s.id] = wm
		if m.numSplits > 1 && wm > m.maxDesiredWatermark && !m.paused[s.id] {
			m.paused[s.id] = true
		}
	}
}

// updateCombinedWatermark is WatermarkOutputMultiplexer.updateCombinedWatermark with
// CombinedWatermarkStatus.updateCombinedWatermark.
func (m *SplitMultiplexer) updateCombinedWatermark() {
	advanced := false
	if len(m.splits) > 0 {
		allIdle := true
		minimum := MaxWatermark
		for _, s := range m.splits {
			if !s.idle {
				allIdle = false
				if s.watermark < minimum {
					minimum = s.watermark
				}
			}
		}
		m.combinedIdle = allIdle
		if !allIdle && minimum > m.combinedWatermark {
			m.combinedWatermark = minimum
			advanced = true
		}
	}
	// With no split the idle flag keeps its previous value, as in Flink.
	switch {
	case advanced:
		m.out.EmitWatermark(m.combinedWatermark)
		m.splitLocalIdle = false
	case m.combinedIdle:
		m.splitLocalIdle = true
		m.maybeMarkIdle()
	}
}

// maybeMarkIdle is IdlenessManager.maybeMarkUnderlyingOutputAsIdle.
func (m *SplitMultiplexer) maybeMarkIdle() {
	if m.splitLocalIdle && m.mainIdle {
		m.out.MarkIdle()
	}
}

// NoMoreSplits records the enumerator's NoMoreSplitsEvent (sent to every reader of a
// bounded source, including readers that got no split).
func (m *SplitMultiplexer) NoMoreSplits() { m.noMoreSplits = true }

// IsEndOfInput reports whether the reader would answer END_OF_INPUT: NoMoreSplits was
// signalled and no split is left.
func (m *SplitMultiplexer) IsEndOfInput() bool {
	return m.noMoreSplits && len(m.splits) == 0
}

// EndOfInput finishes the reader once IsEndOfInput holds and returns Long.MAX_VALUE, the
// watermark the source task then emits to fire every event-time timer downstream
// (StreamTask.endData → SourceOperatorStreamTask.advanceToEndOfEventTime). That watermark
// goes straight to the task's output, not through the reader's Emitter, so
// CurrentWatermark is unchanged; note that Flink's RecordWriterOutput and ChainingOutput
// drop watermarks while the announced status is IDLE, so callers should consult IsIdle.
// After it, periodic emits do nothing and ReportedWatermark is Long.MAX_VALUE
// (SourceOperator DATA_FINISHED). Before END_OF_INPUT it returns ErrNotEndOfInput.
func (m *SplitMultiplexer) EndOfInput() (int64, error) {
	if !m.IsEndOfInput() {
		return m.out.current, ErrNotEndOfInput
	}
	m.finished = true
	return MaxWatermark, nil
}

// CurrentWatermark is the reader's last forwarded watermark (Long.MIN_VALUE before any).
func (m *SplitMultiplexer) CurrentWatermark() int64 { return m.out.current }

// IsIdle reports whether the reader's output is IDLE.
func (m *SplitMultiplexer) IsIdle() bool { return m.out.idle }

// IsFinished reports whether EndOfInput has been called successfully.
func (m *SplitMultiplexer) IsFinished() bool { return m.finished }

// Splits returns the IDs of the held splits in assignment order.
func (m *SplitMultiplexer) Splits() []string {
	ids := make([]string, len(m.splits))
	for i, s := range m.splits {
		ids[i] = s.id
	}
	return ids
}

// SplitWatermark returns a held split's current partial watermark and idleness as the
// multiplexer sees them; ok is false for a split the reader does not hold.
func (m *SplitMultiplexer) SplitWatermark(splitID string) (wm int64, idle bool, ok bool) {
	s, ok := m.byID[splitID]
	if !ok {
		return 0, false, false
	}
	return s.watermark, s.idle, true
}

// OnWatermarkAlignment applies the coordinator's WatermarkAlignmentEvent carrying
// maxAllowedWatermark (SourceOperator.handleOperatorEvent): the reader's max desired
// watermark becomes that value, and, when the reader has been given more than one split,
// every split whose watermark is above it is paused and every paused split at or below
// it is resumed (SourceOperator.checkSplitWatermarkAlignment). It returns the splits
// newly paused and the splits resumed, each sorted by ID. With a single split nothing is
// paused: the whole reader waits instead (see WaitingForAlignment). nowMs is the task's
// activity clock, at which the activity clocks pause or resume.
func (m *SplitMultiplexer) OnWatermarkAlignment(maxAllowedWatermark, nowMs int64) (pause, resume []string) {
	m.maxDesiredWatermark = maxAllowedWatermark
	defer m.syncClocks(nowMs)
	if m.numSplits <= 1 {
		return nil, nil
	}
	ids := make([]string, 0, len(m.splitWatermarks))
	for id := range m.splitWatermarks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		wm := m.splitWatermarks[id]
		switch {
		case wm > maxAllowedWatermark:
			if !m.paused[id] {
				pause = append(pause, id)
			}
		case m.paused[id]:
			resume = append(resume, id)
		}
	}
	for _, id := range pause {
		m.paused[id] = true
	}
	for _, id := range resume {
		delete(m.paused, id)
	}
	return pause, resume
}

// MaxDesiredWatermark is the last maxAllowedWatermark received (Long.MAX_VALUE before any).
func (m *SplitMultiplexer) MaxDesiredWatermark() int64 { return m.maxDesiredWatermark }

// WaitingForAlignment reports whether the whole reader stops polling records
// (SourceOperator.shouldWaitForAlignment): max desired watermark < the reader's last
// forwarded watermark.
func (m *SplitMultiplexer) WaitingForAlignment() bool {
	return m.maxDesiredWatermark < m.out.current
}

// PausedSplits lists the splits currently paused by alignment, sorted by ID. A split
// whose watermark rose above the max desired watermark during OnPeriodicEmit is paused
// at once (SourceOperator.updateCurrentSplitWatermark), so callers should read this after
// each periodic emit. As in 1.20.0 it may name a split already removed.
func (m *SplitMultiplexer) PausedSplits() []string {
	ids := make([]string, 0, len(m.paused))
	for id := range m.paused {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// ReportedWatermark is what the reader sends the coordinator every alignment update
// interval (SourceOperator.emitLatestWatermark, a ReportedWatermarkEvent): ok is false
// while the reader has never forwarded a watermark (Long.MIN_VALUE, FLINK-32414: a
// reader without splits does not hold the group back); otherwise Long.MAX_VALUE when the
// reader is IDLE or finished (FLINK-35157), else its last forwarded watermark.
func (m *SplitMultiplexer) ReportedWatermark() (wm int64, ok bool) {
	if m.finished {
		return MaxWatermark, true
	}
	if m.out.current == MinWatermark {
		return 0, false
	}
	if m.out.idle {
		return MaxWatermark, true
	}
	return m.out.current, true
}

// pausableClock is Flink's PausableRelativeClock over the caller's clock: time stands
// still while it is paused. One cause pauses it here (the caller has already left
// backpressure out), so a flag does for Flink's pause counter.
type pausableClock struct {
	paused bool
	since  int64 // when the current pause began
	total  int64 // time paused before it
}

// set pauses or resumes the clock at nowMs; setting the state it has does nothing.
func (c *pausableClock) set(paused bool, nowMs int64) {
	if paused == c.paused {
		return
	}
	if paused {
		c.since = nowMs
	} else {
		c.total += nowMs - c.since
	}
	c.paused = paused
}

// at is the clock's time when the caller's clock reads nowMs.
func (c *pausableClock) at(nowMs int64) int64 {
	t := c.total
	if c.paused {
		t += nowMs - c.since
	}
	return nowMs - t
}
