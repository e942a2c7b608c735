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
	p := tuning{procs: true, begun: true, max: 4, now: 4, gomaxprocs: func(n int) int { calls = append(calls, n); return 0 }}
	window := func(width int) int {
		for range tuneWindow {
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
	for range tuneWindow - 1 {
		p.step(0)
	}
	p.step(wideSteps * tuneWindow)
	if p.now != 4 || len(calls) != 4 {
		t.Fatalf("a window averaging %d deliveries per step: %d Ps after calls %v, want 4 and no call", wideSteps, p.now, calls)
	}
}

// TestGCPercentFollowsLiveHeap: 200 while the live heap is small, the
// process's own once it is large, and back to the process's own at the end.
func TestGCPercentFollowsLiveHeap(t *testing.T) {
	defer func(was int) { processGC = was }(processGC)
	processGC = 100 // as begin finds it with GOGC unset
	var set []int
	live := uint64(0)
	p := tuning{gc: true, begun: true, gcNow: processGC,
		gcPercent: func(n int) int { set = append(set, n); return 0 }, liveHeap: func() uint64 { return live }}
	window := func(heap uint64) int {
		live = heap
		for range tuneWindow {
			p.step(1)
		}
		return p.gcNow
	}
	for i, c := range []struct {
		heap uint64
		want int
	}{
		{10 << 20, smallHeapGC},
		{smallHeap, smallHeapGC}, // in between: keeps it
		{largeHeap, processGC},
		{smallHeap, processGC}, // in between: keeps it
		{smallHeap - 1, smallHeapGC},
	} {
		if got := window(c.heap); got != c.want {
			t.Fatalf("window %d (live heap %d): GC percent %d, want %d", i, c.heap, got, c.want)
		}
	}
	p.restore()
	if want := []int{smallHeapGC, processGC, smallHeapGC, processGC}; !slices.Equal(set, want) {
		t.Fatalf("GC percent set to %v, want %v", set, want)
	}
}

// TestBurstStartsACollection: a step of burstEvents log events or more has
// one collection started tuneWindow steps after it, wherever it falls in a
// tuning window (first step, last step); a smaller step, or a tuning that
// does not choose the GC percent, none.
func TestBurstStartsACollection(t *testing.T) {
	defer func(was int) { processGC = was }(processGC)
	processGC = 100
	for _, c := range []struct {
		gc     bool
		events int
		at     int // steps of the window before the burst's
		want   int
	}{
		{true, burstEvents, 0, 1},
		{true, burstEvents, tuneWindow - 1, 1}, // the window's last step
		{true, burstEvents, 100, 1},
		{true, burstEvents - 1, 0, 0},
		{false, 1 << 30, 0, 0},
	} {
		n := 0
		p := tuning{gc: c.gc, begun: true, gcNow: processGC, gcPercent: func(int) int { return 0 },
			liveHeap: func() uint64 { return largeHeap }, collect: func() { n++ }}
		for range c.at {
			p.step(1)
		}
		p.step(1) // the burst's step, counted as it starts
		p.logged(c.events)
		for range tuneWindow - 1 {
			p.step(1)
		}
		if n != 0 {
			t.Fatalf("%+v: %d collections fewer than %d steps after the burst", c, n, tuneWindow)
		}
		p.step(1)
		if n != c.want {
			t.Fatalf("%+v: %d collections %d steps after the burst, want %d", c, n, tuneWindow, c.want)
		}
		for range 3 * tuneWindow {
			p.step(1)
		}
		if n != c.want {
			t.Fatalf("%+v: %d collections later on, want %d", c, n, c.want)
		}
	}
}
