package window

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"

	"pgregory.net/rapid"
)

// The oracles below know nothing of timers, merging window sets or the
// assigners: windows are found by brute force over every candidate start,
// sessions by regrouping all of a key's pending timestamps, and firings by
// scanning all windows on every clock advance.

// bruteForceWindows lists every window [s, s+size) with s = offset + k*slide
// (k any integer) that holds ts, by scanning all starts in [ts-size-slide,
// ts] one millisecond at a time.
func bruteForceWindows(ts, size, slide, offset int64) []TimeWindow {
	var out []TimeWindow
	for s := ts - size - slide; s <= ts; s++ {
		if ((s-offset)%slide+slide)%slide == 0 && s <= ts && ts < s+size {
			out = append(out, TimeWindow{s, s + size})
		}
	}
	return out
}

type oracleKW struct {
	key string
	w   TimeWindow
}

type oracleWindow struct {
	count      int64
	fired      int
	timerFired bool // fired by the clock (or created already past it)
}

// alignedOracle models tumbling and sliding windows on either clock.
type alignedOracle struct {
	size, slide, offset, lateness int64
	eventTime, sideOutput         bool
	clock                         int64 // watermark or processing time
	windows                       map[oracleKW]*oracleWindow
	dropped                       int64
}

func (m *alignedOracle) cleanup(w TimeWindow) int64 {
	if !m.eventTime {
		return w.MaxTimestamp()
	}
	return w.MaxTimestamp() + m.lateness // the generated values never overflow
}

func (m *alignedOracle) element(key string, ts, pt int64) (results []Result, late []LateElement) {
	at := ts
	if !m.eventTime {
		at = pt
	}
	counted := 0
	for _, w := range bruteForceWindows(at, m.size, m.slide, m.offset) {
		if m.eventTime && m.cleanup(w) <= m.clock {
			continue // late window
		}
		counted++
		kw := oracleKW{key, w}
		ow := m.windows[kw]
		if ow == nil {
			ow = &oracleWindow{}
			m.windows[kw] = ow
		}
		ow.count++
		if m.eventTime && w.MaxTimestamp() <= m.clock {
			ow.fired++
			ow.timerFired = true
			results = append(results, Result{Key: key, Window: w, Value: float64(ow.count), Count: ow.count, Firing: ow.fired, Late: true})
		}
	}
	if counted == 0 && m.eventTime && ts+m.lateness <= m.clock {
		if m.sideOutput {
			late = append(late, LateElement{Key: key, Timestamp: ts, Value: 1})
		} else {
			m.dropped++
		}
	}
	sortResults(results)
	return results, late
}

func (m *alignedOracle) advance(to int64) []Result {
	if m.eventTime && to <= m.clock {
		return nil
	}
	m.clock = to
	var results []Result
	for kw, ow := range m.windows {
		if !ow.timerFired && kw.w.MaxTimestamp() <= to {
			ow.timerFired = true
			ow.fired++
			results = append(results, Result{Key: kw.key, Window: kw.w, Value: float64(ow.count), Count: ow.count, Firing: ow.fired})
		}
	}
	for kw := range m.windows {
		if m.cleanup(kw.w) <= to {
			delete(m.windows, kw)
		}
	}
	sortResults(results)
	return results
}

func sortResults(rs []Result) {
	sort.Slice(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		return timerLess(Timer{a.Window.MaxTimestamp(), a.Key, a.Window}, Timer{b.Window.MaxTimestamp(), b.Key, b.Window})
	})
}

func sameResults(a, b []Result) bool {
	return slices.Equal(a, b) || (len(a) == 0 && len(b) == 0)
}

func checkFiringOrder(t *rapid.T, rs []Result) {
	for i := 1; i < len(rs); i++ {
		if rs[i].Window.MaxTimestamp() < rs[i-1].Window.MaxTimestamp() {
			t.Fatalf("results out of maxTimestamp order: %v", rs)
		}
	}
}

