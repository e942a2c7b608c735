package window

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// The typed heap pops timers in timerLess order, whatever the pushes and
// interleaved pops (the naive oracle: a sorted slice).
func TestTimerHeapOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var h timerHeap
		var oracle []Timer
		for i, n := 0, rapid.IntRange(0, 200).Draw(t, "n"); i < n; i++ {
			if len(h) > 0 && rapid.IntRange(0, 2).Draw(t, "pop") == 0 {
				got := h[0]
				h.pop()
				if got != oracle[0] {
					t.Fatalf("pop %v, want %v", got, oracle[0])
				}
				oracle = oracle[1:]
				continue
			}
			tm := Timer{Timestamp: rapid.Int64Range(0, 20).Draw(t, "ts"), Key: rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "key"),
				Window: TimeWindow{Start: rapid.Int64Range(0, 5).Draw(t, "start"), End: rapid.Int64Range(5, 9).Draw(t, "end")}}
			h.push(tm)
			oracle = append(oracle, tm)
			slices.SortStableFunc(oracle, func(a, b Timer) int {
				switch {
				case timerLess(a, b):
					return -1
				case timerLess(b, a):
					return 1
				}
				return 0
			})
		}
		for len(h) > 0 {
			if h[0] != oracle[0] {
				t.Fatalf("drain %v, want %v", h[0], oracle[0])
			}
			h.pop()
			oracle = oracle[1:]
		}
	})
}
