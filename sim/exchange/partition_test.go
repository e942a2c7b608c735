package exchange

import (
	"fmt"
	"testing"

	"github.com/flinksim/flinksim/messages"
)

// recv is the receiver name used for subpartition i in these tests.
func recv(i int) string { return fmt.Sprintf("window-%d/ch-0", i) }

// fill adds n records to subpartition i with keys k<first>.., timestamps and
// values equal to their index.
func fill(p *ResultPartition, i, first, n int) {
	for j := first; j < first+n; j++ {
		p.AddRecord(i, fmt.Sprint("k", j), int64(j), float64(j))
	}
}

// describe renders sends compactly: "R<sub> seq=<n> backlog=<b> <elements>"
// for a BufferResponse, "A<sub> backlog=<b>" for a BacklogAnnouncement.
func describe(sends []Send) []string {
	var out []string
	for _, s := range sends {
		switch {
		case s.Response != nil:
			r := s.Response
			out = append(out, fmt.Sprintf("R%d seq=%d backlog=%d %s", s.Subpartition, r.SequenceNumber, r.Backlog, bufString(r.Buffer)))
		case s.Announcement != nil:
			out = append(out, fmt.Sprintf("A%d backlog=%d", s.Subpartition, s.Announcement.Backlog))
		default:
			out = append(out, fmt.Sprintf("empty send to %d", s.Subpartition))
		}
	}
	return out
}

// bufString renders a buffer's elements: records as key@ts, watermarks as
// W<ts>, statuses as IDLE/ACTIVE, the end event as EOP.
func bufString(b *messages.Buffer) string {
	s := "["
	for j, k := range b.Kinds {
		if j > 0 {
			s += " "
		}
		switch k {
		case KindRecord:
			s += fmt.Sprintf("%s@%d", b.Keys[j], b.Timestamps[j])
		case KindWatermark:
			s += fmt.Sprintf("W%d", b.Timestamps[j])
		case KindStatusIdle:
			s += "IDLE"
		case KindStatusActive:
			s += "ACTIVE"
		case KindEndOfPartition:
			s += "EOP"
		case KindEndOfData:
			s += "EOD"
		case KindBarrier:
			if b.Unaligned {
				s += fmt.Sprintf("UB%d", b.CheckpointId)
			} else {
				s += fmt.Sprintf("B%d", b.CheckpointId)
			}
		default:
			s += fmt.Sprintf("?%d", k)
		}
	}
	return s + "]"
}

func wantSends(t *testing.T, step string, got []Send, want ...string) {
	t.Helper()
	d := describe(got)
	if len(d) != len(want) {
		t.Fatalf("%s: Poll sent %d messages %q, want %d %q", step, len(d), d, len(want), want)
	}
	for i := range want {
		if d[i] != want[i] {
			t.Errorf("%s: send %d = %q, want %q", step, i, d[i], want[i])
		}
	}
	for _, s := range got {
		if s.Receiver != recv(s.Subpartition) {
			t.Errorf("%s: send to subpartition %d has receiver %q, want %q", step, s.Subpartition, s.Receiver, recv(s.Subpartition))
		}
		if s.Response != nil && s.Response.ReceiverId != s.Receiver {
			t.Errorf("%s: BufferResponse.ReceiverId %q != Send.Receiver %q", step, s.Response.ReceiverId, s.Receiver)
		}
		if a := s.Announcement; a != nil && (a.ReceiverId != s.Receiver || int(a.SubpartitionIndex) != s.Subpartition) {
			t.Errorf("%s: BacklogAnnouncement %v does not name receiver %q and subpartition %d", step, a, s.Receiver, s.Subpartition)
		}
	}
}

func TestPoolSize(t *testing.T) {
	tests := []struct {
		subpartitions, perChannel, floating int
		want                                int
	}{
		{subpartitions: 2, perChannel: 2, floating: 8, want: 12}, // Flink defaults, parallelism 2
		{subpartitions: 1, perChannel: 2, floating: 8, want: 10},
		{subpartitions: 4, perChannel: 0, floating: 8, want: 8}, // no exclusive buffers
		{subpartitions: 3, perChannel: 5, floating: 0, want: 15},
		{subpartitions: 0, perChannel: 2, floating: 8, want: 8},
		{subpartitions: 128, perChannel: 2, floating: 8, want: 264},
		// the minimum numSubpartitions + 1 (swarm seed 26, liveness_watermark)
		{subpartitions: 3, perChannel: 0, floating: 1, want: 4},
		{subpartitions: 4, perChannel: 1, floating: 0, want: 5},
		{subpartitions: 1, perChannel: 0, floating: 0, want: 2},
	}
	for _, tt := range tests {
		if got := PoolSize(tt.subpartitions, tt.perChannel, tt.floating); got != tt.want {
			t.Errorf("PoolSize(%d, %d, %d) = %d, want %d", tt.subpartitions, tt.perChannel, tt.floating, got, tt.want)
		}
	}
}

