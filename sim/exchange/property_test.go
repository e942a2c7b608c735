package exchange

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/flinksim/flinksim/messages"
)

// The reference model of a ResultPartition, written from the contract in
// partition.go's doc comments and Flink 1.20's PipelinedSubpartition,
// LocalBufferPool and CreditBasedSequenceNumberingViewReader, not from the
// implementation. It validates every Send of a Poll against its own queues
// rather than computing the sends itself, and checks after every operation
// what the partition reports.

// element is one stream element as the model sees it; payload is "" when
// the partition carries none.
type element struct {
	kind    ElementKind
	key     string
	ts      int64
	value   float64
	payload string
}

func (e element) String() string {
	if e.kind == KindRecord {
		return fmt.Sprintf("%s@%d", e.key, e.ts)
	}
	return fmt.Sprintf("kind%d@%d", e.kind, e.ts)
}

// mEntry is one BufferConsumer of a model subpartition: a pool segment
// with its elements and reader position, or an event.
type mEntry struct {
	event     bool
	kind      ElementKind // the event's kind
	ckpt      int64       // a barrier's checkpoint
	unaligned bool        // a priority barrier
	elems     []element
	read      int
	finished  bool
}

func (e *mEntry) unread() int { return len(e.elems) - e.read }

func (e *mEntry) String() string {
	if e.event {
		switch {
		case e.kind == KindBarrier && e.unaligned:
			return fmt.Sprintf("UB%d", e.ckpt)
		case e.kind == KindBarrier:
			return fmt.Sprintf("B%d", e.ckpt)
		case e.kind == KindEndOfData:
			return "EOD"
		default:
			return "EOP"
		}
	}
	return fmt.Sprintf("D%v(read %d, finished %v)", e.elems, e.read, e.finished)
}

const (
	consumerNone = iota
	consumerRemote
	consumerLocal
)

type mSub struct {
	queue    []*mEntry
	cur      *mEntry // the segment being written
	curRecs  int
	flush    bool // flushRequested
	held     int  // pool segments of this subpartition
	lent     *mEntry
	consumer int
	receiver string
	credit   int
	initial  int
	demand   int
	announce bool // announced since credit last came
	blocked  bool
	ended    bool
	ends     int // EndOfPartition events sent
	nextSeq  int32
	written  []element // every data element written, in order
	got      []element // every data element sent, in order
}

func (s *mSub) dataEntries() int {
	n := 0
	for _, e := range s.queue {
		if !e.event {
			n++
		}
	}
	return n
}

func (s *mSub) queued(e *mEntry) bool { return slices.Contains(s.queue, e) }

type pending struct {
	sub int
	e   element
}

type model struct {
	subs                    []mSub
	pool, maxPer, overdraft int
	rpb, recordBytes        int
	payloads                bool
	inUse                   int
	pending                 []pending
	records                 int64
	buffersOut, bytesOut    int64 // builders finished, and what they held
	ckpts                   int64 // barriers issued: ids 1..ckpts
	eod, eop                bool
}

func (m *model) available() bool {
	if len(m.pending) > 0 || m.inUse >= m.pool {
		return false
	}
	for i := range m.subs {
		if m.maxPer > 0 && m.subs[i].held >= m.maxPer {
			return false
		}
	}
	return true
}

// request takes a pool segment for subpartition i: one of the pool, else
// one of the overdraft. max-buffers-per-channel gates availability only
// (LocalBufferPool.requestMemorySegment(targetChannel) counts the
// subpartition's buffers but hands one out at or past the quota).
func (m *model) request(i int) bool {
	if m.inUse >= m.pool+m.overdraft {
		return false
	}
	m.inUse++
	m.subs[i].held++
	return true
}

func (m *model) release(i int) {
	m.inUse--
	m.subs[i].held--
}

func (m *model) write(i int, e element) bool {
	s := &m.subs[i]
	if s.cur == nil {
		if !m.request(i) {
			return false
		}
		s.cur = &mEntry{}
		s.queue = append(s.queue, s.cur)
	}
	s.cur.elems = append(s.cur.elems, e)
	s.written = append(s.written, e)
	if e.kind == KindRecord {
		s.curRecs++
		if s.curRecs >= m.rpb {
			m.finish(i)
		}
	}
	return true
}

