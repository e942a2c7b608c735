package source

import "github.com/flinksim/flinksim/sim/keygroup"

// SplitOwner is KafkaSourceEnumerator.getSplitOwner (flink-connector-kafka
// v3.4.0): the source reader (subtask index, in [0, numReaders)) that is
// assigned the split of partition `partition` of `topic`:
//
//	startIndex = ((topic.hashCode() * 31) & 0x7FFFFFFF) % numReaders
//	owner      = (startIndex + partition) % numReaders
//
// with Java's String.hashCode (keygroup.StringHashCode) and int32 wrap-around
// in the multiplication. The partitions of one topic therefore go round-robin
// over the readers from a start index fixed by the topic name; with more
// readers than partitions some readers get no split at all.
//
// partition is expected in [0, 2^31-1-numReaders] (Kafka partition ids start
// at 0). numReaders must be >= 1: Flink would divide by zero at 0; this
// function returns -1 (no reader) for numReaders <= 0.
func SplitOwner(topic string, partition, numReaders int) int {
	if numReaders <= 0 {
		return -1
	}
	start := int((keygroup.StringHashCode(topic)*31)&0x7FFFFFFF) % numReaders
	return (start + partition) % numReaders
}