func TestNewResultPartition(t *testing.T) {
	p := NewResultPartition(3, 5, 4, 10)
	if p.NumSubpartitions() != 3 || p.PoolCapacity() != 5 || p.BuffersInUse() != 0 {
		t.Errorf("NumSubpartitions, PoolCapacity, BuffersInUse = %d, %d, %d, want 3, 5, 0",
			p.NumSubpartitions(), p.PoolCapacity(), p.BuffersInUse())
	}
	for i := range 3 {
		if p.Credit(i) != 0 || p.Backlog(i) != 0 || !p.CanWrite(i) {
			t.Errorf("subpartition %d: credit %d backlog %d canWrite %v, want 0 0 true", i, p.Credit(i), p.Backlog(i), p.CanWrite(i))
		}
	}
	if p.AllEndsSent() {
		t.Errorf("AllEndsSent() on a new partition = true")
	}
	if got := p.Poll(nil); len(got) != 0 {
		t.Errorf("Poll on a new partition sent %q", describe(got))
	}
}

func TestRecordsPerBufferAtLeastOne(t *testing.T) {
	for _, give := range []int{0, -3} {
		p := NewResultPartition(1, 2, give, 10)
		if !p.AddRecord(0, "k", 1, 1) {
			t.Errorf("recordsPerBuffer %d: the first record did not finish its buffer (want 1 record per buffer)", give)
		}
		if p.Backlog(0) != 1 || p.BuffersInUse() != 1 {
			t.Errorf("recordsPerBuffer %d: backlog %d in use %d, want 1 1", give, p.Backlog(0), p.BuffersInUse())
		}
	}
}

func TestAddRecordFillsBuffer(t *testing.T) {
	p := NewResultPartition(2, 4, 3, 100)
	steps := []struct {
		sub          int
		wantFull     bool
		wantBacklog0 int
		wantInUse    int
	}{
		{sub: 0, wantFull: false, wantBacklog0: 0, wantInUse: 1},
		{sub: 0, wantFull: false, wantBacklog0: 0, wantInUse: 1},
		{sub: 0, wantFull: true, wantBacklog0: 1, wantInUse: 1},
		{sub: 1, wantFull: false, wantBacklog0: 1, wantInUse: 2},
		{sub: 0, wantFull: false, wantBacklog0: 1, wantInUse: 3},
	}
	for j, st := range steps {
		if got := p.AddRecord(st.sub, fmt.Sprint("k", j), int64(j), float64(j)); got != st.wantFull {
			t.Errorf("record %d: AddRecord = %v, want %v", j, got, st.wantFull)
		}
		if p.Backlog(0) != st.wantBacklog0 || p.BuffersInUse() != st.wantInUse {
			t.Errorf("record %d: Backlog(0) %d BuffersInUse %d, want %d %d", j, p.Backlog(0), p.BuffersInUse(), st.wantBacklog0, st.wantInUse)
		}
	}
	if p.RecordsOut != 5 {
		t.Errorf("RecordsOut = %d, want 5", p.RecordsOut)
	}
	p.OnPartitionRequest(0, recv(0), 5)
	got := p.Poll(nil)
	wantSends(t, "poll", got, "R0 seq=0 backlog=0 [k0@0 k1@1 k2@2]")
	b := got[0].Response.Buffer
	if b.IsEvent || b.SizeBytes != 300 {
		t.Errorf("buffer IsEvent %v SizeBytes %d, want false 300", b.IsEvent, b.SizeBytes)
	}
	if fmt.Sprint(b.Values) != "[0 1 2]" || len(b.Keys) != 3 || len(b.Timestamps) != 3 {
		t.Errorf("buffer values %v keys %v timestamps %v", b.Values, b.Keys, b.Timestamps)
	}
	if p.BuffersInUse() != 2 || p.BuffersOut != 1 || p.BytesOut != 300 || p.Credit(0) != 4 {
		t.Errorf("after sending: in use %d BuffersOut %d BytesOut %d credit %d, want 2 1 300 4",
			p.BuffersInUse(), p.BuffersOut, p.BytesOut, p.Credit(0))
	}
}

