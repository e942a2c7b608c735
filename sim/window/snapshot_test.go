package window

import (
	"math"
	"reflect"
	"sort"
	"testing"

	"pgregory.net/rapid"
)

// snapshotOracle is Snapshot as it was first written: a map of states by
// key filled from every key's windows and every timer, then sorted.
func snapshotOracle(o *Operator) []KeyState {
	byKey := make(map[string]*KeyState)
	get := func(key string) *KeyState {
		s := byKey[key]
		if s == nil {
			s = &KeyState{Key: key}
			byKey[key] = s
		}
		return s
	}
	for key, ks := range o.keys {
		s := get(key)
		if ks.set != nil {
			for _, m := range ks.set.Mapping() {
				e, _ := ks.accs.get(m.StateWindow)
				fired, _ := ks.fired.get(m.Window)
				s.Windows = append(s.Windows, WindowState{Window: m.Window, StateWindow: m.StateWindow, Acc: e.acc, Fired: fired})
			}
			continue
		}
		ks.accs.each(func(w TimeWindow, e accEntry) {
			fired, _ := ks.fired.get(w)
			s.Windows = append(s.Windows, WindowState{Window: w, StateWindow: w, Acc: e.acc, Fired: fired})
		})
		sort.Slice(s.Windows, func(i, j int) bool { return s.Windows[i].Window.less(s.Windows[j].Window) })
	}
	for _, t := range o.eventTimers.all() {
		s := get(t.Key)
		s.EventTimeTimers = append(s.EventTimeTimers, t)
	}
	for _, t := range o.procTimers.all() {
		s := get(t.Key)
		s.ProcessingTimeTimers = append(s.ProcessingTimeTimers, t)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]KeyState, len(keys))
	for i, k := range keys {
		out[i] = *byKey[k]
	}
	return out
}

// Snapshot gives exactly what the naive map-and-sort version gives, for
// every assigner and clock, including keys that hold only timers (restored
// without windows).
func TestSnapshotMatchesOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kind := rapid.SampledFrom([]AssignerKind{Tumbling, Sliding, Session}).Draw(t, "assigner")
		cfg := Config{Assigner: kind, AllowedLateness: rapid.Int64Range(0, 20).Draw(t, "lateness"), Aggregate: Avg,
			Size: rapid.Int64Range(1, 30).Draw(t, "size"), Slide: rapid.Int64Range(1, 30).Draw(t, "slide"), Gap: rapid.Int64Range(1, 30).Draw(t, "gap")}
		if rapid.Bool().Draw(t, "processing") {
			cfg.TimeCharacteristic = ProcessingTime
		}
		op, err := NewOperator(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if rapid.Bool().Draw(t, "orphan timers") {
			// a key with timers of both clocks and no window
			w := TimeWindow{Start: 0, End: 10}
			if err := op.Restore([]KeyState{{Key: "z", EventTimeTimers: []Timer{{Timestamp: 9, Key: "z", Window: w}},
				ProcessingTimeTimers: []Timer{{Timestamp: 9, Key: "z", Window: w}, {Timestamp: 12, Key: "z", Window: w}}}}); err != nil {
				t.Fatal(err)
			}
		}
		wm, pt := int64(0), int64(0)
		for i, n := 0, rapid.IntRange(0, 60).Draw(t, "n"); i < n; i++ {
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0:
				wm += rapid.Int64Range(0, 20).Draw(t, "advance")
				op.AdvanceWatermark(wm)
			case 1:
				pt += rapid.Int64Range(0, 20).Draw(t, "tick")
				op.AdvanceProcessingTime(pt)
			default:
				op.ProcessElement(rapid.SampledFrom([]string{"a", "b", "c", "d"}).Draw(t, "key"), rapid.Int64Range(-20, 200).Draw(t, "ts"), 1, pt)
			}
			if got, want := op.Snapshot(), snapshotOracle(op); !reflect.DeepEqual(got, want) {
				t.Fatalf("Snapshot\n%v\noracle\n%v", got, want)
			}
		}
		op.AdvanceWatermark(math.MaxInt64)
		if got, want := op.Snapshot(), snapshotOracle(op); !reflect.DeepEqual(got, want) {
			t.Fatalf("Snapshot\n%v\noracle\n%v", got, want)
		}
	})
}
