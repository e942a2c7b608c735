package exchange

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/messages"
)

// Unit tests of ResultPartition. Every expected value is worked out by hand
// from Flink 1.20's rules as the package's contract adopts them (records
// instead of bytes: a buffer is full at recordsPerBuffer records;
// watermarks are elements of data buffers; events take no pool buffer; a
// LocalInputChannel reads one buffer at a time and its recycle is the ask
// for the next). The comments give the arithmetic:
//
//   - PoolSize = max(n+1, n*buffersPerChannel+floatingPerGate)
//     (NettyShuffleUtils.getMinMaxNetworkBuffersPerResultPartition).
//   - Backlog = 0 when blocked or empty; the data BufferConsumers queued
//     (buffersInBacklog) when a flush was requested, the partition ended or
//     the last entry is an event; else buffersInBacklog - 1: the last data
//     buffer, finished or not, is left out
//     (PipelinedSubpartition.getBuffersInBacklogUnsafe tests only
//     isBuffer() of the last entry).
//   - QueueLengths = every queued BufferConsumer, data (the one being
//     written too) and events (unsynchronizedGetNumberOfQueuedBuffers).
//   - Available = nothing pending && inUse < pool && no subpartition holds
//     max-buffers-per-channel or more (LocalBufferPool.shouldBeAvailable);
//     the quota gates availability only: requestMemorySegment(channel) hands
//     a free or overdraft buffer to a subpartition at its quota.
//   - OutPoolUsage = inUse / pool, overdraft buffers included
//     (bestEffortGetNumOfUsedBuffers = requested + overdraft - available).
//   - BuffersOut / BytesOut grow when a BufferBuilder finishes (full, or
//     finished by an event), by the whole buffer's size
//     (BufferWritingResultPartition.finishUnicastBufferBuilder); events and
//     sends do not count.
//   - Sizes: a record recordBytes, a Watermark 13 (StreamElementSerializer:
//     4-byte length, tag, long), a WatermarkStatus 9 (length, tag, int);
//     EndOfPartition 4, EndOfData 5 (type, StopMode), CheckpointBarrier 38
//     (EventSerializer allocates 38 bytes with the default location and
//     toBufferConsumer wraps the whole array).

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
// W<ts>, statuses as IDLE/ACTIVE, events as EOP, EOD, B<id> (aligned
// barrier) and UB<id> (unaligned).
func bufString(b *messages.Buffer) string {
	var parts []string
	for j, k := range b.Kinds {
		switch k {
		case KindRecord:
			parts = append(parts, fmt.Sprintf("%s@%d", b.Keys[j], b.Timestamps[j]))
		case KindWatermark:
			parts = append(parts, fmt.Sprintf("W%d", b.Timestamps[j]))
		case KindStatusIdle:
			parts = append(parts, "IDLE")
		case KindStatusActive:
			parts = append(parts, "ACTIVE")
		case KindEndOfPartition:
			parts = append(parts, "EOP")
		case KindEndOfData:
			parts = append(parts, "EOD")
		case KindBarrier:
			if b.Unaligned {
				parts = append(parts, fmt.Sprintf("UB%d", b.CheckpointId))
			} else {
				parts = append(parts, fmt.Sprintf("B%d", b.CheckpointId))
			}
		default:
			parts = append(parts, fmt.Sprintf("?%d", k))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// wantSends checks the sends of one Poll, and that every send names its
// subpartition's receiver.
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

// state is the pool view of a partition: buffers in use, per-subpartition
// queue lengths and held buffers, availability and blocking.
func state(p *ResultPartition) string {
	return fmt.Sprintf("inUse=%d queues=%v held=%v available=%v blocked=%v", p.Pool().BuffersInUse(), p.QueueLengths(), p.Held(), p.Available(), p.Blocked())
}

func wantState(t *testing.T, step string, p *ResultPartition, want string) {
	t.Helper()
	if got := state(p); got != want {
		t.Errorf("%s: %s, want %s", step, got, want)
	}
	if msg := p.CheckBounds(); msg != "" {
		t.Errorf("%s: CheckBounds: %s", step, msg)
	}
}

func TestPoolSize(t *testing.T) {
	tests := []struct {
		subpartitions, perChannel, floating int
		want                                int
	}{
		{subpartitions: 2, perChannel: 2, floating: 8, want: 12},    // max(3, 2*2+8=12): Flink defaults, parallelism 2
		{subpartitions: 1, perChannel: 2, floating: 8, want: 10},    // max(2, 1*2+8)
		{subpartitions: 4, perChannel: 0, floating: 8, want: 8},     // max(5, 0+8): no exclusive buffers
		{subpartitions: 3, perChannel: 5, floating: 0, want: 15},    // max(4, 15)
		{subpartitions: 128, perChannel: 2, floating: 8, want: 264}, // max(129, 256+8)
		{subpartitions: 3, perChannel: 0, floating: 1, want: 4},     // max(4, 1): the minimum n+1
		{subpartitions: 4, perChannel: 1, floating: 0, want: 5},     // max(5, 4)
		{subpartitions: 1, perChannel: 0, floating: 0, want: 2},     // max(2, 0)
		{subpartitions: 2, perChannel: 1, floating: 1, want: 3},     // max(3, 3): both equal
	}
	for _, tt := range tests {
		if got := PoolSize(tt.subpartitions, tt.perChannel, tt.floating); got != tt.want {
			t.Errorf("PoolSize(%d, %d, %d) = %d, want %d", tt.subpartitions, tt.perChannel, tt.floating, got, tt.want)
		}
	}
}

func TestNewResultPartition(t *testing.T) {
	p := NewResultPartition(3, 5, 4, 10)
	if p.NumSubpartitions() != 3 || p.Pool().PoolCapacity() != 5 {
		t.Errorf("NumSubpartitions, PoolCapacity = %d, %d, want 3, 5", p.NumSubpartitions(), p.Pool().PoolCapacity())
	}
	wantState(t, "new", p, "inUse=0 queues=[0 0 0] held=[0 0 0] available=true blocked=false")
	for i := range 3 {
		if p.Credit(i) != 0 || p.Backlog(i) != 0 {
			t.Errorf("subpartition %d: credit %d backlog %d, want 0 0", i, p.Credit(i), p.Backlog(i))
		}
	}
	if p.AllEndsSent() || !p.Drained() || p.Pool().OutPoolUsage() != 0 || p.BarrierQueued(1) {
		t.Errorf("AllEndsSent %v Drained %v OutPoolUsage %v BarrierQueued %v, want false true 0 false",
			p.AllEndsSent(), p.Drained(), p.Pool().OutPoolUsage(), p.BarrierQueued(1))
	}
	if got := p.Poll(nil); len(got) != 0 {
		t.Errorf("Poll on a new partition sent %q", describe(got))
	}
	// a pool of 0 buffers is never available (0 < 0 is false) and its usage is 0
	if empty := NewResultPartition(1, 0, 2, 1); empty.Available() || empty.Pool().OutPoolUsage() != 0 {
		t.Errorf("pool of 0: Available %v OutPoolUsage %v, want false 0", empty.Available(), empty.Pool().OutPoolUsage())
	}
}

func TestRecordsPerBufferAtLeastOne(t *testing.T) {
	for _, give := range []int{0, -3} {
		p := NewResultPartition(1, 3, give, 10)
		p.AddRecord(0, "k0", 0, 0)
		// clamped to 1 record a buffer: the record finishes its buffer
		// (BuffersOut 1, 10 bytes); the last entry is a data buffer, so it is
		// not backlog: max(1-1, 0) = 0
		if p.Backlog(0) != 0 || p.Pool().BuffersInUse() != 1 || fmt.Sprint(p.QueueLengths()) != "[1]" || p.BuffersOut != 1 || p.BytesOut != 10 {
			t.Errorf("recordsPerBuffer %d: backlog %d in use %d queues %v BuffersOut %d BytesOut %d, want 0 1 [1] 1 10",
				give, p.Backlog(0), p.Pool().BuffersInUse(), p.QueueLengths(), p.BuffersOut, p.BytesOut)
		}
		p.AddRecord(0, "k1", 1, 1)
		// [F F]: 2-1 = 1
		if p.Backlog(0) != 1 || p.Pool().BuffersInUse() != 2 || p.BuffersOut != 2 {
			t.Errorf("recordsPerBuffer %d: second record: backlog %d in use %d BuffersOut %d, want 1 2 2", give, p.Backlog(0), p.Pool().BuffersInUse(), p.BuffersOut)
		}
	}
}

func TestAddRecordFillsBuffer(t *testing.T) {
	p := NewResultPartition(2, 4, 3, 100) // 3 records a buffer
	steps := []struct {
		sub          int
		wantBacklog0 int
		wantBuffers  int64 // BuffersOut: buffers finished so far
		want         string
	}{
		// [C0(k0)]: the buffer being written is not backlog: max(1-1, 0) = 0
		{0, 0, 0, "inUse=1 queues=[1 0] held=[1 0] available=true blocked=false"},
		{0, 0, 0, "inUse=1 queues=[1 0] held=[1 0] available=true blocked=false"},
		// the third record fills it: finished (counted in BuffersOut), but
		// still the last data buffer of the queue: 1-1 = 0
		{0, 0, 1, "inUse=1 queues=[1 0] held=[1 0] available=true blocked=false"},
		{1, 0, 1, "inUse=2 queues=[1 1] held=[1 1] available=true blocked=false"},
		// [F0, C1(k4)]: 2 data entries less the last = 1
		{0, 1, 1, "inUse=3 queues=[2 1] held=[2 1] available=true blocked=false"},
	}
	for j, st := range steps {
		p.AddRecord(st.sub, fmt.Sprint("k", j), int64(j), float64(j))
		if p.Backlog(0) != st.wantBacklog0 {
			t.Errorf("record %d: Backlog(0) = %d, want %d", j, p.Backlog(0), st.wantBacklog0)
		}
		if p.BuffersOut != st.wantBuffers {
			t.Errorf("record %d: BuffersOut = %d, want %d", j, p.BuffersOut, st.wantBuffers)
		}
		wantState(t, fmt.Sprint("record ", j), p, st.want)
	}
	if p.RecordsOut != 5 {
		t.Errorf("RecordsOut = %d, want 5", p.RecordsOut)
	}
	// counted when the builder finished, before anything was sent: 3 * 100
	if p.BytesOut != 300 {
		t.Errorf("BytesOut before any send = %d, want 300", p.BytesOut)
	}
	p.OnPartitionRequest(0, recv(0), 5)
	got := p.Poll(nil)
	// F0 goes; left behind [C1] being written: backlog max(1-1, 0) = 0
	wantSends(t, "poll", got, "R0 seq=0 backlog=0 [k0@0 k1@1 k2@2]")
	b := got[0].Response.Buffer
	if b.IsEvent || b.SizeBytes != 300 { // 3 records * 100 bytes
		t.Errorf("buffer IsEvent %v SizeBytes %d, want false 300", b.IsEvent, b.SizeBytes)
	}
	if fmt.Sprint(b.Values) != "[0 1 2]" || len(b.Keys) != 3 || len(b.Timestamps) != 3 {
		t.Errorf("buffer values %v keys %v timestamps %v", b.Values, b.Keys, b.Timestamps)
	}
	// F0's segment went back to the pool with its send: 3 - 1 = 2 in use
	wantState(t, "after sending", p, "inUse=2 queues=[1 1] held=[1 1] available=true blocked=false")
	// the send counts nothing: BuffersOut 1, BytesOut 300
	if p.Credit(0) != 4 || p.BuffersOut != 1 || p.BytesOut != 300 {
		t.Errorf("credit %d BuffersOut %d BytesOut %d, want 4 (5-1) 1 300", p.Credit(0), p.BuffersOut, p.BytesOut)
	}
}

// Watermarks and statuses are elements of the data buffers (the simulator's
// records-instead-of-bytes rule): they take room in a buffer but do not
// count towards its records; a lone watermark takes a pool buffer. Their
// sizes are what StreamElementSerializer writes behind the 4-byte length: a
// Watermark 1 + 8 (13), a WatermarkStatus 1 + 4 (9).
func TestWatermarksAreElementsOfDataBuffers(t *testing.T) {
	p := NewResultPartition(2, 4, 2, 10)
	p.OnPartitionRequest(0, recv(0), 5)
	p.OnPartitionRequest(1, recv(1), 5)
	fill(p, 0, 0, 1)
	p.Broadcast(KindWatermark, 5) // into sub 0's open buffer, and a new buffer of sub 1
	wantState(t, "broadcast", p, "inUse=2 queues=[1 1] held=[1 1] available=true blocked=false")
	fill(p, 0, 1, 1) // the second record fills sub 0's buffer: [k0 W5 k1]
	// finished: 10 + 13 + 10
	if p.BuffersOut != 1 || p.BytesOut != 33 {
		t.Errorf("after the full buffer: BuffersOut %d BytesOut %d, want 1 33", p.BuffersOut, p.BytesOut)
	}
	p.Broadcast(KindStatusIdle, 0)
	p.Broadcast(KindStatusActive, 0)
	p.FlushAll()
	got := p.Poll(nil)
	// after the full buffer, flushRequested (set with 2 queued) makes the
	// one being written readable and backlog: 1; after the slice of it,
	// [C] being written, no flush: 1-1 = 0
	wantSends(t, "flush", got,
		"R0 seq=0 backlog=1 [k0@0 W5 k1@1]",
		"R0 seq=1 backlog=0 [IDLE ACTIVE]",
		"R1 seq=0 backlog=0 [W5 IDLE ACTIVE]")
	for k, want := range []int32{33, 18, 31} { // 10+13+10; 9+9; 13+9+9
		if s := got[k].Response.Buffer.SizeBytes; s != want {
			t.Errorf("SizeBytes of %s = %d, want %d", bufString(got[k].Response.Buffer), s, want)
		}
	}
	// sub 0's full buffer went back; the two others hold their segments;
	// slices finish nothing
	wantState(t, "after", p, "inUse=2 queues=[1 1] held=[1 1] available=true blocked=false")
	if p.BuffersOut != 1 || p.BytesOut != 33 {
		t.Errorf("after the slices: BuffersOut %d BytesOut %d, want 1 33", p.BuffersOut, p.BytesOut)
	}
	// EndOfPartition finishes both builders, whole: 18 and 31 more bytes
	// (BufferBuilder.finish returns all it holds, the parts sent included);
	// read to their ends, they leave the queues at once
	p.EndOfPartition()
	if p.BuffersOut != 3 || p.BytesOut != 82 {
		t.Errorf("after the end: BuffersOut %d BytesOut %d, want 3 82", p.BuffersOut, p.BytesOut)
	}
	wantSends(t, "end", p.Poll(nil), "R0 seq=2 backlog=0 [EOP]", "R1 seq=1 backlog=0 [EOP]")
	wantState(t, "ended", p, "inUse=0 queues=[0 0] held=[0 0] available=true blocked=false")
}

// LocalBufferPool availability: a free buffer and no subpartition at
// max-buffers-per-channel (shouldBeAvailable). A subpartition at its quota
// makes the whole pool unavailable though buffers are left. The quota gates
// availability only: a record or a broadcast already under way still gets a
// free pool buffer for a subpartition at or past its quota
// (requestMemorySegment(targetChannel) counts the subpartition's buffers
// but does not refuse one), and the pool stays unavailable while any
// subpartition holds max or more (recycle decrements the unavailable count
// only when a subpartition drops from max to max-1).
func TestAvailableWithMaxBuffersPerChannel(t *testing.T) {
	p := NewResultPartition(2, 6, 1, 1) // 1 record a buffer, pool 6, no overdraft
	p.Pool().SetMaxBuffersPerChannel(2)
	steps := []struct {
		name string
		do   func()
		want string
	}{
		{"start", func() {}, "inUse=0 queues=[0 0] held=[0 0] available=true blocked=false"},
		{"one buffer in 0", func() { fill(p, 0, 0, 1) }, "inUse=1 queues=[1 0] held=[1 0] available=true blocked=false"},
		// sub 0 holds 2 = max-buffers-per-channel: unavailable with 4 of 6 free
		{"sub 0 at its quota", func() { fill(p, 0, 1, 1) }, "inUse=2 queues=[2 0] held=[2 0] available=false blocked=false"},
		// another subpartition gets a buffer (the pool has 4)
		{"sub 1 writes", func() { fill(p, 1, 2, 1) }, "inUse=3 queues=[2 1] held=[2 1] available=false blocked=false"},
		// a record under way for sub 0 gets a free pool buffer past the quota
		{"sub 0 past its quota gets a buffer", func() { fill(p, 0, 3, 1) }, "inUse=4 queues=[3 1] held=[3 1] available=false blocked=false"},
		// a broadcast under way: a new buffer for each subpartition (the
		// records finished theirs); sub 1 reaches its quota too; the pool is
		// used up (6 of 6)
		{"a broadcast past the quota", func() { p.Broadcast(KindWatermark, 7) }, "inUse=6 queues=[4 2] held=[4 2] available=false blocked=false"},
		// k4 goes into sub 0's open buffer behind W7 and fills it: no buffer taken
		{"k4 joins W7", func() { fill(p, 0, 4, 1) }, "inUse=6 queues=[4 2] held=[4 2] available=false blocked=false"},
		// k5 needs a new buffer: none in the pool, no overdraft: it waits
		{"the pool used up: k5 waits", func() { fill(p, 0, 5, 1) }, "inUse=6 queues=[4 2] held=[4 2] available=false blocked=true"},
		// 3 credits send k0 k1 k3 (sub 0's queue [k0 k1 k3 (W7 k4)]: the
		// backlog behind each leaves out the last data buffer: 2, 1, 0);
		// 3 in use, k5 takes a buffer: 4; sub 0 holds 2, still at its quota
		{"three of sub 0 sent", func() {
			p.OnPartitionRequest(0, recv(0), 3)
			wantSends(t, "sub 0", p.Poll(nil), "R0 seq=0 backlog=2 [k0@0]", "R0 seq=1 backlog=1 [k1@1]", "R0 seq=2 backlog=0 [k3@3]")
		}, "inUse=4 queues=[2 2] held=[2 2] available=false blocked=false"},
		// sub 1 drops below its quota, sub 0 is still at it: unavailable
		{"sub 1 below its quota", func() {
			p.OnPartitionRequest(1, recv(1), 1)
			wantSends(t, "sub 1", p.Poll(nil), "R1 seq=0 backlog=0 [k2@2]")
		}, "inUse=3 queues=[2 1] held=[2 1] available=false blocked=false"},
		// both below their quota and buffers free: available
		{"sub 0 below its quota", func() {
			p.OnAddCredit(0, 1)
			wantSends(t, "sub 0 again", p.Poll(nil), "R0 seq=3 backlog=0 [W7 k4@4]")
		}, "inUse=2 queues=[1 1] held=[1 1] available=true blocked=false"},
	}
	for _, st := range steps {
		st.do()
		wantState(t, st.name, p, st.want)
	}
}

// Overdraft buffers (FLIP-227): a write that finds the pool used up takes
// one of max-overdraft-buffers-per-gate beyond the pool; the pool stays
// unavailable while any is used; with the overdraft used up the write
// waits. OutPoolUsage counts the overdraft buffers
// (bestEffortGetNumOfUsedBuffers = requested + overdraft - available): in
// use / pool size, above 1 while overdraft buffers are used.
func TestOverdraftBuffers(t *testing.T) {
	p := NewResultPartition(2, 2, 1, 10) // pool 2, 1 record a buffer
	p.Pool().SetMaxOverdraftBuffers(2)
	steps := []struct {
		name  string
		do    func()
		want  string
		usage float64
	}{
		{"1 of 2", func() { fill(p, 0, 0, 1) }, "inUse=1 queues=[1 0] held=[1 0] available=true blocked=false", 0.5},
		{"2 of 2", func() { fill(p, 1, 1, 1) }, "inUse=2 queues=[1 1] held=[1 1] available=false blocked=false", 1},
		// overdraft: 3 of 2+2: usage 3/2
		{"first overdraft", func() { fill(p, 0, 2, 1) }, "inUse=3 queues=[2 1] held=[2 1] available=false blocked=false", 1.5},
		{"second overdraft", func() { fill(p, 1, 3, 1) }, "inUse=4 queues=[2 2] held=[2 2] available=false blocked=false", 2},
		{"overdraft used up: the record waits", func() { fill(p, 0, 4, 1) }, "inUse=4 queues=[2 2] held=[2 2] available=false blocked=true", 2},
		{"the watermark waits behind it", func() { p.Broadcast(KindWatermark, 7) }, "inUse=4 queues=[2 2] held=[2 2] available=false blocked=true", 2},
		// k0 sent (left [k2], the last data buffer: backlog 0): 3 in use, k4
		// takes an overdraft buffer again (4), then sub 0's W7 needs a new
		// buffer (k4 filled its own): none, it waits
		{"k0 sent", func() {
			p.OnPartitionRequest(0, recv(0), 1)
			wantSends(t, "sub 0", p.Poll(nil), "R0 seq=0 backlog=0 [k0@0]")
		}, "inUse=4 queues=[2 2] held=[2 2] available=false blocked=true", 2},
		// k1 and k3 sent (2 in use), then both watermarks are written into
		// new buffers of their own (4)
		{"sub 1 drains", func() {
			p.OnPartitionRequest(1, recv(1), 2)
			wantSends(t, "sub 1", p.Poll(nil), "R1 seq=0 backlog=0 [k1@1]", "R1 seq=1 backlog=0 [k3@3]")
		}, "inUse=4 queues=[3 1] held=[3 1] available=false blocked=false", 2},
		// k2 and k4 sent: sub 0 [W7], sub 1 [W7] being written: 2 of 2, no
		// overdraft: usage 1, still unavailable (no free buffer)
		{"sub 0 drains", func() {
			p.OnAddCredit(0, 2)
			wantSends(t, "sub 0 again", p.Poll(nil), "R0 seq=1 backlog=1 [k2@2]", "R0 seq=2 backlog=0 [k4@4]")
		}, "inUse=2 queues=[1 1] held=[1 1] available=false blocked=false", 1},
	}
	for _, st := range steps {
		st.do()
		wantState(t, st.name, p, st.want)
		if u := p.Pool().OutPoolUsage(); u != st.usage {
			t.Errorf("%s: OutPoolUsage = %v, want %v", st.name, u, st.usage)
		}
	}
}

// A flush (PipelinedSubpartition.flush) makes the data written so far
// readable; it adds no buffer, the reader gets the data written up to the
// moment it polls, and the producer keeps filling the same segment, which
// goes back to the pool when its last part is sent.
func TestFlushMakesDataReadable(t *testing.T) {
	p := NewResultPartition(1, 4, 4, 10) // 4 records a buffer, 10 bytes each
	p.OnPartitionRequest(0, recv(0), 10)
	fill(p, 0, 0, 2)
	wantSends(t, "no flush", p.Poll(nil))
	if p.Backlog(0) != 0 {
		t.Errorf("Backlog before the flush = %d, want 0 (the buffer is being written)", p.Backlog(0))
	}
	p.FlushAll()
	// flushRequested: the buffer being written counts: backlog 1
	if p.Backlog(0) != 1 {
		t.Errorf("Backlog after the flush = %d, want 1", p.Backlog(0))
	}
	wantState(t, "a flush adds no buffer", p, "inUse=1 queues=[1] held=[1] available=true blocked=false")
	got := p.Poll(nil)
	wantSends(t, "flush", got, "R0 seq=0 backlog=0 [k0@0 k1@1]")
	if s := got[0].Response.Buffer.SizeBytes; s != 20 {
		t.Errorf("SizeBytes of the slice = %d, want 20", s)
	}
	if p.BuffersOut != 0 || p.BytesOut != 0 { // a flush finishes no builder
		t.Errorf("after the slice: BuffersOut %d BytesOut %d, want 0 0", p.BuffersOut, p.BytesOut)
	}
	wantState(t, "the segment keeps filling", p, "inUse=1 queues=[1] held=[1] available=true blocked=false")
	p.FlushAll() // nothing written since: no flushRequested, nothing to send
	wantSends(t, "empty flush", p.Poll(nil))
	fill(p, 0, 2, 1)
	wantSends(t, "written after the flush was served", p.Poll(nil))
	fill(p, 0, 3, 1) // full: finished, its unread part goes
	// counted whole when it finished, the part sent before included: 40
	if p.BuffersOut != 1 || p.BytesOut != 40 {
		t.Errorf("after the first full buffer: BuffersOut %d BytesOut %d, want 1 40", p.BuffersOut, p.BytesOut)
	}
	wantSends(t, "full", p.Poll(nil), "R0 seq=1 backlog=0 [k2@2 k3@3]")
	wantState(t, "last part sent", p, "inUse=0 queues=[0] held=[0] available=true blocked=false")

	// A flush does not cut the buffer: what is written before the poll goes
	// with it, and a buffer filled before the poll goes whole.
	fill(p, 0, 4, 3)
	p.FlushAll()
	fill(p, 0, 7, 1)
	got = p.Poll(nil)
	wantSends(t, "flushed then filled", got, "R0 seq=2 backlog=0 [k4@4 k5@5 k6@6 k7@7]")
	if s := got[0].Response.Buffer.SizeBytes; s != 40 {
		t.Errorf("SizeBytes of the whole buffer = %d, want 40", s)
	}
	fill(p, 0, 8, 1)
	p.FlushAll()
	fill(p, 0, 9, 1)
	wantSends(t, "written after the flush, before the poll", p.Poll(nil), "R0 seq=3 backlog=0 [k8@8 k9@9]")
	// flushRequested was cleared by the read: k10 waits for the next flush
	fill(p, 0, 10, 1)
	wantSends(t, "no new flush", p.Poll(nil))
	p.FlushAll()
	wantSends(t, "new flush", p.Poll(nil), "R0 seq=4 backlog=0 [k10@10]")
	// two builders finished ([k0..k3], [k4..k7]); the slices sent of the one
	// being written count nothing yet
	if p.BuffersOut != 2 || p.BytesOut != 80 {
		t.Errorf("BuffersOut %d BytesOut %d, want 2 80", p.BuffersOut, p.BytesOut)
	}
	wantState(t, "end", p, "inUse=1 queues=[1] held=[1] available=true blocked=false")
	// the end finishes [k8 k9 k10], whole: 30 bytes more
	p.EndOfPartition()
	if p.BuffersOut != 3 || p.BytesOut != 110 { // 11 records * 10 bytes
		t.Errorf("after the end: BuffersOut %d BytesOut %d, want 3 110", p.BuffersOut, p.BytesOut)
	}
	wantSends(t, "end of partition", p.Poll(nil), "R0 seq=5 backlog=0 [EOP]")
}

// With several buffers queued a flush makes the last one readable too
// (flushRequested = buffers.size() > 1 || data in the unfinished one).
func TestFlushWithSeveralBuffers(t *testing.T) {
	p := NewResultPartition(1, 4, 2, 1)
	fill(p, 0, 0, 3) // [F(k0 k1), C(k2)]
	if p.Backlog(0) != 1 {
		t.Fatalf("Backlog = %d, want 1 (2 less the one being written)", p.Backlog(0))
	}
	p.FlushAll()
	if p.Backlog(0) != 2 {
		t.Fatalf("Backlog after flush = %d, want 2", p.Backlog(0))
	}
	p.OnPartitionRequest(0, recv(0), 1)
	// one credit: F goes; flushRequested stays (the queue had 2), so C is
	// readable and counts: backlog 1
	wantSends(t, "one credit", p.Poll(nil), "R0 seq=0 backlog=1 [k0@0 k1@1]")
	p.OnAddCredit(0, 1)
	wantSends(t, "second credit", p.Poll(nil), "R0 seq=1 backlog=0 [k2@2]")
}

// Backlog (getBuffersInBacklogUnsafe) in each queue shape.
func TestBacklog(t *testing.T) {
	tests := []struct {
		name        string
		setup       func(p *ResultPartition)
		wantBacklog int
		wantQueue   int
	}{
		{"empty", func(p *ResultPartition) {}, 0, 0},
		// [C]: max(1-1, 0) = 0
		{"one record being written", func(p *ResultPartition) { fill(p, 0, 0, 1) }, 0, 1},
		// flushRequested: 1
		{"flushed", func(p *ResultPartition) { fill(p, 0, 0, 1); p.FlushAll() }, 1, 1},
		// [F]: the last entry is a data buffer, finished or not: 1-1 = 0
		// (getBuffersInBacklogUnsafe tests only isBuffer() of the last entry)
		{"a full buffer", func(p *ResultPartition) { fill(p, 0, 0, 2) }, 0, 1},
		// [F] flushed (flushRequested: the buffer has unread data): 1
		{"a full buffer, flushed", func(p *ResultPartition) { fill(p, 0, 0, 2); p.FlushAll() }, 1, 1},
		// [F F]: 2-1 = 1
		{"two full buffers", func(p *ResultPartition) { fill(p, 0, 0, 4) }, 1, 2},
		// [F C]: 2-1 = 1
		{"full and one being written", func(p *ResultPartition) { fill(p, 0, 0, 3) }, 1, 2},
		// [F C] flushed: 2
		{"full and one being written, flushed", func(p *ResultPartition) { fill(p, 0, 0, 3); p.FlushAll() }, 2, 2},
		// [F EOD]: the last entry is an event: 1
		{"end of data behind a full buffer", func(p *ResultPartition) { fill(p, 0, 0, 2); p.EndOfData() }, 1, 2},
		// [UB1 F F]: the barrier finished C; 2 data, the last a data buffer: 1
		{"unaligned barrier ahead of data", func(p *ResultPartition) {
			fill(p, 0, 0, 3)
			p.Barrier(&messages.Buffer{CheckpointId: 1, Unaligned: true})
		}, 1, 3},
		// [F F EOP]: finished, the last entry is an event: 2
		{"end of partition", func(p *ResultPartition) { fill(p, 0, 0, 3); p.EndOfPartition() }, 2, 3},
		// [F F B]: the barrier finished C; the last is an event: 2
		{"aligned barrier behind data", func(p *ResultPartition) { fill(p, 0, 0, 3); p.Barrier(&messages.Buffer{CheckpointId: 1}) }, 2, 3},
		// [F F B C]: 3-1 = 2
		{"written after the barrier", func(p *ResultPartition) {
			fill(p, 0, 0, 3)
			p.Barrier(&messages.Buffer{CheckpointId: 1})
			fill(p, 0, 3, 1)
		}, 2, 4},
		// [EOD]: no data: 0
		{"an event alone", func(p *ResultPartition) { p.EndOfData() }, 0, 1},
		// sent k0 and B1 (blocking), left [C(k1)] flushed: blocked, 0
		{"blocked by an aligned barrier", func(p *ResultPartition) {
			p.OnPartitionRequest(0, recv(0), 5)
			fill(p, 0, 0, 1)
			p.Barrier(&messages.Buffer{CheckpointId: 1})
			fill(p, 0, 1, 1)
			p.FlushAll()
			p.Poll(nil)
		}, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewResultPartition(1, 10, 2, 1)
			tt.setup(p)
			if got := p.Backlog(0); got != tt.wantBacklog {
				t.Errorf("Backlog = %d, want %d", got, tt.wantBacklog)
			}
			if got := p.QueueLengths()[0]; got != tt.wantQueue {
				t.Errorf("QueueLengths()[0] = %d, want %d", got, tt.wantQueue)
			}
		})
	}
}

// QueueLengths counts every queued BufferConsumer (Flink's
// outputQueueLength): finished and unfinished data buffers and events.
func TestQueueLengthsCountEveryBufferConsumer(t *testing.T) {
	p := NewResultPartition(3, 10, 2, 1)
	fill(p, 0, 0, 5)  // [F F C]
	fill(p, 1, 10, 1) // [C]
	if got := fmt.Sprint(p.QueueLengths()); got != "[3 1 0]" {
		t.Errorf("QueueLengths = %s, want [3 1 0]", got)
	}
	p.Barrier(&messages.Buffer{CheckpointId: 1}) // [F F F B] [F B] [B]
	if got := fmt.Sprint(p.QueueLengths()); got != "[4 2 1]" {
		t.Errorf("after the barrier QueueLengths = %s, want [4 2 1]", got)
	}
	p.EndOfData() // one more event each
	if got := fmt.Sprint(p.QueueLengths()); got != "[5 3 2]" {
		t.Errorf("after EndOfData QueueLengths = %s, want [5 3 2]", got)
	}
	for i := range 3 {
		p.OnPartitionRequest(i, recv(i), 0)
	}
	// sub 0: data at the head, no credit, backlog 3 (the last is an event):
	// announced; sub 1 the same with 1; sub 2 sends its barrier (no credit
	// needed), which blocks it, so its EndOfData stays
	wantSends(t, "credit 0", p.Poll(nil), "A0 backlog=3", "A1 backlog=1", "R2 seq=0 backlog=0 [B1]")
	if got := fmt.Sprint(p.QueueLengths()); got != "[5 3 1]" {
		t.Errorf("after the poll QueueLengths = %s, want [5 3 1]", got)
	}
	if p.Pool().BuffersInUse() != 4 { // 3 + 1 segments; events take none
		t.Errorf("BuffersInUse = %d, want 4", p.Pool().BuffersInUse())
	}
}

// An event needs no credit; a data buffer does, and an event behind it
// waits (PartitionRequestQueue / getAvailabilityAndBacklog(false): only an
// event at the head is available without credit).
func TestEventsNeedNoCredit(t *testing.T) {
	p := NewResultPartition(2, 4, 1, 1)
	p.OnPartitionRequest(0, recv(0), 0)
	p.OnPartitionRequest(1, recv(1), 0)
	fill(p, 1, 0, 1)
	p.EndOfPartition()
	// sub 0 has only the event; in 1 the event waits behind a data buffer
	// without credit, whose backlog (1) is announced
	wantSends(t, "no credit", p.Poll(nil), "R0 seq=0 backlog=0 [EOP]", "A1 backlog=1")
	if p.AllEndsSent() || p.Credit(0) != 0 {
		t.Fatalf("AllEndsSent %v Credit(0) %d, want false 0", p.AllEndsSent(), p.Credit(0))
	}
	p.OnAddCredit(1, 1)
	wantSends(t, "credit 1", p.Poll(nil), "R1 seq=0 backlog=0 [k0@0]", "R1 seq=1 backlog=0 [EOP]")
	if !p.AllEndsSent() || p.Credit(1) != 0 || p.Pool().BuffersInUse() != 0 {
		t.Errorf("AllEndsSent %v Credit(1) %d BuffersInUse %d, want true 0 0", p.AllEndsSent(), p.Credit(1), p.Pool().BuffersInUse())
	}
	if p.BuffersOut != 1 || p.BytesOut != 1 {
		t.Errorf("BuffersOut %d BytesOut %d, want 1 1 (events are not counted)", p.BuffersOut, p.BytesOut)
	}
	wantSends(t, "after the end", p.Poll(nil))
}

func TestOnAddCredit(t *testing.T) {
	p := NewResultPartition(1, 4, 1, 1)
	p.OnPartitionRequest(0, recv(0), 1)
	if p.OnAddCredit(0, 0) || p.OnAddCredit(0, -2) {
		t.Errorf("OnAddCredit accepted a non-positive credit")
	}
	if !p.OnAddCredit(0, 2) || !p.OnAddCredit(0, 3) || p.Credit(0) != 6 { // 1 + 2 + 3
		t.Errorf("Credit = %d, want 6", p.Credit(0))
	}
	fill(p, 0, 0, 2)
	p.Poll(nil)
	if p.Credit(0) != 4 { // 6 - 2 data buffers
		t.Errorf("Credit after 2 buffers = %d, want 4", p.Credit(0))
	}
}

// BacklogAnnouncement (needAnnounceBacklog: initialCredit == 0 &&
// numCreditsAvailable == 0): once while data waits without credit, again
// after new credit; not in the Poll that sent a BufferResponse to the
// subpartition (it carried the backlog), but in the next one that finds the
// backlog waiting with no announcement since the credit came (the
// contract's rule).
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
		// [F F]: 2 less the last data buffer: 1
		{"data waits without credit: announce", func() { add(2) }, []string{"A0 backlog=1"}},
		{"still waiting: no second announcement", func() {}, nil},
		{"more data, still no credit: no second announcement", func() { add(1) }, nil},
		{"zero credit is refused and announces nothing", func() {
			if p.OnAddCredit(0, 0) || p.OnAddCredit(0, -1) {
				t.Errorf("OnAddCredit accepted a non-positive credit")
			}
		}, nil},
		// [F F F]: k0 goes with the one credit, leaving [F F]: backlog 1 in
		// the response, which used the last credit: no announcement with it
		{"one credit: one buffer, no announcement after it", func() { p.OnAddCredit(0, 1) },
			[]string{"R0 seq=0 backlog=1 [k0@0]"}},
		// nothing sent now, credit 0, no announcement since the credit came
		{"the next poll announces", func() {}, []string{"A0 backlog=1"}},
		{"and only once", func() {}, nil},
		// after k1, [F(k2)]: 0; after k2, empty: 0
		{"enough credit drains the backlog without announcing", func() { p.OnAddCredit(0, 4) },
			[]string{"R0 seq=1 backlog=0 [k1@1]", "R0 seq=2 backlog=0 [k2@2]"}},
		{"credit left: new data goes at once", func() { add(2) },
			[]string{"R0 seq=3 backlog=0 [k3@3]", "R0 seq=4 backlog=0 [k4@4]"}},
		{"credit ran out with nothing waiting: no announcement", func() {}, nil},
		// [F]: the last data buffer is not backlog: 0, nothing to announce
		{"a lone finished buffer is no backlog", func() { add(1) }, nil},
		// [F F]: 1
		{"a second one makes the first backlog: announce", func() { add(1) }, []string{"A0 backlog=1"}},
		// flushed: 2, but announced already and no credit since
		{"a flush grows the backlog: no second announcement", func() { p.FlushAll() }, nil},
	}
	for _, st := range steps {
		st.do()
		wantSends(t, st.name, p.Poll(nil), st.want...)
	}
	if p.Backlog(0) != 2 {
		t.Errorf("Backlog at the end = %d, want 2 (flushed)", p.Backlog(0))
	}
}