func TestCanWrite(t *testing.T) {
	p := NewResultPartition(2, 2, 2, 1)
	type state struct{ can0, can1 bool }
	steps := []struct {
		name string
		do   func()
		want state
	}{
		{"start", func() {}, state{true, true}},
		{"open a buffer in 0", func() { fill(p, 0, 0, 1) }, state{true, true}},
		{"open a buffer in 1: pool exhausted, both have room", func() { fill(p, 1, 10, 1) }, state{true, true}},
		{"fill 0: no room, no free buffer", func() { fill(p, 0, 1, 1) }, state{false, true}},
		{"fill 1", func() { fill(p, 1, 11, 1) }, state{false, false}},
		{"partition request without credit changes nothing", func() { p.OnPartitionRequest(0, recv(0), 0); p.Poll(nil) }, state{false, false}},
		{"credit sends one buffer back to the pool", func() { p.OnAddCredit(0, 1); p.Poll(nil) }, state{true, true}},
	}
	for _, st := range steps {
		st.do()
		if got := (state{p.CanWrite(0), p.CanWrite(1)}); got != st.want {
			t.Errorf("%s: CanWrite = %+v, want %+v (in use %d of %d)", st.name, got, st.want, p.BuffersInUse(), p.PoolCapacity())
		}
	}
	if empty := NewResultPartition(1, 0, 2, 1); empty.CanWrite(0) {
		t.Errorf("CanWrite with a pool of 0 buffers = true")
	}
}

func TestPollNeedsPartitionRequest(t *testing.T) {
	p := NewResultPartition(1, 4, 1, 1)
	fill(p, 0, 0, 2)
	p.EndOfPartition()
	if got := p.Poll(nil); len(got) != 0 {
		t.Fatalf("Poll before the PartitionRequest sent %q", describe(got))
	}
	if p.AllEndsSent() {
		t.Fatalf("AllEndsSent before anything was sent")
	}
	p.OnPartitionRequest(0, recv(0), 2)
	wantSends(t, "after request", p.Poll(nil),
		"R0 seq=0 backlog=1 [k0@0]", "R0 seq=1 backlog=0 [k1@1]", "R0 seq=2 backlog=0 [EOP]")
	if !p.AllEndsSent() {
		t.Errorf("AllEndsSent() = false after the EndOfPartition event went out")
	}
}

func TestEventNeedsNoCredit(t *testing.T) {
	p := NewResultPartition(2, 4, 1, 1)
	p.OnPartitionRequest(0, recv(0), 0)
	p.OnPartitionRequest(1, recv(1), 0)
	fill(p, 1, 0, 1)
	p.EndOfPartition()
	// Subpartition 0 has only the event: it goes without credit. In 1 the
	// event waits behind a data buffer that has no credit.
	wantSends(t, "no credit", p.Poll(nil), "R0 seq=0 backlog=0 [EOP]", "A1 backlog=1")
	if p.AllEndsSent() {
		t.Fatalf("AllEndsSent() = true while subpartition 1 still holds its event")
	}
	if p.Credit(0) != 0 {
		t.Errorf("sending an event used credit: Credit(0) = %d", p.Credit(0))
	}
	p.OnAddCredit(1, 1)
	wantSends(t, "credit 1", p.Poll(nil), "R1 seq=0 backlog=0 [k0@0]", "R1 seq=1 backlog=0 [EOP]")
	if !p.AllEndsSent() || p.Credit(1) != 0 {
		t.Errorf("AllEndsSent %v Credit(1) %d, want true 0", p.AllEndsSent(), p.Credit(1))
	}
	if got := p.Poll(nil); len(got) != 0 {
		t.Errorf("Poll after the end sent %q", describe(got))
	}
}

func TestBacklogAnnouncement(t *testing.T) {
	p := NewResultPartition(1, 10, 1, 1)
	p.OnPartitionRequest(0, recv(0), 0)
	next := 0
	add := func(n int) { fill(p, 0, next, n); next += n }
	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"nothing waits: no announcement", func() {}, nil},
		{"data waits without credit: announce", func() { add(2) }, []string{"A0 backlog=2"}},
		{"still waiting: no second announcement", func() {}, nil},
		{"more data, still no credit: no second announcement", func() { add(1) }, nil},
		{"zero credit is refused and announces nothing", func() {
			if p.OnAddCredit(0, 0) || p.OnAddCredit(0, -1) {
				t.Errorf("OnAddCredit accepted a non-positive credit")
			}
		}, nil},
		{"one credit: one buffer, then credit ran out again: announce", func() { p.OnAddCredit(0, 1) },
			[]string{"R0 seq=0 backlog=2 [k0@0]", "A0 backlog=2"}},
		{"enough credit drains the backlog without announcing", func() { p.OnAddCredit(0, 4) },
			[]string{"R0 seq=1 backlog=1 [k1@1]", "R0 seq=2 backlog=0 [k2@2]"}},
		{"credit left: new data goes at once", func() { add(2) },
			[]string{"R0 seq=3 backlog=1 [k3@3]", "R0 seq=4 backlog=0 [k4@4]"}},
		{"credit ran out with nothing waiting: no announcement", func() {}, nil},
		{"data arrives after credit ran out: announce", func() { add(1) }, []string{"A0 backlog=1"}},
	}
	for _, st := range steps {
		st.do()
		wantSends(t, st.name, p.Poll(nil), st.want...)
		if p.Credit(0) < 0 {
			t.Fatalf("%s: Credit = %d", st.name, p.Credit(0))
		}
	}
}