// finish ends the segment being written, which counts in numBuffersOut
// and numBytesOut with all it holds
// (BufferWritingResultPartition.finishUnicastBufferBuilder); one read to its
// end leaves the queue at once, and goes back to the pool unless a local
// consumer still reads it.
func (m *model) finish(i int) {
	s := &m.subs[i]
	c := s.cur
	if c == nil {
		return
	}
	c.finished = true
	m.buffersOut++
	m.bytesOut += int64(m.sizeBytes(c.elems))
	s.cur, s.curRecs = nil, 0
	if c.unread() == 0 {
		k := slices.Index(s.queue, c)
		s.queue = slices.Delete(s.queue, k, k+1)
		if s.lent != c {
			m.release(i)
		}
	}
}

func (m *model) emit(i int, e element) {
	if len(m.pending) > 0 || !m.write(i, e) {
		m.pending = append(m.pending, pending{i, e})
	}
}

func (m *model) writePending() {
	for len(m.pending) > 0 && m.write(m.pending[0].sub, m.pending[0].e) {
		m.pending = m.pending[1:]
	}
}

func (m *model) flushAll() {
	for i := range m.subs {
		s := &m.subs[i]
		if len(s.queue) == 0 || s.flush {
			continue
		}
		// PipelinedSubpartition.flush
		s.flush = len(s.queue) > 1 || s.queue[0].event || s.queue[0].unread() > 0
	}
}

// priorityEnd is where a new priority element goes: after the priority
// elements at the head (PrioritizedDeque.addPriorityElement).
func (s *mSub) priorityEnd() int {
	n := 0
	for n < len(s.queue) && s.queue[n].event && s.queue[n].kind == KindBarrier && s.queue[n].unaligned {
		n++
	}
	return n
}

func (m *model) inflight(i int, entries []*mEntry) []InFlight {
	var out []InFlight
	for _, e := range entries {
		if e.event {
			continue
		}
		for _, x := range e.elems[e.read:] {
			if x.kind == KindRecord {
				var pl []byte
				if x.payload != "" {
					pl = []byte(x.payload)
				}
				out = append(out, InFlight{Subpartition: i, Key: x.key, Timestamp: x.ts, Value: x.value, Payload: pl})
			}
		}
	}
	return out
}

func (m *model) event(i int, e *mEntry) {
	m.finish(i)
	s := &m.subs[i]
	s.queue = append(s.queue, e)
}

func (m *model) barrier(id int64, unaligned bool) []InFlight {
	var out []InFlight
	for i := range m.subs {
		s := &m.subs[i]
		if s.ended {
			continue
		}
		e := &mEntry{event: true, kind: KindBarrier, ckpt: id, unaligned: unaligned, finished: true}
		if !unaligned {
			m.event(i, e)
			continue
		}
		m.finish(i)
		out = append(out, m.inflight(i, s.queue)...)
		s.queue = slices.Insert(s.queue, s.priorityEnd(), e)
	}
	return out
}

func (m *model) alignedAt(i int, id int64) int {
	for k, e := range m.subs[i].queue {
		if e.event && e.kind == KindBarrier && !e.unaligned && e.ckpt == id {
			return k
		}
	}
	return -1
}

func (m *model) timeout(id int64) []InFlight {
	var out []InFlight
	for i := range m.subs {
		s := &m.subs[i]
		at := m.alignedAt(i, id)
		if at < 0 {
			continue
		}
		b := s.queue[at]
		out = append(out, m.inflight(i, s.queue[:at])...)
		s.queue = slices.Delete(s.queue, at, at+1)
		b.unaligned = true
		s.queue = slices.Insert(s.queue, s.priorityEnd(), b)
	}
	return out
}

// endOfData queues EndOfData once per partition
// (BufferWritingResultPartition.notifyEndOfData).
func (m *model) endOfData() {
	if m.eod {
		return
	}
	m.eod = true
	for i := range m.subs {
		if !m.subs[i].ended {
			m.event(i, &mEntry{event: true, kind: KindEndOfData, finished: true})
		}
	}
}

func (m *model) endOfPartition() {
	for i := range m.subs {
		if !m.subs[i].ended {
			m.event(i, &mEntry{event: true, kind: KindEndOfPartition, finished: true})
			m.subs[i].ended = true
		}
	}
}

