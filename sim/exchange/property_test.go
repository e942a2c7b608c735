package exchange

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/flinksim/flinksim/messages"
)

// element is one stream element as the model sees it.
type element struct {
	kind  ElementKind
	key   string
	ts    int64
	value float64
}

// modelBuffer is a buffer in the model: its elements and whether it is the
// EndOfPartition event.
type modelBuffer struct {
	elems       []element
	event       bool
	byBroadcast bool // opened by Broadcast, which may exceed the pool
	// segment: the last part of a pool buffer (sending it frees the
	// buffer); a flush's part of a segment still being written is not
	segment bool
}

// modelSub is the reference model of one subpartition, written from the
// contract (the package doc and Flink's PipelinedSubpartition), not from the
// implementation.
type modelSub struct {
	open      *modelBuffer // segment being filled
	openRecs  int          // records in open
	sliced    int          // elements of open handed out by flushes
	queue     []modelBuffer
	requested bool
	credit    int  // credit granted and not used
	initial   int  // initial credit of the latest PartitionRequest
	granted   int  // total credit granted (initial + AddCredit)
	sentData  int  // data buffers sent
	announced bool // a BacklogAnnouncement went out since the last grant
	ended     bool
	nextSeq   int32
	endsSent  int
	pending   []element // broadcast elements waiting for a buffer
	written   []element // every element written, in order
	received  []element // every element sent, in order
}

func (s *modelSub) queuedData() int {
	n := 0
	for _, b := range s.queue {
		if !b.event {
			n++
		}
	}
	return n
}

type model struct {
	subs             []modelSub
	pool             int
	recordsPerBuffer int
	recordBytes      int
	records          int // records written
	dataSent         int
	bytesSent        int64
}

func (m *model) inUse() int {
	n := 0
	for i := range m.subs {
		if m.subs[i].open != nil {
			n++
		}
		for _, b := range m.subs[i].queue {
			if !b.event && b.segment {
				n++
			}
		}
	}
	return n
}

func (m *model) canWrite(i int) bool {
	for k := range m.subs {
		if len(m.subs[k].pending) > 0 {
			return false // blocked in a broadcast
		}
	}
	s := &m.subs[i]
	// an open buffer with room takes a record unless buffers taken beyond
	// the pool (by broadcasts) already exceed it; a new buffer needs a free one
	if s.open != nil && s.openRecs < m.recordsPerBuffer {
		return m.inUse() <= m.pool
	}
	return m.inUse() < m.pool
}

func (m *model) write(i int, e element) {
	s := &m.subs[i]
	if s.open == nil {
		s.open = &modelBuffer{byBroadcast: e.kind != KindRecord}
	}
	s.open.elems = append(s.open.elems, e)
	s.written = append(s.written, e)
	if e.kind == KindRecord {
		s.openRecs++
	}
}

// finish closes the open segment (full, or an event follows): its part
// not handed out yet is queued as the segment's last part; a segment handed
// out whole by flushes is freed at once.
func (m *model) finish(i int) {
	s := &m.subs[i]
	if s.open != nil {
		if s.sliced < len(s.open.elems) {
			b := *s.open
			b.elems = b.elems[s.sliced:]
			b.segment = true
			s.queue = append(s.queue, b)
		}
		s.open, s.openRecs, s.sliced = nil, 0, 0
	}
}

// broadcast writes e into every open subpartition, or lets it wait where
// no buffer is open and the pool has none (the task blocks).
func (m *model) broadcast(e element) {
	for i := range m.subs {
		s := &m.subs[i]
		if s.ended {
			continue
		}
		if len(s.pending) > 0 || (s.open == nil && m.inUse() >= m.pool) {
			s.pending = append(s.pending, e)
			continue
		}
		m.write(i, e)
	}
}

// writePending writes waiting elements where a buffer is there (all of
// them when forced).
func (m *model) writePending(force bool) {
	for i := range m.subs {
		s := &m.subs[i]
		for len(s.pending) > 0 && (force || s.open != nil || m.inUse() < m.pool) {
			e := s.pending[0]
			s.pending = s.pending[1:]
			m.write(i, e)
		}
	}
}

// flush hands out what the open segment got since the last flush, keeping
// the segment open (PipelinedSubpartition.flush).
func (m *model) flush(i int) {
	s := &m.subs[i]
	if s.open != nil && s.sliced < len(s.open.elems) {
		b := *s.open
		b.elems = slices.Clone(b.elems[s.sliced:])
		b.segment = false
		s.queue = append(s.queue, b)
		s.sliced = len(s.open.elems)
	}
}

func (m *model) sizeBytes(b modelBuffer) int32 {
	if b.event {
		return 4
	}
	var n int32
	for _, e := range b.elems {
		if e.kind == KindRecord {
			n += int32(m.recordBytes)
		} else {
			n += 16
		}
	}
	return n
}