// TestAlignedWindowsProperty: for random tumbling or sliding windows on
// either clock, random elements and a non-decreasing clock, the operator's
// firings, late side output and dropped count equal the brute-force oracle's
// after every step, so every element is counted in exactly its non-late
// windows, sent to the side output, or dropped; firings of one clock advance
// come in non-decreasing maxTimestamp order.
func TestAlignedWindowsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sliding := rapid.Bool().Draw(t, "sliding")
		size := rapid.Int64Range(1, 40).Draw(t, "size")
		slide := size
		if sliding {
			slide = rapid.Int64Range(1, 40).Draw(t, "slide")
		}
		offset := rapid.Int64Range(-(slide-1), slide-1).Draw(t, "offset")
		eventTime := rapid.Bool().Draw(t, "eventTime")
		m := &alignedOracle{
			size: size, slide: slide, offset: offset,
			lateness:   rapid.Int64Range(0, 30).Draw(t, "lateness"),
			eventTime:  eventTime,
			sideOutput: rapid.Bool().Draw(t, "sideOutput"),
			clock:      math.MinInt64,
			windows:    map[oracleKW]*oracleWindow{},
		}
		cfg := Config{Assigner: Tumbling, Size: size, Offset: offset, AllowedLateness: m.lateness, SideOutputLateData: m.sideOutput}
		if sliding {
			cfg.Assigner, cfg.Slide = Sliding, slide
		}
		if !eventTime {
			cfg.TimeCharacteristic = ProcessingTime
			m.clock = 0
		}
		op, err := NewOperator(cfg)
		if err != nil {
			t.Fatalf("NewOperator(%+v): %v", cfg, err)
		}

		clock := int64(-50)
		steps := rapid.IntRange(1, 80).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			if rapid.IntRange(0, 3).Draw(t, "op") == 0 {
				clock += rapid.Int64Range(0, 40).Draw(t, "advance")
				var got Output
				if eventTime {
					got = op.AdvanceWatermark(clock)
				} else {
					got = op.AdvanceProcessingTime(clock)
				}
				want := m.advance(clock)
				checkFiringOrder(t, got.Results)
				if !sameResults(got.Results, want) || got.Err != nil || len(got.Late) != 0 {
					t.Fatalf("advance to %d: got %+v, want %+v", clock, got, want)
				}
				continue
			}
			key := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "key")
			ts := rapid.Int64Range(-100, 300).Draw(t, "ts")
			got := op.ProcessElement(key, ts, 1, clock)
			wantR, wantL := m.element(key, ts, clock)
			if got.Err != nil || !sameResults(got.Results, wantR) || !slices.Equal(got.Late, wantL) {
				t.Fatalf("element %s@%d (clock %d): got %+v, want %+v %+v", key, ts, clock, got, wantR, wantL)
			}
			if op.NumLateRecordsDropped() != m.dropped {
				t.Fatalf("dropped %d, want %d", op.NumLateRecordsDropped(), m.dropped)
			}
		}
		if op.NumWindows() != len(m.windows) {
			t.Fatalf("NumWindows %d, oracle %d", op.NumWindows(), len(m.windows))
		}
		// Drain: every window fires exactly once by the clock, at the latest now.
		var got Output
		if eventTime {
			got = op.AdvanceWatermark(math.MaxInt64)
		} else {
			got = op.AdvanceProcessingTime(math.MaxInt64)
		}
		if want := m.advance(math.MaxInt64); !sameResults(got.Results, want) {
			t.Fatalf("drain: got %v, want %v", got.Results, want)
		}
		if op.NumWindows() != 0 || op.NumKeys() != 0 {
			t.Fatalf("state left after the final clock advance: %v", op.Snapshot())
		}
	})
}

// sessionOracle models event-time sessions without allowed lateness by
// keeping every pending (not yet fired) timestamp per key and regrouping
// them into sessions from scratch whenever it needs them.
type sessionOracle struct {
	gap        int64
	sideOutput bool
	watermark  int64
	pending    map[string][]int64
	dropped    int64
}