// backlog is getBuffersInBacklogUnsafe: 0 when blocked or empty; the data
// entries when flushed, ended or the last entry is an event; else one less
// (the last data buffer, finished or not).
func (m *model) backlog(i int) int {
	s := &m.subs[i]
	if s.blocked || len(s.queue) == 0 {
		return 0
	}
	data := s.dataEntries()
	if s.flush || s.ended || s.queue[len(s.queue)-1].event {
		return data
	}
	return max(data-1, 0)
}

// returnLent gives back the segment a local consumer read, once it has left
// the queue.
func (m *model) returnLent(i int) {
	s := &m.subs[i]
	if s.lent != nil && !s.queued(s.lent) {
		m.release(i)
	}
	s.lent = nil
}

// sizeBytes is what elements take in a buffer: a record recordBytes, a
// Watermark 13 and a WatermarkStatus 9 (StreamElementSerializer: the 4-byte
// length, a tag, a long or an int).
func (m *model) sizeBytes(elems []element) int32 {
	var n int32
	for _, e := range elems {
		switch e.kind {
		case KindRecord:
			n += int32(m.recordBytes)
		case KindWatermark:
			n += 13
		default:
			n += 9
		}
	}
	return n
}

// eventBytes is an event buffer's size (EventSerializer): EndOfPartition
// its type (4), EndOfData the type and the StopMode (5), a
// CheckpointBarrier the 38 bytes allocated for the default location.
func eventBytes(kind ElementKind) int32 {
	switch kind {
	case KindEndOfData:
		return 5
	case KindBarrier:
		return 38
	default:
		return 4
	}
}

func (m *model) toElements(t *rapid.T, b *messages.Buffer) []element {
	n := len(b.Kinds)
	if len(b.Keys) != n || len(b.Timestamps) != n || len(b.Values) != n {
		t.Fatalf("ragged buffer: %d kinds, %d keys, %d timestamps, %d values", n, len(b.Keys), len(b.Timestamps), len(b.Values))
	}
	if m.payloads && len(b.Payloads) != n {
		t.Fatalf("a buffer of %d elements carries %d payloads", n, len(b.Payloads))
	}
	if !m.payloads && len(b.Payloads) != 0 {
		t.Fatalf("a partition without CarryPayloads sent %d payloads", len(b.Payloads))
	}
	out := make([]element, n)
	for j := range n {
		out[j] = element{b.Kinds[j], b.Keys[j], b.Timestamps[j], b.Values[j], string(PayloadAt(b, j))}
	}
	return out
}

