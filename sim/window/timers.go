package window

import "slices"

// Timer is a registered timer of the window operator: it fires for Key's
// Window when its clock (event time for watermarks, processing time
// otherwise) reaches Timestamp (virtual ms). Timers are unique per
// (Timestamp, Key, Window), as in Flink's InternalTimerServiceImpl.
type Timer struct {
	Timestamp int64
	Key       string
	Window    TimeWindow
}

// timerLess is the total order timers fire in: timestamp, then key, then
// window start, then window end. (Flink's timer heap orders by timestamp
// only; ties are broken here so that the output never depends on heap
// history.)
func timerLess(a, b Timer) bool {
	if a.Timestamp != b.Timestamp {
		return a.Timestamp < b.Timestamp
	}
	if a.Key != b.Key {
		return a.Key < b.Key
	}
	return a.Window.less(b.Window)
}

// timerCompare is timerLess as a three-way comparison (for slices.SortFunc).
func timerCompare(a, b Timer) int {
	switch {
	case timerLess(a, b):
		return -1
	case timerLess(b, a):
		return 1
	}
	return 0
}

// timerQueue is a set of timers with ordered extraction: a binary heap in
// timerLess order plus a membership set. Deletion is lazy: a deleted timer
// stays in the heap until it reaches the top, where it is skipped.
// Invariant: every member of live is in the heap at least once.
// Cost: register O(log n), delete O(1), pop O(log n) amortised.
type timerQueue struct {
	live map[Timer]struct{}
	h    timerHeap
}

func newTimerQueue() *timerQueue { return &timerQueue{live: make(map[Timer]struct{})} }

// register adds t; registering a present timer is a no-op.
func (q *timerQueue) register(t Timer) {
	if _, ok := q.live[t]; ok {
		return
	}
	q.live[t] = struct{}{}
	q.h.push(t)
	if len(q.h) > 64 && len(q.h) > 4*len(q.live) {
		q.compact()
	}
}

// delete removes t if present.
func (q *timerQueue) delete(t Timer) { delete(q.live, t) }

// peek returns the first live timer without removing it.
func (q *timerQueue) peek() (Timer, bool) {
	for len(q.h) > 0 {
		t := q.h[0]
		if _, ok := q.live[t]; ok {
			return t, true
		}
		q.h.pop()
	}
	return Timer{}, false
}

// popUpTo removes and returns the first live timer with Timestamp <= limit.
func (q *timerQueue) popUpTo(limit int64) (Timer, bool) {
	t, ok := q.peek()
	if !ok || t.Timestamp > limit {
		return Timer{}, false
	}
	q.h.pop()
	delete(q.live, t)
	return t, true
}

// all returns the live timers in firing order.
func (q *timerQueue) all() []Timer {
	out := make([]Timer, 0, len(q.live))
	for t := range q.live {
		out = append(out, t)
	}
	slices.SortFunc(out, timerCompare)
	return out
}

// compact rebuilds the heap from the live set, dropping deleted entries.
func (q *timerQueue) compact() {
	q.h = timerHeap(q.all()) // sorted, so already a heap
}

// timerHeap is a binary min-heap of timers in timerLess order, typed (no
// interface boxing per push, unlike container/heap): h[(i-1)/2] is never
// after h[i]. Cost: push and pop O(log n).
type timerHeap []Timer

// push adds t.
func (h *timerHeap) push(t Timer) {
	*h = append(*h, t)
	s := *h
	i := len(s) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !timerLess(s[i], s[parent]) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

// pop removes the first timer (h must not be empty).
func (h *timerHeap) pop() {
	s := *h
	n := len(s) - 1
	s[0] = s[n]
	s[n] = Timer{}
	s = s[:n]
	*h = s
	for i := 0; ; {
		first := i
		if l := 2*i + 1; l < n && timerLess(s[l], s[first]) {
			first = l
		}
		if r := 2*i + 2; r < n && timerLess(s[r], s[first]) {
			first = r
		}
		if first == i {
			return
		}
		s[i], s[first] = s[first], s[i]
		i = first
	}
}