func TestAnnouncementResetByPartitionRequest(t *testing.T) {
	p := NewResultPartition(1, 10, 1, 1)
	p.OnPartitionRequest(0, recv(0), 0)
	fill(p, 0, 0, 1)
	wantSends(t, "first request", p.Poll(nil), "A0 backlog=1")
	p.OnPartitionRequest(0, recv(0), 0) // a new consumer attempt asks again
	wantSends(t, "second request", p.Poll(nil), "A0 backlog=1")
}

// TestAnnounceOnlyWithoutExclusiveBuffers follows Flink's
// CreditBasedSequenceNumberingViewReader.needAnnounceBacklog
// (initialCredit == 0 && numCreditsAvailable == 0): the same sequence of
// data and credit announces the backlog when the PartitionRequest carried
// no credit, and never when it carried exclusive buffers.
func TestAnnounceOnlyWithoutExclusiveBuffers(t *testing.T) {
	tests := []struct {
		initialCredit int
		want          [][]string // sends of each step
		wantBacklog   int        // data buffers left waiting, with credit 0
	}{
		{initialCredit: 0, want: [][]string{
			{"A0 backlog=2"},
			{"R0 seq=0 backlog=1 [k0@0]", "A0 backlog=1"},
			nil,
			{"R0 seq=1 backlog=2 [k1@1]", "A0 backlog=2"},
			{"R0 seq=2 backlog=2 [k2@2]", "R0 seq=3 backlog=1 [k3@3]", "A0 backlog=1"},
			nil, // announced already, no new credit since
		}, wantBacklog: 3},
		{initialCredit: 1, want: [][]string{
			{"R0 seq=0 backlog=1 [k0@0]"},
			{"R0 seq=1 backlog=0 [k1@1]"},
			nil,
			{"R0 seq=2 backlog=1 [k2@2]"},
			{"R0 seq=3 backlog=1 [k3@3]", "R0 seq=4 backlog=0 [k4@4]"},
			nil,
		}, wantBacklog: 2},
		{initialCredit: 2, want: [][]string{
			{"R0 seq=0 backlog=1 [k0@0]", "R0 seq=1 backlog=0 [k1@1]"},
			nil,
			nil,
			{"R0 seq=2 backlog=1 [k2@2]", "R0 seq=3 backlog=0 [k3@3]"},
			{"R0 seq=4 backlog=0 [k4@4]"},
			{"R0 seq=5 backlog=1 [k5@5]"},
		}, wantBacklog: 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("initialCredit=", tt.initialCredit), func(t *testing.T) {
			p := NewResultPartition(1, 20, 1, 1)
			next := 0
			add := func(n int) { fill(p, 0, next, n); next += n }
			steps := []struct {
				name string
				do   func()
			}{
				{"request, then 2 buffers", func() { p.OnPartitionRequest(0, recv(0), tt.initialCredit); add(2) }},
				{"one credit", func() { p.OnAddCredit(0, 1) }},
				{"nothing new", func() {}},
				{"one credit, 2 more buffers", func() { p.OnAddCredit(0, 1); add(2) }},
				{"two credits, 1 more buffer", func() { p.OnAddCredit(0, 2); add(1) }},
				{"2 more buffers", func() { add(2) }},
			}
			for j, st := range steps {
				st.do()
				got := p.Poll(nil)
				wantSends(t, st.name, got, tt.want[j]...)
				for _, s := range got {
					if s.Announcement != nil && tt.initialCredit > 0 {
						t.Errorf("%s: BacklogAnnouncement to a consumer with initial credit %d", st.name, tt.initialCredit)
					}
				}
			}
			if p.Backlog(0) != tt.wantBacklog || p.Credit(0) != 0 {
				t.Errorf("at the end: Backlog %d Credit %d, want %d 0 (data waits without credit)", p.Backlog(0), p.Credit(0), tt.wantBacklog)
			}
		})
	}
}

func TestAnnouncementAfterNewPartitionRequest(t *testing.T) {
	// A new PartitionRequest replaces the initial credit: a consumer that
	// first asked with exclusive buffers and then without gets
	// announcements from then on, and the other way round none.
	p := NewResultPartition(1, 10, 1, 1)
	p.OnPartitionRequest(0, recv(0), 1)
	fill(p, 0, 0, 3)
	wantSends(t, "initial credit 1", p.Poll(nil), "R0 seq=0 backlog=2 [k0@0]")
	p.OnPartitionRequest(0, recv(0), 0)
	wantSends(t, "new request with 0", p.Poll(nil), "A0 backlog=2")
	p.OnPartitionRequest(0, recv(0), 1)
	wantSends(t, "new request with 1", p.Poll(nil), "R0 seq=1 backlog=1 [k1@1]")
	wantSends(t, "credit used up", p.Poll(nil))
}

