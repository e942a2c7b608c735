package window

import (
	"container/heap"
	"sort"
)

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
	heap.Push(&q.h, t)
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
		heap.Pop(&q.h)
	}
	return Timer{}, false
}

// popUpTo removes and returns the first live timer with Timestamp <= limit.
func (q *timerQueue) popUpTo(limit int64) (Timer, bool) {
	t, ok := q.peek()
	if !ok || t.Timestamp > limit {
		return Timer{}, false
	}
	heap.Pop(&q.h)
	delete(q.live, t)
	return t, true
}

// len is the number of live timers.
func (q *timerQueue) len() int { return len(q.live) }

// all returns the live timers in firing order.
func (q *timerQueue) all() []Timer {
	out := make([]Timer, 0, len(q.live))
	for t := range q.live {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return timerLess(out[i], out[j]) })
	return out
}

// compact rebuilds the heap from the live set, dropping deleted entries.
func (q *timerQueue) compact() {
	q.h = timerHeap(q.all())
	heap.Init(&q.h)
}

// timerHeap implements heap.Interface in timerLess order.
type timerHeap []Timer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return timerLess(h[i], h[j]) }
func (h timerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)        { *h = append(*h, x.(Timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	*h = old[:n-1]
	return t
}
