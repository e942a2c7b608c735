// Package exchange is the producer side of Flink's network stack as plain Go:
// a ResultPartition with one ResultSubpartition per consumer subtask, a
// bounded pool of network buffers, and credit-based flow control
// (org.apache.flink.runtime.io.network.partition.PipelinedSubpartition,
// ...netty.CreditBasedSequenceNumberingViewReader, ...buffer.LocalBufferPool).
//
// A buffer holds a fixed number of records (sim.buffer.records). Watermarks
// and watermark statuses are stream elements written into the same buffers
// as records, as RecordWriter.broadcastEmit does; EndOfPartitionEvent is an
// event buffer, which Flink sends without credit.
package exchange

import (
	"github.com/flinksim/flinksim/messages"
)

// ElementKind says what one element of a Buffer is.
type ElementKind = byte

// Element kinds in messages.Buffer.Kinds.
const (
	KindRecord         ElementKind = 0 // StreamRecord: key, timestamp (ms), value
	KindWatermark      ElementKind = 1 // Watermark: timestamp (ms)
	KindStatusIdle     ElementKind = 2 // WatermarkStatus.IDLE
	KindStatusActive   ElementKind = 3 // WatermarkStatus.ACTIVE
	KindEndOfPartition ElementKind = 4 // EndOfPartitionEvent (event buffer)
	// KindBarrier is a CheckpointBarrier (event buffer; the checkpoint is in
	// the Buffer's checkpoint fields).
	KindBarrier ElementKind = 5
	// KindEndOfData is EndOfData: the producer has no more records but keeps
	// its partition open for the final checkpoint's barrier (FLIP-147).
	KindEndOfData ElementKind = 6
)

// InFlight is one record of channel state: a record an unaligned barrier
// overtook, persisted with the checkpoint.
type InFlight struct {
	Subpartition int
	Key          string
	Timestamp    int64
	Value        float64
}

// Subpartition is one ResultSubpartition and the view its consumer's
// InputChannel reads through.
type Subpartition struct {
	current   *messages.Buffer   // the buffer being filled, nil when none
	records   int                // records in current
	queue     []*messages.Buffer // finished buffers not yet sent (data and events)
	credit    int                // buffers the consumer can still accept
	initial   int                // initial credit of the PartitionRequest (exclusive buffers)
	receiver  string             // the consumer's InputChannel; "" before PartitionRequest
	nextSeq   int32              // sequence number of the next BufferResponse
	announced bool               // a BacklogAnnouncement went out since credit ran out
	ended     bool               // EndOfPartitionEvent queued
	sentEnd   bool               // EndOfPartitionEvent sent
	blocked   bool               // an aligned barrier went out: nothing more until ResumeConsumption
	last      int                // elements of the last buffer finished (the size hint of the next)
}

// Send is one message the producer must send to a consumer channel.
type Send struct {
	Subpartition int
	Receiver     string
	Response     *messages.BufferResponse      // non-nil: a BufferResponse
	Announcement *messages.BacklogAnnouncement // non-nil: a BacklogAnnouncement
}

// ResultPartition is the output of one producer subtask.
type ResultPartition struct {
	subs             []Subpartition
	poolSize         int
	inUse            int // data buffers allocated: non-nil current + queued data buffers
	recordsPerBuffer int
	recordBytes      int
	slab             elementSlab

	// counters (numBuffersOut, numRecordsOut, numBytesOut)
	BuffersOut, RecordsOut, BytesOut int64
}

// PoolSize is the size of a result partition's LocalBufferPool as
// NettyShuffleUtils.getMinMaxNetworkBuffersPerResultPartition sizes its
// maximum for a pipelined bounded partition: numSubpartitions *
// buffersPerChannel + floatingBuffersPerGate, but never below the minimum
// numSubpartitions + 1 (so that every subpartition can hold a partly filled
// buffer and one is left to write into, also with no exclusive buffers).
func PoolSize(numSubpartitions, buffersPerChannel, floatingPerGate int) int {
	return max(numSubpartitions+1, numSubpartitions*buffersPerChannel+floatingPerGate)
}

// NewResultPartition makes a partition of n subpartitions with a pool of
// poolSize buffers of recordsPerBuffer records each (recordBytes bytes per
// record, for byte counts).
func NewResultPartition(n, poolSize, recordsPerBuffer, recordBytes int) *ResultPartition {
	if recordsPerBuffer < 1 {
		recordsPerBuffer = 1
	}
	return &ResultPartition{subs: make([]Subpartition, n), poolSize: poolSize,
		recordsPerBuffer: recordsPerBuffer, recordBytes: recordBytes}
}

// NumSubpartitions is the number of subpartitions.
func (p *ResultPartition) NumSubpartitions() int { return len(p.subs) }

