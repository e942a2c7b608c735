// Package source is the Kafka source of Flink's FLIP-27 source API as the
// Kafka connector implements it: the SourceReader of each source subtask
// (KafkaSourceReader with its split fetcher, and the SourceOperator's
// per-split watermarks and watermark alignment) and the split enumerator of
// the JobManager's SourceCoordinator (KafkaSourceEnumerator).
//
// Both are plain state machines: the caller (sim/task, sim/jobmaster)
// hands them what arrives and sends and logs what they return. Time is an
// argument in event-time or processing-time milliseconds.
package source

import (
	"strconv"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/watermark"
)

// ReaderConfig configures a Reader.
type ReaderConfig struct {
	Topic string
	// MaxPollRecords bounds a fetch and the records waiting to be emitted
	// (max.poll.records).
	MaxPollRecords int
	// OutOfOrdernessMs is forBoundedOutOfOrderness's bound, IdleTimeoutMs
	// withIdleness's timeout (0: none).
	OutOfOrdernessMs, IdleTimeoutMs int64
	// EventTime: records feed the watermark generators (false for
	// processing time).
	EventTime bool
}

// Split is one Kafka partition a reader owns (KafkaPartitionSplit with the
// reader's position in it).
type Split struct {
	Partition int32
	ID        string // "topic-partition", the split id
	Offset    int64  // next offset to emit
	Stop      int64  // stopping offset (exclusive); -1: unbounded
	Finished  bool
	Paused    bool // watermark alignment paused fetching it
}

type queued struct {
	split *Split
	rec   *messages.KafkaRecord
}

// Reader is the SourceReader of one source subtask. Records go through it
// in three stages: fetched (one Fetch outstanding at a time, at most
// max.poll.records waiting), then emitted one by one (Peek, Consume), each
// advancing its split's offset and feeding the split's watermark generator.
//
// Invariant: queued records of a split are in offset order and start at the
// split's Offset.
type Reader struct {
	cfg          ReaderConfig
	splits       []*Split
	mux          *watermark.SplitMultiplexer
	fetching     bool
	slab         []fetch1 // one-partition fetches, carved by newFetch
	slab4        []fetchSmall
	fetchID      int64
	queue        []queued
	head         int
	noMoreSplits bool
	gotSplits    bool
	// offsetsToCommit: the split positions each checkpoint's snapshot
	// took, committed when that checkpoint completes
	offsetsToCommit map[int64][]*messages.PartitionOffset
}

// NewReader returns a reader without splits.
func NewReader(cfg ReaderConfig) (*Reader, error) {
	mux, err := watermark.NewSplitMultiplexer(watermark.SplitMultiplexerConfig{
		OutOfOrdernessMs: cfg.OutOfOrdernessMs, IdleTimeoutMs: cfg.IdleTimeoutMs})
	if err != nil {
		return nil, err
	}
	return &Reader{cfg: cfg, mux: mux}, nil
}

// AddSplits takes splits the enumerator assigned (AddSplitEvent). It
// returns the splits that are finished already (stopping offset at or
// before the starting one), for the caller to log.
func (r *Reader) AddSplits(splits []*messages.KafkaSplit) (finished []*Split) {
	r.gotSplits = true
	for _, sp := range splits {
		st := &Split{Partition: sp.Partition, ID: sp.Topic + "-" + strconv.Itoa(int(sp.Partition)),
			Offset: sp.StartingOffset, Stop: sp.StoppingOffset}
		r.splits = append(r.splits, st)
		r.mux.AddSplit(st.ID)
		if st.Stop >= 0 && st.Offset >= st.Stop && r.finish(st) {
			finished = append(finished, st)
		}
	}
	return finished
}

// NoMoreSplits is the enumerator's NoMoreSplitsEvent (bounded sources).
func (r *Reader) NoMoreSplits() {
	r.noMoreSplits = true
	r.mux.NoMoreSplits()
}

// HasNoMoreSplits reports whether the enumerator said so.
func (r *Reader) HasNoMoreSplits() bool { return r.noMoreSplits }

// Splits are the reader's splits in assignment order (read them, never
// change them).
func (r *Reader) Splits() []*Split { return r.splits }

// split is the split with id, or nil.
func (r *Reader) split(id string) *Split {
	for _, st := range r.splits {
		if st.ID == id {
			return st
		}
	}
	return nil
}

// finish marks a split finished; it reports false when it was already.
func (r *Reader) finish(st *Split) bool {
	if st.Finished {
		return false
	}
	st.Finished = true
	r.mux.RemoveSplit(st.ID)
	return true
}

