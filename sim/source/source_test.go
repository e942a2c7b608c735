package source

import (
	"math"
	"reflect"
	"testing"

	"github.com/flinksim/flinksim/messages"
)

// offsets builds PartitionOffsets for partitions 0.. in order.
func offsets(vs ...int64) []*messages.PartitionOffset {
	out := make([]*messages.PartitionOffset, len(vs))
	for p, v := range vs {
		out[p] = &messages.PartitionOffset{Partition: int32(p), Offset: v}
	}
	return out
}

func parts(as []Assignment) map[int32][]int64 {
	m := map[int32][]int64{}
	for _, a := range as {
		m[a.Reader] = a.Partitions
	}
	return m
}

// KafkaSourceEnumerator.getSplitOwner for topic "orders": String.hashCode
// is -1008770331, ((hash * 31) & 0x7FFFFFFF) is 1163620951, which is 1 mod 2
// and 0 mod 3; partition p goes to (start + p) mod readers. With 2 readers
// reader 0 gets partitions 1 and 3, reader 1 gets 0 and 2; with 3 readers
// on 2 partitions reader 2 gets none.
func TestEnumeratorAssigns(t *testing.T) {
	e := NewEnumerator("orders", 4, false)
	e.Register(1)
	e.Register(0)
	if got := e.Assign(2); got != nil {
		t.Fatalf("assigned %v before the starting offsets were known", got)
	}
	e.SetStartingOffsets(offsets(10, 11, 12, 13))
	got := e.Assign(2)
	if want := map[int32][]int64{0: {1, 3}, 1: {0, 2}}; !reflect.DeepEqual(parts(got), want) {
		t.Fatalf("partitions %v, want %v", parts(got), want)
	}
	if got[0].Reader != 1 || got[0].Splits[0].StartingOffset != 10 || got[0].Splits[0].StoppingOffset != -1 || got[0].NoMore {
		t.Fatalf("first assignment %+v, want reader 1 from offset 10, unbounded", got[0])
	}
	if again := e.Assign(2); len(again) != 0 {
		t.Fatalf("readers assigned twice: %v", again)
	}
	// a restore moves the starting offsets; a new attempt's readers register again
	e.Restore([]*messages.PartitionOffset{{Partition: 3, Offset: 99}})
	e.Register(0)
	if a := e.Assign(2); a[0].Splits[1].Partition != 3 || a[0].Splits[1].StartingOffset != 99 {
		t.Fatalf("restored assignment %+v", a[0].Splits)
	}

	b := NewEnumerator("orders", 2, true)
	for r := int32(0); r < 3; r++ {
		b.Register(r)
	}
	b.SetStartingOffsets(offsets(0, 0))
	if got := b.Assign(3); got != nil {
		t.Fatal("a bounded source assigned before its stopping offsets were known")
	}
	b.SetStoppingOffsets(offsets(5, 7))
	got = b.Assign(3)
	if want := map[int32][]int64{0: {0}, 1: {1}, 2: nil}; !reflect.DeepEqual(parts(got), want) {
		t.Fatalf("bounded partitions %v, want %v", parts(got), want)
	}
	if !got[2].NoMore || got[1].Splits[0].StoppingOffset != 7 {
		t.Fatalf("bounded assignment %+v", got)
	}
}

func records(p int32, from int64, ts ...int64) []*messages.KafkaRecord {
	out := make([]*messages.KafkaRecord, len(ts))
	for i, t := range ts {
		out[i] = &messages.KafkaRecord{Partition: p, Offset: from + int64(i), Timestamp: t, Key: "k"}
	}
	return out
}