// No BacklogAnnouncement in the Poll right after a BufferResponse to that
// subpartition: the response carried the backlog. That holds for an event's
// BufferResponse too: Flink 1.20's RemoteInputChannel.onBuffer calls
// onSenderBacklog(backlog) for every buffer it receives, events included,
// and PartitionRequestQueue announces only from enqueueAvailableReader, for
// a reader found unavailable when data or credit comes, never right after
// it wrote a BufferResponse (writeAndFlushNextMessageIfPossible re-registers
// the reader only when next.moreAvailable(), which is false for a data
// buffer without credit). In the next Poll the contract's old rule applies:
// announce once, no announcement having gone out since the credit came.
func TestNoAnnouncementRightAfterAResponse(t *testing.T) {
	tests := []struct {
		name  string
		setup func(p *ResultPartition)
		first string // the response of the first Poll
	}{
		// [F0 F1 F2]: k0 goes with the one credit; [F1 F2] left: 1
		{"a data buffer that used the last credit", func(p *ResultPartition) {
			fill(p, 0, 0, 3)
			p.OnPartitionRequest(0, recv(0), 0)
			p.OnAddCredit(0, 1)
		}, "R0 seq=0 backlog=1 [k0@0]"},
		// [UB1 F0 F1 F2] with no credit: UB1 goes; [F0 F1 F2] left: 2
		{"an unaligned barrier", func(p *ResultPartition) {
			fill(p, 0, 0, 3)
			p.Barrier(&messages.Buffer{CheckpointId: 1, Unaligned: true})
			p.OnPartitionRequest(0, recv(0), 0)
		}, "R0 seq=0 backlog=2 [UB1]"},
		// [F0 F1 B1 F2] timed out: [UB1 F0 F1 F2]; UB1 goes; 2
		{"a timed-out barrier", func(p *ResultPartition) {
			fill(p, 0, 0, 2)
			p.Barrier(&messages.Buffer{CheckpointId: 1})
			fill(p, 0, 2, 1)
			p.TimeoutBarrier(1)
			p.OnPartitionRequest(0, recv(0), 0)
		}, "R0 seq=0 backlog=2 [UB1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewResultPartition(1, 10, 1, 1)
			tt.setup(p)
			got := p.Poll(nil)
			wantSends(t, "the response carries the backlog", got, tt.first)
			// the next Poll sends nothing and finds the backlog waiting
			// without credit, not announced since the credit came
			backlog := got[0].Response.Backlog
			wantSends(t, "the next poll announces", p.Poll(nil), fmt.Sprintf("A0 backlog=%d", backlog))
			wantSends(t, "once", p.Poll(nil))
		})
	}
}