type oracleSession struct {
	w     TimeWindow
	count int64
}

func (m *sessionOracle) sessions(key string) []oracleSession {
	ts := slices.Clone(m.pending[key])
	slices.Sort(ts)
	var out []oracleSession
	for _, t := range ts {
		if n := len(out); n > 0 && t <= out[n-1].w.End { // [t, t+gap) touches or overlaps
			out[n-1].w.End = max(out[n-1].w.End, t+m.gap)
			out[n-1].count++
			continue
		}
		out = append(out, oracleSession{TimeWindow{t, t + m.gap}, 1})
	}
	return out
}

func (m *sessionOracle) element(key string, ts int64) []LateElement {
	m.pending[key] = append(m.pending[key], ts)
	for _, s := range m.sessions(key) {
		if s.w.Start <= ts && ts < s.w.End && s.w.MaxTimestamp() <= m.watermark {
			// Its session would be late: the element is not kept.
			m.pending[key] = m.pending[key][:len(m.pending[key])-1]
			if ts <= m.watermark {
				if m.sideOutput {
					return []LateElement{{Key: key, Timestamp: ts, Value: 1}}
				}
				m.dropped++
			}
			return nil
		}
	}
	return nil
}

func (m *sessionOracle) advance(wm int64) []Result {
	if wm <= m.watermark {
		return nil
	}
	m.watermark = wm
	var results []Result
	for key := range m.pending {
		var keep []int64
		for _, s := range m.sessions(key) {
			if s.w.MaxTimestamp() <= wm {
				results = append(results, Result{Key: key, Window: s.w, Value: float64(s.count), Count: s.count, Firing: 1})
				continue
			}
			for _, t := range m.pending[key] {
				if s.w.Start <= t && t < s.w.End {
					keep = append(keep, t)
				}
			}
		}
		m.pending[key] = keep
	}
	sortResults(results)
	return results
}

// TestSessionWindowsProperty: event-time sessions without allowed lateness
// fire exactly the sessions a from-scratch regrouping of the pending elements
// gives, each element is counted in exactly one firing or is late, and the
// live windows of a key never intersect.
func TestSessionWindowsProperty(t *testing.T) {
	t.Run("lateness=0", func(t *testing.T) { sessionProperty(t, false) })
	t.Run("lateness>0", func(t *testing.T) { sessionProperty(t, true) })
}