func TestBacklogs(t *testing.T) {
	p := NewResultPartition(3, 10, 2, 1)
	if got := fmt.Sprint(p.Backlogs()); got != "[0 0 0]" {
		t.Errorf("Backlogs() of a new partition = %s, want [0 0 0]", got)
	}
	fill(p, 0, 0, 5) // 2 finished, 1 open
	fill(p, 2, 10, 2)
	if got := fmt.Sprint(p.Backlogs()); got != "[2 0 1]" {
		t.Errorf("Backlogs() = %s, want [2 0 1] (open buffers are not backlog)", got)
	}
	p.EndOfPartition()
	if got := fmt.Sprint(p.Backlogs()); got != "[3 0 1]" {
		t.Errorf("Backlogs() after EndOfPartition = %s, want [3 0 1] (events are not backlog)", got)
	}
	p.OnPartitionRequest(0, recv(0), 2)
	p.OnPartitionRequest(1, recv(1), 0)
	p.Poll(nil)
	if got := fmt.Sprint(p.Backlogs()); got != "[1 0 1]" {
		t.Errorf("Backlogs() after sending 2 buffers of subpartition 0 = %s, want [1 0 1]", got)
	}
	if got := NewResultPartition(0, 1, 1, 1).Backlogs(); len(got) != 0 {
		t.Errorf("Backlogs() with no subpartitions = %v, want empty", got)
	}
}

func TestBufferResponseBacklog(t *testing.T) {
	p := NewResultPartition(1, 10, 2, 1)
	fill(p, 0, 0, 9) // 4 finished buffers and one open with 1 record
	if p.Backlog(0) != 4 {
		t.Fatalf("Backlog = %d, want 4 (the open buffer is not backlog)", p.Backlog(0))
	}
	p.EndOfPartition() // finishes the open buffer and queues the event
	if p.Backlog(0) != 5 {
		t.Fatalf("Backlog = %d after EndOfPartition, want 5 (events are not backlog)", p.Backlog(0))
	}
	p.OnPartitionRequest(0, recv(0), 3)
	// Initial credit 3 (exclusive buffers): credit runs out with data
	// waiting, but the consumer learns the backlog from the BufferResponses,
	// so no BacklogAnnouncement goes out.
	wantSends(t, "credit 3", p.Poll(nil),
		"R0 seq=0 backlog=4 [k0@0 k1@1]", "R0 seq=1 backlog=3 [k2@2 k3@3]", "R0 seq=2 backlog=2 [k4@4 k5@5]")
	p.OnAddCredit(0, 2)
	wantSends(t, "credit 2", p.Poll(nil),
		"R0 seq=3 backlog=1 [k6@6 k7@7]", "R0 seq=4 backlog=0 [k8@8]", "R0 seq=5 backlog=0 [EOP]")
}

func TestSequenceNumbersPerSubpartition(t *testing.T) {
	p := NewResultPartition(2, 10, 1, 1)
	p.OnPartitionRequest(0, recv(0), 10)
	p.OnPartitionRequest(1, recv(1), 10)
	fill(p, 0, 0, 2)
	fill(p, 1, 10, 1)
	wantSends(t, "first", p.Poll(nil),
		"R0 seq=0 backlog=1 [k0@0]", "R0 seq=1 backlog=0 [k1@1]", "R1 seq=0 backlog=0 [k10@10]")
	fill(p, 1, 11, 1)
	p.EndOfPartition()
	wantSends(t, "second", p.Poll(nil),
		"R0 seq=2 backlog=0 [EOP]", "R1 seq=1 backlog=0 [k11@11]", "R1 seq=2 backlog=0 [EOP]")
}