func toElements(b *messages.Buffer) ([]element, error) {
	n := len(b.Kinds)
	if len(b.Keys) != n || len(b.Timestamps) != n || len(b.Values) != n {
		return nil, fmt.Errorf("ragged buffer: %d kinds, %d keys, %d timestamps, %d values", n, len(b.Keys), len(b.Timestamps), len(b.Values))
	}
	out := make([]element, n)
	for j := range n {
		out[j] = element{b.Kinds[j], b.Keys[j], b.Timestamps[j], b.Values[j]}
	}
	return out, nil
}

// poll runs Poll and checks every send against the model, updating it.
func (m *model) poll(t *rapid.T, p *ResultPartition) {
	sends := p.Poll(nil)
	for k, snd := range sends {
		i := snd.Subpartition
		if i < 0 || i >= len(m.subs) {
			t.Fatalf("send %d to subpartition %d of %d", k, i, len(m.subs))
		}
		s := &m.subs[i]
		if !s.requested {
			t.Fatalf("send to subpartition %d before its PartitionRequest", i)
		}
		if snd.Receiver != recv(i) {
			t.Fatalf("send to subpartition %d has receiver %q, want %q", i, snd.Receiver, recv(i))
		}
		if (snd.Response == nil) == (snd.Announcement == nil) {
			t.Fatalf("send %d must carry exactly one of Response and Announcement: %+v", k, snd)
		}
		if a := snd.Announcement; a != nil {
			switch {
			case a.ReceiverId != recv(i) || int(a.SubpartitionIndex) != i:
				t.Fatalf("announcement %v for subpartition %d", a, i)
			case s.initial != 0:
				// needAnnounceBacklog: initialCredit == 0 && numCreditsAvailable == 0
				t.Fatalf("subpartition %d announced its backlog to a consumer with initial credit %d", i, s.initial)
			case s.credit != 0:
				t.Fatalf("subpartition %d announced its backlog with credit %d", i, s.credit)
			case s.queuedData() == 0:
				t.Fatalf("subpartition %d announced a backlog with no data waiting", i)
			case s.announced:
				t.Fatalf("subpartition %d announced twice without new credit running out", i)
			case int(a.Backlog) != s.queuedData():
				t.Fatalf("subpartition %d announced backlog %d, want %d", i, a.Backlog, s.queuedData())
			}
			s.announced = true
			continue
		}
		r := snd.Response
		if r.ReceiverId != recv(i) {
			t.Fatalf("BufferResponse to %q for subpartition %d", r.ReceiverId, i)
		}
		if r.SequenceNumber != s.nextSeq {
			t.Fatalf("subpartition %d: sequence number %d, want %d", i, r.SequenceNumber, s.nextSeq)
		}
		s.nextSeq++
		if len(s.queue) == 0 {
			t.Fatalf("subpartition %d sent a buffer that was never finished: %s", i, bufString(r.Buffer))
		}
		want := s.queue[0]
		s.queue = s.queue[1:]
		got, err := toElements(r.Buffer)
		if err != nil {
			t.Fatalf("subpartition %d: %v", i, err)
		}
		if r.Buffer.IsEvent != want.event || !slices.Equal(got, want.elems) {
			t.Fatalf("subpartition %d sent %s (event %v), want %v (event %v)", i, bufString(r.Buffer), r.Buffer.IsEvent, want.elems, want.event)
		}
		if r.Buffer.SizeBytes != m.sizeBytes(want) {
			t.Fatalf("subpartition %d: SizeBytes %d, want %d", i, r.Buffer.SizeBytes, m.sizeBytes(want))
		}
		if want.event {
			s.endsSent++
			if len(s.queue) != 0 || !s.ended {
				t.Fatalf("subpartition %d sent its EndOfPartition event before the end", i)
			}
		} else {
			if s.credit <= 0 {
				t.Fatalf("subpartition %d sent a data buffer without credit", i)
			}
			s.credit--
			s.sentData++
			m.dataSent++
			m.bytesSent += int64(r.Buffer.SizeBytes)
			s.received = append(s.received, want.elems...)
		}
		if int(r.Backlog) != s.queuedData() {
			t.Fatalf("subpartition %d: BufferResponse backlog %d, want %d data buffers left behind", i, r.Backlog, s.queuedData())
		}
	}
	// Poll sends all it can: a subpartition is left with nothing, or with a
	// data buffer at its head and no credit, and then it has announced if
	// and only if its consumer asked with an initial credit of 0 (Flink's
	// CreditBasedSequenceNumberingViewReader.needAnnounceBacklog).
	for i := range m.subs {
		s := &m.subs[i]
		if !s.requested || len(s.queue) == 0 {
			continue
		}
		if s.queue[0].event || s.credit > 0 {
			t.Fatalf("subpartition %d: Poll left a sendable buffer (event %v, credit %d)", i, s.queue[0].event, s.credit)
		}
		if s.initial == 0 && !s.announced {
			t.Fatalf("subpartition %d: data waits with zero credit, initial credit 0, and no BacklogAnnouncement went out", i)
		}
		if s.initial != 0 && s.announced {
			t.Fatalf("subpartition %d: initial credit %d, yet a BacklogAnnouncement went out", i, s.initial)
		}
	}
}

