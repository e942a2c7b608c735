// Package exchange is Flink's network stack as plain Go: a ResultPartition
// with one ResultSubpartition per consumer subtask and a bounded pool of
// network buffers, the InputGate with its floating buffers, the input
// channels, and credit-based flow control
// (org.apache.flink.runtime.io.network.partition.PipelinedSubpartition,
// ...netty.CreditBasedSequenceNumberingViewReader, ...buffer.LocalBufferPool,
// ...partition.consumer.SingleInputGate, RemoteInputChannel,
// LocalInputChannel).
//
// A buffer holds a fixed number of records (sim.buffer.records, by default
// as many as fit in a segment), or fewer once buffer debloating announced a
// smaller size for its subpartition (debloat.go, SetBufferSize). Watermarks
// and watermark statuses are stream elements written into the same buffers
// as records, as RecordWriter.broadcastEmit does; EndOfPartitionEvent,
// EndOfData and CheckpointBarrier are event buffers, which Flink sends
// without credit and which take no buffer of the pool.
package exchange

import (
	"fmt"
	"slices"

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
	// KindEndOfData is the EndOfData event: the producer has no more records
	// but keeps its partition open for the final checkpoint's barrier
	// (FLIP-147).
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

// bufferConsumer is one entry of a subpartition's queue, as Flink's
// PipelinedSubpartition holds BufferConsumers: a pool buffer (memory
// segment) with the elements written into it so far, or an event buffer.
// Only the last data entry may still be written to (its BufferBuilder is not
// finished); a flush only makes what was written so far readable.
type bufferConsumer struct {
	b        *messages.Buffer
	read     int  // elements handed out already (the reader index)
	finished bool // no more elements are written into it (an event is finished at once)
	event    bool
	removed  bool // polled out of the queue: its segment may still be read by a local consumer
}

func (c *bufferConsumer) unread() int { return len(c.b.Kinds) - c.read }

// Subpartition is one PipelinedSubpartition and the view its consumer's
// InputChannel reads through.
type Subpartition struct {
	queue          []*bufferConsumer // BufferConsumers not yet polled, data and events
	current        *bufferConsumer   // the data entry being written (the last of queue), nil when none
	records        int               // records in current
	flushRequested bool              // a flush made current's data so far readable
	backlog        int               // data entries in queue (buffersInBacklog)
	credit         int               // buffers the remote consumer can still accept
	initial        int               // initial credit of the PartitionRequest (exclusive buffers)
	receiver       string            // the consumer's InputChannel; "" before PartitionRequest
	local          bool              // the consumer is a LocalInputChannel
	demand         int               // local: buffers the LocalInputChannel asks for (its view polls one at a time)
	lent           *bufferConsumer   // local: the entry whose segment the buffer the consumer reads belongs to
	nextSeq        int32             // sequence number of the next BufferResponse
	announced      bool              // a BacklogAnnouncement went out since credit ran out
	ended          bool              // EndOfPartitionEvent queued
	sentEnd        bool              // EndOfPartitionEvent sent
	blocked        bool              // an aligned barrier went out: nothing more until ResumeConsumption
	last           int               // elements of the last buffer finished (the size hint of the next)
	held           int               // pool buffers requested for this subpartition and not yet recycled
	bufferSize     int               // bytes its consumer's debloater announced (NewBufferSize); 0: none, a full segment
	limit          int               // records the buffer being written holds when full
}

// pendingWrite is a stream element the task could not write yet: no buffer
// for its subpartition even with overdraft (the task's thread is blocked in
// requestBufferBuilderBlocking until one is recycled).
type pendingWrite struct {
	sub     int
	kind    ElementKind
	key     string
	ts      int64
	value   float64
	payload []byte
}

// Send is one message the producer must send to a consumer channel.
type Send struct {
	Subpartition int
	Receiver     string
	Response     *messages.BufferResponse      // non-nil: a BufferResponse
	Announcement *messages.BacklogAnnouncement // non-nil: a BacklogAnnouncement
}

// ResultPartition is the output of one producer subtask with its
// LocalBufferPool.
//
// Bounds (checked by CheckBounds): the pool lends at most its size plus
// max-overdraft-buffers-per-gate; every pool buffer in use belongs to one
// subpartition; a subpartition holding max-buffers-per-channel buffers
// makes the pool unavailable, so the producer stops before its next record.
type ResultPartition struct {
	subs             []Subpartition
	pool             LocalBufferPool
	pending          []pendingWrite
	recordsPerBuffer int
	recordBytes      int
	payloads         bool // every buffer carries Payloads, one per element (CarryPayloads)
	endOfData        bool // EndOfData queued
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
	return &ResultPartition{subs: make([]Subpartition, n), pool: LocalBufferPool{size: poolSize},
		recordsPerBuffer: recordsPerBuffer, recordBytes: recordBytes}
}

// CarryPayloads makes every buffer carry each record's payload
// (Buffer.Payloads, one entry per element): an edge whose consumer needs the
// record itself, such as ParseOrder reading the Kafka record's value. The
// buffer's size stays recordBytes per record either way.
func (p *ResultPartition) CarryPayloads() { p.payloads = true }

// NumSubpartitions is the number of subpartitions.
func (p *ResultPartition) NumSubpartitions() int { return len(p.subs) }

// Backlog is the backlog the producer announces for subpartition i, as
// PipelinedSubpartition.getBuffersInBacklogUnsafe counts it: the data
// buffers queued, less the last one when it is a data buffer (taken to be
// still being written, finished or not) unless a flush or the end of the
// partition made it readable; 0 while the subpartition is blocked by an
// aligned barrier.
func (p *ResultPartition) Backlog(i int) int {
	s := &p.subs[i]
	if s.blocked || len(s.queue) == 0 {
		return 0
	}
	if s.flushRequested || s.ended || s.queue[len(s.queue)-1].event {
		return s.backlog
	}
	return max(s.backlog-1, 0)
}

// QueueLengths is, per subpartition in order, the buffers it holds
// (PipelinedSubpartition.unsynchronizedGetNumberOfQueuedBuffers: data
// buffers, the one being written among them, and events): Flink's
// outputQueueLength per subpartition (ResultPartitionMetrics) and, for a
// LocalInputChannel, which reads this queue in place, its inputQueueLength.
func (p *ResultPartition) QueueLengths() []int {
	out := make([]int, len(p.subs))
	for i := range p.subs {
		out[i] = len(p.subs[i].queue)
	}
	return out
}

// Held is, per subpartition, the pool buffers it holds (requested and not
// recycled: queued, being written, or read by a local consumer).
func (p *ResultPartition) Held() []int {
	out := make([]int, len(p.subs))
	for i := range p.subs {
		out[i] = p.subs[i].held
	}
	return out
}

// Credit is the credit the consumer of subpartition i has granted and not
// yet used.
func (p *ResultPartition) Credit(i int) int { return p.subs[i].credit }

// Available reports whether the producer can start on its next record:
// nothing waits to be written, the pool has a free buffer and no
// subpartition holds max-buffers-per-channel of them (RecordWriter.isAvailable,
// LocalBufferPool's availability). A producer that is not available is
// backpressured.
func (p *ResultPartition) Available() bool {
	return len(p.pending) == 0 && p.pool.available()
}

// Blocked reports whether the producer's thread is blocked writing: an
// element waits for a buffer that neither the pool nor the overdraft can
// give now (requestBufferBuilderBlocking). Nothing else runs on the task's
// thread until it is written.
func (p *ResultPartition) Blocked() bool { return len(p.pending) > 0 }

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

// openBuffer starts a new data entry in subpartition i on a pool buffer; it
// reports false when no buffer can be had now.
func (p *ResultPartition) openBuffer(i int) bool {
	if !p.pool.request(&p.subs[i]) {
		return false
	}
	s := &p.subs[i]
	s.limit = s.bufferRecords(p.recordsPerBuffer, p.recordBytes)
	b := &messages.Buffer{}
	// room for as many elements as the subpartition's last buffer held, and
	// a few watermarks, up to a full buffer
	p.slab.carve(b, min(s.limit, max(1, s.last))+4)
	if p.payloads {
		b.Payloads = make([][]byte, 0, cap(b.Kinds))
	}
	c := &bufferConsumer{b: b}
	s.queue = append(s.queue, c)
	s.current = c
	s.backlog++
	return true
}

// bufferRecords is how many records the subpartition's next buffer holds:
// a full segment's, full (sim.buffer.records, or segment-size /
// sim.record.bytes), or, once its consumer's buffer debloater announced a
// size, as many records as fit in that size, at least one and at most a
// segment's (PipelinedSubpartition.bufferSize sizes the BufferBuilders
// BufferWritingResultPartition requests next; Flink lets a record span two
// buffers, here a buffer holds whole records).
func (s *Subpartition) bufferRecords(full, recordBytes int) int {
	if s.bufferSize <= 0 {
		return full
	}
	return min(full, max(1, s.bufferSize/max(1, recordBytes)))
}

// SetBufferSize is NewBufferSize for subpartition i: its consumer's buffer
// debloater announced size bytes (> 0), which the subpartition's next
// buffers take; the buffer being written keeps its size
// (PipelinedSubpartition.bufferSize). It reports false for a size that is
// not positive.
func (p *ResultPartition) SetBufferSize(i, size int) bool {
	if size <= 0 {
		return false
	}
	p.subs[i].bufferSize = size
	return true
}

// AddRecord writes a record into subpartition i. The caller checks Available
// before it starts on the record that produces it; a record that finds no
// buffer even with overdraft waits (Blocked) and is written when one comes
// back.
func (p *ResultPartition) AddRecord(i int, key string, ts int64, value float64) {
	p.AddPayloadRecord(i, key, ts, value, nil)
}

// AddPayloadRecord is AddRecord with the record's payload, which the buffer
// carries when the partition carries payloads (CarryPayloads).
func (p *ResultPartition) AddPayloadRecord(i int, key string, ts int64, value float64, payload []byte) {
	p.RecordsOut++
	w := pendingWrite{sub: i, kind: KindRecord, key: key, ts: ts, value: value, payload: payload}
	if len(p.pending) > 0 || !p.write(w) {
		p.pending = append(p.pending, w)
	}
}

// Broadcast writes a watermark or watermark status into every subpartition
// not ended, in subpartition order (RecordWriter.broadcastEmit). One that
// finds no buffer, even with overdraft, waits with everything after it, and
// the producer is blocked until they are written.
func (p *ResultPartition) Broadcast(kind ElementKind, ts int64) {
	for i := range p.subs {
		if p.subs[i].ended {
			continue
		}
		w := pendingWrite{sub: i, kind: kind, ts: ts}
		if len(p.pending) > 0 || !p.write(w) {
			p.pending = append(p.pending, w)
		}
	}
}

// write writes w into its subpartition's current buffer, opening one when
// needed; it reports false when there is no buffer for it.
func (p *ResultPartition) write(w pendingWrite) bool {
	s := &p.subs[w.sub]
	if s.ended {
		// ResultPartition.checkInProduceState: nothing after the end
		panic("exchange: an element written after the end of the partition")
	}
	if s.current == nil && !p.openBuffer(w.sub) {
		return false
	}
	b := s.current.b
	b.Kinds = append(b.Kinds, w.kind)
	b.Keys = append(b.Keys, w.key)
	b.Timestamps = append(b.Timestamps, w.ts)
	b.Values = append(b.Values, w.value)
	if p.payloads {
		b.Payloads = append(b.Payloads, w.payload)
	}
	if w.kind == KindRecord {
		b.SizeBytes += int32(p.recordBytes)
		s.records++
		if s.records >= s.limit {
			p.finish(w.sub)
		}
	} else {
		b.SizeBytes += elementBytes(w.kind)
	}
	return true
}

// elementBytes is what a stream element other than a record takes in a
// buffer, as StreamElementSerializer writes it behind the record
// serializer's 4-byte length: a Watermark is a tag and a long (13 bytes), a
// WatermarkStatus a tag and an int (9 bytes).
func elementBytes(k ElementKind) int32 {
	if k == KindWatermark {
		return 13
	}
	return 9
}

// writePending writes what waits, in order, until one write finds no buffer.
func (p *ResultPartition) writePending() {
	n := 0
	for n < len(p.pending) && p.write(p.pending[n]) {
		n++
	}
	if n == 0 {
		return
	}
	clear(p.pending[:n])
	p.pending = p.pending[n:]
	if len(p.pending) == 0 {
		p.pending = nil
	}
}

// forcePending writes what waits though no buffer is free (a bug in the
// caller: an event must never overtake the elements the task emitted before
// it). The buffers it takes beyond the bounds fail CheckBounds.
func (p *ResultPartition) forcePending() {
	for _, w := range p.pending {
		s := &p.subs[w.sub]
		if s.current == nil {
			p.pool.take(s)
			s.limit = s.bufferRecords(p.recordsPerBuffer, p.recordBytes)
			c := &bufferConsumer{b: &messages.Buffer{}}
			s.queue = append(s.queue, c)
			s.current = c
			s.backlog++
		}
		p.write(w)
	}
	p.pending = nil
}

// finish ends the BufferBuilder of subpartition i (it is full, or an event
// must follow what was written). A buffer whose data was all read already
// leaves the queue at once.
func (p *ResultPartition) finish(i int) {
	s := &p.subs[i]
	c := s.current
	if c == nil {
		return
	}
	c.finished = true
	// numBuffersOut and numBytesOut count a buffer when its BufferBuilder
	// finishes (BufferWritingResultPartition.finishUnicastBufferBuilder)
	p.BuffersOut++
	p.BytesOut += int64(c.b.SizeBytes)
	s.last = len(c.b.Kinds)
	s.current = nil
	s.records = 0
	if c.unread() == 0 && s.queue[0] == c {
		// read to its end already (only the head can have been read): it
		// leaves the queue
		s.queue[0] = nil
		s.queue = s.queue[1:]
		s.backlog--
		p.subs[i].consumed(&p.pool, c)
	}
}

// consumed is data entry c leaving the subpartition's queue: its segment
// goes back to the pool, unless a local consumer still reads a part of it.
func (s *Subpartition) consumed(pool *LocalBufferPool, c *bufferConsumer) {
	c.removed = true
	if s.lent == c {
		return
	}
	pool.release(s)
}

// FlushAll makes what every subpartition wrote so far readable (the
// OutputFlusher of execution.buffer-timeout, or an explicit flush), as
// PipelinedSubpartition.flush does: it adds no buffer; the reader gets the
// data written so far as a slice of the segment when it polls, while the
// producer goes on filling the same segment.
func (p *ResultPartition) FlushAll() {
	for i := range p.subs {
		s := &p.subs[i]
		if len(s.queue) == 0 || s.flushRequested {
			continue
		}
		s.flushRequested = len(s.queue) > 1 || s.queue[0].event || s.queue[0].unread() > 0
	}
}

// event appends an event buffer to subpartition i, behind what was written
// (BufferWritingResultPartition.broadcastEvent finishes every BufferBuilder
// first).
func (p *ResultPartition) event(i int, b *messages.Buffer) {
	s := &p.subs[i]
	p.finish(i)
	s.queue = append(s.queue, &bufferConsumer{b: b, finished: true, event: true})
}

func eventBuffer(kind ElementKind, size int32) *messages.Buffer {
	return &messages.Buffer{Kinds: []byte{kind}, Keys: []string{""}, Timestamps: []int64{0}, Values: []float64{0},
		IsEvent: true, SizeBytes: size}
}

// EndOfData queues the EndOfData event in every subpartition not ended: the
// producer has no more records (FLIP-147) and waits for its final checkpoint.
// The caller makes sure nothing waits to be written (not Blocked).
func (p *ResultPartition) EndOfData() {
	if p.endOfData {
		return // BufferWritingResultPartition.notifyEndOfData sends it once
	}
	p.endOfData = true
	p.forcePending()
	for i := range p.subs {
		if !p.subs[i].ended {
			p.event(i, eventBuffer(KindEndOfData, 5)) // EventSerializer: the type and the StopMode
		}
	}
}

// EndOfPartition queues an EndOfPartitionEvent in every subpartition: the
// producer has finished (ResultPartition.finish). The caller makes sure
// nothing waits to be written (not Blocked).
func (p *ResultPartition) EndOfPartition() {
	p.forcePending()
	for i := range p.subs {
		s := &p.subs[i]
		if s.ended {
			continue
		}
		p.event(i, eventBuffer(KindEndOfPartition, 4)) // EventSerializer: the type
		s.ended = true
	}
}

// barrierBytes is a CheckpointBarrier as EventSerializer writes it with the
// default checkpoint location: its type, id, timestamp and checkpoint
// options.
const barrierBytes = 38

// BarrierBuffer returns a new CheckpointBarrier event buffer with the
// checkpoint fields of b (id, timestamp in ms, kind, unaligned, inserted);
// each subpartition, or channel, needs its own.
func BarrierBuffer(b *messages.Buffer) *messages.Buffer {
	return &messages.Buffer{Kinds: []byte{KindBarrier}, Keys: []string{""}, Timestamps: []int64{0}, Values: []float64{0},
		IsEvent: true, SizeBytes: barrierBytes, CheckpointId: b.CheckpointId, CheckpointTimestampMs: b.CheckpointTimestampMs,
		CheckpointKind: b.CheckpointKind, Unaligned: b.Unaligned, Inserted: b.Inserted}
}

// Barrier queues a CheckpointBarrier event buffer in every subpartition not
// ended, after finishing every BufferBuilder. Aligned, it goes behind
// everything written so far, as RecordWriter.broadcastEvent does. Unaligned
// (barrier.Unaligned), it is a priority event: it goes to the head of each
// queue, behind the priority events already there, overtaking the buffers
// there (PipelinedSubpartition.add with a
// priority event, processPriorityBuffer), and the data not yet read of those
// buffers is returned as output channel state, in subpartition and queue
// order. The overtaken buffers are still sent after the barrier. The caller
// makes sure nothing waits to be written (not Blocked).
func (p *ResultPartition) Barrier(barrier *messages.Buffer) []InFlight {
	p.forcePending()
	var persisted []InFlight
	for i := range p.subs {
		s := &p.subs[i]
		if s.ended {
			continue
		}
		b := BarrierBuffer(barrier)
		if !barrier.Unaligned {
			p.event(i, b)
			continue
		}
		p.finish(i)
		for _, c := range s.queue {
			persisted = appendInFlight(persisted, i, c)
		}
		s.addPriority(&bufferConsumer{b: b, finished: true, event: true})
	}
	return persisted
}

// isPriority reports whether c is a priority event: an unaligned barrier.
func isPriority(c *bufferConsumer) bool {
	return c.event && c.b.Kinds[0] == KindBarrier && c.b.Unaligned
}

// addPriority puts priority event c into the queue after the priority
// events already there and before everything else
// (PrioritizedDeque.addPriorityElement), so barriers keep their order.
func (s *Subpartition) addPriority(c *bufferConsumer) {
	k := 0
	for k < len(s.queue) && isPriority(s.queue[k]) {
		k++
	}
	s.queue = slices.Insert(s.queue, k, c)
}

// barrierAt is the queue position of the aligned barrier of checkpoint id,
// or -1.
func (s *Subpartition) barrierAt(id int64) int {
	for k, c := range s.queue {
		if b := c.b; c.event && b.Kinds[0] == KindBarrier && b.CheckpointId == id && !b.Unaligned {
			return k
		}
	}
	return -1
}

// appendInFlight appends the records of data entry c not yet read as
// channel state of subpartition i.
func appendInFlight(dst []InFlight, i int, c *bufferConsumer) []InFlight {
	if c.event {
		return dst
	}
	b := c.b
	for k := c.read; k < len(b.Kinds); k++ {
		if b.Kinds[k] == KindRecord {
			dst = append(dst, InFlight{Subpartition: i, Key: b.Keys[k], Timestamp: b.Timestamps[k], Value: b.Values[k], Payload: PayloadAt(b, k)})
		}
	}
	return dst
}

// Drained reports whether every element written has been handed to the
// consumers: nothing waits to be written and no queued buffer has data not
// yet read.
func (p *ResultPartition) Drained() bool {
	if len(p.pending) > 0 {
		return false
	}
	for i := range p.subs {
		for _, c := range p.subs[i].queue {
			if !c.event && c.unread() > 0 {
				return false
			}
		}
	}
	return true
}

// BarrierQueued reports whether the aligned barrier of checkpoint id still
// waits in some subpartition's queue.
func (p *ResultPartition) BarrierQueued(id int64) bool {
	for i := range p.subs {
		if p.subs[i].barrierAt(id) >= 0 {
			return true
		}
	}
	return false
}

// TimeoutBarrier switches the aligned barrier of checkpoint id, where it
// still waits, to unaligned: it moves to the head of its queue, behind the
// priority events already there, overtaking
// the data buffers ahead of it, whose unread records it returns as channel
// state (ResultPartition.alignedBarrierTimeout with
// execution.checkpointing.aligned-checkpoint-timeout).
func (p *ResultPartition) TimeoutBarrier(id int64) []InFlight {
	var persisted []InFlight
	for i := range p.subs {
		s := &p.subs[i]
		at := p.subs[i].barrierAt(id)
		if at < 0 {
			continue
		}
		b := s.queue[at]
		for _, c := range s.queue[:at] {
			persisted = appendInFlight(persisted, i, c)
		}
		b.b.Unaligned = true
		s.queue = slices.Delete(s.queue, at, at+1)
		s.addPriority(b)
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

// OnPartitionRequest registers the remote consumer channel of subpartition i
// with its initial credit in buffers (PartitionRequest): the consumer's
// exclusive buffers, taskmanager.network.memory.buffers-per-channel. The
// initial credit is remembered: only a consumer that asked with 0 gets
// BacklogAnnouncements (see Poll). A new request replaces the previous one.
func (p *ResultPartition) OnPartitionRequest(i int, receiver string, credit int) {
	s := &p.subs[i]
	s.returnLent(&p.pool)
	p.writePending()
	s.receiver = receiver
	s.credit = credit
	s.initial = credit
	s.announced = false
	s.local = false
	s.demand = 0
}

// OnLocalRequest registers a LocalInputChannel as subpartition i's consumer
// (LocalInputChannel.requestSubpartitions creates a subpartition view in the
// producer's TaskManager). It has no credit: it reads the producer's
// buffers in place, one at a time, when its task asks for the next
// (LocalInputChannel.getNextBuffer polls the view), and a segment it read
// goes back to the pool when the task recycles the buffer (OnLocalRecycle).
// The simulator carries each read as a BufferResponse to the channel, and
// the recycle as the request for the next buffer.
func (p *ResultPartition) OnLocalRequest(i int, receiver string) {
	s := &p.subs[i]
	s.returnLent(&p.pool)
	p.writePending()
	s.receiver = receiver
	s.credit, s.initial, s.announced = 0, 0, false
	s.local = true
	s.demand = 1
}

// returnLent gives back the segment a former local consumer of the
// subpartition was reading (a new consumer replaces it).
func (s *Subpartition) returnLent(pool *LocalBufferPool) {
	if c := s.lent; c != nil {
		s.lent = nil
		if c.removed {
			pool.release(s)
		}
	}
}

// OnLocalRecycle is the local consumer of subpartition i having processed
// and recycled n buffers it read: the segment the last one read from goes
// back to the pool once it has left the queue, and the consumer reads the
// next buffer (it asks for one buffer at a time). Elements waiting for a
// buffer are written if one came back.
func (p *ResultPartition) OnLocalRecycle(i, n int) {
	s := &p.subs[i]
	if n <= 0 || !s.local {
		return
	}
	s.returnLent(&p.pool)
	s.demand = 1
	p.writePending()
}

// OnResumeConsumption unblocks subpartition i after an aligned barrier
// (ResumeConsumption). A consumer without exclusive buffers gave its
// floating buffers back when the barrier blocked it, so its credit starts
// again from 0 and the backlog is announced anew
// (CreditBasedSequenceNumberingViewReader.resumeConsumption).
func (p *ResultPartition) OnResumeConsumption(i int) {
	s := &p.subs[i]
	s.blocked = false
	if s.initial == 0 && !s.local {
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

// slice hands out what entry c holds and was not read yet, as
// BufferConsumer.build does: the whole buffer when nothing was read from
// it, else a copy of the rest (its records recordBytes each), carved from
// the slab.
func (sl *elementSlab) slice(c *bufferConsumer, recordBytes int) *messages.Buffer {
	b := c.b
	from := c.read
	c.read = len(b.Kinds)
	if from == 0 && c.finished {
		return b
	}
	n := len(b.Kinds) - from
	out := &messages.Buffer{}
	sl.carve(out, n)
	out.Kinds = append(out.Kinds, b.Kinds[from:]...)
	out.Keys = append(out.Keys, b.Keys[from:]...)
	out.Timestamps = append(out.Timestamps, b.Timestamps[from:]...)
	out.Values = append(out.Values, b.Values[from:]...)
	if b.Payloads != nil {
		out.Payloads = append(make([][]byte, 0, n), b.Payloads[from:]...)
	}
	for _, k := range out.Kinds {
		if k == KindRecord {
			out.SizeBytes += int32(recordBytes)
		} else {
			out.SizeBytes += elementBytes(k)
		}
	}
	return out
}

// Poll returns what can be sent now, subpartition by subpartition, as the
// netty server's PartitionRequestQueue writes it: the head of each queue
// while its consumer can take it. An event needs no credit; a data buffer
// needs one credit of a remote consumer, or the local consumer's ask for
// its next buffer, and is readable once finished, or, while still being
// written, after a flush (PipelinedSubpartition.pollBuffer,
// isDataAvailableUnsafe). Each BufferResponse carries the backlog left
// behind it. A data buffer sent to a remote consumer goes back to the pool
// once its last part is sent; a local consumer returns it when it recycles
// it.
//
// A BacklogAnnouncement goes out as Flink's
// CreditBasedSequenceNumberingViewReader.needAnnounceBacklog decides
// (initialCredit == 0 && numCreditsAvailable == 0): only to a remote
// consumer whose PartitionRequest carried an initial credit of 0 (no
// exclusive buffers, buffers-per-channel=0), when data waits and its credit
// is 0, and then once until new credit comes (OnAddCredit or a new
// OnPartitionRequest); not in a Poll that sent the consumer a
// BufferResponse, which carried the backlog (PartitionRequestQueue announces only
// for a reader it finds unavailable when data comes). A consumer with
// exclusive buffers never gets one: it learns the backlog from the Backlog
// field of each BufferResponse.
func (p *ResultPartition) Poll(dst []Send) []Send {
	for i := range p.subs {
		s := &p.subs[i]
		if s.receiver == "" {
			continue
		}
		sent := false
		for len(s.queue) > 0 && !s.blocked {
			c := s.queue[0]
			var b *messages.Buffer
			switch {
			case c.event:
				b = c.b
				s.queue[0] = nil
				s.queue = s.queue[1:]
				switch {
				case b.Kinds[0] == KindEndOfPartition:
					s.sentEnd = true
				case b.Kinds[0] == KindBarrier && !b.Unaligned:
					// an aligned barrier blocks the subpartition until the
					// consumer's alignment ends (PipelinedSubpartition:
					// isBlocked after a blocking CheckpointBarrier)
					s.blocked = true
				}
			case (s.local && s.demand == 0) || (!s.local && s.credit == 0):
			case c.finished || (s.flushRequested && c.unread() > 0):
				b = p.slab.slice(c, p.recordBytes)
				if c.finished {
					s.queue[0] = nil
					s.queue = s.queue[1:]
					s.backlog--
				} else {
					s.flushRequested = false // all the data there is was read
				}
				if s.local {
					s.demand--
					s.lent = c
				} else {
					s.credit--
				}
				if c.finished {
					p.subs[i].consumed(&p.pool, c)
				}
			}
			if b == nil {
				break
			}
			sent = true
			if len(s.queue) == 0 {
				s.flushRequested = false
			}
			dst = append(dst, Send{Subpartition: i, Receiver: s.receiver, Response: &messages.BufferResponse{
				ReceiverId: s.receiver, SequenceNumber: s.nextSeq, Backlog: int32(p.Backlog(i)), Buffer: b}})
			s.nextSeq++
		}
		if !s.local && s.initial == 0 && s.credit == 0 && !s.announced && !s.blocked && !sent {
			if backlog := p.Backlog(i); backlog > 0 {
				s.announced = true
				dst = append(dst, Send{Subpartition: i, Receiver: s.receiver, Announcement: &messages.BacklogAnnouncement{
					ReceiverId: s.receiver, Backlog: int32(backlog), SubpartitionIndex: int32(i)}})
			}
		}
	}
	p.writePending() // buffers sent may let a waiting write go on
	return dst
}

// CheckBounds checks the pool's bounds and returns what broke, or "": the
// pool lends no more than its size plus the overdraft buffers, the buffers
// lent are the subpartitions', a subpartition queues no more data buffers
// than it holds, and the pool is unavailable exactly while a subpartition
// holds max-buffers-per-channel buffers or more (LocalBufferPool's
// invariants; the per-subpartition bound gates availability, it does not
// refuse a buffer to a record under way).
func (p *ResultPartition) CheckBounds() string {
	for i := range p.subs {
		s := &p.subs[i]
		data := 0
		for _, c := range s.queue {
			if !c.event {
				data++
			}
		}
		if data > s.held {
			return fmt.Sprintf("subpartition %d queues %d data buffers but holds %d pool buffers", i, data, s.held)
		}
	}
	return p.pool.checkBounds(p.subs)
}
