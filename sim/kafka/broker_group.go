package kafka

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/eventlog"
)

// groupCoordinator is the part of Kafka's GroupCoordinator the job reaches:
// the committed offsets of the source's consumer group (OffsetCommit). A
// source reader commits a completed checkpoint's offsets for monitoring only
// (KafkaSourceReader.notifyCheckpointComplete); the job never reads them back.
type groupCoordinator struct {
	committed map[int32]int64 // committed offset per source partition
}

// commitOffsets stores the offsets of m and returns them as the
// offsets_committed event's JSON list.
func (g *groupCoordinator) commitOffsets(m *messages.CommitOffsets) string {
	offs := "["
	for i, po := range m.Offsets {
		g.committed[po.Partition] = po.Offset
		if i > 0 {
			offs += ","
		}
		offs += `{"partition":` + eventlog.Itoa(int64(po.Partition)) + `,"offset":` + eventlog.Itoa(po.Offset) + `}`
	}
	return offs + "]"
}