// poll runs Poll and validates each Send against the model, then checks
// that Poll left nothing it could send.
func (m *model) poll(t *rapid.T, p *ResultPartition) {
	sends := p.Poll(nil)
	last, closed := -1, false // subpartition of the previous send; it announced (nothing may follow)
	// BufferResponses of this Poll per subpartition: each carried the
	// backlog, so no BacklogAnnouncement may follow it in the same Poll
	dataSent, eventSent := make([]bool, len(m.subs)), make([]bool, len(m.subs))
	for k, snd := range sends {
		i := snd.Subpartition
		if i < 0 || i >= len(m.subs) {
			t.Fatalf("send %d to subpartition %d of %d", k, i, len(m.subs))
		}
		if i < last || (i == last && closed) {
			t.Fatalf("send %d to subpartition %d out of order (after %d, announced %v)", k, i, last, closed)
		}
		if i != last {
			closed = false
		}
		last = i
		s := &m.subs[i]
		if s.consumer == consumerNone {
			t.Fatalf("send to subpartition %d before its PartitionRequest", i)
		}
		if snd.Receiver != s.receiver {
			t.Fatalf("send to subpartition %d for %q, want %q", i, snd.Receiver, s.receiver)
		}
		if (snd.Response == nil) == (snd.Announcement == nil) {
			t.Fatalf("send %d must carry exactly one of Response and Announcement: %+v", k, snd)
		}
		if a := snd.Announcement; a != nil {
			switch {
			case a.ReceiverId != s.receiver || int(a.SubpartitionIndex) != i:
				t.Fatalf("announcement %v for subpartition %d", a, i)
			case s.consumer != consumerRemote:
				t.Fatalf("BacklogAnnouncement to the local consumer of subpartition %d", i)
			case s.initial != 0:
				t.Fatalf("subpartition %d announced its backlog to a consumer with initial credit %d", i, s.initial)
			case s.credit != 0:
				t.Fatalf("subpartition %d announced its backlog with credit %d", i, s.credit)
			case s.blocked:
				t.Fatalf("subpartition %d announced its backlog while blocked", i)
			case s.announce:
				t.Fatalf("subpartition %d announced twice without new credit", i)
			case dataSent[i]:
				t.Fatalf("subpartition %d announced its backlog right after a BufferResponse that carried it", i)
			// An announcement right after an event's BufferResponse is
			// tolerated here: the contract (and Flink, whose RemoteInputChannel
			// takes the backlog of every BufferResponse) wants none, the code
			// sends one; TestNoAnnouncementRightAfterAResponse pins that, and
			// the model keeps checking everything else.
			case int(a.Backlog) != m.backlog(i) || a.Backlog <= 0:
				t.Fatalf("subpartition %d announced backlog %d, model %d (queue %v)", i, a.Backlog, m.backlog(i), s.queue)
			}
			s.announce = true
			closed = true
			continue
		}
		r := snd.Response
		if r.ReceiverId != s.receiver {
			t.Fatalf("BufferResponse to %q for subpartition %d", r.ReceiverId, i)
		}
		if r.SequenceNumber != s.nextSeq {
			t.Fatalf("subpartition %d: sequence number %d, want %d", i, r.SequenceNumber, s.nextSeq)
		}
		s.nextSeq++
		if s.blocked {
			t.Fatalf("subpartition %d sent %s while blocked by an aligned barrier", i, bufString(r.Buffer))
		}
		if len(s.queue) == 0 {
			t.Fatalf("subpartition %d sent %s with nothing queued", i, bufString(r.Buffer))
		}
		head := s.queue[0]
		b := r.Buffer
		if head.event {
			if !b.IsEvent || len(b.Kinds) != 1 || len(b.Keys) != 1 || len(b.Timestamps) != 1 || len(b.Values) != 1 || b.Kinds[0] != head.kind {
				t.Fatalf("subpartition %d sent %s (event %v), want %v", i, bufString(b), b.IsEvent, head)
			}
			size := eventBytes(head.kind)
			if head.kind == KindBarrier {
				if b.CheckpointId != head.ckpt || b.Unaligned != head.unaligned {
					t.Fatalf("subpartition %d sent %s, want %v (queue %v)", i, bufString(b), head, s.queue)
				}
			}
			if b.SizeBytes != size {
				t.Fatalf("subpartition %d: %s of %d bytes, want %d", i, bufString(b), b.SizeBytes, size)
			}
			s.queue = s.queue[1:]
			eventSent[i] = true
			switch {
			case head.kind == KindEndOfPartition:
				s.ends++
			case head.kind == KindBarrier && !head.unaligned:
				s.blocked = true
			}
		} else {
			switch s.consumer {
			case consumerRemote:
				if s.credit <= 0 {
					t.Fatalf("subpartition %d sent a data buffer without credit", i)
				}
				s.credit--
			case consumerLocal:
				if s.demand <= 0 {
					t.Fatalf("subpartition %d sent a data buffer its local consumer did not ask for", i)
				}
				if s.lent != nil {
					t.Fatalf("model: subpartition %d lends two segments", i)
				}
				s.demand--
			}
			if !head.finished && !(s.flush && head.unread() > 0) {
				t.Fatalf("subpartition %d sent %s from a buffer not readable (no flush): %v", i, bufString(b), head)
			}
			got := m.toElements(t, b)
			want := head.elems[head.read:]
			if b.IsEvent || !slices.Equal(got, want) {
				t.Fatalf("subpartition %d sent %s (event %v), want %v", i, bufString(b), b.IsEvent, want)
			}
			if b.SizeBytes != m.sizeBytes(want) {
				t.Fatalf("subpartition %d: SizeBytes %d, want %d", i, b.SizeBytes, m.sizeBytes(want))
			}
			s.got = append(s.got, want...)
			dataSent[i] = true
			head.read = len(head.elems)
			if s.consumer == consumerLocal {
				s.lent = head
			}
			if head.finished {
				s.queue = s.queue[1:]
				if s.consumer == consumerRemote {
					m.release(i)
				}
			} else {
				s.flush = false
			}
		}
		if len(s.queue) == 0 {
			s.flush = false
		}
		if int(r.Backlog) != m.backlog(i) {
			t.Fatalf("subpartition %d: BufferResponse backlog %d, model %d (queue %v)", i, r.Backlog, m.backlog(i), s.queue)
		}
	}
	// Poll sends all it can, and announces as needAnnounceBacklog says, unless
	// it sent the subpartition a BufferResponse, which carried the backlog.
	for i := range m.subs {
		s := &m.subs[i]
		if s.consumer == consumerNone {
			continue
		}
		if !s.blocked && len(s.queue) > 0 {
			head := s.queue[0]
			take := (s.consumer == consumerRemote && s.credit > 0) || (s.consumer == consumerLocal && s.demand > 0)
			readable := head.finished || (s.flush && head.unread() > 0)
			if head.event || (take && readable) {
				t.Fatalf("subpartition %d: Poll left %v sendable (credit %d, demand %d)", i, head, s.credit, s.demand)
			}
		}
		if s.consumer == consumerRemote && s.initial == 0 && s.credit == 0 && !s.blocked && m.backlog(i) > 0 && !s.announce && !dataSent[i] && !eventSent[i] {
			t.Fatalf("subpartition %d: backlog %d waits with no credit, initial credit 0, and no BacklogAnnouncement", i, m.backlog(i))
		}
	}
	m.writePending()
}