// sessionProperty checks the exact oracle without lateness; with lateness it
// checks what must hold anyway: live windows never intersect, no (key,
// window, firing) repeats, firings of a watermark come in maxTimestamp
// order, every firing's window contains its count of elements at most, and
// the final watermark leaves no state.
func sessionProperty(tt *testing.T, withLateness bool) {
	rapid.Check(tt, func(t *rapid.T) {
		lateness := int64(0)
		if withLateness {
			lateness = rapid.Int64Range(1, 40).Draw(t, "lateness")
		}
		m := &sessionOracle{
			gap:        rapid.Int64Range(1, 30).Draw(t, "gap"),
			sideOutput: rapid.Bool().Draw(t, "sideOutput"),
			watermark:  math.MinInt64,
			pending:    map[string][]int64{},
		}
		op, err := NewOperator(Config{Assigner: Session, Gap: m.gap, AllowedLateness: lateness, SideOutputLateData: m.sideOutput})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		perKey := map[string]int64{}
		record := func(rs []Result) {
			for _, r := range rs {
				id := fmt.Sprintf("%s %v #%d", r.Key, r.Window, r.Firing)
				if seen[id] {
					t.Fatalf("firing %s emitted twice", id)
				}
				seen[id] = true
				if r.Count > perKey[r.Key] || r.Window.End-r.Window.Start < m.gap {
					t.Fatalf("firing %+v impossible (%d elements of the key so far)", r, perKey[r.Key])
				}
			}
		}
		wm := int64(-50)
		var elements, counted, late int64
		steps := rapid.IntRange(1, 80).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			if rapid.IntRange(0, 3).Draw(t, "op") == 0 {
				wm += rapid.Int64Range(0, 40).Draw(t, "advance")
				got := op.AdvanceWatermark(wm)
				checkFiringOrder(t, got.Results)
				record(got.Results)
				if !withLateness {
					if want := m.advance(wm); !sameResults(got.Results, want) {
						t.Fatalf("watermark %d: got %v, want %v", wm, got.Results, want)
					}
				}
				for _, r := range got.Results {
					counted += r.Count
				}
			} else {
				key := rapid.SampledFrom([]string{"a", "b"}).Draw(t, "key")
				ts := rapid.Int64Range(-100, 300).Draw(t, "ts")
				elements++
				perKey[key]++
				got := op.ProcessElement(key, ts, 1, 0)
				if got.Err != nil {
					t.Fatalf("element %s@%d: %v", key, ts, got.Err)
				}
				record(got.Results)
				if !withLateness {
					if want := m.element(key, ts); len(got.Results) != 0 || !slices.Equal(got.Late, want) {
						t.Fatalf("element %s@%d: got %+v, want late %v", key, ts, got, want)
					}
					if op.NumLateRecordsDropped() != m.dropped {
						t.Fatalf("dropped %d, want %d", op.NumLateRecordsDropped(), m.dropped)
					}
				}
				late += int64(len(got.Late))
			}
			for _, ks := range op.Snapshot() {
				for j := 1; j < len(ks.Windows); j++ {
					if ks.Windows[j-1].Window.Intersects(ks.Windows[j].Window) {
						t.Fatalf("key %s: live windows %v and %v intersect", ks.Key, ks.Windows[j-1].Window, ks.Windows[j].Window)
					}
				}
			}
		}
		final := op.AdvanceWatermark(math.MaxInt64).Results
		record(final)
		for _, r := range final {
			counted += r.Count
		}
		if op.NumKeys() != 0 || op.NumWindows() != 0 {
			t.Fatalf("state left: %v", op.Snapshot())
		}
		if !withLateness && counted+late+op.NumLateRecordsDropped() != elements {
			t.Fatalf("%d elements, but %d counted + %d side output + %d dropped", elements, counted, late, op.NumLateRecordsDropped())
		}
	})
}

// TestSnapshotRestoreProperty: restoring a snapshot into a fresh operator and
// advancing both to the same watermark yields the same firings, as long as
// the watermark is restored first (Flink restarts it at Long.MIN_VALUE).
func TestSnapshotRestoreProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kind := rapid.SampledFrom([]AssignerKind{Tumbling, Sliding, Session}).Draw(t, "assigner")
		cfg := Config{Assigner: kind, AllowedLateness: rapid.Int64Range(0, 20).Draw(t, "lateness"), Aggregate: Avg}
		switch kind {
		case Tumbling:
			cfg.Size = rapid.Int64Range(1, 30).Draw(t, "size")
		case Sliding:
			cfg.Size = rapid.Int64Range(1, 30).Draw(t, "size")
			cfg.Slide = rapid.Int64Range(1, 30).Draw(t, "slide")
		case Session:
			cfg.Gap = rapid.Int64Range(1, 30).Draw(t, "gap")
		}
		op, err := NewOperator(cfg)
		if err != nil {
			t.Fatal(err)
		}
		wm := int64(0)
		for i, n := 0, rapid.IntRange(0, 40).Draw(t, "n"); i < n; i++ {
			if rapid.IntRange(0, 4).Draw(t, "op") == 0 {
				wm += rapid.Int64Range(0, 20).Draw(t, "advance")
				op.AdvanceWatermark(wm)
				continue
			}
			op.ProcessElement(rapid.SampledFrom([]string{"a", "b"}).Draw(t, "key"), rapid.Int64Range(-20, 200).Draw(t, "ts"),
				float64(rapid.IntRange(-5, 5).Draw(t, "value")), 0)
		}
		snap := op.Snapshot()
		restored, _ := NewOperator(cfg)
		if err := restored.Restore(snap); err != nil {
			t.Fatalf("restore: %v", err)
		}
		if fmt.Sprint(restored.Snapshot()) != fmt.Sprint(snap) {
			t.Fatalf("snapshot of restored operator differs:\n%v\n%v", restored.Snapshot(), snap)
		}
		restored.AdvanceWatermark(op.CurrentWatermark())
		for _, w := range []int64{wm + 5, wm + 50, math.MaxInt64} {
			a, b := op.AdvanceWatermark(w), restored.AdvanceWatermark(w)
			if !sameResults(a.Results, b.Results) {
				t.Fatalf("watermark %d: original %v, restored %v", w, a.Results, b.Results)
			}
		}
	})
}

