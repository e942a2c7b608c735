package exchange

import (
	"fmt"
	"testing"

	"github.com/flinksim/flinksim/messages"
)

// FuzzPartition feeds ResultPartition random operation sequences decoded
// from the input (the first bytes choose the shape, each further byte an
// operation and its argument) and asserts, after every operation, that it
// does not panic, CheckBounds is "", the subpartitions hold the buffers the
// pool lends (at most its size plus the overdraft; one subpartition may
// hold more than max-buffers-per-channel, which only makes the pool
// unavailable), Available and OutPoolUsage agree with the buffers held, and
// sequence numbers run without gaps; at the end it drains the partition and
// checks that every record written arrived exactly once.
// Operations the contract forbids the caller (an event while Blocked, a
// write after the end) are not issued.
func FuzzPartition(f *testing.F) {
	f.Add([]byte{2, 1, 0, 1, 2, 0, 0x00, 0x01, 0x10, 0x20, 0x30, 0x40, 0x50})
	f.Add([]byte{1, 0, 1, 0, 1, 1, 0x30, 0x00, 0x00, 0x00, 0x80, 0x81, 0x40, 0x60, 0x70, 0x90, 0x00, 0x20, 0x31, 0x40})
	f.Add([]byte{3, 2, 2, 2, 3, 0, 0x51, 0x52, 0x00, 0x01, 0x02, 0x00, 0x10, 0x40, 0x21, 0x22, 0x80, 0xa0, 0x40, 0xb0, 0xc1})
	f.Add([]byte{4, 3, 3, 1, 4, 1, 0x30, 0x31, 0x52, 0x53, 0x00, 0x01, 0x02, 0x03, 0x11, 0x10, 0x81, 0x40, 0x90, 0x91, 0xd0, 0x40, 0xe0})
	// max-buffers-per-channel 1 and 2 overdraft buffers: sub 0 past its
	// quota, the pool into its overdraft, EndOfData twice, a local consumer
	f.Add([]byte{2, 0, 0, 9, 0, 0, 0x00, 0x00, 0x00, 0x01, 0x10, 0x10, 0xf0, 0x30, 0x40, 0xd0, 0xd0, 0x40, 0x51, 0x40, 0x74, 0x40, 0xe0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 6 {
			return
		}
		n := 1 + int(data[0])%4
		pool := PoolSize(n, int(data[1])%3, int(data[2])%4)
		maxPer := []int{0, 1, 2, 3}[int(data[3])%4]
		overdraft := int(data[3]/4) % 3
		rpb := 1 + int(data[4])%5
		p := NewResultPartition(n, pool, rpb, 8)
		p.Pool().SetMaxBuffersPerChannel(maxPer)
		p.Pool().SetMaxOverdraftBuffers(overdraft)
		if data[5]%2 == 1 {
			p.CarryPayloads()
		}
		ops := data[6:]
		if len(ops) > 2000 {
			ops = ops[:2000]
		}

		nextSeq := make([]int32, n)
		got := make([]int, 0)
		requested := make([]int, n) // 0 none, 1 remote, 2 local
		var records, ckpt int64
		ended, eod := false, false
		poll := func(step string) {
			for _, s := range p.Poll(nil) {
				if s.Subpartition < 0 || s.Subpartition >= n {
					t.Fatalf("%s: send to subpartition %d of %d", step, s.Subpartition, n)
				}
				if r := s.Response; r != nil {
					if r.SequenceNumber != nextSeq[s.Subpartition] {
						t.Fatalf("%s: subpartition %d sequence number %d, want %d", step, s.Subpartition, r.SequenceNumber, nextSeq[s.Subpartition])
					}
					nextSeq[s.Subpartition]++
					for k, kind := range r.Buffer.Kinds {
						if kind == KindRecord {
							got = append(got, int(r.Buffer.Timestamps[k]))
						}
					}
				}
			}
		}
		check := func(step string) {
			if msg := p.CheckBounds(); msg != "" {
				t.Fatalf("%s: CheckBounds: %s", step, msg)
			}
			total, atMax := 0, false
			for _, h := range p.Held() {
				total += h
				atMax = atMax || (maxPer > 0 && h >= maxPer)
			}
			inUse := p.Pool().BuffersInUse()
			if total != inUse || inUse > pool+overdraft {
				t.Fatalf("%s: held %v, %d in use of %d + %d", step, p.Held(), inUse, pool, overdraft)
			}
			// LocalBufferPool.shouldBeAvailable: a free buffer, no
			// subpartition at its quota (no overdraft buffer in use follows)
			if want := !p.Blocked() && inUse < pool && !atMax; p.Available() != want {
				t.Fatalf("%s: Available %v with held %v of %d (max %d), blocked %v", step, p.Available(), p.Held(), pool, maxPer, p.Blocked())
			}
			if u := p.Pool().OutPoolUsage(); u != float64(inUse)/float64(pool) {
				t.Fatalf("%s: OutPoolUsage %v with %d of %d in use", step, u, inUse, pool)
			}
		}
		for k, op := range ops {
			i := int(op&0x0f) % n
			arg := int(op & 0x0f)
			step := fmt.Sprintf("op %d (%#x)", k, op)
			switch op >> 4 {
			case 0, 1: // a record (a second output of the same input may follow a waiting one)
				if !ended && !eod && (op>>4 == 1 || !p.Blocked()) {
					p.AddPayloadRecord(i, "k", records, float64(records), []byte{byte(records)})
					records++
				}
			case 2:
				if !ended && !eod {
					p.Broadcast([]ElementKind{KindWatermark, KindStatusIdle, KindStatusActive}[arg%3], int64(arg))
				}
			case 3:
				p.OnPartitionRequest(i, recv(i), arg/n)
				requested[i] = 1
			case 4:
				poll(step)
			case 5:
				p.OnLocalRequest(i, recv(i))
				requested[i] = 2
			case 6:
				p.OnAddCredit(i, arg/n)
			case 7:
				p.OnLocalRecycle(i, arg/n)
			case 8:
				p.FlushAll()
			case 9:
				p.OnResumeConsumption(i)
			case 10, 11:
				if !ended && !p.Blocked() {
					ckpt++
					p.Barrier(&messages.Buffer{CheckpointId: ckpt, Unaligned: op>>4 == 11})
				}
			case 12:
				p.TimeoutBarrier(int64(arg))
			case 13:
				if !ended && !p.Blocked() {
					p.EndOfData()
					eod = true
				}
			case 14:
				if !ended && !p.Blocked() {
					p.EndOfPartition()
					ended = true
				}
			case 15:
				p.Available()
				p.Drained()
				p.QueueLengths()
				p.Pool().OutPoolUsage()
				p.BarrierQueued(int64(arg))
				p.AllEndsSent()
				for j := range n {
					p.Backlog(j)
					p.Credit(j)
				}
			}
			check(step)
		}

		// drain: every consumer asks, gets credit, recycles, resumes
		for i := range n {
			if requested[i] == 0 {
				p.OnPartitionRequest(i, recv(i), 0)
			}
		}
		for round := 0; round < 10000; round++ {
			if !ended && !p.Blocked() {
				p.EndOfPartition()
				ended = true
			}
			for i := range n {
				p.OnResumeConsumption(i)
				p.OnAddCredit(i, 1000)
				p.OnLocalRecycle(i, 1)
			}
			poll("drain")
			check("drain")
			if ended && p.AllEndsSent() && p.Pool().BuffersInUse() == 0 {
				break
			}
		}
		if !p.AllEndsSent() || p.Pool().BuffersInUse() != 0 || p.Blocked() {
			t.Fatalf("drained: AllEndsSent %v BuffersInUse %d Blocked %v", p.AllEndsSent(), p.Pool().BuffersInUse(), p.Blocked())
		}
		if int64(len(got)) != records {
			t.Fatalf("received %d records, wrote %d", len(got), records)
		}
		seen := make([]bool, records)
		for _, r := range got {
			if seen[r] {
				t.Fatalf("record %d received twice", r)
			}
			seen[r] = true
		}
	})
}