// check compares what the partition reports with the model.
func (m *model) check(t *rapid.T, p *ResultPartition) {
	if msg := p.CheckBounds(); msg != "" {
		t.Fatalf("CheckBounds: %s", msg)
	}
	if p.Pool().BuffersInUse() != m.inUse {
		t.Fatalf("BuffersInUse = %d, model %d", p.Pool().BuffersInUse(), m.inUse)
	}
	if m.inUse > m.pool+m.overdraft {
		t.Fatalf("model: %d buffers lent from %d + %d", m.inUse, m.pool, m.overdraft)
	}
	held, lengths := p.Held(), p.QueueLengths()
	if len(held) != len(m.subs) || len(lengths) != len(m.subs) {
		t.Fatalf("Held %v QueueLengths %v for %d subpartitions", held, lengths, len(m.subs))
	}
	total := 0
	for i := range m.subs {
		s := &m.subs[i]
		// model self-check: a subpartition holds its queued segments and
		// the one its local consumer reads after it left the queue
		own := s.dataEntries()
		if s.lent != nil && !s.queued(s.lent) {
			own++
		}
		if own != s.held {
			t.Fatalf("model: subpartition %d holds %d, counts %d", i, s.held, own)
		}
		total += s.held
		if held[i] != s.held {
			t.Fatalf("Held()[%d] = %d, model %d (queue %v)", i, held[i], s.held, s.queue)
		}
		if lengths[i] != len(s.queue) {
			t.Fatalf("QueueLengths()[%d] = %d, model %d (queue %v)", i, lengths[i], len(s.queue), s.queue)
		}
		if p.Backlog(i) != m.backlog(i) {
			t.Fatalf("Backlog(%d) = %d, model %d (queue %v, flush %v, blocked %v)", i, p.Backlog(i), m.backlog(i), s.queue, s.flush, s.blocked)
		}
		if s.consumer == consumerRemote && p.Credit(i) != s.credit {
			t.Fatalf("Credit(%d) = %d, model %d", i, p.Credit(i), s.credit)
		}
	}
	if total != m.inUse {
		t.Fatalf("model: subpartitions hold %d, pool lends %d", total, m.inUse)
	}
	if p.Available() != m.available() {
		t.Fatalf("Available = %v, model %v (in use %d of %d, held %v, pending %d)", p.Available(), m.available(), m.inUse, m.pool, held, len(m.pending))
	}
	if p.Blocked() != (len(m.pending) > 0) {
		t.Fatalf("Blocked = %v, model has %d waiting writes", p.Blocked(), len(m.pending))
	}
	drained := len(m.pending) == 0
	ends := true
	for i := range m.subs {
		for _, e := range m.subs[i].queue {
			if !e.event && e.unread() > 0 {
				drained = false
			}
		}
		ends = ends && m.subs[i].ends == 1
	}
	if p.Drained() != drained {
		t.Fatalf("Drained = %v, model %v", p.Drained(), drained)
	}
	if p.AllEndsSent() != ends {
		t.Fatalf("AllEndsSent = %v, model %v", p.AllEndsSent(), ends)
	}
	if p.RecordsOut != m.records {
		t.Fatalf("RecordsOut = %d, model %d", p.RecordsOut, m.records)
	}
	for id := int64(1); id <= m.ckpts; id++ {
		queued := false
		for i := range m.subs {
			queued = queued || m.alignedAt(i, id) >= 0
		}
		if p.BarrierQueued(id) != queued {
			t.Fatalf("BarrierQueued(%d) = %v, model %v", id, p.BarrierQueued(id), queued)
		}
	}
	// bestEffortGetNumOfUsedBuffers counts the overdraft buffers
	if m.pool > 0 {
		if want := float64(m.inUse) / float64(m.pool); p.Pool().OutPoolUsage() != want {
			t.Fatalf("OutPoolUsage = %v, model %v (in use %d of %d)", p.Pool().OutPoolUsage(), want, m.inUse, m.pool)
		}
	}
	if p.BuffersOut != m.buffersOut || p.BytesOut != m.bytesOut {
		t.Fatalf("BuffersOut %d BytesOut %d, model %d %d", p.BuffersOut, p.BytesOut, m.buffersOut, m.bytesOut)
	}
}