// The same data and credit announce the backlog when the PartitionRequest
// carried no credit, and never when it carried exclusive buffers. One record
// a buffer: each record finishes a buffer, and the last data buffer queued
// is not backlog unless flushed.
func TestAnnounceOnlyWithoutExclusiveBuffers(t *testing.T) {
	tests := []struct {
		initialCredit int
		want          [][]string // sends of each step
		wantBacklog   int        // backlog left at the end, with credit 0
	}{
		{initialCredit: 0, want: [][]string{
			{"A0 backlog=1"},              // [F0 F1]
			{"R0 seq=0 backlog=0 [k0@0]"}, // [F1] left: 0, nothing to announce
			nil,                           // still 0
			{"R0 seq=1 backlog=1 [k1@1]"}, // [F2 F3] left: 1, carried by the response
			{"R0 seq=2 backlog=1 [k2@2]", "R0 seq=3 backlog=0 [k3@3]"},
			{"A0 backlog=2"}, // [F4 F5 F6]: no response, no announcement since the credit
			nil,              // flushed: 3, announced already
		}, wantBacklog: 3},
		{initialCredit: 1, want: [][]string{
			{"R0 seq=0 backlog=0 [k0@0]"},
			{"R0 seq=1 backlog=0 [k1@1]"},
			nil,
			{"R0 seq=2 backlog=0 [k2@2]"},
			{"R0 seq=3 backlog=0 [k3@3]", "R0 seq=4 backlog=0 [k4@4]"},
			nil, // [F5 F6]: backlog 1, no credit, but exclusive buffers: no announcement
			nil, // flushed: 2, still none
		}, wantBacklog: 2},
		{initialCredit: 2, want: [][]string{
			{"R0 seq=0 backlog=0 [k0@0]", "R0 seq=1 backlog=0 [k1@1]"},
			nil,
			nil,
			{"R0 seq=2 backlog=0 [k2@2]", "R0 seq=3 backlog=0 [k3@3]"},
			{"R0 seq=4 backlog=0 [k4@4]"},
			{"R0 seq=5 backlog=0 [k5@5]"},
			nil, // [F6] flushed: 1
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
				{"flush", func() { p.FlushAll() }},
			}
			for j, st := range steps {
				st.do()
				wantSends(t, st.name, p.Poll(nil), tt.want[j]...)
			}
			if p.Backlog(0) != tt.wantBacklog || p.Credit(0) != 0 {
				t.Errorf("at the end: Backlog %d Credit %d, want %d 0", p.Backlog(0), p.Credit(0), tt.wantBacklog)
			}
		})
	}
}

