package kafka

import "github.com/flinksim/flinksim/messages"

// Topic is a Kafka topic: partitions, each an append-only log of records
// with offsets from its log start offset to its end offset (the offset the
// next record gets). Records are never deleted (no retention).
type Topic struct {
	Name       string
	Partitions []*Partition
}

// Partition is one partition's log.
type Partition struct {
	Records        []*messages.KafkaRecord
	LogStartOffset int64
}

// NewTopic makes a topic with n empty partitions.
func NewTopic(name string, n int) *Topic {
	t := &Topic{Name: name, Partitions: make([]*Partition, n)}
	for i := range t.Partitions {
		t.Partitions[i] = &Partition{}
	}
	return t
}

// EndOffset is the offset the next record of partition p will get (Kafka's
// log end offset, the high watermark for a non-transactional topic).
func (t *Topic) EndOffset(p int) int64 {
	pt := t.Partitions[p]
	return pt.LogStartOffset + int64(len(pt.Records))
}

// Append adds a record to partition r.Partition, setting its offset, and
// returns the offset.
func (t *Topic) Append(r *messages.KafkaRecord) int64 {
	pt := t.Partitions[r.Partition]
	r.Offset = pt.LogStartOffset + int64(len(pt.Records))
	pt.Records = append(pt.Records, r)
	return r.Offset
}

// Read returns up to max records of partition p starting at offset (clamped
// to the log start offset).
func (t *Topic) Read(p int, offset int64, max int) []*messages.KafkaRecord {
	pt := t.Partitions[p]
	if offset < pt.LogStartOffset {
		offset = pt.LogStartOffset
	}
	i := int(offset - pt.LogStartOffset)
	if i >= len(pt.Records) || max <= 0 {
		return nil
	}
	j := min(i+max, len(pt.Records))
	return pt.Records[i:j]
}

// Total is the number of records in all partitions.
func (t *Topic) Total() int64 {
	var n int64
	for _, p := range t.Partitions {
		n += int64(len(p.Records))
	}
	return n
}