// check compares the observable state with the model and asserts the
// invariants.
func (m *model) check(t *rapid.T, p *ResultPartition) {
	if p.BuffersInUse() != m.inUse() {
		t.Fatalf("BuffersInUse = %d, model %d", p.BuffersInUse(), m.inUse())
	}
	if p.RecordsOut != int64(m.records) || p.BuffersOut != int64(m.dataSent) || p.BytesOut != m.bytesSent {
		t.Fatalf("RecordsOut %d BuffersOut %d BytesOut %d, model %d %d %d", p.RecordsOut, p.BuffersOut, p.BytesOut, m.records, m.dataSent, m.bytesSent)
	}
	backlogs := p.Backlogs()
	if len(backlogs) != len(m.subs) {
		t.Fatalf("Backlogs() has %d entries for %d subpartitions", len(backlogs), len(m.subs))
	}
	for i := range m.subs {
		s := &m.subs[i]
		if backlogs[i] != s.queuedData() {
			t.Fatalf("Backlogs()[%d] = %d, model %d", i, backlogs[i], s.queuedData())
		}
		if p.Credit(i) < 0 {
			t.Fatalf("Credit(%d) = %d", i, p.Credit(i))
		}
		if p.Credit(i) != s.credit {
			t.Fatalf("Credit(%d) = %d, model %d", i, p.Credit(i), s.credit)
		}
		if s.sentData > s.granted {
			t.Fatalf("subpartition %d sent %d data buffers with %d credit granted", i, s.sentData, s.granted)
		}
		if p.Backlog(i) != s.queuedData() {
			t.Fatalf("Backlog(%d) = %d, model %d", i, p.Backlog(i), s.queuedData())
		}
		if p.CanWrite(i) != m.canWrite(i) {
			t.Fatalf("CanWrite(%d) = %v, model %v", i, p.CanWrite(i), m.canWrite(i))
		}
	}
}

