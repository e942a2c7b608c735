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
	Payload      []byte // where the partition carries payloads (CarryPayloads), else nil
}

// PayloadAt is the payload of element k of b: nil when b carries none.
func PayloadAt(b *messages.Buffer, k int) []byte {
	if k < len(b.Payloads) {
		return b.Payloads[k]
	}
	return nil
}

// queued is one buffer waiting in a subpartition's queue.
type queued struct {
	b *messages.Buffer
	// segment: it is the last part of its pool buffer (memory segment):
	// once sent to a remote consumer, or recycled by a local one, the
	// buffer goes back to the pool. A flush hands out the part of the
	// segment written so far as a buffer of its own that ends nothing.
	segment bool
}

// Subpartition is one ResultSubpartition and the view its consumer's
// InputChannel reads through.
type Subpartition struct {
	current   *messages.Buffer // the segment being filled (BufferBuilder), nil when none
	records   int              // records in current
	sliced    int              // elements of current handed out already by flushes
	queue     []queued         // buffers not yet sent (data and events)
	credit    int              // buffers the consumer can still accept (remote)
	initial   int              // initial credit of the PartitionRequest (exclusive buffers)
	receiver  string           // the consumer's InputChannel; "" before PartitionRequest
	local     bool             // the consumer is a LocalInputChannel: no credit, it recycles the segments it read
	nextSeq   int32            // sequence number of the next BufferResponse
	announced bool             // a BacklogAnnouncement went out since credit ran out
	ended     bool             // EndOfPartitionEvent queued
	sentEnd   bool             // EndOfPartitionEvent sent
	blocked   bool             // an aligned barrier went out: nothing more until ResumeConsumption
	last      int              // elements of the last buffer finished (the size hint of the next)
	held      int              // pool buffers this subpartition holds: current, queued, lent to a local consumer
	pending   []pendingElement // broadcast elements waiting for a pool buffer (the task is blocked meanwhile)
}

// pendingElement is a stream element waiting to be written.
type pendingElement struct {
	kind ElementKind
	ts   int64
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
	maxPerChannel    int // taskmanager.network.memory.max-buffers-per-channel (0: no limit)
	inUse            int // pool buffers taken: held by some subpartition
	recordsPerBuffer int
	recordBytes      int
	payloads         bool // every buffer carries Payloads, one per element (CarryPayloads)
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
// record, for byte counts). No subpartition may hold more than
// maxPerChannel of them at once (0: no limit).
func NewResultPartition(n, poolSize, recordsPerBuffer, recordBytes int) *ResultPartition {
	if recordsPerBuffer < 1 {
		recordsPerBuffer = 1
	}
	return &ResultPartition{subs: make([]Subpartition, n), poolSize: poolSize,
		recordsPerBuffer: recordsPerBuffer, recordBytes: recordBytes}
}

// SetMaxBuffersPerChannel bounds the pool buffers one subpartition may hold
// (taskmanager.network.memory.max-buffers-per-channel, LocalBufferPool's
// maxBuffersPerChannel): a subpartition at the bound makes the producer
// unavailable, backpressure, though the pool has buffers left. 0: no bound.
func (p *ResultPartition) SetMaxBuffersPerChannel(n int) { p.maxPerChannel = n }

// CarryPayloads makes every buffer carry each record's payload
// (Buffer.Payloads, one entry per element): an edge whose consumer needs the
// record itself, such as ParseOrder reading the Kafka record's value. The
// buffer's size stays recordBytes per record either way.
func (p *ResultPartition) CarryPayloads() { p.payloads = true }

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
	for _, q := range p.subs[i].queue {
		if !q.b.IsEvent {
			n++
		}
	}
	return n
}

