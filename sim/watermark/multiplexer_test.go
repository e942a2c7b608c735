package watermark

import (
	"errors"
	"reflect"
	"testing"
)

// muxState is the reader's observable output after a periodic emit.
type muxState struct {
	wm      int64
	idle    bool
	changed bool
}

func newMux(t *testing.T, boundMs, idleMs int64) *SplitMultiplexer {
	t.Helper()
	m, err := NewSplitMultiplexer(SplitMultiplexerConfig{OutOfOrdernessMs: boundMs, IdleTimeoutMs: idleMs})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func emit(m *SplitMultiplexer, now int64) muxState {
	wm, idle, changed := m.OnPeriodicEmit(now)
	return muxState{wm, idle, changed}
}

func mustEvent(t *testing.T, m *SplitMultiplexer, split string, ts, now int64) {
	t.Helper()
	if err := m.OnEvent(split, ts, now); err != nil {
		t.Fatal(err)
	}
}

// The user trap: a reader with no split and no withIdleness holds Long.MIN_VALUE and
// never goes idle, however long it runs.
func TestMultiplexerNoSplitNoIdlenessHoldsMinForever(t *testing.T) {
	m := newMux(t, 0, 0)
	for now := int64(200); now <= 600_000; now += 200 {
		if got := emit(m, now); got != (muxState{MinWatermark, false, false}) {
			t.Fatalf("t=%d: %+v, want MIN, active, nothing forwarded", now, got)
		}
	}
	if _, ok := m.ReportedWatermark(); ok {
		t.Error("a reader that never forwarded a watermark reports nothing to the alignment coordinator")
	}
}

// With withIdleness, the main output's own timer (started at the first periodic emit)
// expires and, the split side being idle from the start, the reader is marked IDLE.
func TestMultiplexerNoSplitWithIdlenessGoesIdle(t *testing.T) {
	m := newMux(t, 0, 1000)
	for now := int64(200); now <= 1200; now += 200 {
		if got := emit(m, now); got != (muxState{MinWatermark, false, false}) {
			t.Fatalf("t=%d: %+v, want still active", now, got)
		}
	}
	if got := emit(m, 1400); got != (muxState{MinWatermark, true, true}) {
		t.Fatalf("t=1400 (1400-200 > 1000): %+v, want IDLE forwarded", got)
	}
	if got := emit(m, 1600); got != (muxState{MinWatermark, true, false}) {
		t.Fatalf("t=1600: %+v, want idle, nothing new", got)
	}
	if _, ok := m.ReportedWatermark(); ok {
		t.Error("idle but never forwarded a watermark: FLINK-32414 reports nothing")
	}
}

func TestMultiplexerMinimumOverSplits(t *testing.T) {
	m := newMux(t, 0, 0)
	m.AddSplit("p0")
	m.AddSplit("p1")
	mustEvent(t, m, "p0", 1000, 100)
	// p1 has no record: it holds the minimum at MIN.
	if got := emit(m, 200); got != (muxState{MinWatermark, false, false}) {
		t.Fatalf("t=200: %+v", got)
	}
	mustEvent(t, m, "p1", 3000, 300)
	if got := emit(m, 400); got != (muxState{999, false, true}) {
		t.Fatalf("t=400: %+v, want min(999, 2999)", got)
	}
	mustEvent(t, m, "p0", 5000, 500)
	if got := emit(m, 600); got != (muxState{2999, false, true}) {
		t.Fatalf("t=600: %+v, want min(4999, 2999)", got)
	}
	mustEvent(t, m, "p0", 100, 650) // late record: no effect
	if got := emit(m, 800); got != (muxState{2999, false, false}) {
		t.Fatalf("t=800: %+v", got)
	}
	if wm, idle, ok := m.SplitWatermark("p0"); !ok || wm != 4999 || idle {
		t.Errorf("p0 partial: %d %v %v", wm, idle, ok)
	}
}

func TestMultiplexerIdleSplitsAndReactivation(t *testing.T) {
	m := newMux(t, 0, 1000)
	m.AddSplit("p0")
	m.AddSplit("p1")
	// p0 gets a record every 200 ms (at t-100, ts = 10*(t-100)); p1 never.
	var got muxState
	for now := int64(200); now <= 1400; now += 200 {
		mustEvent(t, m, "p0", 10*(now-100), now-100)
		got = emit(m, now)
		if now < 1400 && got != (muxState{MinWatermark, false, false}) {
			t.Fatalf("t=%d: %+v, p1 holds MIN until idle", now, got)
		}
	}
	// p1's countdown started at 200, so it is idle at 1400 and leaves the minimum.
	if got != (muxState{12999, false, true}) {
		t.Fatalf("t=1400: %+v, want p0's 12999", got)
	}
	// p0 stops: its countdown starts at 1600, idle at 2800; the main output has been
	// idle since 1400, so the reader goes IDLE at 2800.
	for now := int64(1600); now <= 2600; now += 200 {
		if got := emit(m, now); got != (muxState{12999, false, false}) {
			t.Fatalf("t=%d: %+v", now, got)
		}
	}
	if got := emit(m, 2800); got != (muxState{12999, true, true}) {
		t.Fatalf("t=2800: %+v, want IDLE", got)
	}
	// A record below the reader's watermark makes p1 active again at the next emit, but
	// the combined watermark does not grow, so the reader stays IDLE (Flink 1.20).
	mustEvent(t, m, "p1", 5000, 2900)
	if got := emit(m, 3000); got != (muxState{12999, true, false}) {
		t.Fatalf("t=3000: %+v, want still IDLE", got)
	}
	if wm, idle, _ := m.SplitWatermark("p1"); wm != 4999 || idle {
		t.Fatalf("p1 partial %d idle=%v, want 4999 active", wm, idle)
	}
	// A record that lifts the minimum over active splits reactivates the reader.
	mustEvent(t, m, "p1", 20000, 3100)
	if got := emit(m, 3200); got != (muxState{19999, false, true}) {
		t.Fatalf("t=3200: %+v, want ACTIVE at 19999", got)
	}
}

func TestMultiplexerRemoveSplit(t *testing.T) {
	m := newMux(t, 0, 0)
	m.AddSplit("p0")
	m.AddSplit("p1")
	mustEvent(t, m, "p0", 1000, 100)
	mustEvent(t, m, "p1", 5000, 100)
	if got := emit(m, 200); got != (muxState{999, false, true}) {
		t.Fatalf("t=200: %+v", got)
	}
	if !m.RemoveSplit("p0") {
		t.Fatal("p0 was held")
	}
	if m.RemoveSplit("p0") || m.RemoveSplit("nope") {
		t.Error("removing an unknown split must report false")
	}
	if got := m.CurrentWatermark(); got != 999 {
		t.Errorf("nothing recomputed before the next emit: %d", got)
	}
	if got := emit(m, 400); got != (muxState{4999, false, true}) {
		t.Fatalf("t=400: %+v, want p1's 4999", got)
	}
	// A new, slower split cannot move the watermark back.
	m.AddSplit("p2")
	mustEvent(t, m, "p2", 10, 450)
	if got := emit(m, 600); got != (muxState{4999, false, false}) {
		t.Fatalf("t=600: %+v", got)
	}
	if err := m.OnEvent("p0", 1, 700); !errors.Is(err, ErrSplitNotRegistered) {
		t.Errorf("record of a removed split: %v", err)
	}
	if ErrSplitNotRegistered.Error() != "Have records for a split that was not registered" {
		t.Error("message must be SourceReaderBase's")
	}
	if !reflect.DeepEqual(m.Splits(), []string{"p1", "p2"}) {
		t.Errorf("splits %v", m.Splits())
	}
}

func TestMultiplexerEndOfInput(t *testing.T) {
	m := newMux(t, 0, 0)
	m.AddSplit("p0")
	if _, err := m.EndOfInput(); !errors.Is(err, ErrNotEndOfInput) {
		t.Fatalf("no NoMoreSplits yet: %v", err)
	}
	m.NoMoreSplits()
	if _, err := m.EndOfInput(); !errors.Is(err, ErrNotEndOfInput) {
		t.Fatalf("a split remains: %v", err)
	}
	mustEvent(t, m, "p0", 1000, 100)
	emit(m, 200)
	m.RemoveSplit("p0") // the bounded split reached its stopping offset
	if !m.IsEndOfInput() {
		t.Fatal("want END_OF_INPUT")
	}
	wm, err := m.EndOfInput()
	if err != nil || wm != MaxWatermark {
		t.Fatalf("EndOfInput = %d, %v; want Long.MAX_VALUE", wm, err)
	}
	if got := emit(m, 400); got != (muxState{999, false, false}) {
		t.Errorf("finished reader: %+v, want no more periodic emits", got)
	}
	if r, ok := m.ReportedWatermark(); !ok || r != MaxWatermark {
		t.Errorf("finished reader reports %d %v, want MAX", r, ok)
	}

	// A reader of a bounded source that got no split finishes at once.
	empty := newMux(t, 0, 0)
	empty.NoMoreSplits()
	if wm, err := empty.EndOfInput(); err != nil || wm != MaxWatermark {
		t.Errorf("split-less bounded reader: %d, %v", wm, err)
	}
}

func TestMultiplexerSplitAlignment(t *testing.T) {
	m := newMux(t, 0, 0)
	m.AddSplit("p0")
	m.AddSplit("p1")
	mustEvent(t, m, "p0", 1000, 100)
	mustEvent(t, m, "p1", 5000, 100)
	emit(m, 200)
	if r, ok := m.ReportedWatermark(); !ok || r != 999 {
		t.Fatalf("reported %d %v", r, ok)
	}
	pause, resume := m.OnWatermarkAlignment(2000, 0)
	if !reflect.DeepEqual(pause, []string{"p1"}) || resume != nil {
		t.Fatalf("pause %v resume %v, want p1 paused (4999 > 2000)", pause, resume)
	}
	if m.WaitingForAlignment() {
		t.Error("reader at 999 <= 2000 keeps polling")
	}
	// p0 passes the limit during a periodic emit: paused at once.
	mustEvent(t, m, "p0", 3000, 300)
	if got := emit(m, 400); got.wm != 2999 {
		t.Fatalf("t=400: %+v", got)
	}
	if !reflect.DeepEqual(m.PausedSplits(), []string{"p0", "p1"}) {
		t.Fatalf("paused %v", m.PausedSplits())
	}
	if !m.WaitingForAlignment() {
		t.Error("reader at 2999 > 2000 must wait")
	}
	pause, resume = m.OnWatermarkAlignment(6000, 0)
	if pause != nil || !reflect.DeepEqual(resume, []string{"p0", "p1"}) {
		t.Fatalf("pause %v resume %v, want both resumed", pause, resume)
	}
	if m.WaitingForAlignment() || len(m.PausedSplits()) != 0 {
		t.Error("everything resumed")
	}
}

func TestMultiplexerSingleSplitAlignmentWaitsInsteadOfPausing(t *testing.T) {
	m := newMux(t, 0, 0)
	m.AddSplit("p0")
	mustEvent(t, m, "p0", 1000, 100)
	emit(m, 200)
	pause, resume := m.OnWatermarkAlignment(0, 0)
	if pause != nil || resume != nil {
		t.Fatalf("one split: no split pausing, got %v %v", pause, resume)
	}
	if !m.WaitingForAlignment() {
		t.Error("reader at 999 > 0 waits")
	}
	if got := m.MaxDesiredWatermark(); got != 0 {
		t.Errorf("max desired %d", got)
	}
	// Adding the same split again still counts as a second split for alignment (1.20.0
	// counts AddSplitEvents) but keeps one output.
	m.AddSplit("p0")
	if len(m.Splits()) != 1 {
		t.Errorf("splits %v", m.Splits())
	}
	if pause, _ := m.OnWatermarkAlignment(0, 0); !reflect.DeepEqual(pause, []string{"p0"}) {
		t.Errorf("numSplits 2: want p0 paused, got %v", pause)
	}
}

func TestMultiplexerReportsMaxWhileIdle(t *testing.T) {
	m := newMux(t, 0, 1000)
	m.AddSplit("p0")
	mustEvent(t, m, "p0", 1000, 100)
	for now := int64(200); now <= 1600; now += 200 {
		emit(m, now)
	}
	if !m.IsIdle() {
		t.Fatal("want idle at 1600")
	}
	if r, ok := m.ReportedWatermark(); !ok || r != MaxWatermark {
		t.Errorf("idle reader reports %d %v, want MAX", r, ok)
	}
}

func TestMultiplexerConfigErrors(t *testing.T) {
	tests := []struct {
		give SplitMultiplexerConfig
		want error
	}{
		{SplitMultiplexerConfig{OutOfOrdernessMs: -1}, ErrNegativeOutOfOrderness},
		{SplitMultiplexerConfig{IdleTimeoutMs: -5}, ErrNonPositiveIdleTimeout},
	}
	for _, tt := range tests {
		if _, err := NewSplitMultiplexer(tt.give); !errors.Is(err, tt.want) {
			t.Errorf("%+v: %v, want %v", tt.give, err, tt.want)
		}
	}
}

// A reader waiting for alignment is not idle: its activity clocks stand still
// while it waits (SourceOperator pauses mainInputActivityClock, and a single
// split's clock with it, FLINK-36751). Without that, a single-split reader ahead
// of its group went IDLE 1 s into the wait and the downstream watermark ran
// past its backlog (swarm seeds 6001841, 5557655).
func TestMultiplexerWaitingForAlignmentIsNotIdle(t *testing.T) {
	m := newMux(t, 0, 1000)
	m.AddSplit("p0")
	mustEvent(t, m, "p0", 1000, 100)
	emit(m, 200) // activity seen: the split's countdown resets; the main output's starts at 200
	m.OnWatermarkAlignment(0, 200)
	if !m.WaitingForAlignment() {
		t.Fatal("reader at 999 > 0 waits")
	}
	for now := int64(400); now <= 3000; now += 200 {
		if got := emit(m, now); got.idle {
			t.Fatalf("t=%d: idle while waiting for alignment", now)
		}
	}
	m.OnWatermarkAlignment(5000, 3000) // resumes at 3000; the clocks read 200 there
	// The countdowns began at clock 200 (the split's at the first emit without
	// activity, t=400, clock 200); idle once more than 1000 passed: clock 1201+,
	// the emit at t=4200 (clock 1400), not the one at t=4000 (clock 1200).
	for now := int64(3200); now <= 4000; now += 200 {
		if got := emit(m, now); got.idle {
			t.Fatalf("t=%d: idle %d ms of activity clock after the countdown began", now, now-3000)
		}
	}
	if got := emit(m, 4200); !got.idle || !got.changed {
		t.Fatalf("t=4200: %+v, want idle", got)
	}
}

// A split paused by alignment is not idle while it is paused (the per-split
// inputActivityClock of ProgressiveTimestampsAndWatermarks, FLIP-471), so the
// reader's watermark stays the minimum over both splits.
func TestMultiplexerPausedSplitIsNotIdle(t *testing.T) {
	m := newMux(t, 0, 1000)
	m.AddSplit("p0")
	m.AddSplit("p1")
	mustEvent(t, m, "p0", 1000, 100)
	mustEvent(t, m, "p1", 5000, 100)
	emit(m, 200)
	if pause, _ := m.OnWatermarkAlignment(2000, 200); !reflect.DeepEqual(pause, []string{"p1"}) {
		t.Fatalf("pause %v, want p1", pause)
	}
	ts := int64(1000)
	for now := int64(400); now <= 3000; now += 200 {
		ts += 50 // p0 keeps reading, below the limit
		mustEvent(t, m, "p0", ts, now-1)
		emit(m, now)
		if _, idle, _ := m.SplitWatermark("p1"); idle {
			t.Fatalf("t=%d: paused p1 idle", now)
		}
	}
	if wm := m.CurrentWatermark(); wm != ts-1 {
		t.Fatalf("watermark %d, want p0's %d (the minimum; p1 not left out)", wm, ts-1)
	}
}