// BuffersInUse is the number of data buffers taken from the pool.
func (p *ResultPartition) BuffersInUse() int { return p.inUse }

// PoolCapacity is the pool size in buffers.
func (p *ResultPartition) PoolCapacity() int { return p.poolSize }

// Backlog is the number of finished data buffers of subpartition i waiting
// to be sent.
func (p *ResultPartition) Backlog(i int) int {
	n := 0
	for _, b := range p.subs[i].queue {
		if !b.IsEvent {
			n++
		}
	}
	return n
}

// Backlogs is Backlog(i) for every subpartition i, in subpartition order:
// the finished data buffers (not events, not the buffer being filled) each
// subpartition holds, waiting for credit or for the next Poll. This is the
// per-channel output queue length the task_metrics report.
func (p *ResultPartition) Backlogs() []int {
	out := make([]int, len(p.subs))
	for i := range p.subs {
		out[i] = p.Backlog(i)
	}
	return out
}

// Credit is the credit the consumer of subpartition i has granted and not
// yet used.
func (p *ResultPartition) Credit(i int) int { return p.subs[i].credit }

// CanWrite reports whether a record for subpartition i can be written now:
// its current buffer has room or the pool has a free buffer. A producer that
// cannot write is backpressured (it blocks in LocalBufferPool.requestBuffer).
func (p *ResultPartition) CanWrite(i int) bool {
	s := &p.subs[i]
	if s.current != nil && s.records < p.recordsPerBuffer {
		// a buffer Broadcast took beyond the pool does not let more
		// records through than the pool holds
		return p.inUse <= p.poolSize
	}
	return p.inUse < p.poolSize
}

func (p *ResultPartition) buffer(i int) *messages.Buffer {
	s := &p.subs[i]
	if s.current == nil {
		s.current = &messages.Buffer{}
		// room for as many elements as the subpartition's last buffer
		// held, and a few watermarks, up to a full buffer
		p.slab.carve(s.current, min(p.recordsPerBuffer, max(1, s.last))+4)
		p.inUse++
	}
	return s.current
}

// slabElements is the size of one chunk of an elementSlab (elements).
const slabElements = 4096

// elementSlab hands out the element arrays of new buffers from large shared
// chunks, so that filling a buffer allocates nothing per record. A buffer
// gets a capacity-limited region of each array; one that outgrows it is
// moved out by append, never overwriting its neighbour. A chunk lives as
// long as any buffer carved from it.
type elementSlab struct {
	kinds []byte
	keys  []string
	ts    []int64
	vals  []float64
}

// carve gives b empty element arrays with room for n elements.
func (sl *elementSlab) carve(b *messages.Buffer, n int) {
	if cap(sl.kinds)-len(sl.kinds) < n {
		c := max(slabElements, n)
		sl.kinds, sl.keys = make([]byte, 0, c), make([]string, 0, c)
		sl.ts, sl.vals = make([]int64, 0, c), make([]float64, 0, c)
	}
	k := len(sl.kinds)
	b.Kinds, b.Keys, b.Timestamps, b.Values = sl.kinds[k:k:k+n], sl.keys[k:k:k+n], sl.ts[k:k:k+n], sl.vals[k:k:k+n]
	sl.kinds, sl.keys, sl.ts, sl.vals = sl.kinds[:k+n], sl.keys[:k+n], sl.ts[:k+n], sl.vals[:k+n]
}

// AddRecord writes a record into subpartition i. The caller checks CanWrite
// first. It returns true when the record filled the buffer, which is then
// finished and queued.
func (p *ResultPartition) AddRecord(i int, key string, ts int64, value float64) bool {
	b := p.buffer(i)
	b.Kinds = append(b.Kinds, KindRecord)
	b.Keys = append(b.Keys, key)
	b.Timestamps = append(b.Timestamps, ts)
	b.Values = append(b.Values, value)
	b.SizeBytes += int32(p.recordBytes)
	p.RecordsOut++
	p.subs[i].records++
	if p.subs[i].records >= p.recordsPerBuffer {
		p.finish(i)
		return true
	}
	return false
}

// Broadcast writes a watermark or watermark status element into every
// subpartition (RecordWriter.broadcastEmit). It may take a buffer beyond the
// pool when a subpartition has none open: a simplification, since Flink would
// block for it.
func (p *ResultPartition) Broadcast(kind ElementKind, ts int64) {
	for i := range p.subs {
		if p.subs[i].ended {
			continue
		}
		b := p.buffer(i)
		b.Kinds = append(b.Kinds, kind)
		b.Keys = append(b.Keys, "")
		b.Timestamps = append(b.Timestamps, ts)
		b.Values = append(b.Values, 0)
		b.SizeBytes += 16
	}
}