// Backlogs is Backlog(i) for every subpartition i, in subpartition order:
// the finished data buffers (not events, not the buffer being filled) each
// subpartition holds, waiting for credit or for the next Poll. This is the
// per-channel output queue length the task_metrics report. A local
// consumer reads the subpartition's buffers in place (LocalInputChannel
// polls the subpartition view), so for it the finished segments it has not
// recycled yet count as queued too.
func (p *ResultPartition) Backlogs() []int {
	out := make([]int, len(p.subs))
	for i := range p.subs {
		s := &p.subs[i]
		if s.local {
			n := s.held
			if s.current != nil {
				n--
			}
			out[i] = n
			continue
		}
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
	if p.pendingAny() {
		return false // blocked in a broadcast until a buffer is free
	}
	s := &p.subs[i]
	if s.current != nil && s.records < p.recordsPerBuffer {
		// a buffer Broadcast took beyond the pool does not let more
		// records through than the pool holds
		return p.inUse <= p.poolSize
	}
	if p.maxPerChannel > 0 && s.held >= p.maxPerChannel {
		return false
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
		if p.payloads {
			s.current.Payloads = make([][]byte, 0, cap(s.current.Kinds))
		}
		p.inUse++
		s.held++
	}
	return s.current
}

// release returns one of subpartition i's pool buffers to the pool.
func (p *ResultPartition) release(i int) {
	p.inUse--
	p.subs[i].held--
}

// cut copies elements [from:] of b into a buffer of their own (what a
// flush hands out of a segment still being written).
func (p *ResultPartition) cut(b *messages.Buffer, from int) *messages.Buffer {
	n := len(b.Kinds) - from
	out := &messages.Buffer{}
	p.slab.carve(out, n)
	out.Kinds = append(out.Kinds, b.Kinds[from:]...)
	out.Keys = append(out.Keys, b.Keys[from:]...)
	out.Timestamps = append(out.Timestamps, b.Timestamps[from:]...)
	out.Values = append(out.Values, b.Values[from:]...)
	if b.Payloads != nil {
		out.Payloads = append(make([][]byte, 0, n), b.Payloads[from:]...)
	}
	for _, k := range out.Kinds {
		if k == KindRecord {
			out.SizeBytes += int32(p.recordBytes)
		} else {
			out.SizeBytes += 16
		}
	}
	return out
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
	return p.AddPayloadRecord(i, key, ts, value, nil)
}

// AddPayloadRecord is AddRecord with the record's payload, which the buffer
// carries when the partition carries payloads (CarryPayloads).
func (p *ResultPartition) AddPayloadRecord(i int, key string, ts int64, value float64, payload []byte) bool {
	b := p.buffer(i)
	b.Kinds = append(b.Kinds, KindRecord)
	b.Keys = append(b.Keys, key)
	b.Timestamps = append(b.Timestamps, ts)
	b.Values = append(b.Values, value)
	if p.payloads {
		b.Payloads = append(b.Payloads, payload)
	}
	b.SizeBytes += int32(p.recordBytes)
	p.RecordsOut++
	p.subs[i].records++
	if p.subs[i].records >= p.recordsPerBuffer {
		p.finish(i)
		return true
	}
	return false
}

// Broadcast writes a watermark, watermark status or EndOfData element into
// every subpartition (RecordWriter.broadcastEmit). A subpartition with no
// open buffer needs one from the pool; when the pool (or the subpartition's
// max-buffers-per-channel) has none, the element waits and the producer is
// blocked, as Flink's task blocks in requestBufferBuilderBlocking: nothing
// more is written until a buffer comes back (Available, and Poll and
// OnLocalRecycle write what waits).
func (p *ResultPartition) Broadcast(kind ElementKind, ts int64) {
	for i := range p.subs {
		s := &p.subs[i]
		if s.ended {
			continue
		}
		if len(s.pending) > 0 || !p.hasRoom(i) {
			s.pending = append(s.pending, pendingElement{kind, ts})
			continue
		}
		p.writeElement(i, kind, ts)
	}
}

// hasRoom reports whether subpartition i can take a non-record element
// now: it has an open buffer, or the pool gives it one.
func (p *ResultPartition) hasRoom(i int) bool {
	s := &p.subs[i]
	if s.current != nil {
		return true
	}
	if p.maxPerChannel > 0 && s.held >= p.maxPerChannel {
		return false
	}
	return p.inUse < p.poolSize
}

func (p *ResultPartition) writeElement(i int, kind ElementKind, ts int64) {
	b := p.buffer(i)
	b.Kinds = append(b.Kinds, kind)
	b.Keys = append(b.Keys, "")
	b.Timestamps = append(b.Timestamps, ts)
	b.Values = append(b.Values, 0)
	if p.payloads {
		b.Payloads = append(b.Payloads, nil)
	}
	b.SizeBytes += 16
}

// pendingAny reports whether a broadcast waits for a buffer.
func (p *ResultPartition) pendingAny() bool {
	for i := range p.subs {
		if len(p.subs[i].pending) > 0 {
			return true
		}
	}
	return false
}

// Available reports whether the producer can write: no broadcast waits for
// a buffer and the pool has one free (the output is available, as
// RecordWriter.isAvailable).
func (p *ResultPartition) Available() bool { return !p.pendingAny() && p.inUse < p.poolSize }

// writePending writes the broadcast elements that waited, where a buffer
// is there now; force writes them even beyond the pool (an event that must
// follow them, a barrier or the end of the partition, is queued next).
func (p *ResultPartition) writePending(force bool) {
	for i := range p.subs {
		s := &p.subs[i]
		for len(s.pending) > 0 && (force || p.hasRoom(i)) {
			e := s.pending[0]
			s.pending = s.pending[1:]
			p.writeElement(i, e.kind, e.ts)
		}
		if len(s.pending) == 0 {
			s.pending = nil
		}
	}
}

// finish closes subpartition i's segment (it is full, or an event must
// follow what was written): what a flush has not handed out yet is queued
// as its last part; when everything was handed out already, the segment
// goes back to the pool at once.
func (p *ResultPartition) finish(i int) {
	s := &p.subs[i]
	if s.current == nil {
		return
	}
	b := s.current
	switch {
	case s.sliced == 0:
		s.queue = append(s.queue, queued{b: b, segment: true})
	case s.sliced < len(b.Kinds):
		s.queue = append(s.queue, queued{b: p.cut(b, s.sliced), segment: true})
	default:
		p.release(i)
	}
	s.last = len(b.Kinds)
	s.current = nil
	s.records = 0
	s.sliced = 0
}

// FlushAll hands out what every subpartition wrote since its last flush
// (the OutputFlusher of execution.buffer-timeout, or an explicit flush), as
// Flink's PipelinedSubpartition.flush does: the consumer gets the data
// written so far as a buffer, while the producer goes on filling the same
// segment; the segment returns to the pool only when it is full and its
// last part is sent.
func (p *ResultPartition) FlushAll() {
	for i := range p.subs {
		s := &p.subs[i]
		if s.current == nil || s.sliced == len(s.current.Kinds) {
			continue
		}
		s.queue = append(s.queue, queued{b: p.cut(s.current, s.sliced)})
		s.sliced = len(s.current.Kinds)
	}
}

// EndOfPartition flushes and queues an EndOfPartitionEvent in every
// subpartition: the producer has finished.
func (p *ResultPartition) EndOfPartition() {
	p.writePending(true)
	for i := range p.subs {
		s := &p.subs[i]
		if s.ended {
			continue
		}
		p.finish(i)
		s.queue = append(s.queue, queued{b: &messages.Buffer{Kinds: []byte{KindEndOfPartition}, Keys: []string{""},
			Timestamps: []int64{0}, Values: []float64{0}, IsEvent: true, SizeBytes: 4}})
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
	p.writePending(true) // the barrier follows what the task emitted before it
	var persisted []InFlight
	for i := range p.subs {
		s := &p.subs[i]
		if s.ended {
			continue
		}
		p.finish(i)
		b := BarrierBuffer(barrier)
		if !barrier.Unaligned {
			s.queue = append(s.queue, queued{b: b})
			continue
		}
		for _, q := range s.queue {
			persisted = appendInFlight(persisted, i, q.b)
		}
		s.queue = append([]queued{{b: b}}, s.queue...)
	}
	return persisted
}

// barrierAt is the queue position of the aligned barrier of checkpoint id in
// subpartition i, or -1.
func (p *ResultPartition) barrierAt(i int, id int64) int {
	for k, q := range p.subs[i].queue {
		if b := q.b; b.IsEvent && b.Kinds[0] == KindBarrier && b.CheckpointId == id && !b.Unaligned {
			return k
		}
	}
	return -1
}

// appendInFlight appends the records of data buffer b of subpartition i as
// channel state.
func appendInFlight(dst []InFlight, i int, b *messages.Buffer) []InFlight {
	if b.IsEvent {
		return dst
	}
	for k, kind := range b.Kinds {
		if kind == KindRecord {
			dst = append(dst, InFlight{Subpartition: i, Key: b.Keys[k], Timestamp: b.Timestamps[k], Value: b.Values[k], Payload: PayloadAt(b, k)})
		}
	}
	return dst
}

// Drained reports whether every record written has been sent: no partly
// filled buffer and no data buffer waiting in any subpartition.
func (p *ResultPartition) Drained() bool {
	for i := range p.subs {
		s := &p.subs[i]
		if (s.current != nil && s.sliced < len(s.current.Kinds)) || p.Backlog(i) > 0 || len(s.pending) > 0 {
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
			persisted = appendInFlight(persisted, i, q.b)
		}
		b.b.Unaligned = true
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
	s.local = false
}

// OnLocalRequest registers a LocalInputChannel as subpartition i's
// consumer (LocalInputChannel.requestSubpartitions creates a subpartition
// view in the producer's TaskManager): it reads the producer's buffers
// themselves, without credit; a segment it read goes back to the producer's
// pool when it recycles it (OnLocalRecycle).
func (p *ResultPartition) OnLocalRequest(i int, receiver string) {
	s := &p.subs[i]
	s.receiver = receiver
	s.credit, s.initial, s.announced = 0, 0, false
	s.local = true
}

// OnLocalRecycle returns n segments a local consumer of subpartition i has
// recycled to the pool.
func (p *ResultPartition) OnLocalRecycle(i, n int) {
	for k := 0; k < n; k++ {
		p.release(i)
	}
	p.writePending(false)
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
			q := s.queue[0]
			b := q.b
			if !b.IsEvent && !s.local && s.credit == 0 {
				break
			}
			s.queue[0] = queued{}
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
				if !s.local {
					s.credit--
					if q.segment {
						p.release(i) // netty wrote it: the segment is free
					}
				}
				p.BuffersOut++
				p.BytesOut += int64(b.SizeBytes)
			}
			dst = append(dst, Send{Subpartition: i, Receiver: s.receiver, Response: &messages.BufferResponse{
				ReceiverId: s.receiver, SequenceNumber: s.nextSeq, Backlog: int32(p.Backlog(i)), Buffer: b,
				SegmentEnd: s.local && q.segment}})
			s.nextSeq++
		}
		if !s.local && s.initial == 0 && s.credit == 0 && len(s.queue) > 0 && !s.announced && !s.blocked {
			s.announced = true
			dst = append(dst, Send{Subpartition: i, Receiver: s.receiver, Announcement: &messages.BacklogAnnouncement{
				ReceiverId: s.receiver, Backlog: int32(p.Backlog(i)), SubpartitionIndex: int32(i)}})
		}
	}
	p.writePending(false) // buffers sent may let a waiting broadcast go on
	return dst
}