// A new PartitionRequest replaces the initial credit (and resets the
// announcement); the sequence numbers are the subpartition's and go on.
func TestAnnouncementAfterNewPartitionRequest(t *testing.T) {
	p := NewResultPartition(1, 10, 1, 1)
	p.OnPartitionRequest(0, recv(0), 1)
	fill(p, 0, 0, 4)
	// [F0 F1 F2 F3]: k0 leaves 3, less the last data buffer: 2
	wantSends(t, "initial credit 1", p.Poll(nil), "R0 seq=0 backlog=2 [k0@0]")
	p.OnPartitionRequest(0, recv(0), 0)
	wantSends(t, "new request with 0", p.Poll(nil), "A0 backlog=2")
	p.OnPartitionRequest(0, recv(0), 0)
	wantSends(t, "again with 0: announced anew", p.Poll(nil), "A0 backlog=2")
	p.OnPartitionRequest(0, recv(0), 1)
	wantSends(t, "new request with 1", p.Poll(nil), "R0 seq=1 backlog=1 [k1@1]")
	wantSends(t, "credit used up, exclusive buffers: no announcement", p.Poll(nil))
}

func TestSequenceNumbersPerSubpartition(t *testing.T) {
	p := NewResultPartition(2, 10, 1, 1)
	p.OnPartitionRequest(0, recv(0), 10)
	p.OnPartitionRequest(1, recv(1), 10)
	fill(p, 0, 0, 2)
	fill(p, 1, 10, 1)
	// after k0, [F1]: the last data buffer, 0
	wantSends(t, "first", p.Poll(nil),
		"R0 seq=0 backlog=0 [k0@0]", "R0 seq=1 backlog=0 [k1@1]", "R1 seq=0 backlog=0 [k10@10]")
	fill(p, 1, 11, 1)
	p.EndOfPartition()
	wantSends(t, "second", p.Poll(nil),
		"R0 seq=2 backlog=0 [EOP]", "R1 seq=1 backlog=0 [k11@11]", "R1 seq=2 backlog=0 [EOP]")
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

// Nothing goes to a subpartition before its PartitionRequest; then what
// was queued goes in order.
func TestPollNeedsPartitionRequest(t *testing.T) {
	p := NewResultPartition(1, 4, 1, 1)
	fill(p, 0, 0, 2)
	p.EndOfPartition()
	wantSends(t, "before the request", p.Poll(nil))
	p.OnPartitionRequest(0, recv(0), 2)
	wantSends(t, "after the request", p.Poll(nil),
		"R0 seq=0 backlog=1 [k0@0]", "R0 seq=1 backlog=0 [k1@1]", "R0 seq=2 backlog=0 [EOP]")
	if !p.AllEndsSent() {
		t.Errorf("AllEndsSent() = false after the EndOfPartition event went out")
	}
}

// An aligned barrier goes behind everything written (the partly filled
// buffer is finished first), needs no credit at the head, and does not end
// the subpartition.
func TestAlignedBarrierKeepsOrder(t *testing.T) {
	p := NewResultPartition(2, 8, 2, 1)
	p.OnPartitionRequest(0, recv(0), 1)
	p.OnPartitionRequest(1, recv(1), 0)
	fill(p, 0, 0, 3) // [F(k0 k1) C(k2)]
	if got := p.Barrier(&messages.Buffer{CheckpointId: 7}); len(got) != 0 {
		t.Fatalf("an aligned barrier persisted %d records", len(got))
	}
	if !p.BarrierQueued(7) {
		t.Fatal("BarrierQueued(7) = false with the barrier queued")
	}
	// sub 0: credit for F; left [F(k2) B7], the last an event: backlog 1;
	// sub 1 had nothing: its barrier goes at once, and blocks it (backlog 0)
	wantSends(t, "credit 1", p.Poll(nil), "R0 seq=0 backlog=1 [k0@0 k1@1]", "R1 seq=0 backlog=0 [B7]")
	if !p.BarrierQueued(7) {
		t.Fatal("BarrierQueued(7) = false while sub 0 still queues it")
	}
	p.OnAddCredit(0, 1)
	wantSends(t, "credit 2", p.Poll(nil), "R0 seq=1 backlog=0 [k2@2]", "R0 seq=2 backlog=0 [B7]")
	if p.AllEndsSent() || p.BarrierQueued(7) {
		t.Fatalf("AllEndsSent %v BarrierQueued %v, want false false", p.AllEndsSent(), p.BarrierQueued(7))
	}
}

// After an aligned barrier a subpartition sends nothing, events included,
// until ResumeConsumption (PipelinedSubpartition.isBlocked); its
// BufferResponse carries backlog 0 (getBuffersInBacklogUnsafe is 0 while
// blocked). A consumer without exclusive buffers restarts from 0 credit and
// gets the backlog announced (CreditBasedSequenceNumberingViewReader.
// resumeConsumption); one with exclusive buffers keeps its credit.
func TestAlignedBarrierBlocksUntilResume(t *testing.T) {
	t.Run("initial credit 0", func(t *testing.T) {
		p := NewResultPartition(1, 8, 1, 1)
		p.OnPartitionRequest(0, recv(0), 0)
		p.OnAddCredit(0, 2)
		fill(p, 0, 0, 1)
		p.Barrier(&messages.Buffer{CheckpointId: 4})
		fill(p, 0, 1, 1) // [F0 B4 F1]
		// k0 leaves [B4 F1]: 1 data, the last a data buffer: 0; B4 blocks: 0
		wantSends(t, "barrier", p.Poll(nil), "R0 seq=0 backlog=0 [k0@0]", "R0 seq=1 backlog=0 [B4]")
		p.EndOfPartition() // [F1 EOP]: the event waits too
		wantSends(t, "blocked", p.Poll(nil))
		if p.Credit(0) != 1 || p.Backlog(0) != 0 {
			t.Fatalf("blocked: credit %d backlog %d, want 1 0", p.Credit(0), p.Backlog(0))
		}
		p.OnResumeConsumption(0)
		if p.Credit(0) != 0 {
			t.Fatalf("credit %d after resume, want 0 for a consumer without exclusive buffers", p.Credit(0))
		}
		// [F1 EOP]: 1 data, last an event: 1
		wantSends(t, "resumed", p.Poll(nil), "A0 backlog=1")
		p.OnAddCredit(0, 1)
		wantSends(t, "credit", p.Poll(nil), "R0 seq=2 backlog=0 [k1@1]", "R0 seq=3 backlog=0 [EOP]")
	})
	t.Run("initial credit 2", func(t *testing.T) {
		p := NewResultPartition(1, 8, 1, 1)
		p.OnPartitionRequest(0, recv(0), 2)
		fill(p, 0, 0, 1)
		p.Barrier(&messages.Buffer{CheckpointId: 4})
		fill(p, 0, 1, 1)
		wantSends(t, "barrier", p.Poll(nil), "R0 seq=0 backlog=0 [k0@0]", "R0 seq=1 backlog=0 [B4]")
		wantSends(t, "blocked", p.Poll(nil))
		p.OnResumeConsumption(0)
		if p.Credit(0) != 1 {
			t.Fatalf("credit %d after resume, want 1 (kept)", p.Credit(0))
		}
		wantSends(t, "resumed", p.Poll(nil), "R0 seq=2 backlog=0 [k1@1]")
	})
}

// An unaligned barrier is a priority event: it goes to the head of the
// queue, overtaking the buffers there (finished first), and their unread
// records are its output channel state, the unread part of a partly read
// buffer included (processPriorityBuffer copies each BufferConsumer from its
// reader position). The overtaken buffers still go after it; it does not
// block.
func TestUnalignedBarrierOvertakes(t *testing.T) {
	p := NewResultPartition(3, 12, 4, 1)
	p.OnPartitionRequest(0, recv(0), 1)
	fill(p, 0, 0, 3)
	p.FlushAll()
	wantSends(t, "slice", p.Poll(nil), "R0 seq=0 backlog=0 [k0@0 k1@1 k2@2]")
	fill(p, 0, 3, 6) // k3 fills the read buffer, [k4..k7] a second, k8 a third: [F0(k3 unread) F1 C2]
	fill(p, 1, 10, 1)
	got := p.Barrier(&messages.Buffer{CheckpointId: 3, Unaligned: true})
	want := []InFlight{
		{0, "k3", 3, 3, nil}, {0, "k4", 4, 4, nil}, {0, "k5", 5, 5, nil}, {0, "k6", 6, 6, nil}, {0, "k7", 7, 7, nil}, {0, "k8", 8, 8, nil},
		{1, "k10", 10, 10, nil},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("persisted %v, want %v", got, want)
	}
	// [UB3 F0 F1 F2] [UB3 F] [UB3]; an unaligned barrier is not BarrierQueued
	wantState(t, "queued", p, "inUse=4 queues=[4 2 1] held=[3 1 0] available=true blocked=false")
	if p.BarrierQueued(3) {
		t.Error("BarrierQueued(3) = true for an unaligned barrier")
	}
	// builders finished: sub 0's first two by k3 and k7, its third and sub
	// 1's by the barrier (4 + 4 + 1 + 1 bytes)
	if p.BuffersOut != 4 || p.BytesOut != 10 {
		t.Errorf("BuffersOut %d BytesOut %d, want 4 10", p.BuffersOut, p.BytesOut)
	}
	p.OnPartitionRequest(1, recv(1), 0)
	p.OnPartitionRequest(2, recv(2), 0)
	// sub 0, no credit left: UB3 (no credit needed); [F0 F1 F2]: 3 less the
	// last data buffer: 2. sub 1: UB3, [F] left: 0, nothing to announce.
	// sub 2: UB3.
	wantSends(t, "barrier", p.Poll(nil),
		"R0 seq=1 backlog=2 [UB3]", "R1 seq=0 backlog=0 [UB3]", "R2 seq=0 backlog=0 [UB3]")
	p.OnAddCredit(0, 3)
	wantSends(t, "after", p.Poll(nil),
		"R0 seq=2 backlog=1 [k3@3]", "R0 seq=3 backlog=0 [k4@4 k5@5 k6@6 k7@7]", "R0 seq=4 backlog=0 [k8@8]")
	// not blocked: more data flows
	fill(p, 2, 20, 4)
	p.OnAddCredit(2, 1)
	wantSends(t, "not blocked", p.Poll(nil), "R2 seq=1 backlog=0 [k20@20 k21@21 k22@22 k23@23]")
}

// The sizes of the elements and events (StreamElementSerializer and
// EventSerializer): a record recordBytes, a Watermark 13, a WatermarkStatus
// 9, EndOfData 5, EndOfPartition 4, a CheckpointBarrier 38, aligned,
// unaligned or timed out.
func TestElementAndEventSizes(t *testing.T) {
	p := NewResultPartition(1, 4, 2, 7)
	p.OnPartitionRequest(0, recv(0), 10)
	p.Broadcast(KindWatermark, 1)
	p.Broadcast(KindStatusIdle, 0)
	p.Broadcast(KindStatusActive, 0)
	fill(p, 0, 0, 1)
	p.FlushAll()
	got := p.Poll(nil)
	fill(p, 0, 1, 1) // full: [W1 IDLE ACTIVE k0 k1]
	p.EndOfData()
	p.Barrier(&messages.Buffer{CheckpointId: 1})
	got = append(got, p.Poll(nil)...)
	p.OnResumeConsumption(0)
	p.Barrier(&messages.Buffer{CheckpointId: 2, Unaligned: true})
	p.Barrier(&messages.Buffer{CheckpointId: 3})
	p.TimeoutBarrier(3)
	p.EndOfPartition()
	got = append(got, p.Poll(nil)...)
	wantSends(t, "all", got,
		"R0 seq=0 backlog=0 [W1 IDLE ACTIVE k0@0]", "R0 seq=1 backlog=0 [k1@1]", "R0 seq=2 backlog=0 [EOD]", "R0 seq=3 backlog=0 [B1]",
		"R0 seq=4 backlog=0 [UB2]", "R0 seq=5 backlog=0 [UB3]", "R0 seq=6 backlog=0 [EOP]")
	for k, want := range []int32{13 + 9 + 9 + 7, 7, 5, 38, 38, 38, 4} {
		if b := got[k].Response.Buffer; b.SizeBytes != want {
			t.Errorf("%s: SizeBytes %d, want %d", bufString(b), b.SizeBytes, want)
		}
	}
	// one builder finished, whole: 13 + 9 + 9 + 7 + 7
	if p.BuffersOut != 1 || p.BytesOut != 45 {
		t.Errorf("BuffersOut %d BytesOut %d, want 1 45", p.BuffersOut, p.BytesOut)
	}
}

// numBuffersOut and numBytesOut count a data buffer when its BufferBuilder
// finishes, full or finished by an event, with everything it holds
// (BufferWritingResultPartition.finishUnicastBufferBuilder); flushes,
// sends and events count nothing (broadcastEvent does not touch them).
func TestBuffersOutCountedWhenBuilderFinishes(t *testing.T) {
	p := NewResultPartition(2, 10, 2, 10)
	p.OnPartitionRequest(0, recv(0), 10)
	p.OnPartitionRequest(1, recv(1), 10)
	steps := []struct {
		name           string
		do             func()
		buffers, bytes int64
	}{
		{"a record being written", func() { fill(p, 0, 0, 1) }, 0, 0},
		{"a flushed slice sent", func() { p.FlushAll(); p.Poll(nil) }, 0, 0},
		{"full: finished", func() { fill(p, 0, 1, 1) }, 1, 20},
		{"its rest sent", func() { p.Poll(nil) }, 1, 20},
		{"a watermark in new buffers", func() { p.Broadcast(KindWatermark, 5) }, 1, 20},
		// the barrier finishes both [W5]: 13 each
		{"an aligned barrier finishes them", func() { p.Barrier(&messages.Buffer{CheckpointId: 1}) }, 3, 46},
		{"sent with the barriers", func() { p.Poll(nil) }, 3, 46},
		{"a record after the resume", func() { p.OnResumeConsumption(0); p.OnResumeConsumption(1); fill(p, 1, 2, 1) }, 3, 46},
		{"an unaligned barrier finishes it", func() { p.Barrier(&messages.Buffer{CheckpointId: 2, Unaligned: true}) }, 4, 56},
		{"EndOfData with nothing being written", func() { p.EndOfData() }, 4, 56},
		{"two records fill a buffer", func() { fill(p, 0, 3, 2) }, 5, 76},
		{"EndOfPartition with nothing being written", func() { p.EndOfPartition() }, 5, 76},
		{"everything sent", func() { p.Poll(nil) }, 5, 76},
	}
	for _, st := range steps {
		st.do()
		if p.BuffersOut != st.buffers || p.BytesOut != st.bytes {
			t.Errorf("%s: BuffersOut %d BytesOut %d, want %d %d", st.name, p.BuffersOut, p.BytesOut, st.buffers, st.bytes)
		}
	}
	if !p.AllEndsSent() || p.Pool().BuffersInUse() != 0 {
		t.Errorf("AllEndsSent %v BuffersInUse %d, want true 0", p.AllEndsSent(), p.Pool().BuffersInUse())
	}
}

// An ended subpartition takes no barrier; a barrier's fields are copied.
func TestBarrierSkipsEndedSubpartitions(t *testing.T) {
	p := NewResultPartition(1, 4, 1, 1)
	p.EndOfPartition()
	if got := p.Barrier(&messages.Buffer{CheckpointId: 2, Unaligned: true}); len(got) != 0 {
		t.Errorf("persisted %v from an ended subpartition", got)
	}
	p.Barrier(&messages.Buffer{CheckpointId: 3})
	if fmt.Sprint(p.QueueLengths()) != "[1]" || p.BarrierQueued(3) {
		t.Errorf("queues %v BarrierQueued %v: an ended subpartition took a barrier", p.QueueLengths(), p.BarrierQueued(3))
	}

	q := NewResultPartition(1, 4, 1, 1)
	q.OnPartitionRequest(0, recv(0), 0)
	q.Barrier(&messages.Buffer{CheckpointId: 9, CheckpointTimestampMs: 1234, CheckpointKind: messages.CheckpointKind_SAVEPOINT, Inserted: true})
	sends := q.Poll(nil)
	wantSends(t, "barrier", sends, "R0 seq=0 backlog=0 [B9]")
	b := sends[0].Response.Buffer
	// EventSerializer.serializeCheckpointBarrier allocates 38 bytes for the
	// default location and toBufferConsumer wraps the whole array
	if !b.IsEvent || b.SizeBytes != 38 || b.CheckpointTimestampMs != 1234 || b.CheckpointKind != messages.CheckpointKind_SAVEPOINT || !b.Inserted {
		t.Errorf("barrier buffer %v, want an event of 38 bytes with timestamp 1234, kind SAVEPOINT, inserted", b)
	}
	// BarrierBuffer makes a new buffer each time
	src := &messages.Buffer{CheckpointId: 4, Unaligned: true}
	if x, y := BarrierBuffer(src), BarrierBuffer(src); x == y || x == src || x.CheckpointId != 4 || !x.Unaligned || x.Kinds[0] != KindBarrier {
		t.Errorf("BarrierBuffer(%v) = %v, %v: want two new unaligned barrier buffers of checkpoint 4", src, x, y)
	}
}

// Priority elements keep their order: PrioritizedDeque.addPriorityElement
// adds a priority element "after all existing priority elements but before
// any non-priority element", and makeBarrierToPriority (a timed-out aligned
// barrier) uses it too. A later checkpoint's barrier must not overtake an
// earlier one's that still waits (before the PartitionRequest, or while the
// subpartition is blocked by a savepoint's aligned barrier).
func TestUnalignedBarriersKeepTheirOrder(t *testing.T) {
	t.Run("before the partition request", func(t *testing.T) {
		p := NewResultPartition(1, 4, 2, 1)
		fill(p, 0, 0, 3) // [F(k0 k1) C(k2)]
		ub1 := p.Barrier(&messages.Buffer{CheckpointId: 1, Unaligned: true})
		ub2 := p.Barrier(&messages.Buffer{CheckpointId: 2, Unaligned: true})
		// each overtakes the data behind the priority elements: k0 k1 k2
		// (processPriorityBuffer skips the getNumPriorityElements first)
		want := "[{0 k0 0 0 []} {0 k1 1 1 []} {0 k2 2 2 []}]"
		if fmt.Sprint(ub1) != want || fmt.Sprint(ub2) != want {
			t.Errorf("persisted %v and %v, want k0 k1 k2 twice", ub1, ub2)
		}
		p.OnPartitionRequest(0, recv(0), 2)
		// [UB1 UB2 F F]: 2 data, the last a data buffer: backlog 1 after
		// each barrier
		wantSends(t, "request", p.Poll(nil),
			"R0 seq=0 backlog=1 [UB1]", "R0 seq=1 backlog=1 [UB2]", "R0 seq=2 backlog=0 [k0@0 k1@1]", "R0 seq=3 backlog=0 [k2@2]")
	})
	t.Run("blocked by a savepoint", func(t *testing.T) {
		p := NewResultPartition(1, 4, 2, 1)
		p.OnPartitionRequest(0, recv(0), 2)
		p.Barrier(&messages.Buffer{CheckpointId: 1, CheckpointKind: messages.CheckpointKind_SAVEPOINT})
		wantSends(t, "savepoint barrier", p.Poll(nil), "R0 seq=0 backlog=0 [B1]")
		fill(p, 0, 0, 1)
		p.Barrier(&messages.Buffer{CheckpointId: 2, Unaligned: true})
		p.Barrier(&messages.Buffer{CheckpointId: 3, Unaligned: true})
		wantSends(t, "blocked", p.Poll(nil))
		p.OnResumeConsumption(0)
		// [UB2 UB3 F(k0)]: the last a data buffer: 0
		wantSends(t, "resumed", p.Poll(nil), "R0 seq=1 backlog=0 [UB2]", "R0 seq=2 backlog=0 [UB3]", "R0 seq=3 backlog=0 [k0@0]")
	})
	t.Run("timed-out barrier behind an unaligned one", func(t *testing.T) {
		p := NewResultPartition(1, 4, 2, 1)
		fill(p, 0, 0, 1)
		p.Barrier(&messages.Buffer{CheckpointId: 1, Unaligned: true}) // [UB1 F(k0)]
		fill(p, 0, 1, 1)
		p.Barrier(&messages.Buffer{CheckpointId: 2}) // [UB1 F(k0) F(k1) B2]
		// the data between the priority elements and B2: k0 and k1
		// (findInflightBuffersAndMakeBarrierToPriority)
		if got := p.TimeoutBarrier(2); fmt.Sprint(got) != "[{0 k0 0 0 []} {0 k1 1 1 []}]" {
			t.Errorf("TimeoutBarrier persisted %v, want k0 k1", got)
		}
		p.OnPartitionRequest(0, recv(0), 2)
		// [UB1 UB2 F F]: 1 after each barrier
		wantSends(t, "request", p.Poll(nil),
			"R0 seq=0 backlog=1 [UB1]", "R0 seq=1 backlog=1 [UB2]", "R0 seq=2 backlog=0 [k0@0]", "R0 seq=3 backlog=0 [k1@1]")
	})
	t.Run("unaligned barrier behind a timed-out one", func(t *testing.T) {
		p := NewResultPartition(1, 4, 2, 1)
		fill(p, 0, 0, 1)
		p.Barrier(&messages.Buffer{CheckpointId: 1}) // [F(k0) B1]
		fill(p, 0, 1, 1)                             // [F(k0) B1 C(k1)]
		if got := p.TimeoutBarrier(1); fmt.Sprint(got) != "[{0 k0 0 0 []}]" {
			t.Errorf("TimeoutBarrier persisted %v, want k0 (what is behind B1 stays behind)", got)
		}
		// [UB1 F(k0) C(k1)]: UB2 finishes C and goes behind UB1; its channel
		// state is all the data behind the priority elements
		if got := p.Barrier(&messages.Buffer{CheckpointId: 2, Unaligned: true}); fmt.Sprint(got) != "[{0 k0 0 0 []} {0 k1 1 1 []}]" {
			t.Errorf("UB2 persisted %v, want k0 k1", got)
		}
		p.OnPartitionRequest(0, recv(0), 2)
		wantSends(t, "request", p.Poll(nil),
			"R0 seq=0 backlog=1 [UB1]", "R0 seq=1 backlog=1 [UB2]", "R0 seq=2 backlog=0 [k0@0]", "R0 seq=3 backlog=0 [k1@1]")
	})
}

// An aligned barrier still waiting in the output when the
// aligned-checkpoint-timeout passes becomes unaligned at the head of its
// queue (alignedBarrierTimeout, findInflightBuffersAndMakeBarrierToPriority):
// the unread records ahead of it are channel state, what is behind it stays
// behind, and it no longer blocks.
func TestTimeoutBarrier(t *testing.T) {
	p := NewResultPartition(1, 8, 1, 1)
	fill(p, 0, 0, 2)
	p.Barrier(&messages.Buffer{CheckpointId: 5})
	fill(p, 0, 2, 1) // [F0 F1 B5 F2]
	if !p.BarrierQueued(5) || p.BarrierQueued(4) {
		t.Fatalf("BarrierQueued(5) %v, (4) %v", p.BarrierQueued(5), p.BarrierQueued(4))
	}
	if got := p.TimeoutBarrier(4); len(got) != 0 {
		t.Fatalf("TimeoutBarrier of an unknown checkpoint persisted %v", got)
	}
	got := p.TimeoutBarrier(5)
	if want := []InFlight{{0, "k0", 0, 0, nil}, {0, "k1", 1, 1, nil}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("persisted %v, want %v", got, want)
	}
	if p.BarrierQueued(5) {
		t.Fatal("BarrierQueued(5) = true after it became unaligned")
	}
	wantState(t, "timed out", p, "inUse=3 queues=[4] held=[3] available=true blocked=false")
	p.OnPartitionRequest(0, recv(0), 3)
	// [UB5 F0 F1 F2]: UB5 first (3 data behind it, the last a data buffer:
	// 2); it no longer blocks, the data follows
	wantSends(t, "timed out", p.Poll(nil),
		"R0 seq=0 backlog=2 [UB5]", "R0 seq=1 backlog=1 [k0@0]", "R0 seq=2 backlog=0 [k1@1]", "R0 seq=3 backlog=0 [k2@2]")
	if len(p.TimeoutBarrier(5)) != 0 {
		t.Fatal("a second TimeoutBarrier persisted records")
	}
	wantState(t, "sent", p, "inUse=0 queues=[0] held=[0] available=true blocked=false")
}

// The channel state of a timed-out barrier is only the unread part of a
// partly read buffer ahead of it; a barrier already sent is not timed out.
func TestTimeoutBarrierPartlyRead(t *testing.T) {
	p := NewResultPartition(2, 8, 4, 1)
	p.OnPartitionRequest(0, recv(0), 1)
	p.OnPartitionRequest(1, recv(1), 0)
	fill(p, 0, 0, 2)
	p.FlushAll()
	wantSends(t, "slice", p.Poll(nil), "R0 seq=0 backlog=0 [k0@0 k1@1]")
	fill(p, 0, 2, 1)
	p.Barrier(&messages.Buffer{CheckpointId: 6}) // sub 0 [F(k0 k1 read, k2) B6]; sub 1 [B6] goes at once
	wantSends(t, "barrier", p.Poll(nil), "R1 seq=0 backlog=0 [B6]")
	if got := p.TimeoutBarrier(6); fmt.Sprint(got) != "[{0 k2 2 2 []}]" {
		t.Fatalf("persisted %v, want only k2", got)
	}
	// sub 0 [UB6 F(k2)]: the last a data buffer, 0; sub 1 stays blocked by
	// the aligned B6 it sent
	wantSends(t, "timed out", p.Poll(nil), "R0 seq=1 backlog=0 [UB6]")
	p.OnAddCredit(0, 1)
	wantSends(t, "rest", p.Poll(nil), "R0 seq=2 backlog=0 [k2@2]")
}

// EndOfData (FLIP-147) is an event: it finishes the buffer being written,
// takes no pool buffer, needs no credit, does not end the partition, and
// barriers may follow it. It is queued once per partition
// (BufferWritingResultPartition.notifyEndOfData checks
// hasNotifiedEndOfUserRecords), and is 5 bytes (EventSerializer: the type
// and the StopMode).
func TestEndOfData(t *testing.T) {
	p := NewResultPartition(2, 4, 4, 1)
	p.OnPartitionRequest(0, recv(0), 2)
	fill(p, 0, 0, 1)
	p.EndOfData() // [F(k0) EOD] [EOD]
	wantState(t, "end of data", p, "inUse=1 queues=[2 1] held=[1 0] available=true blocked=false")
	if p.Backlog(0) != 1 || p.Backlog(1) != 0 {
		t.Errorf("Backlog %d %d, want 1 0", p.Backlog(0), p.Backlog(1))
	}
	if p.BuffersOut != 1 || p.BytesOut != 1 { // [k0] finished by the event; the events count nothing
		t.Errorf("BuffersOut %d BytesOut %d, want 1 1", p.BuffersOut, p.BytesOut)
	}
	p.EndOfData() // once per partition: nothing more
	wantState(t, "second end of data", p, "inUse=1 queues=[2 1] held=[1 0] available=true blocked=false")
	sends := p.Poll(nil)
	wantSends(t, "eod", sends, "R0 seq=0 backlog=0 [k0@0]", "R0 seq=1 backlog=0 [EOD]")
	if b := sends[1].Response.Buffer; !b.IsEvent || b.SizeBytes != 5 {
		t.Errorf("EndOfData buffer IsEvent %v SizeBytes %d, want true 5", b.IsEvent, b.SizeBytes)
	}
	if p.AllEndsSent() {
		t.Fatal("EndOfData ended the partition")
	}
	p.EndOfData() // after it was sent: still nothing
	wantSends(t, "third end of data", p.Poll(nil))
	p.Barrier(&messages.Buffer{CheckpointId: 9})
	wantSends(t, "final checkpoint's barrier", p.Poll(nil), "R0 seq=2 backlog=0 [B9]")
	p.OnPartitionRequest(1, recv(1), 0)
	p.EndOfPartition()
	// sub 1 [EOD B9 EOP]: one EndOfData
	wantSends(t, "end", p.Poll(nil), "R1 seq=0 backlog=0 [EOD]", "R1 seq=1 backlog=0 [B9]")
	p.OnResumeConsumption(0)
	p.OnResumeConsumption(1)
	wantSends(t, "resumed", p.Poll(nil), "R0 seq=3 backlog=0 [EOP]", "R1 seq=2 backlog=0 [EOP]")
	if !p.AllEndsSent() {
		t.Error("AllEndsSent = false after both EndOfPartition events")
	}
	p.EndOfData() // after the end: nothing
	wantSends(t, "after the end", p.Poll(nil))
	if p.BuffersOut != 1 || p.BytesOut != 1 {
		t.Errorf("at the end: BuffersOut %d BytesOut %d, want 1 1", p.BuffersOut, p.BytesOut)
	}
}

// EndOfPartition finishes the buffers, queues one event per subpartition
// (once), and nothing is written into an ended subpartition by Broadcast.
func TestEndOfPartition(t *testing.T) {
	p := NewResultPartition(1, 4, 5, 1)
	fill(p, 0, 0, 2)
	p.EndOfPartition()
	p.EndOfPartition()
	p.FlushAll()
	if p.Backlog(0) != 1 || fmt.Sprint(p.QueueLengths()) != "[2]" {
		t.Errorf("Backlog %d queues %v, want 1 [2]", p.Backlog(0), p.QueueLengths())
	}
	p.Broadcast(KindWatermark, 900) // ended subpartitions take nothing
	wantState(t, "ended", p, "inUse=1 queues=[2] held=[1] available=true blocked=false")
	p.OnPartitionRequest(0, recv(0), 1)
	got := p.Poll(nil)
	wantSends(t, "end", got, "R0 seq=0 backlog=0 [k0@0 k1@1]", "R0 seq=1 backlog=0 [EOP]")
	ev := got[1].Response.Buffer
	if !ev.IsEvent || ev.SizeBytes != 4 || len(ev.Keys) != 1 || len(ev.Timestamps) != 1 || len(ev.Values) != 1 {
		t.Errorf("EndOfPartition buffer = %v, want an event buffer of 4 bytes with one element", ev)
	}
	if !p.AllEndsSent() || p.Pool().BuffersInUse() != 0 || p.BuffersOut != 1 || p.BytesOut != 2 {
		t.Errorf("AllEndsSent %v BuffersInUse %d BuffersOut %d BytesOut %d, want true 0 1 2",
			p.AllEndsSent(), p.Pool().BuffersInUse(), p.BuffersOut, p.BytesOut)
	}
	wantSends(t, "after the end", p.Poll(nil))
}

// A record written into an ended subpartition is a caller bug: Flink's
// requestNewUnicastBufferBuilder calls ResultPartition.checkInProduceState,
// which throws once the partition finished; the simulator panics. Nothing
// is queued.
func TestWriteAfterEndPanics(t *testing.T) {
	for _, tt := range []struct {
		name string
		end  func(p *ResultPartition)
	}{
		{"after EndOfPartition", func(p *ResultPartition) { p.EndOfPartition() }},
		{"after EndOfPartition with the end sent", func(p *ResultPartition) {
			p.EndOfPartition()
			p.OnPartitionRequest(0, recv(0), 1)
			p.OnPartitionRequest(1, recv(1), 1)
			wantSends(t, "end", p.Poll(nil), "R0 seq=0 backlog=0 [k0@0]", "R0 seq=1 backlog=0 [EOP]", "R1 seq=0 backlog=0 [EOP]")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := NewResultPartition(2, 4, 2, 1)
			fill(p, 0, 0, 1)
			tt.end(p)
			lengths := fmt.Sprint(p.QueueLengths())
			func() {
				defer func() {
					if recover() == nil {
						t.Error("AddRecord into an ended subpartition did not panic")
					}
				}()
				p.AddRecord(1, "late", 9, 9)
			}()
			if got := fmt.Sprint(p.QueueLengths()); got != lengths {
				t.Errorf("QueueLengths %s after the late record, want %s", got, lengths)
			}
			if msg := p.CheckBounds(); msg != "" {
				t.Errorf("CheckBounds: %s", msg)
			}
		})
	}
}

// A LocalInputChannel reads the producer's buffers in place, one at a time:
// no credit, the recycle of the buffer read is the ask for the next, and
// the segment goes back to the pool only with that recycle. Events need no
// ask.
func TestLocalConsumerReadsOneBufferAtATime(t *testing.T) {
	p := NewResultPartition(1, 4, 2, 10)
	p.OnLocalRequest(0, recv(0))
	fill(p, 0, 0, 6) // [F0 F1 F2]
	// [F1 F2] left: 2 less the last data buffer
	wantSends(t, "first", p.Poll(nil), "R0 seq=0 backlog=1 [k0@0 k1@1]")
	// F0 left the queue but the consumer holds its segment
	wantState(t, "read one", p, "inUse=3 queues=[2] held=[3] available=true blocked=false")
	wantSends(t, "no ask", p.Poll(nil))
	p.OnLocalRecycle(0, 0) // nothing recycled: no ask
	wantSends(t, "zero recycle", p.Poll(nil))
	if p.Credit(0) != 0 {
		t.Errorf("a local consumer has credit %d", p.Credit(0))
	}
	p.OnLocalRecycle(0, 1)
	wantState(t, "recycled", p, "inUse=2 queues=[2] held=[2] available=true blocked=false")
	wantSends(t, "second", p.Poll(nil), "R0 seq=1 backlog=0 [k2@2 k3@3]")
	p.EndOfPartition() // [F2 EOP]: the event waits behind F2, which waits for an ask
	wantSends(t, "event behind data", p.Poll(nil))
	p.OnLocalRecycle(0, 1)
	wantSends(t, "third and the event", p.Poll(nil), "R0 seq=2 backlog=0 [k4@4 k5@5]", "R0 seq=3 backlog=0 [EOP]")
	wantState(t, "all sent, last segment held", p, "inUse=1 queues=[0] held=[1] available=true blocked=false")
	if !p.AllEndsSent() {
		t.Error("AllEndsSent = false")
	}
	p.OnLocalRecycle(0, 1)
	wantState(t, "all recycled", p, "inUse=0 queues=[0] held=[0] available=true blocked=false")
}

// A local consumer that read a slice of the buffer being written (after a
// flush) holds the segment; it goes back to the pool only when the segment
// has left the queue and the consumer recycled the last buffer it read of
// it, also when the segment finished after the slice was read.
func TestLocalSegmentBackOnlyAfterRecycle(t *testing.T) {
	t.Run("finished with an unread rest", func(t *testing.T) {
		p := NewResultPartition(1, 4, 4, 10)
		p.OnLocalRequest(0, recv(0))
		fill(p, 0, 0, 2)
		p.FlushAll()
		wantSends(t, "slice", p.Poll(nil), "R0 seq=0 backlog=0 [k0@0 k1@1]")
		fill(p, 0, 2, 2) // full: [F(k2 k3 unread)]
		wantSends(t, "no ask", p.Poll(nil))
		p.OnLocalRecycle(0, 1) // the segment is still queued: it stays
		wantState(t, "slice recycled", p, "inUse=1 queues=[1] held=[1] available=true blocked=false")
		wantSends(t, "rest", p.Poll(nil), "R0 seq=1 backlog=0 [k2@2 k3@3]")
		wantState(t, "rest read", p, "inUse=1 queues=[0] held=[1] available=true blocked=false")
		p.OnLocalRecycle(0, 1)
		wantState(t, "rest recycled", p, "inUse=0 queues=[0] held=[0] available=true blocked=false")
	})
	t.Run("finished with nothing unread before the recycle", func(t *testing.T) {
		p := NewResultPartition(1, 4, 4, 10)
		p.OnLocalRequest(0, recv(0))
		fill(p, 0, 0, 1)
		p.FlushAll()
		wantSends(t, "slice", p.Poll(nil), "R0 seq=0 backlog=0 [k0@0]")
		p.EndOfPartition() // finishes the segment, all read: it leaves the queue, the consumer still reads it
		wantState(t, "finished", p, "inUse=1 queues=[1] held=[1] available=true blocked=false")
		wantSends(t, "event", p.Poll(nil), "R0 seq=1 backlog=0 [EOP]")
		wantState(t, "event sent", p, "inUse=1 queues=[0] held=[1] available=true blocked=false")
		p.OnLocalRecycle(0, 1)
		wantState(t, "recycled", p, "inUse=0 queues=[0] held=[0] available=true blocked=false")
	})
	t.Run("finished with nothing unread after the recycle", func(t *testing.T) {
		p := NewResultPartition(1, 4, 4, 10)
		p.OnLocalRequest(0, recv(0))
		fill(p, 0, 0, 1)
		p.FlushAll()
		wantSends(t, "slice", p.Poll(nil), "R0 seq=0 backlog=0 [k0@0]")
		p.OnLocalRecycle(0, 1) // the segment is being written: it stays
		wantState(t, "recycled", p, "inUse=1 queues=[1] held=[1] available=true blocked=false")
		p.EndOfData() // finished, all read and recycled: back to the pool at once
		wantState(t, "finished", p, "inUse=0 queues=[1] held=[0] available=true blocked=false")
	})
}

// A new PartitionRequest replaces a local consumer: the segment it was
// reading goes back; the sequence numbers go on. OnLocalRecycle for a
// remote consumer does nothing.
func TestPartitionRequestReplacesLocalConsumer(t *testing.T) {
	p := NewResultPartition(1, 4, 1, 1)
	p.OnLocalRequest(0, recv(0))
	fill(p, 0, 0, 3)
	// [F1 F2] left: 1
	wantSends(t, "local", p.Poll(nil), "R0 seq=0 backlog=1 [k0@0]")
	wantState(t, "local read", p, "inUse=3 queues=[2] held=[3] available=true blocked=false")
	p.OnPartitionRequest(0, recv(0), 0)
	wantState(t, "replaced", p, "inUse=2 queues=[2] held=[2] available=true blocked=false")
	wantSends(t, "remote, no credit", p.Poll(nil), "A0 backlog=1")
	p.OnLocalRecycle(0, 1) // not a local consumer: nothing
	wantState(t, "recycle ignored", p, "inUse=2 queues=[2] held=[2] available=true blocked=false")
	p.OnAddCredit(0, 2)
	wantSends(t, "remote", p.Poll(nil), "R0 seq=1 backlog=0 [k1@1]", "R0 seq=2 backlog=0 [k2@2]")
}

// A new consumer that frees the segment a local consumer was reading gives
// the task's waiting write its buffer at once.
func TestRequestFreeingALentSegmentWritesPending(t *testing.T) {
	for _, tt := range []struct {
		name    string
		request func(p *ResultPartition)
	}{
		{"OnPartitionRequest", func(p *ResultPartition) { p.OnPartitionRequest(0, recv(0), 1) }},
		{"OnLocalRequest", func(p *ResultPartition) { p.OnLocalRequest(0, recv(0)) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := NewResultPartition(1, 1, 1, 1) // pool 1, no overdraft
			p.OnLocalRequest(0, recv(0))
			fill(p, 0, 0, 1)
			wantSends(t, "read", p.Poll(nil), "R0 seq=0 backlog=0 [k0@0]")
			fill(p, 0, 1, 1) // the only segment is lent: k1 waits
			wantState(t, "waiting", p, "inUse=1 queues=[0] held=[1] available=false blocked=true")
			tt.request(p) // k0's segment back: k1 takes it
			wantState(t, "written", p, "inUse=1 queues=[1] held=[1] available=false blocked=false")
			wantSends(t, "next", p.Poll(nil), "R0 seq=1 backlog=0 [k1@1]")
		})
	}
}

// Elements that find no buffer wait, in the order the task wrote them, and
// are written as buffers come back; nothing overtakes them (the task's
// thread is blocked in requestBufferBuilderBlocking).
func TestPendingWritesInOrder(t *testing.T) {
	p := NewResultPartition(2, 2, 1, 1) // pool 2, 1 record a buffer, no overdraft
	fill(p, 0, 0, 1)
	fill(p, 1, 1, 1)
	wantState(t, "pool used up", p, "inUse=2 queues=[1 1] held=[1 1] available=false blocked=false")
	fill(p, 0, 2, 1)
	fill(p, 1, 3, 1)
	p.Broadcast(KindWatermark, 9)
	fill(p, 0, 4, 1)
	// waiting: k2(0) k3(1) W9(0) W9(1) k4(0)
	wantState(t, "waiting", p, "inUse=2 queues=[1 1] held=[1 1] available=false blocked=true")
	if p.Drained() || p.RecordsOut != 5 {
		t.Errorf("Drained %v RecordsOut %d, want false 5", p.Drained(), p.RecordsOut)
	}
	p.OnPartitionRequest(1, recv(1), 10)
	// k1 sent: k2 takes the buffer; k3 finds none and stops the others
	wantSends(t, "k1", p.Poll(nil), "R1 seq=0 backlog=0 [k1@1]")
	wantState(t, "k2 written", p, "inUse=2 queues=[2 0] held=[2 0] available=false blocked=true")
	wantSends(t, "k3 is not written yet", p.Poll(nil))
	p.OnPartitionRequest(0, recv(0), 10)
	// k0 and k2 sent: k3 and sub 0's W9 take the two buffers; sub 1's W9 waits
	wantSends(t, "sub 0", p.Poll(nil), "R0 seq=0 backlog=0 [k0@0]", "R0 seq=1 backlog=0 [k2@2]")
	wantState(t, "k3 and W9 written", p, "inUse=2 queues=[1 1] held=[1 1] available=false blocked=true")
	// k3 sent: sub 1's W9 takes its buffer, k4 joins W9 in sub 0's and fills it
	wantSends(t, "k3", p.Poll(nil), "R1 seq=1 backlog=0 [k3@3]")
	wantState(t, "all written", p, "inUse=2 queues=[1 1] held=[1 1] available=false blocked=false")
	wantSends(t, "W9 k4", p.Poll(nil), "R0 seq=2 backlog=0 [W9 k4@4]")
	wantState(t, "available again", p, "inUse=1 queues=[0 1] held=[0 1] available=true blocked=false")
	p.FlushAll()
	wantSends(t, "flush", p.Poll(nil), "R1 seq=2 backlog=0 [W9]")
}

// A local recycle writes what waits for a buffer.
func TestLocalRecycleWritesPending(t *testing.T) {
	p := NewResultPartition(1, 1, 1, 1)
	p.OnLocalRequest(0, recv(0))
	fill(p, 0, 0, 1)
	wantSends(t, "read", p.Poll(nil), "R0 seq=0 backlog=0 [k0@0]")
	fill(p, 0, 1, 1)
	wantState(t, "waiting", p, "inUse=1 queues=[0] held=[1] available=false blocked=true")
	p.OnLocalRecycle(0, 1)
	wantState(t, "written", p, "inUse=1 queues=[1] held=[1] available=false blocked=false")
	wantSends(t, "next", p.Poll(nil), "R0 seq=1 backlog=0 [k1@1]")
}

func TestDrained(t *testing.T) {
	p := NewResultPartition(1, 4, 4, 1)
	if !p.Drained() {
		t.Fatal("a new partition is not drained")
	}
	fill(p, 0, 0, 1)
	if p.Drained() {
		t.Fatal("drained with a record queued")
	}
	p.OnPartitionRequest(0, recv(0), 1)
	p.FlushAll()
	p.Poll(nil)
	// all read, the segment still being written: drained
	if !p.Drained() || p.Pool().BuffersInUse() != 1 {
		t.Fatalf("Drained %v BuffersInUse %d, want true 1", p.Drained(), p.Pool().BuffersInUse())
	}
	p.EndOfData() // only an event queued: drained
	if !p.Drained() {
		t.Fatal("an event alone makes the partition not drained")
	}
}

// CarryPayloads: every buffer carries one payload per element, slices and
// channel state included; a watermark has none.
func TestCarryPayloads(t *testing.T) {
	p := NewResultPartition(1, 4, 3, 1)
	p.CarryPayloads()
	p.OnPartitionRequest(0, recv(0), 5)
	p.AddPayloadRecord(0, "a", 1, 1, []byte("pa"))
	p.Broadcast(KindWatermark, 2)
	p.FlushAll()
	got := p.Poll(nil)
	wantSends(t, "slice", got, "R0 seq=0 backlog=0 [a@1 W2]")
	if b := got[0].Response.Buffer; len(b.Payloads) != 2 || string(b.Payloads[0]) != "pa" || b.Payloads[1] != nil {
		t.Errorf("payloads %q, want [pa nil]", b.Payloads)
	}
	p.AddPayloadRecord(0, "b", 3, 3, []byte("pb"))
	inflight := p.Barrier(&messages.Buffer{CheckpointId: 1, Unaligned: true})
	if len(inflight) != 1 || string(inflight[0].Payload) != "pb" {
		t.Errorf("channel state %v, want b with payload pb", inflight)
	}
	got = p.Poll(nil)
	wantSends(t, "rest", got, "R0 seq=1 backlog=0 [UB1]", "R0 seq=2 backlog=0 [b@3]")
	if b := got[1].Response.Buffer; len(b.Payloads) != 1 || string(b.Payloads[0]) != "pb" {
		t.Errorf("payloads %q, want [pb]", b.Payloads)
	}
	if PayloadAt(got[1].Response.Buffer, 5) != nil {
		t.Error("PayloadAt past the end is not nil")
	}

	q := NewResultPartition(1, 4, 1, 1) // without CarryPayloads
	q.OnPartitionRequest(0, recv(0), 1)
	q.AddPayloadRecord(0, "c", 1, 1, []byte("pc"))
	if b := q.Poll(nil)[0].Response.Buffer; len(b.Payloads) != 0 {
		t.Errorf("a partition without CarryPayloads sent payloads %q", b.Payloads)
	}
}

func TestCheckBounds(t *testing.T) {
	t.Run("pool", func(t *testing.T) {
		p := NewResultPartition(1, 1, 1, 1)
		fill(p, 0, 0, 1)
		fill(p, 0, 1, 1) // waits
		if msg := p.CheckBounds(); msg != "" {
			t.Fatalf("CheckBounds = %q in bounds", msg)
		}
		// a caller bug: an event while the task is blocked forces the write
		// beyond the pool, and CheckBounds says so
		p.Barrier(&messages.Buffer{CheckpointId: 1})
		if msg := p.CheckBounds(); !strings.Contains(msg, "lends 2 buffers") {
			t.Fatalf("CheckBounds = %q, want the pool lending 2 of 1", msg)
		}
	})
	t.Run("overdraft", func(t *testing.T) {
		p := NewResultPartition(1, 1, 1, 1)
		p.Pool().SetMaxOverdraftBuffers(1)
		fill(p, 0, 0, 2) // the second record takes the overdraft buffer: 2 of 1 + 1
		if msg := p.CheckBounds(); msg != "" || p.Pool().BuffersInUse() != 2 {
			t.Fatalf("CheckBounds = %q with %d in use, want \"\" with 2 (the overdraft is within bounds)", msg, p.Pool().BuffersInUse())
		}
		fill(p, 0, 2, 1) // waits
		// a caller bug: the end forces k2 into a third buffer
		p.EndOfPartition()
		if msg := p.CheckBounds(); !strings.Contains(msg, "lends 3 buffers") {
			t.Fatalf("CheckBounds = %q, want the pool lending 3 of 1 + 1", msg)
		}
	})
	// max-buffers-per-channel gates availability only: a subpartition past
	// it is within bounds (Flink's LocalBufferPool hands the buffer out)
	t.Run("max buffers per channel", func(t *testing.T) {
		p := NewResultPartition(1, 4, 1, 1)
		p.Pool().SetMaxBuffersPerChannel(1)
		fill(p, 0, 0, 1)
		fill(p, 0, 1, 1) // a record under way: a second buffer past the quota
		p.EndOfPartition()
		wantState(t, "past the quota", p, "inUse=2 queues=[3] held=[2] available=false blocked=false")
		p.OnPartitionRequest(0, recv(0), 1)
		// still 1 = max after k0: unavailable
		wantSends(t, "k0", p.Poll(nil), "R0 seq=0 backlog=1 [k0@0]")
		wantState(t, "at the quota", p, "inUse=1 queues=[2] held=[1] available=false blocked=false")
		p.OnAddCredit(0, 1)
		wantSends(t, "k1", p.Poll(nil), "R0 seq=1 backlog=0 [k1@1]", "R0 seq=2 backlog=0 [EOP]")
		wantState(t, "below the quota", p, "inUse=0 queues=[0] held=[0] available=true blocked=false")
	})
}

// The buffers a forced write (a caller bug, see CheckBounds) takes are
// accounted like any other: once everything is sent and the pool is free
// again, the partition is available again. Here the forced buffer brings
// subpartition 0 exactly to max-buffers-per-channel.
func TestForcedWriteKeepsAvailabilityAccounting(t *testing.T) {
	p := NewResultPartition(2, 2, 1, 1) // pool 2, no overdraft
	p.Pool().SetMaxBuffersPerChannel(2)
	fill(p, 1, 0, 1)
	fill(p, 0, 1, 1)
	fill(p, 0, 2, 1) // the pool is used up: waits
	p.Barrier(&messages.Buffer{CheckpointId: 1, Unaligned: true})
	// k2 forced into a third buffer: only the pool bound breaks (the count of
	// subpartitions at their quota stays consistent)
	if msg := p.CheckBounds(); !strings.Contains(msg, "lends 3 buffers") {
		t.Fatalf("CheckBounds = %q, want the pool lending 3 of 2", msg)
	}
	if p.Available() || p.Blocked() {
		t.Fatalf("Available %v Blocked %v, want false false", p.Available(), p.Blocked())
	}
	p.OnPartitionRequest(0, recv(0), 5)
	p.OnPartitionRequest(1, recv(1), 5)
	// sub 0 [UB1 F(k1) F(k2)], sub 1 [UB1 F(k0)]
	wantSends(t, "drain", p.Poll(nil),
		"R0 seq=0 backlog=1 [UB1]", "R0 seq=1 backlog=0 [k1@1]", "R0 seq=2 backlog=0 [k2@2]",
		"R1 seq=0 backlog=0 [UB1]", "R1 seq=1 backlog=0 [k0@0]")
	wantState(t, "all sent", p, "inUse=0 queues=[0 0] held=[0 0] available=true blocked=false")
}
