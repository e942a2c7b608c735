// Package vt is the deterministic kernel of flinksim: virtual time and the
// total order in which the scheduler delivers envelopes.
//
// Virtual time is an int64 count of microseconds since the run started
// (ARCHITECTURE.md). Event time, watermarks and window bounds stay in
// milliseconds as Flink has them; use Millis and FromMillis to cross.
package vt

import (
	"cmp"
	"slices"
	"strings"

	"github.com/flinksim/flinksim/messages"
)

// Queue is a priority queue of envelopes in the order of Compare. The heap
// orders by deliver_at alone (an integer compare); the envelopes of one time
// are put in the rest of Compare's order when they are popped together
// (PopStep), so names are compared only among the envelopes of one step.
// Invariant: for every i > 0, q.h[(i-1)/2].at <= q.h[i].at. Each heap
// slot holds its envelope's deliver_at beside the pointer, so that sifting
// compares integers in the heap's own array instead of loading envelopes
// from all over memory (a wide run queues thousands). Push and Pop cost
// O(log n) integer compares; PopStep sorts its k envelopes in O(k log k).
type Queue struct {
	h    []queued
	keys []keyedEnvelope // scratch of sortStep
}

// queued is a heap slot: an envelope and its deliver_at.
type queued struct {
	at int64
	e  *messages.Envelope
}

// Push adds an envelope.
func (q *Queue) Push(e *messages.Envelope) {
	it := queued{e.DeliverAt, e}
	q.h = append(q.h, it)
	h := q.h
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p].at <= it.at {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = it
}

// pop removes the envelope at the root (one with the smallest deliver_at).
func (q *Queue) pop() *messages.Envelope {
	h := q.h
	top := h[0].e
	n := len(h) - 1
	last := h[n]
	h[n] = queued{}
	h = h[:n]
	q.h = h
	if n == 0 {
		return top
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h[r].at < h[c].at {
			c = r
		}
		if last.at <= h[c].at {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = last
	return top
}

// Len is the number of queued envelopes.
func (q *Queue) Len() int { return len(q.h) }

// PeekTime is the delivery time of the first envelope; ok is false when the
// queue is empty.
func (q *Queue) PeekTime() (t Time, ok bool) {
	if len(q.h) == 0 {
		return 0, false
	}
	return Time(q.h[0].at), true
}

// PopStep removes and returns, in order, every envelope whose deliver_at
// equals the smallest one in the queue: one scheduler step.
func (q *Queue) PopStep(dst []*messages.Envelope) []*messages.Envelope {
	t, ok := q.PeekTime()
	if !ok {
		return dst
	}
	from := len(dst)
	for len(q.h) > 0 && Time(q.h[0].at) == t {
		dst = append(dst, q.pop())
	}
	q.sortStep(dst[from:])
	return dst
}

// stepLess is Compare's "less" for two envelopes of one step (equal
// deliver_at).
func stepLess(a, b *messages.Envelope) bool {
	if a.To != b.To {
		return a.To < b.To
	}
	if a.From != b.From {
		return a.From < b.From
	}
	return a.SenderSeq < b.SenderSeq
}

// sortStep sorts the envelopes of one step by stepLess. The order is total
// (no two envelopes share from and sender_seq), so any correct sort gives
// the same result. A wide step (a keyBy edge's: thousands of envelopes to
// names like "window-12/ch-3") spent its time comparing receiver names that
// share long prefixes; so a step of more than a few envelopes is sorted on
// keys made once per envelope (keyedStep), each comparison two integer
// compares unless the names' first 16 bytes are equal.
func (q *Queue) sortStep(s []*messages.Envelope) {
	if len(s) <= 12 {
		insertionStep(s)
		return
	}
	ks := q.keys[:0]
	for _, e := range s {
		k1, k2 := nameKey(e.To)
		ks = append(ks, keyedEnvelope{k1, k2, e})
	}
	slices.SortFunc(ks, compareKeyed)
	for i := range ks {
		s[i] = ks[i].e
		ks[i].e = nil
	}
	q.keys = ks[:0]
}

// keyedEnvelope is an envelope with the first 16 bytes of its receiver's
// name as two big-endian integers (zero-padded: names hold no NUL byte, so
// the integers order as the names' prefixes do).
type keyedEnvelope struct {
	k1, k2 uint64
	e      *messages.Envelope
}

func nameKey(name string) (k1, k2 uint64) {
	for i := range 16 {
		var b uint64
		if i < len(name) {
			b = uint64(name[i])
		}
		if i < 8 {
			k1 = k1<<8 | b
		} else {
			k2 = k2<<8 | b
		}
	}
	return k1, k2
}

func compareKeyed(a, b keyedEnvelope) int {
	if a.k1 != b.k1 {
		return cmp.Compare(a.k1, b.k1)
	}
	if a.k2 != b.k2 {
		return cmp.Compare(a.k2, b.k2)
	}
	if stepLess(a.e, b.e) {
		return -1
	}
	if stepLess(b.e, a.e) {
		return 1
	}
	return 0
}

// insertionStep sorts a short step by stepLess.
func insertionStep(s []*messages.Envelope) {
	for i := 1; i < len(s); i++ {
		for k := i; k > 0 && stepLess(s[k], s[k-1]); k-- {
			s[k], s[k-1] = s[k-1], s[k]
		}
	}
}

// Compare is the scheduler's total order on envelopes, as a three-way
// comparison (for slices.SortFunc): (deliver_at, to, from, sender_seq). It
// does not depend on when an envelope physically reached the scheduler, so
// the delivery order is a pure function of what the actors sent.
func Compare(a, b *messages.Envelope) int {
	if c := cmp.Compare(a.DeliverAt, b.DeliverAt); c != 0 {
		return c
	}
	if c := strings.Compare(a.To, b.To); c != 0 {
		return c
	}
	if c := strings.Compare(a.From, b.From); c != 0 {
		return c
	}
	return cmp.Compare(a.SenderSeq, b.SenderSeq)
}

// AppendAll appends every queued envelope to dst, in no particular order,
// and returns it. The envelopes are shared with the queue: read them, never
// change them. It costs O(n).
func (q *Queue) AppendAll(dst []*messages.Envelope) []*messages.Envelope {
	for _, it := range q.h {
		dst = append(dst, it.e)
	}
	return dst
}