// TestArmedWindowsProperty: skipping the timer registrations of armed
// windows (accEntry) changes nothing: an operator that registers every
// timer on every element gives the same outputs and the same state and
// timers (Snapshot) after every call, across watermarks, processing time,
// late firings within the allowed lateness, and a snapshot restored into
// both mid-way (restored windows are not armed).
func TestArmedWindowsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kind := rapid.SampledFrom([]AssignerKind{Tumbling, Sliding}).Draw(t, "assigner")
		cfg := Config{Assigner: kind, AllowedLateness: rapid.Int64Range(0, 20).Draw(t, "lateness"), Aggregate: Sum,
			SideOutputLateData: rapid.Bool().Draw(t, "side")}
		if rapid.IntRange(0, 3).Draw(t, "clock") == 0 {
			cfg.TimeCharacteristic = ProcessingTime
		}
		cfg.Size = rapid.Int64Range(1, 30).Draw(t, "size")
		if kind == Sliding {
			cfg.Slide = rapid.Int64Range(1, 30).Draw(t, "slide")
		}
		fast, err := NewOperator(cfg)
		if err != nil {
			t.Fatal(err)
		}
		slow, _ := NewOperator(cfg)
		slow.neverArm = true
		check := func(what string, a, b Output) {
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("%s: armed %+v, oracle %+v", what, a, b)
			}
			if sa, sb := fmt.Sprint(fast.Snapshot()), fmt.Sprint(slow.Snapshot()); sa != sb {
				t.Fatalf("%s: state\n%s\noracle\n%s", what, sa, sb)
			}
			if fast.NumWindows() != fast.countWindows() || fast.NumWindows() != slow.NumWindows() || fast.NumKeys() != slow.NumKeys() {
				t.Fatalf("%s: NumWindows %d (scan %d, oracle %d)", what, fast.NumWindows(), fast.countWindows(), slow.NumWindows())
			}
		}
		wm, pt := int64(0), int64(0)
		for i, n := 0, rapid.IntRange(0, 80).Draw(t, "n"); i < n; i++ {
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0:
				wm += rapid.Int64Range(0, 20).Draw(t, "advance")
				check("watermark", fast.AdvanceWatermark(wm), slow.AdvanceWatermark(wm))
			case 1:
				pt += rapid.Int64Range(0, 20).Draw(t, "tick")
				check("processing time", fast.AdvanceProcessingTime(pt), slow.AdvanceProcessingTime(pt))
			case 2:
				snap := fast.Snapshot()
				if err := fast.Restore(snap); err != nil {
					t.Fatal(err)
				}
				if err := slow.Restore(snap); err != nil {
					t.Fatal(err)
				}
				check("restore", Output{}, Output{})
			default:
				key := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "key")
				ts := rapid.Int64Range(-20, 200).Draw(t, "ts")
				v := float64(rapid.IntRange(-5, 5).Draw(t, "value"))
				check("element", fast.ProcessElement(key, ts, v, pt), slow.ProcessElement(key, ts, v, pt))
			}
		}
		check("end", fast.AdvanceWatermark(math.MaxInt64), slow.AdvanceWatermark(math.MaxInt64))
	})
}