func TestBroadcast(t *testing.T) {
	p := NewResultPartition(2, 2, 1, 10)
	fill(p, 0, 0, 2) // two full buffers wait for credit: the pool is used up
	if p.CanWrite(1) {
		t.Fatalf("CanWrite(1) with the pool exhausted")
	}
	p.Broadcast(KindWatermark, 500)
	// No subpartition has an open buffer and the pool has none: the
	// watermark waits and the producer is blocked (RecordWriter blocks in
	// requestBufferBuilderBlocking).
	if p.BuffersInUse() != 2 || p.Available() || p.CanWrite(0) || p.Drained() {
		t.Fatalf("BuffersInUse %d, available %v, CanWrite(0) %v after a broadcast that waits", p.BuffersInUse(), p.Available(), p.CanWrite(0))
	}
	p.OnPartitionRequest(0, recv(0), 1)
	p.OnPartitionRequest(1, recv(1), 5)
	// one buffer goes out: subpartition 0's watermark takes it, 1's waits
	wantSends(t, "one credit", p.Poll(nil), "R0 seq=0 backlog=1 [k0@0]")
	if p.BuffersInUse() != 2 || p.Available() {
		t.Fatalf("in use %d, available %v: subpartition 1's watermark still waits", p.BuffersInUse(), p.Available())
	}
	p.OnAddCredit(0, 1)
	wantSends(t, "second credit", p.Poll(nil), "R0 seq=1 backlog=0 [k1@1]")
	if !p.CanWrite(0) || p.BuffersInUse() != 2 {
		t.Fatalf("in use %d, CanWrite(0) %v after both watermarks got a buffer", p.BuffersInUse(), p.CanWrite(0))
	}
	// Watermarks do not count towards the records of a buffer.
	if !p.CanWrite(1) || !p.AddRecord(1, "k10", 10, 10) {
		t.Errorf("a buffer holding a watermark took no record or did not fill with one")
	}
	p.Broadcast(KindStatusIdle, 0)
	p.FlushAll()
	p.OnAddCredit(0, 1) // subpartition 0 used both its credits
	got := p.Poll(nil)
	// subpartition 1's IDLE waits for a buffer: the two in the pool are
	// full; sending sub 0's frees one and the producer writes IDLE into it,
	// which the next flush hands out
	wantSends(t, "flush", got, "R0 seq=2 backlog=0 [W500 IDLE]", "R1 seq=0 backlog=0 [W500 k10@10]")
	if s := got[1].Response.Buffer.SizeBytes; s != 10+16 {
		t.Errorf("SizeBytes of one record and a watermark = %d, want 26", s)
	}
	// sub 0's segment stays open after the flush (not full), sub 1's full
	// one was freed when sent and IDLE took it: the pool is used up again
	if p.BuffersInUse() != 2 || p.Available() {
		t.Fatalf("in use %d, available %v: IDLE should sit in a buffer of its own", p.BuffersInUse(), p.Available())
	}
	p.FlushAll()
	wantSends(t, "second flush", p.Poll(nil), "R1 seq=1 backlog=0 [IDLE]")
	p.EndOfPartition()
	p.Broadcast(KindWatermark, 900) // ended subpartitions take nothing
	wantSends(t, "end", p.Poll(nil), "R0 seq=3 backlog=0 [EOP]", "R1 seq=2 backlog=0 [EOP]")
	if p.BuffersInUse() != 0 {
		t.Errorf("%d buffers in use at the end", p.BuffersInUse())
	}
}

func TestEndOfPartitionOnce(t *testing.T) {
	p := NewResultPartition(1, 4, 5, 1)
	fill(p, 0, 0, 2)
	p.EndOfPartition()
	p.EndOfPartition()
	p.FlushAll()
	if p.Backlog(0) != 1 {
		t.Errorf("Backlog = %d, want 1", p.Backlog(0))
	}
	p.OnPartitionRequest(0, recv(0), 1)
	got := p.Poll(nil)
	wantSends(t, "end", got, "R0 seq=0 backlog=0 [k0@0 k1@1]", "R0 seq=1 backlog=0 [EOP]")
	ev := got[1].Response.Buffer
	if !ev.IsEvent || ev.SizeBytes != 4 || len(ev.Keys) != 1 || len(ev.Timestamps) != 1 || len(ev.Values) != 1 {
		t.Errorf("EndOfPartition buffer = %v, want an event buffer of 4 bytes with one element", ev)
	}
	if p.BuffersInUse() != 0 || p.BuffersOut != 1 || p.BytesOut != 2 {
		t.Errorf("BuffersInUse %d BuffersOut %d BytesOut %d, want 0 1 2 (events are not counted)", p.BuffersInUse(), p.BuffersOut, p.BytesOut)
	}
}

func TestPollAppendsToDst(t *testing.T) {
	p := NewResultPartition(1, 4, 1, 1)
	p.OnPartitionRequest(0, recv(0), 1)
	fill(p, 0, 0, 1)
	prev := []Send{{Subpartition: 0, Receiver: recv(0), Announcement: &messages.BacklogAnnouncement{ReceiverId: recv(0)}}}
	got := p.Poll(prev)
	if len(got) != 2 || got[0].Announcement != prev[0].Announcement || got[1].Response == nil {
		t.Errorf("Poll(dst) = %q, want dst followed by one BufferResponse", describe(got))
	}
}

