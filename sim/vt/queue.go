// Package vt is the deterministic kernel of flinksim: virtual time and the
// total order in which the scheduler delivers envelopes.
//
// Virtual time is an int64 count of microseconds since the run started
// (ARCHITECTURE.md). Event time, watermarks and window bounds stay in
// milliseconds as Flink has them; use Millis and FromMillis to cross.
package vt

import (
	"container/heap"
	"strings"

	"github.com/flinksim/flinksim/messages"
)

// Less is the scheduler's total order on envelopes:
// (deliver_at, to, from, sender_seq). It does not depend on when an envelope
// physically reached the scheduler, so the delivery order is a pure function
// of what the actors sent.
func Less(a, b *messages.Envelope) bool {
	if a.DeliverAt != b.DeliverAt {
		return a.DeliverAt < b.DeliverAt
	}
	if c := strings.Compare(a.To, b.To); c != 0 {
		return c < 0
	}
	if c := strings.Compare(a.From, b.From); c != 0 {
		return c < 0
	}
	return a.SenderSeq < b.SenderSeq
}

// Queue is a priority queue of envelopes in the order of Less.
// Invariant: for every i > 0, !Less(q[i], q[(i-1)/2]). Push and Pop cost
// O(log n).
type Queue struct{ h envHeap }

// Push adds an envelope.
func (q *Queue) Push(e *messages.Envelope) { heap.Push(&q.h, e) }

// Len is the number of queued envelopes.
func (q *Queue) Len() int { return len(q.h) }

// PeekTime is the delivery time of the first envelope; ok is false when the
// queue is empty.
func (q *Queue) PeekTime() (t Time, ok bool) {
	if len(q.h) == 0 {
		return 0, false
	}
	return Time(q.h[0].DeliverAt), true
}

// PopStep removes and returns, in order, every envelope whose deliver_at
// equals the smallest one in the queue: one scheduler step.
func (q *Queue) PopStep(dst []*messages.Envelope) []*messages.Envelope {
	t, ok := q.PeekTime()
	if !ok {
		return dst
	}
	for len(q.h) > 0 && Time(q.h[0].DeliverAt) == t {
		dst = append(dst, heap.Pop(&q.h).(*messages.Envelope))
	}
	return dst
}

// AppendAll appends every queued envelope to dst, in no particular order,
// and returns it. The envelopes are shared with the queue: read them, never
// change them. It costs O(n).
func (q *Queue) AppendAll(dst []*messages.Envelope) []*messages.Envelope {
	return append(dst, q.h...)
}

type envHeap []*messages.Envelope

func (h envHeap) Len() int           { return len(h) }
func (h envHeap) Less(i, j int) bool { return Less(h[i], h[j]) }
func (h envHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *envHeap) Push(x any)        { *h = append(*h, x.(*messages.Envelope)) }
func (h *envHeap) Pop() any {
	old := *h
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return e
}