// fetchOffset is the next offset to fetch of a split: after what is
// emitted and queued.
func (r *Reader) fetchOffset(st *Split) int64 {
	for i := len(r.queue) - 1; i >= r.head; i-- {
		if r.queue[i].split == st {
			return r.queue[i].rec.Offset + 1
		}
	}
	return st.Offset
}

// NextFetch returns the Fetch to send for the active splits, or nil when
// one is outstanding, max.poll.records records wait already, no split is
// active, or stopped is set (stop-with-savepoint: the source reads no
// more).
func (r *Reader) NextFetch(stopped bool) *messages.Fetch {
	if r.fetching || stopped || len(r.queue)-r.head >= r.cfg.MaxPollRecords {
		return nil
	}
	n := 0
	for _, st := range r.splits {
		if !st.Finished && !st.Paused {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	req := r.newFetch(n)
	req.Topic, req.MaxRecords = r.cfg.Topic, int32(r.cfg.MaxPollRecords)
	i := 0
	for _, st := range r.splits {
		if !st.Finished && !st.Paused {
			fp := req.Partitions[i]
			fp.Partition, fp.Offset = st.Partition, r.fetchOffset(st)
			i++
		}
	}
	r.fetchID++
	req.RequestId = r.fetchID
	r.fetching = true
	return req
}

// fetch1 is a fetch of one partition (a reader of one split, most often),
// allocated together.
type fetch1 struct {
	f    messages.Fetch
	ptrs [1]*messages.FetchPartition
	part messages.FetchPartition
}

// smallFetch is the most partitions a fetchSmall holds (a source subtask of
// the default job reads two).
const smallFetch = 4

// fetchSmall is a Fetch of 2 to smallFetch partitions, allocated together.
type fetchSmall struct {
	f     messages.Fetch
	ptrs  [smallFetch]*messages.FetchPartition
	parts [smallFetch]messages.FetchPartition
}

// newFetch returns a Fetch of n zero partitions. Fetches of up to
// smallFetch partitions are carved from slabs of the reader's: a Fetch is
// never written after it is sent, nor reused.
func (r *Reader) newFetch(n int) *messages.Fetch {
	if n == 1 {
		if len(r.slab) == 0 {
			r.slab = make([]fetch1, 64)
		}
		f := &r.slab[0]
		r.slab = r.slab[1:]
		f.ptrs[0] = &f.part
		f.f.Partitions = f.ptrs[:]
		return &f.f
	}
	if n <= smallFetch {
		if len(r.slab4) == 0 {
			r.slab4 = make([]fetchSmall, 64)
		}
		f := &r.slab4[0]
		r.slab4 = r.slab4[1:]
		for i := range n {
			f.ptrs[i] = &f.parts[i]
		}
		f.f.Partitions = f.ptrs[:n:n]
		return &f.f
	}
	parts := make([]messages.FetchPartition, n)
	req := &messages.Fetch{Partitions: make([]*messages.FetchPartition, n)}
	for i := range parts {
		req.Partitions[i] = &parts[i]
	}
	return req
}

// OnFetchResponse queues the records of a fetch, up to each split's
// stopping offset.
func (r *Reader) OnFetchResponse(m *messages.FetchResponse) {
	r.fetching = false
	if r.head > 0 && r.head == len(r.queue) {
		r.queue, r.head = r.queue[:0], 0
	}
	for _, pr := range m.Partitions {
		var st *Split
		for _, x := range r.splits {
			if x.Partition == pr.Partition {
				st = x
			}
		}
		if st == nil || st.Finished {
			continue
		}
		for _, rec := range pr.Records {
			if st.Stop >= 0 && rec.Offset >= st.Stop {
				break
			}
			r.queue = append(r.queue, queued{split: st, rec: rec})
		}
	}
}

// Queued is the number of records waiting to be emitted.
func (r *Reader) Queued() int { return len(r.queue) - r.head }

// Peek is the next record to emit (ok false when none waits).
func (r *Reader) Peek() (rec *messages.KafkaRecord, ok bool) {
	if r.head == len(r.queue) {
		return nil, false
	}
	return r.queue[r.head].rec, true
}

// Consume emits the record Peek returned at processing time nowMs: its
// split's offset moves past it and, in event time, its timestamp reaches the
// split's watermark generator. It returns the split when the record was
// its last before the stopping offset (the split finished).
func (r *Reader) Consume(nowMs int64) (finished *Split) {
	q := r.queue[r.head]
	r.head++
	q.split.Offset = q.rec.Offset + 1
	if r.cfg.EventTime {
		// a split the reader owns is known to the multiplexer: no error
		_ = r.mux.OnEvent(q.split.ID, q.rec.Timestamp, nowMs)
	}
	if q.split.Stop >= 0 && q.split.Offset >= q.split.Stop && r.finish(q.split) {
		finished = q.split
	}
	if r.head == len(r.queue) {
		r.queue, r.head = r.queue[:0], 0
	}
	return finished
}

// Compact drops emitted records from the queue when none waits.
func (r *Reader) Compact() {
	if r.head == len(r.queue) {
		r.queue, r.head = r.queue[:0], 0
	}
}

// AlignmentChange is a split that watermark alignment paused or resumed.
type AlignmentChange struct {
	Split     *Split
	Watermark int64 // the split's watermark (ms)
}

// OnWatermarkAlignment applies the coordinator's max allowed watermark
// (SourceOperator.handleOperatorEvent(WatermarkAlignmentEvent)): splits
// whose watermark is ahead of it are paused, paused ones that fell back
// behind it resume; a reader with a single split waits as a whole. nowMs
// is the task's activity clock (the idleness clocks stand still while the
// reader or a split is held back).
func (r *Reader) OnWatermarkAlignment(maxAllowed, nowMs int64) (paused, resumed []AlignmentChange) {
	pause, resume := r.mux.OnWatermarkAlignment(maxAllowed, nowMs)
	for _, id := range pause {
		if st := r.split(id); st != nil {
			st.Paused = true
			wm, _, _ := r.mux.SplitWatermark(id)
			paused = append(paused, AlignmentChange{Split: st, Watermark: wm})
		}
	}
	for _, id := range resume {
		if st := r.split(id); st != nil && st.Paused {
			st.Paused = false
			wm, _, _ := r.mux.SplitWatermark(id)
			resumed = append(resumed, AlignmentChange{Split: st, Watermark: wm})
		}
	}
	return paused, resumed
}

// WaitingForAlignment reports whether a single-split reader ahead of its
// alignment group waits as a whole.
func (r *Reader) WaitingForAlignment() bool { return r.mux.WaitingForAlignment() }

// ReportedWatermark is the watermark the reader reports to the coordinator
// for alignment (ReportedWatermarkEvent); ok false before there is one.
func (r *Reader) ReportedWatermark() (int64, bool) { return r.mux.ReportedWatermark() }

// PeriodicEmit runs the watermark generators (pipeline.auto-watermark-
// interval): the reader's watermark (minimum over its active splits),
// whether it is idle, and whether either changed.
func (r *Reader) PeriodicEmit(nowMs int64) (wm int64, idle, changed bool) {
	return r.mux.OnPeriodicEmit(nowMs)
}

// SplitWatermark is a split's watermark and idleness (ok false for an
// unknown split).
func (r *Reader) SplitWatermark(id string) (wm int64, idle, ok bool) { return r.mux.SplitWatermark(id) }

// Done reports whether a bounded reader has emitted everything: no more
// splits will come, every split finished, nothing waits.
func (r *Reader) Done() bool {
	if !r.noMoreSplits || !r.gotSplits || r.head < len(r.queue) {
		return false
	}
	for _, st := range r.splits {
		if !st.Finished {
			return false
		}
	}
	return true
}

// EndOfInput is the final watermark of a reader whose input ended
// (Long.MAX_VALUE).
func (r *Reader) EndOfInput() (int64, error) { return r.mux.EndOfInput() }

// Snapshot is the reader's state for checkpoint id: each split with its
// position (KafkaSourceReader.snapshotState, which also keeps the positions
// as the offsets to commit when the checkpoint completes).
func (r *Reader) Snapshot(id int64) []*messages.SplitState {
	out := make([]*messages.SplitState, 0, len(r.splits))
	offs := make([]*messages.PartitionOffset, 0, len(r.splits))
	for _, sp := range r.splits {
		out = append(out, &messages.SplitState{Partition: sp.Partition, Offset: sp.Offset, StoppingOffset: sp.Stop})
		offs = append(offs, &messages.PartitionOffset{Partition: sp.Partition, Offset: sp.Offset})
	}
	if len(offs) > 0 {
		if r.offsetsToCommit == nil {
			r.offsetsToCommit = map[int64][]*messages.PartitionOffset{}
		}
		r.offsetsToCommit[id] = offs
	}
	return out
}

// OffsetsToCommit is KafkaSourceReader.notifyCheckpointComplete(id): the
// offsets its snapshot of checkpoint id took (nil when it took none, or they
// were committed already), and the entries up to id are dropped.
func (r *Reader) OffsetsToCommit(id int64) []*messages.PartitionOffset {
	offs := r.offsetsToCommit[id]
	for k := range r.offsetsToCommit {
		if k <= id {
			delete(r.offsetsToCommit, k)
		}
	}
	return offs
}