// An aligned barrier goes behind everything written so far (the partly
// filled buffer is finished first) and, as an event, needs no credit once it
// reaches the head of the queue; it does not end the subpartition.
func TestAlignedBarrierKeepsOrder(t *testing.T) {
	p := NewResultPartition(2, 8, 2, 1)
	p.OnPartitionRequest(0, recv(0), 1)
	p.OnPartitionRequest(1, recv(1), 0)
	fill(p, 0, 0, 3) // a full buffer [k0 k1] and a partial one [k2]
	if got := p.Barrier(&messages.Buffer{CheckpointId: 7}); len(got) != 0 {
		t.Fatalf("an aligned barrier persisted %d records", len(got))
	}
	// subpartition 0 has credit for one buffer: the barrier waits behind
	// [k2]; subpartition 1 had nothing, so its barrier goes at once
	wantSends(t, "credit 1", p.Poll(nil), "R0 seq=0 backlog=1 [k0@0 k1@1]", "R1 seq=0 backlog=0 [B7]")
	p.OnAddCredit(0, 1)
	wantSends(t, "credit 2", p.Poll(nil), "R0 seq=1 backlog=0 [k2@2]", "R0 seq=2 backlog=0 [B7]")
	if p.AllEndsSent() {
		t.Fatal("a barrier counted as the end of the partition")
	}
}

// An unaligned barrier overtakes the finished buffers waiting for credit;
// their records are returned as channel state, and they are still sent
// after the barrier.
func TestUnalignedBarrierOvertakes(t *testing.T) {
	p := NewResultPartition(2, 8, 2, 1)
	p.OnPartitionRequest(0, recv(0), 1)
	p.OnPartitionRequest(1, recv(1), 1)
	fill(p, 0, 0, 5) // [k0 k1] [k2 k3] [k4]
	fill(p, 1, 10, 1)
	wantSends(t, "before", p.Poll(nil), "R0 seq=0 backlog=1 [k0@0 k1@1]")
	// the partly filled buffers ([k4], [k10]) are overtaken too
	got := p.Barrier(&messages.Buffer{CheckpointId: 3, Unaligned: true})
	want := []InFlight{{0, "k2", 2, 2, nil}, {0, "k3", 3, 3, nil}, {0, "k4", 4, 4, nil}, {1, "k10", 10, 10, nil}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("persisted %v, want %v", got, want)
	}
	wantSends(t, "barrier", p.Poll(nil), "R0 seq=1 backlog=2 [UB3]", "R1 seq=0 backlog=1 [UB3]", "R1 seq=1 backlog=0 [k10@10]")
	p.OnAddCredit(0, 2)
	wantSends(t, "after", p.Poll(nil), "R0 seq=2 backlog=1 [k2@2 k3@3]", "R0 seq=3 backlog=0 [k4@4]")
}

// EndOfData is an element in the data stream, not the end of the partition.
func TestEndOfDataIsAnElement(t *testing.T) {
	p := NewResultPartition(1, 4, 4, 1)
	p.OnPartitionRequest(0, recv(0), 2)
	fill(p, 0, 0, 1)
	p.Broadcast(KindEndOfData, 0)
	p.FlushAll()
	wantSends(t, "eod", p.Poll(nil), "R0 seq=0 backlog=0 [k0@0 EOD]")
	if p.AllEndsSent() {
		t.Fatal("EndOfData ended the partition")
	}
}

// An aligned barrier still waiting in the output when the
// aligned-checkpoint-timeout passes moves to the head of its queue as an
// unaligned one; the records it overtakes are channel state, what was behind
// it stays behind.
func TestTimeoutBarrier(t *testing.T) {
	p := NewResultPartition(1, 8, 1, 1)
	p.OnPartitionRequest(0, recv(0), 0)
	fill(p, 0, 0, 2)
	p.Barrier(&messages.Buffer{CheckpointId: 5})
	fill(p, 0, 2, 1)
	if !p.BarrierQueued(5) || p.BarrierQueued(4) {
		t.Fatalf("BarrierQueued(5) %v, (4) %v", p.BarrierQueued(5), p.BarrierQueued(4))
	}
	got := p.TimeoutBarrier(5)
	if want := []InFlight{{0, "k0", 0, 0, nil}, {0, "k1", 1, 1, nil}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("persisted %v, want %v", got, want)
	}
	wantSends(t, "timed out", p.Poll(nil), "R0 seq=0 backlog=3 [UB5]", "A0 backlog=3")
	if p.BarrierQueued(5) || len(p.TimeoutBarrier(5)) != 0 {
		t.Fatal("the barrier is still queued after it was sent")
	}
	p.OnAddCredit(0, 3)
	wantSends(t, "after", p.Poll(nil), "R0 seq=1 backlog=2 [k0@0]", "R0 seq=2 backlog=1 [k1@1]", "R0 seq=3 backlog=0 [k2@2]")
}