func (p *ResultPartition) finish(i int) {
	s := &p.subs[i]
	if s.current == nil {
		return
	}
	s.queue = append(s.queue, s.current)
	s.last = len(s.current.Kinds)
	s.current = nil
	s.records = 0
}

// FlushAll finishes every partly filled buffer so it can be sent (the
// OutputFlusher of execution.buffer-timeout, or an explicit flush).
func (p *ResultPartition) FlushAll() {
	for i := range p.subs {
		p.finish(i)
	}
}

// EndOfPartition flushes and queues an EndOfPartitionEvent in every
// subpartition: the producer has finished.
func (p *ResultPartition) EndOfPartition() {
	for i := range p.subs {
		s := &p.subs[i]
		if s.ended {
			continue
		}
		p.finish(i)
		s.queue = append(s.queue, &messages.Buffer{Kinds: []byte{KindEndOfPartition}, Keys: []string{""},
			Timestamps: []int64{0}, Values: []float64{0}, IsEvent: true, SizeBytes: 4})
		s.ended = true
	}
}

// BarrierBuffer returns a new CheckpointBarrier event buffer with the
// checkpoint fields of b (id, timestamp in ms, kind, unaligned, inserted);
// each subpartition, or channel, needs its own.
func BarrierBuffer(b *messages.Buffer) *messages.Buffer {
	return &messages.Buffer{Kinds: []byte{KindBarrier}, Keys: []string{""}, Timestamps: []int64{0}, Values: []float64{0},
		IsEvent: true, SizeBytes: 32, CheckpointId: b.CheckpointId, CheckpointTimestampMs: b.CheckpointTimestampMs,
		CheckpointKind: b.CheckpointKind, Unaligned: b.Unaligned, Inserted: b.Inserted}
}

// Barrier queues a CheckpointBarrier event buffer (barrier) in every
// subpartition not ended. Aligned, it goes behind everything written so far
// (partly filled buffers are finished first), as RecordWriter.broadcastEvent
// does. Unaligned (barrier.Unaligned), it is a priority event: it goes to the
// head of each queue, overtaking the finished data buffers waiting for credit
// (PipelinedSubpartition.add with a priority event), and those buffers'
// records are returned as output channel state, in subpartition and queue
// order. The overtaken buffers are still sent after the barrier.
func (p *ResultPartition) Barrier(barrier *messages.Buffer) []InFlight {
	var persisted []InFlight
	for i := range p.subs {
		s := &p.subs[i]
		if s.ended {
			continue
		}
		p.finish(i)
		b := BarrierBuffer(barrier)
		if !barrier.Unaligned {
			s.queue = append(s.queue, b)
			continue
		}
		for _, q := range s.queue {
			if q.IsEvent {
				continue
			}
			for k, kind := range q.Kinds {
				if kind == KindRecord {
					persisted = append(persisted, InFlight{Subpartition: i, Key: q.Keys[k], Timestamp: q.Timestamps[k], Value: q.Values[k]})
				}
			}
		}
		s.queue = append([]*messages.Buffer{b}, s.queue...)
	}
	return persisted
}

// barrierAt is the queue position of the aligned barrier of checkpoint id in
// subpartition i, or -1.
func (p *ResultPartition) barrierAt(i int, id int64) int {
	for k, b := range p.subs[i].queue {
		if b.IsEvent && b.Kinds[0] == KindBarrier && b.CheckpointId == id && !b.Unaligned {
			return k
		}
	}
	return -1
}

// Drained reports whether every record written has been sent: no partly
// filled buffer and no data buffer waiting in any subpartition.
func (p *ResultPartition) Drained() bool {
	for i := range p.subs {
		if p.subs[i].current != nil || p.Backlog(i) > 0 {
			return false
		}
	}
	return true
}

// BarrierQueued reports whether the aligned barrier of checkpoint id still
// waits in some subpartition's queue.
func (p *ResultPartition) BarrierQueued(id int64) bool {
	for i := range p.subs {
		if p.barrierAt(i, id) >= 0 {
			return true
		}
	}
	return false
}

// TimeoutBarrier switches the aligned barrier of checkpoint id, where it
// still waits, to unaligned: it moves to the head of its queue, overtaking
// the data buffers ahead of it, whose records it returns as channel state
// (ResultPartition.alignedBarrierTimeout with
// execution.checkpointing.aligned-checkpoint-timeout).
func (p *ResultPartition) TimeoutBarrier(id int64) []InFlight {
	var persisted []InFlight
	for i := range p.subs {
		s := &p.subs[i]
		at := p.barrierAt(i, id)
		if at < 0 {
			continue
		}
		b := s.queue[at]
		for _, q := range s.queue[:at] {
			if q.IsEvent {
				continue
			}
			for k, kind := range q.Kinds {
				if kind == KindRecord {
					persisted = append(persisted, InFlight{Subpartition: i, Key: q.Keys[k], Timestamp: q.Timestamps[k], Value: q.Values[k]})
				}
			}
		}
		b.Unaligned = true
		copy(s.queue[1:at+1], s.queue[:at])
		s.queue[0] = b
	}
	return persisted
}

