package kafka

import (
	"slices"

	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/vt"
)

// eventsFile is the producer of an events file's records into the source
// topic (--events): all at the start, in the file's order at their arrival
// times, or at their event-time pace, and per partition stalled and resumed
// by pause-partition. It stands for no Kafka or Flink class: it is the
// application that wrote the records, outside the job (the Flink
// playground's data generator). With the built-in generator it holds no
// records.
type eventsFile struct {
	records  []events.Record // nil: the generator fills the source topic
	topic    *Topic          // the source topic the records go to; nil with the generator
	pending  []int           // paced: indexes into records, in append order
	appendAt []vt.Time       // their append times
	next     int
	paused   []bool  // per source partition, its producer is stalled (pause-partition)
	held     [][]int // per source partition, paced records due while it was paused
	maxTs    int64   // the newest event time in the source topic (ms)
	haveTs   bool
}

func newEventsFile(cfg *config.Config, evs []events.Record) eventsFile {
	f := eventsFile{records: evs, paused: make([]bool, cfg.SourcePartitions), held: make([][]int, cfg.SourcePartitions)}
	if evs != nil {
		f.topic = NewTopic(cfg.SourceTopic, cfg.SourcePartitions)
	}
	return f
}

// scheduleFileOrder paces the records in the file's order: each record at
// its arrival field (ms of virtual time from the start of the run), a record
// without one gap after the record before it (the events reader refused
// arrivals that go back).
func (f *eventsFile) scheduleFileOrder(gap vt.Time) {
	f.pending = make([]int, len(f.records))
	f.appendAt = make([]vt.Time, len(f.records))
	prev := vt.Time(0)
	for i, e := range f.records {
		at := prev + gap
		if e.Arrival >= 0 {
			at = vt.FromMillis(e.Arrival)
		}
		f.pending[i], f.appendAt[i] = i, at
		prev = at
	}
}

// scheduleEventTime paces each record at its event-time offset from the
// first record's.
func (f *eventsFile) scheduleEventTime() {
	first := f.records[0].Timestamp
	f.pending = make([]int, len(f.records))
	for i := range f.pending {
		f.pending[i] = i
	}
	at := func(i int) vt.Time { return vt.FromMillis(max(0, f.records[i].Timestamp-first)) }
	slices.SortStableFunc(f.pending, func(a, b int) int {
		ta, tb := at(a), at(b)
		if ta < tb {
			return -1
		}
		if ta > tb {
			return 1
		}
		return 0
	})
	f.appendAt = make([]vt.Time, len(f.pending))
	for i, idx := range f.pending {
		f.appendAt[i] = at(idx)
	}
}

// appendDue appends the paced records due by now (holding those of a
// stalled partition) and returns when the next one is due, false when none
// is left.
func (f *eventsFile) appendDue(now vt.Time) (vt.Time, bool) {
	for f.next < len(f.pending) && f.appendAt[f.next] <= now {
		i := f.pending[f.next]
		if p := f.partitionOf(f.records[i]); f.paused[p] {
			f.held[p] = append(f.held[p], i) // its producer is stalled: it waits
		} else {
			f.appendEvent(i)
		}
		f.next++
	}
	if f.next < len(f.pending) {
		return f.appendAt[f.next], true
	}
	return 0, false
}

// partitionOf is the source partition of a record: its own, or the Kafka
// producer's default partitioner's for its key.
func (f *eventsFile) partitionOf(e events.Record) int32 {
	if e.Partition >= 0 {
		return e.Partition
	}
	return int32(DefaultPartition([]byte(e.Key), f.topic.NumPartitions()))
}

// appendEvent appends record i of the file to its partition.
func (f *eventsFile) appendEvent(i int) {
	e := f.records[i]
	f.appendStored(int(f.partitionOf(e)), e.Timestamp, e.Key, e.Value)
}

// appendStored appends a record to the events file's topic, keeping track
// of the newest event time, and returns its offset.
func (f *eventsFile) appendStored(p int, ts int64, key string, value []byte) int64 {
	if !f.haveTs || ts > f.maxTs {
		f.maxTs, f.haveTs = ts, true
	}
	return f.topic.AppendRecord(p, ts, key, value)
}