// A reader fetches its splits from their positions, one Fetch at a time,
// queues what comes up to each split's stopping offset, emits records one
// by one (each advancing its split's offset and its watermark generator),
// and finishes a split at its stopping offset. Watermarks follow
// forBoundedOutOfOrderness(2 ms): max timestamp - 2 - 1.
func TestReaderFetchesEmitsAndFinishes(t *testing.T) {
	r, err := NewReader(ReaderConfig{Topic: "t", MaxPollRecords: 3, OutOfOrdernessMs: 2, EventTime: true})
	if err != nil {
		t.Fatal(err)
	}
	fin := r.AddSplits([]*messages.KafkaSplit{{Topic: "t", Partition: 0, StartingOffset: 5, StoppingOffset: 8},
		{Topic: "t", Partition: 1, StartingOffset: 4, StoppingOffset: 4}})
	if len(fin) != 1 || fin[0].ID != "t-1" {
		t.Fatalf("finished at once: %v, want t-1 (start = stop)", fin)
	}
	f := r.NextFetch(false)
	if f == nil || len(f.Partitions) != 1 || f.Partitions[0].Offset != 5 || f.MaxRecords != 3 || f.RequestId != 1 {
		t.Fatalf("first fetch %v", f)
	}
	if r.NextFetch(false) != nil {
		t.Fatal("a second fetch while one is outstanding")
	}
	if _, _, changed := r.PeriodicEmit(0); changed {
		t.Fatal("a watermark before any record")
	}
	// the broker answers with 4 records; the one at the stopping offset 8 is dropped
	r.OnFetchResponse(&messages.FetchResponse{RequestId: 1, Partitions: []*messages.PartitionRecords{{Partition: 0, Records: records(0, 5, 100, 104, 102, 200)}}})
	if r.Queued() != 3 || r.NextFetch(false) != nil {
		t.Fatalf("queued %d, a fetch while max.poll.records wait", r.Queued())
	}
	for i, wantOffset := range []int64{6, 7} {
		if rec, _ := r.Peek(); rec.Offset != wantOffset-1 {
			t.Fatalf("record %d has offset %d", i, rec.Offset)
		}
		if f := r.Consume(int64(i)); f != nil {
			t.Fatalf("split finished after offset %d", wantOffset-1)
		}
		if got := r.Splits()[0].Offset; got != wantOffset {
			t.Fatalf("split offset %d, want %d", got, wantOffset)
		}
	}
	if wm, idle, changed := r.PeriodicEmit(2); !changed || idle || wm != 104-2-1 {
		t.Fatalf("watermark %d idle %v changed %v, want 101", wm, idle, changed)
	}
	if f := r.Consume(3); f == nil || f.Offset != 8 {
		t.Fatalf("the last record before the stopping offset did not finish the split: %v", f)
	}
	if r.NextFetch(false) != nil {
		t.Fatal("a fetch with every split finished")
	}
	if r.Done() {
		t.Fatal("done before NoMoreSplits")
	}
	r.NoMoreSplits()
	if !r.Done() {
		t.Fatal("not done with every split finished and nothing queued")
	}
	if wm, err := r.EndOfInput(); err != nil || wm != math.MaxInt64 {
		t.Fatalf("final watermark %d (%v)", wm, err)
	}
	snap := r.Snapshot(7)
	if len(snap) != 2 || snap[0].Offset != 8 || snap[0].StoppingOffset != 8 || snap[1].Offset != 4 {
		t.Fatalf("snapshot %v", snap)
	}
}

// The next fetch starts after what is queued, and a stopped reader
// (stop-with-savepoint) fetches nothing.
func TestReaderFetchOffsetAfterQueue(t *testing.T) {
	r, _ := NewReader(ReaderConfig{Topic: "t", MaxPollRecords: 10})
	r.AddSplits([]*messages.KafkaSplit{{Topic: "t", Partition: 2, StartingOffset: 0, StoppingOffset: -1}})
	r.NextFetch(false)
	r.OnFetchResponse(&messages.FetchResponse{Partitions: []*messages.PartitionRecords{{Partition: 2, Records: records(2, 0, 1, 2)}}})
	if r.NextFetch(true) != nil {
		t.Fatal("a stopped reader fetched")
	}
	f := r.NextFetch(false)
	if f == nil || f.Partitions[0].Offset != 2 || f.RequestId != 2 {
		t.Fatalf("fetch %v, want from offset 2 (after the queued records), request 2", f)
	}
}

// KafkaSourceReader commits, when checkpoint id completes, the offsets its
// snapshot of id stored, not its position then, and forgets older ones.
func TestReaderOffsetsToCommit(t *testing.T) {
	r, _ := NewReader(ReaderConfig{Topic: "t", MaxPollRecords: 10})
	r.AddSplits([]*messages.KafkaSplit{{Topic: "t", Partition: 0, StartingOffset: 3, StoppingOffset: -1}})
	r.Snapshot(1)
	r.NextFetch(false)
	r.OnFetchResponse(&messages.FetchResponse{Partitions: []*messages.PartitionRecords{{Partition: 0, Records: records(0, 3, 1, 2)}}})
	r.Consume(0)
	r.Snapshot(2)
	r.Consume(0)
	if got := r.OffsetsToCommit(2); len(got) != 1 || got[0].Offset != 4 {
		t.Fatalf("checkpoint 2 commits %v, want offset 4 (its snapshot's), not the position 5", got)
	}
	if got := r.OffsetsToCommit(1); got != nil {
		t.Fatalf("checkpoint 1 after 2 commits %v, want nothing (dropped)", got)
	}
}
