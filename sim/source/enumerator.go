package source

import (
	"github.com/flinksim/flinksim/messages"
)

// Enumerator is the Kafka source's split enumerator in the JobManager's
// SourceCoordinator (KafkaSourceEnumerator): once the starting offsets
// (and, bounded, the stopping offsets) of every partition are known, each
// registered reader gets the partitions getSplitOwner assigns it, and in
// bounded mode the signal that no more splits come.
type Enumerator struct {
	topic      string
	partitions int
	bounded    bool
	start      map[int32]int64
	stop       map[int32]int64
	haveStart  bool
	haveStop   bool
	readers    []int32 // registered, waiting for their splits
}

// NewEnumerator returns the enumerator of a topic with that many
// partitions; bounded sources stop at the stopping offsets
// (KafkaSource.setBounded).
func NewEnumerator(topic string, partitions int, bounded bool) *Enumerator {
	return &Enumerator{topic: topic, partitions: partitions, bounded: bounded}
}

// SetStartingOffsets takes the starting offset of every partition (the
// OffsetsInitializer's answer, ListOffsets).
func (e *Enumerator) SetStartingOffsets(offs []*messages.PartitionOffset) {
	e.start, e.haveStart = toMap(offs), true
}

// SetStoppingOffsets takes the stopping offset of every partition (bounded).
func (e *Enumerator) SetStoppingOffsets(offs []*messages.PartitionOffset) {
	e.stop, e.haveStop = toMap(offs), true
}

// Restore sets starting offsets from a checkpoint's split states: the next
// assignments start where the checkpoint's readers were.
func (e *Enumerator) Restore(offs []*messages.PartitionOffset) {
	if e.start == nil {
		e.start = map[int32]int64{}
	}
	for _, po := range offs {
		e.start[po.Partition] = po.Offset
	}
}

// Register is a reader's registration (ReaderRegistrationEvent).
func (e *Enumerator) Register(reader int32) { e.readers = append(e.readers, reader) }

// Reset forgets the registered readers (a new attempt's readers register
// again).
func (e *Enumerator) Reset() { e.readers = nil }

func toMap(offs []*messages.PartitionOffset) map[int32]int64 {
	m := map[int32]int64{}
	for _, po := range offs {
		m[po.Partition] = po.Offset
	}
	return m
}

// Assignment is what one reader gets.
type Assignment struct {
	Reader     int32
	Splits     []*messages.KafkaSplit
	Partitions []int64 // the split partitions, for the log
	NoMore     bool    // bounded: NoMoreSplitsEvent follows
}

// Assign hands the registered readers their splits when the offsets are
// known (nothing otherwise): partition p goes to reader
// SplitOwner(topic, p, readers). A reader may get none (more readers than
// partitions).
func (e *Enumerator) Assign(numReaders int) []Assignment {
	if !e.haveStart || (e.bounded && !e.haveStop) {
		return nil
	}
	readers := e.readers
	e.readers = nil
	out := make([]Assignment, 0, len(readers))
	for _, r := range readers {
		a := Assignment{Reader: r, NoMore: e.bounded}
		for p := 0; p < e.partitions; p++ {
			if SplitOwner(e.topic, p, numReaders) != int(r) {
				continue
			}
			sp := &messages.KafkaSplit{Topic: e.topic, Partition: int32(p), StartingOffset: e.start[int32(p)], StoppingOffset: -1}
			if e.bounded {
				sp.StoppingOffset = e.stop[int32(p)]
			}
			a.Splits = append(a.Splits, sp)
			a.Partitions = append(a.Partitions, int64(p))
		}
		out = append(out, a)
	}
	return out
}