// AllEndsSent reports whether every subpartition has sent its
// EndOfPartitionEvent: the partition is fully consumed.
func (p *ResultPartition) AllEndsSent() bool {
	for i := range p.subs {
		if !p.subs[i].sentEnd {
			return false
		}
	}
	return true
}

// OnPartitionRequest registers the consumer channel of subpartition i with
// its initial credit in buffers (PartitionRequest): the consumer's exclusive
// buffers, taskmanager.network.memory.buffers-per-channel. The initial credit
// is remembered: only a consumer that asked with 0 gets BacklogAnnouncements
// (see Poll). A new request replaces the previous one.
func (p *ResultPartition) OnPartitionRequest(i int, receiver string, credit int) {
	s := &p.subs[i]
	s.receiver = receiver
	s.credit = credit
	s.initial = credit
	s.announced = false
}

// OnResumeConsumption unblocks subpartition i after an aligned barrier
// (ResumeConsumption). A consumer without exclusive buffers gave its
// floating buffers back when the barrier blocked it, so its credit starts
// again from 0 and the backlog is announced anew
// (CreditBasedSequenceNumberingViewReader.resumeConsumption).
func (p *ResultPartition) OnResumeConsumption(i int) {
	s := &p.subs[i]
	s.blocked = false
	if s.initial == 0 {
		s.credit = 0
		s.announced = false
	}
}

// OnAddCredit adds credit to subpartition i (AddCredit). Credit must be
// positive; it returns false when it is not.
func (p *ResultPartition) OnAddCredit(i, credit int) bool {
	if credit <= 0 {
		return false
	}
	s := &p.subs[i]
	s.credit += credit
	s.announced = false
	return true
}

// Poll returns what can be sent now, subpartition by subpartition: a data
// buffer needs one credit, an event buffer none
// (CreditBasedSequenceNumberingViewReader.getNextBuffer). Each
// BufferResponse carries the backlog left behind it. Sending a data buffer
// returns it to the pool.
//
// A BacklogAnnouncement goes out as Flink's
// CreditBasedSequenceNumberingViewReader.needAnnounceBacklog decides
// (initialCredit == 0 && numCreditsAvailable == 0): only to a consumer whose
// PartitionRequest carried an initial credit of 0 (no exclusive buffers,
// buffers-per-channel=0), when data waits and its credit is 0, and then once
// until new credit comes (OnAddCredit or a new OnPartitionRequest). A
// consumer with exclusive buffers never gets one: it learns the backlog from
// the Backlog field of each BufferResponse.
func (p *ResultPartition) Poll(dst []Send) []Send {
	for i := range p.subs {
		s := &p.subs[i]
		if s.receiver == "" || s.blocked {
			continue
		}
		for len(s.queue) > 0 && !s.blocked {
			b := s.queue[0]
			if !b.IsEvent && s.credit == 0 {
				break
			}
			s.queue[0] = nil
			s.queue = s.queue[1:]
			if b.IsEvent {
				switch {
				case b.Kinds[0] == KindEndOfPartition:
					s.sentEnd = true
				case b.Kinds[0] == KindBarrier && !b.Unaligned:
					// an aligned barrier blocks the subpartition until the
					// consumer's alignment ends (PipelinedSubpartition:
					// isBlocked after a blocking CheckpointBarrier)
					s.blocked = true
				}
			} else {
				s.credit--
				p.inUse--
				p.BuffersOut++
				p.BytesOut += int64(b.SizeBytes)
			}
			dst = append(dst, Send{Subpartition: i, Receiver: s.receiver, Response: &messages.BufferResponse{
				ReceiverId: s.receiver, SequenceNumber: s.nextSeq, Backlog: int32(p.Backlog(i)), Buffer: b}})
			s.nextSeq++
		}
		if s.initial == 0 && s.credit == 0 && len(s.queue) > 0 && !s.announced && !s.blocked {
			s.announced = true
			dst = append(dst, Send{Subpartition: i, Receiver: s.receiver, Announcement: &messages.BacklogAnnouncement{
				ReceiverId: s.receiver, Backlog: int32(p.Backlog(i)), SubpartitionIndex: int32(i)}})
		}
	}
	return dst
}