// After an aligned barrier a subpartition sends nothing until the consumer
// resumes it; a consumer without exclusive buffers starts again from 0
// credit and gets the backlog announced.
func TestAlignedBarrierBlocksUntilResume(t *testing.T) {
	p := NewResultPartition(1, 8, 1, 1)
	p.OnPartitionRequest(0, recv(0), 0)
	p.OnAddCredit(0, 2)
	fill(p, 0, 0, 1)
	p.Barrier(&messages.Buffer{CheckpointId: 4})
	fill(p, 0, 1, 1)
	wantSends(t, "barrier", p.Poll(nil), "R0 seq=0 backlog=1 [k0@0]", "R0 seq=1 backlog=1 [B4]")
	if got := p.Poll(nil); len(got) != 0 || p.Credit(0) != 1 {
		t.Fatalf("blocked subpartition sent %q (credit %d)", describe(got), p.Credit(0))
	}
	p.OnResumeConsumption(0)
	if p.Credit(0) != 0 {
		t.Fatalf("credit %d after resume, want 0 for a consumer without exclusive buffers", p.Credit(0))
	}
	wantSends(t, "resumed", p.Poll(nil), "A0 backlog=1")
	p.OnAddCredit(0, 1)
	wantSends(t, "credit", p.Poll(nil), "R0 seq=2 backlog=0 [k1@1]")
}

// A flush hands out what was written so far while the producer goes on
// filling the same segment (PipelinedSubpartition.flush): with 4 records a
// buffer, 2 records then a flush send one buffer of 2 and keep the segment;
// 2 more fill it, and its last part (those 2) frees it when sent.
func TestFlushKeepsTheSegment(t *testing.T) {
	p := NewResultPartition(1, 4, 4, 10)
	p.OnPartitionRequest(0, recv(0), 5)
	fill(p, 0, 0, 2)
	p.FlushAll()
	wantSends(t, "flush", p.Poll(nil), "R0 seq=0 backlog=0 [k0@0 k1@1]")
	if p.BuffersInUse() != 1 {
		t.Fatalf("after a flush %d buffers in use, want the segment still held", p.BuffersInUse())
	}
	p.FlushAll() // nothing new: nothing to send
	if got := p.Poll(nil); len(got) != 0 {
		t.Fatalf("an empty flush sent %q", describe(got))
	}
	fill(p, 0, 2, 2)
	wantSends(t, "full", p.Poll(nil), "R0 seq=1 backlog=0 [k2@2 k3@3]")
	if p.BuffersInUse() != 0 {
		t.Fatalf("%d buffers in use after the segment's last part was sent", p.BuffersInUse())
	}
	// a segment handed out whole by flushes is freed when it fills
	fill(p, 0, 4, 3)
	p.FlushAll()
	fill(p, 0, 7, 1)
	wantSends(t, "flushed then full", p.Poll(nil), "R0 seq=2 backlog=1 [k4@4 k5@5 k6@6]", "R0 seq=3 backlog=0 [k7@7]")
	if p.BuffersInUse() != 0 || p.BytesOut != 80 {
		t.Fatalf("in use %d, bytes out %d", p.BuffersInUse(), p.BytesOut)
	}
}

// taskmanager.network.memory.max-buffers-per-channel: a subpartition with
// that many pool buffers makes the producer unavailable for it, though the
// pool has more; the other subpartitions can still write.
func TestMaxBuffersPerChannel(t *testing.T) {
	p := NewResultPartition(2, 12, 1, 10)
	p.SetMaxBuffersPerChannel(2)
	fill(p, 0, 0, 2) // two full segments waiting for credit
	if p.CanWrite(0) {
		t.Fatal("subpartition 0 holds 2 buffers, the bound, yet can write")
	}
	if !p.CanWrite(1) || p.BuffersInUse() != 2 {
		t.Fatalf("subpartition 1 cannot write with %d of 12 buffers in use", p.BuffersInUse())
	}
	p.OnPartitionRequest(0, recv(0), 1)
	p.Poll(nil)
	if !p.CanWrite(0) {
		t.Fatal("a sent buffer did not make room")
	}
}

// A LocalInputChannel reads the producer's buffers without credit; the
// segments go back to the pool only when it recycles them.
func TestLocalChannelRecycles(t *testing.T) {
	p := NewResultPartition(1, 2, 2, 10)
	p.OnLocalRequest(0, recv(0))
	fill(p, 0, 0, 4)
	sends := p.Poll(nil)
	wantSends(t, "local", sends, "R0 seq=0 backlog=1 [k0@0 k1@1]", "R0 seq=1 backlog=0 [k2@2 k3@3]")
	if !sends[0].Response.SegmentEnd || p.BuffersInUse() != 2 || p.CanWrite(0) {
		t.Fatalf("segment end %v, in use %d: the local consumer still holds both", sends[0].Response.SegmentEnd, p.BuffersInUse())
	}
	p.OnLocalRecycle(0, 1)
	if p.BuffersInUse() != 1 || !p.CanWrite(0) {
		t.Fatalf("after one recycle %d in use", p.BuffersInUse())
	}
}
