package actors

import (
	"slices"
	"testing"
)

// TestProcsFollowsStepWidth drives the choice with windows of made-up step
// widths: narrow windows go to one P, wide ones to every P, those in
// between keep what they have, and only a change calls GOMAXPROCS.
func TestProcsFollowsStepWidth(t *testing.T) {
	var calls []int
	p := procs{max: 4, now: 4, gomaxprocs: func(n int) int { calls = append(calls, n); return 0 }}
	window := func(width int) int {
		for range procsWindow {
			p.step(width)
		}
		return p.now
	}
	for i, c := range []struct{ width, want int }{
		{narrowSteps, 4},     // in between: stays at every P
		{narrowSteps - 1, 1}, // narrow
		{1, 1},
		{wideSteps - 1, 1}, // in between: stays at one P
		{wideSteps, 4},     // wide
		{narrowSteps, 4},
		{0, 1},
	} {
		if got := window(c.width); got != c.want {
			t.Fatalf("window %d (width %d): %d Ps, want %d", i, c.width, got, c.want)
		}
	}
	p.restore()
	if want := []int{1, 4, 1, 4}; !slices.Equal(calls, want) {
		t.Fatalf("GOMAXPROCS calls %v, want %v", calls, want)
	}
	// a window is decided by its average, not by its last step
	for range procsWindow - 1 {
		p.step(0)
	}
	p.step(wideSteps * procsWindow)
	if p.now != 4 || len(calls) != 4 {
		t.Fatalf("a window averaging %d deliveries per step: %d Ps after calls %v, want 4 and no call", wideSteps, p.now, calls)
	}
}