func sameInFlight(a, b []InFlight) bool {
	return slices.EqualFunc(a, b, func(x, y InFlight) bool {
		return x.Subpartition == y.Subpartition && x.Key == y.Key && x.Timestamp == y.Timestamp && x.Value == y.Value &&
			string(x.Payload) == string(y.Payload)
	})
}

// TestPartitionProperty drives a ResultPartition with random operations and
// checks it after each against the reference model: CheckBounds is "", the
// pool never lends more than its size plus the overdraft (a subpartition
// may hold more than max-buffers-per-channel: the quota only makes the pool
// unavailable), every send is the head of the model's queue (each element
// exactly once, in order per subpartition, events and data; unaligned
// barriers overtaking with their channel state and keeping their order),
// no data buffer goes without a credit (remote) or an ask (local),
// sequence numbers run without gaps, backlogs and announcements follow
// credit-based flow control, sizes are the serializers', QueueLengths,
// Held, Backlog, Credit, Available, Blocked, Drained, OutPoolUsage,
// BuffersOut and BytesOut are the model's. At the end every element
// written has arrived and each subpartition sent one EndOfPartition.
func TestPartitionProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 4).Draw(t, "subpartitions")
		pool := PoolSize(n, rapid.IntRange(0, 2).Draw(t, "buffersPerChannel"), rapid.IntRange(0, 3).Draw(t, "floatingPerGate"))
		m := &model{
			subs:        make([]mSub, n),
			pool:        pool,
			maxPer:      rapid.SampledFrom([]int{0, 0, 1, 2, 3}).Draw(t, "maxBuffersPerChannel"),
			overdraft:   rapid.IntRange(0, 2).Draw(t, "maxOverdraft"),
			rpb:         rapid.IntRange(1, 4).Draw(t, "recordsPerBuffer"),
			recordBytes: rapid.IntRange(1, 64).Draw(t, "recordBytes"),
			payloads:    rapid.Bool().Draw(t, "carryPayloads"),
		}
		p := NewResultPartition(n, pool, m.rpb, m.recordBytes)
		p.Pool().SetMaxBuffersPerChannel(m.maxPer)
		p.Pool().SetMaxOverdraftBuffers(m.overdraft)
		if m.payloads {
			p.CarryPayloads()
		}
		runModel(t, m, p)
	})
}