// TestPartitionProperty drives a ResultPartition with random operations and
// checks it against a reference model: credit is never negative, no data
// buffer goes without credit, sequence numbers run from 0 without gaps,
// backlogs and announcements follow credit-based flow control (a
// BacklogAnnouncement only to a consumer whose PartitionRequest carried an
// initial credit of 0, as Flink's needAnnounceBacklog), the pool is
// only exceeded by Broadcast (the documented simplification: a watermark
// takes a buffer beyond the pool where Flink would block), and at the end
// every element written arrives exactly once, in order, followed by exactly
// one EndOfPartition event per subpartition.
func TestPartitionProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 4).Draw(t, "subpartitions")
		pool := PoolSize(n, rapid.IntRange(0, 2).Draw(t, "buffersPerChannel"), rapid.IntRange(0, 3).Draw(t, "floatingPerGate"))
		m := &model{
			subs:             make([]modelSub, n),
			pool:             pool,
			recordsPerBuffer: rapid.IntRange(1, 4).Draw(t, "recordsPerBuffer"),
			recordBytes:      rapid.IntRange(1, 64).Draw(t, "recordBytes"),
		}
		p := NewResultPartition(n, pool, m.recordsPerBuffer, m.recordBytes)
		sub := rapid.IntRange(0, n-1)
		nextID := 0

		// request sends the PartitionRequest of subpartition i.
		request := func(i, credit int) {
			p.OnPartitionRequest(i, recv(i), credit)
			s := &m.subs[i]
			s.requested, s.credit, s.initial, s.announced = true, credit, credit, false
			s.granted += credit
		}

		t.Repeat(map[string]func(*rapid.T){
			"AddRecord": func(t *rapid.T) {
				i := sub.Draw(t, "sub")
				if !p.CanWrite(i) {
					t.Skip("backpressured")
				}
				before := p.BuffersInUse()
				e := element{KindRecord, fmt.Sprint("k", nextID), int64(nextID), float64(nextID)}
				nextID++
				full := p.AddRecord(i, e.key, e.ts, e.value)
				m.write(i, e)
				m.records++
				wantFull := m.subs[i].openRecs >= m.recordsPerBuffer
				if wantFull {
					m.finish(i)
				}
				if full != wantFull {
					t.Fatalf("AddRecord(%d) = %v, want %v", i, full, wantFull)
				}
				if after := p.BuffersInUse(); after > m.pool && after > before {
					t.Fatalf("AddRecord took a buffer beyond the pool: %d -> %d of %d", before, after, m.pool)
				}
			},
			"Broadcast": func(t *rapid.T) {
				kind := rapid.SampledFrom([]ElementKind{KindWatermark, KindStatusIdle, KindStatusActive}).Draw(t, "kind")
				ts := int64(0)
				if kind == KindWatermark {
					ts = rapid.Int64Range(-1, 1<<40).Draw(t, "ts")
				}
				p.Broadcast(kind, ts)
				m.broadcast(element{kind, "", ts, 0})
				if p.BuffersInUse() > m.pool {
					t.Fatalf("Broadcast took buffers beyond the pool: %d of %d", p.BuffersInUse(), m.pool)
				}
			},
			"FlushAll": func(t *rapid.T) {
				p.FlushAll()
				for i := range m.subs {
					m.flush(i)
				}
			},
			"OnPartitionRequest": func(t *rapid.T) {
				i := sub.Draw(t, "sub")
				if m.subs[i].requested {
					t.Skip("already requested")
				}
				request(i, rapid.IntRange(0, 3).Draw(t, "initialCredit"))
			},
			"OnAddCredit": func(t *rapid.T) {
				i := sub.Draw(t, "sub")
				if !m.subs[i].requested {
					t.Skip("no PartitionRequest yet")
				}
				c := rapid.IntRange(1, 4).Draw(t, "credit")
				if !p.OnAddCredit(i, c) {
					t.Fatalf("OnAddCredit(%d, %d) refused a positive credit", i, c)
				}
				s := &m.subs[i]
				s.credit += c
				s.granted += c
				s.announced = false
			},
			"Poll": func(t *rapid.T) { m.poll(t, p); m.writePending(false) },
			"": func(t *rapid.T) {
				m.check(t, p)
				// BuffersInUse equals the model's count (checked above),
				// never beyond the pool: a broadcast waits for a buffer
				if p.BuffersInUse() > m.pool {
					t.Fatalf("%d buffers in use, pool %d", p.BuffersInUse(), m.pool)
				}
			},
		})

		// The producer finishes: every subpartition ends, consumers that
		// have not asked yet ask now, and everyone gets enough credit.
		p.EndOfPartition()
		m.writePending(true)
		for i := range m.subs {
			m.finish(i)
			m.subs[i].queue = append(m.subs[i].queue, modelBuffer{elems: []element{{kind: KindEndOfPartition}}, event: true})
			m.subs[i].ended = true
		}
		m.check(t, p)
		for i := range m.subs {
			if !m.subs[i].requested {
				request(i, rapid.IntRange(0, 3).Draw(t, fmt.Sprint("lateInitialCredit", i)))
			}
		}
		for i := range m.subs {
			// Enough credit for every data buffer, sometimes exactly enough:
			// the EndOfPartition event must go without credit.
			plenty := m.subs[i].queuedData() + rapid.IntRange(0, 2).Draw(t, fmt.Sprint("extraCredit", i))
			if plenty == 0 {
				continue
			}
			if !p.OnAddCredit(i, plenty) {
				t.Fatalf("OnAddCredit(%d, %d) refused", i, plenty)
			}
			m.subs[i].credit += plenty
			m.subs[i].granted += plenty
			m.subs[i].announced = false
		}
		m.poll(t, p)
		m.check(t, p)
		if !p.AllEndsSent() {
			t.Fatalf("AllEndsSent() = false after the final Poll")
		}
		if got := p.Poll(nil); len(got) != 0 {
			t.Fatalf("Poll after the end sent %q", describe(got))
		}
		if p.BuffersInUse() != 0 {
			t.Fatalf("BuffersInUse = %d after everything was sent", p.BuffersInUse())
		}
		for i := range m.subs {
			s := &m.subs[i]
			if s.endsSent != 1 {
				t.Fatalf("subpartition %d sent %d EndOfPartition events, want 1", i, s.endsSent)
			}
			if int(s.nextSeq) != s.sentData+1 {
				t.Fatalf("subpartition %d: %d sequence numbers for %d data buffers and one event", i, s.nextSeq, s.sentData)
			}
			if !slices.Equal(s.received, s.written) {
				t.Fatalf("subpartition %d received %v, wrote %v", i, s.received, s.written)
			}
		}
		// Independent of the per-buffer checks: every record id appears
		// exactly once overall, in increasing order within a subpartition.
		seen := make([]int, nextID)
		for i := range m.subs {
			last := int64(-1)
			for _, e := range m.subs[i].received {
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
	})
}