func runModel(t *rapid.T, m *model, p *ResultPartition) {
	n := len(m.subs)
	sub := rapid.IntRange(0, n-1)
	nextID := 0
	record := func() element {
		e := element{kind: KindRecord, key: fmt.Sprint("k", nextID), ts: int64(nextID), value: float64(nextID)}
		if m.payloads {
			e.payload = "p" + e.key
		}
		nextID++
		return e
	}
	// a new consumer frees the segment a local one was reading, and what
	// waits for a buffer is written
	remote := func(i, credit int) {
		m.returnLent(i)
		m.writePending()
		s := &m.subs[i]
		s.consumer, s.receiver = consumerRemote, recv(i)
		s.credit, s.initial, s.announce, s.demand = credit, credit, false, 0
		p.OnPartitionRequest(i, recv(i), credit)
	}
	local := func(i int) {
		m.returnLent(i)
		m.writePending()
		s := &m.subs[i]
		s.consumer, s.receiver = consumerLocal, recv(i)
		s.credit, s.initial, s.announce, s.demand = 0, 0, false, 1
		p.OnLocalRequest(i, recv(i))
	}
	recycle := func(i, k int) {
		s := &m.subs[i]
		p.OnLocalRecycle(i, k)
		if k > 0 && s.consumer == consumerLocal {
			m.returnLent(i)
			s.demand = 1
			m.writePending()
		}
	}
	addCredit := func(i, c int) {
		if !p.OnAddCredit(i, c) {
			t.Fatalf("OnAddCredit(%d, %d) refused a positive credit", i, c)
		}
		s := &m.subs[i]
		s.credit += c
		s.announce = false
	}
	resume := func(i int) {
		s := &m.subs[i]
		p.OnResumeConsumption(i)
		s.blocked = false
		if s.initial == 0 && s.consumer == consumerRemote {
			s.credit, s.announce = 0, false
		}
	}
	// The task may start on a record, or send an event, when nothing waits
	// to be written; the outputs of a record it started on may follow one
	// that waits (they wait behind it), as may a watermark it emits after
	// the record.
	// After EndOfData (no more records) only events follow.
	writing := func() bool { return !m.eop && !m.eod && len(m.pending) == 0 }
	emitting := func() bool { return !m.eop && !m.eod }
	rare := rapid.IntRange(0, 15) // EndOfData and EndOfPartition go on 1 draw in 16

	actions := []struct {
		name string
		do   func(t *rapid.T)
	}{
		{"AddRecord", func(t *rapid.T) {
			i := sub.Draw(t, "sub")
			if !writing() {
				return
			}
			e := record()
			m.records++
			p.AddPayloadRecord(i, e.key, e.ts, e.value, []byte(e.payload))
			m.emit(i, e)
		}},
		// one input record producing several outputs (a flatMap, a window
		// firing): the task starts on it when nothing waits; the outputs
		// after one that found no buffer wait behind it
		{"AddRecords", func(t *rapid.T) {
			k := rapid.IntRange(2, 6).Draw(t, "outputs")
			if !writing() {
				return
			}
			for range k {
				i := sub.Draw(t, "sub")
				e := record()
				m.records++
				p.AddPayloadRecord(i, e.key, e.ts, e.value, []byte(e.payload))
				m.emit(i, e)
			}
		}},
		{"Broadcast", func(t *rapid.T) {
			kind := rapid.SampledFrom([]ElementKind{KindWatermark, KindStatusIdle, KindStatusActive}).Draw(t, "kind")
			ts := int64(0)
			if kind == KindWatermark {
				ts = rapid.Int64Range(-1, 1<<40).Draw(t, "ts")
			}
			if !emitting() {
				return
			}
			p.Broadcast(kind, ts)
			for i := range m.subs {
				if !m.subs[i].ended {
					m.emit(i, element{kind: kind, ts: ts})
				}
			}
		}},
		{"FlushAll", func(t *rapid.T) { p.FlushAll(); m.flushAll() }},
		{"Poll", func(t *rapid.T) { m.poll(t, p) }},
		{"PartitionRequest", func(t *rapid.T) {
			i := sub.Draw(t, "sub")
			c := rapid.IntRange(0, 3).Draw(t, "initialCredit")
			if m.subs[i].consumer != consumerNone && !rapid.Bool().Draw(t, "rerequest") {
				return
			}
			remote(i, c)
		}},
		{"LocalRequest", func(t *rapid.T) {
			i := sub.Draw(t, "sub")
			if m.subs[i].consumer != consumerNone && !rapid.Bool().Draw(t, "rerequest") {
				return
			}
			local(i)
		}},
		{"AddCredit", func(t *rapid.T) {
			i := sub.Draw(t, "sub")
			c := rapid.IntRange(1, 3).Draw(t, "credit")
			if m.subs[i].consumer == consumerRemote {
				addCredit(i, c)
			}
		}},
		{"LocalRecycle", func(t *rapid.T) {
			i := sub.Draw(t, "sub")
			k := rapid.IntRange(0, 2).Draw(t, "count")
			if m.subs[i].consumer == consumerLocal {
				recycle(i, k)
			}
		}},
		{"ResumeConsumption", func(t *rapid.T) {
			i := sub.Draw(t, "sub")
			if m.subs[i].blocked {
				resume(i)
			}
		}},
		{"Barrier", func(t *rapid.T) {
			unaligned := rapid.Bool().Draw(t, "unaligned")
			kind := rapid.SampledFrom([]messages.CheckpointKind{messages.CheckpointKind_CHECKPOINT, messages.CheckpointKind_SAVEPOINT}).Draw(t, "kind")
			if m.eop || len(m.pending) > 0 {
				return
			}
			m.ckpts++
			got := p.Barrier(&messages.Buffer{CheckpointId: m.ckpts, CheckpointTimestampMs: 10 * m.ckpts, CheckpointKind: kind, Unaligned: unaligned})
			if want := m.barrier(m.ckpts, unaligned); !sameInFlight(got, want) {
				t.Fatalf("Barrier(%d, unaligned %v) persisted %v, model %v", m.ckpts, unaligned, got, want)
			}
		}},
		{"TimeoutBarrier", func(t *rapid.T) {
			id := rapid.Int64Range(1, m.ckpts+1).Draw(t, "checkpoint")
			got := p.TimeoutBarrier(id)
			if want := m.timeout(id); !sameInFlight(got, want) {
				t.Fatalf("TimeoutBarrier(%d) persisted %v, model %v", id, got, want)
			}
		}},
		// EndOfData may come again, and after the end: it is queued once
		{"EndOfData", func(t *rapid.T) {
			if rare.Draw(t, "now") != 0 || len(m.pending) > 0 {
				return
			}
			p.EndOfData()
			m.endOfData()
		}},
		{"EndOfPartition", func(t *rapid.T) {
			if rare.Draw(t, "now") != 0 || m.eop || len(m.pending) > 0 {
				return
			}
			m.eop = true
			p.EndOfPartition()
			m.endOfPartition()
		}},
	}
	// every action once, writes three times more
	var names []int
	for k, a := range actions {
		names = append(names, k)
		if a.name == "AddRecord" || a.name == "AddRecords" || a.name == "Poll" {
			names = append(names, k, k)
		}
	}
	pick := rapid.SampledFrom(names)
	m.check(t, p)
	steps := rapid.IntRange(20, 600).Draw(t, "steps")
	for range steps {
		a := actions[pick.Draw(t, "action")]
		a.do(t)
		m.check(t, p)
	}

	// The end: consumers that have not asked ask now, everyone gets the
	// credit and asks it needs, blocked subpartitions resume, the producer
	// ends once nothing waits to be written.
	for i := range m.subs {
		if m.subs[i].consumer == consumerNone {
			if rapid.Bool().Draw(t, fmt.Sprint("lateLocal", i)) {
				local(i)
			} else {
				remote(i, rapid.IntRange(0, 3).Draw(t, fmt.Sprint("lateInitialCredit", i)))
			}
		}
	}
	for round := 0; ; round++ {
		if round > 1000 {
			t.Fatalf("no progress: %d waiting writes, in use %d", len(m.pending), m.inUse)
		}
		if !m.eop && len(m.pending) == 0 {
			m.eop = true
			p.EndOfPartition()
			m.endOfPartition()
		}
		done := m.eop && len(m.pending) == 0
		for i := range m.subs {
			s := &m.subs[i]
			if s.blocked {
				resume(i)
			}
			switch s.consumer {
			case consumerRemote:
				if d := s.dataEntries(); d > s.credit {
					addCredit(i, d-s.credit)
				}
			case consumerLocal:
				recycle(i, 1)
			}
			done = done && s.ends == 1 && len(s.queue) == 0 && s.lent == nil
		}
		m.check(t, p)
		if done {
			break
		}
		m.poll(t, p)
		m.check(t, p)
	}
	if !p.AllEndsSent() || p.Pool().BuffersInUse() != 0 || p.Blocked() {
		t.Fatalf("at the end: AllEndsSent %v BuffersInUse %d Blocked %v", p.AllEndsSent(), p.Pool().BuffersInUse(), p.Blocked())
	}
	if got := p.Poll(nil); len(got) != 0 {
		t.Fatalf("Poll after the end sent %q", describe(got))
	}
	seen := make([]int, nextID)
	for i := range m.subs {
		s := &m.subs[i]
		if !slices.Equal(s.got, s.written) {
			t.Fatalf("subpartition %d received %v, wrote %v", i, s.got, s.written)
		}
		last := int64(-1)
		for _, e := range s.got {
			if e.kind != KindRecord {
				continue
			}
			if e.ts <= last {
				t.Fatalf("subpartition %d: record %d after %d", i, e.ts, last)
			}
			last = e.ts
			seen[e.ts]++
		}
	}
	for id, c := range seen {
		if c != 1 {
			t.Fatalf("record %d sent %d times", id, c)
		}
	}
}
