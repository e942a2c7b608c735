package kafka

import "github.com/flinksim/flinksim/messages"

// Log is what a consumer of a source topic reads through: a Topic (records
// stored as they were appended) or a GeneratedTopic (the built-in generator's
// records, recomputed from the seed when read).
type Log interface {
	// NumPartitions is the number of partitions.
	NumPartitions() int
	// LogStartOffset is the first offset of partition p.
	LogStartOffset(p int) int64
	// EndOffset is the offset the next record of partition p will get.
	EndOffset(p int) int64
	// Total is the number of records in all partitions.
	Total() int64
	// ReadInto fills dst with the len(dst) records of partition p from
	// offset on; the caller makes sure they exist (offset >= the log start
	// offset, offset+len(dst) <= EndOffset(p)). Values that must be
	// formatted are appended to *vals, which the records then share; stored
	// values are shared with the topic's arena. Both are read-only.
	ReadInto(dst []*messages.KafkaRecord, p int, offset int64, vals *[]byte)
}

// arenaChunk is the size of one chunk of a partition's value arena (bytes);
// a larger value gets a chunk of its own.
const arenaChunk = 1 << 20

// Topic is a Kafka topic: partitions, each an append-only log of records
// with offsets from its log start offset to its end offset (the offset the
// next record gets). Records are never deleted (no retention).
//
// Storage is pointer-free per record: a partition keeps offset-indexed
// arrays of timestamps, key numbers and value positions, and the value bytes
// in an arena of large chunks; keys are interned once per topic. A record is
// materialised (a *messages.KafkaRecord) only when it is read. Cost per
// record: 24 bytes plus its value; Append is one map probe (the key) and
// amortised O(1); reads are O(records read). Not safe for concurrent use.
type Topic struct {
	Name  string
	parts []partition
	keys  []string         // interned keys by number
	keyNo map[string]int32 // key -> number
}

// partition is one partition's log: record i (offset start+i) has
// timestamp ts[i], key keys[key[i]] and value chunks[chunk[i]][off[i]:off[i]+n[i]].
type partition struct {
	start  int64
	ts     []int64
	key    []int32
	chunk  []uint32
	off    []uint32
	n      []uint32
	chunks [][]byte
}

// NewTopic makes a topic with n empty partitions.
func NewTopic(name string, n int) *Topic {
	return &Topic{Name: name, parts: make([]partition, n), keyNo: map[string]int32{}}
}

var _ Log = (*Topic)(nil)

// NumPartitions is the number of partitions.
func (t *Topic) NumPartitions() int { return len(t.parts) }

// LogStartOffset is the first offset of partition p (0: nothing is ever
// deleted).
func (t *Topic) LogStartOffset(p int) int64 { return t.parts[p].start }

// EndOffset is the offset the next record of partition p will get (Kafka's
// log end offset, the high watermark for a non-transactional topic).
func (t *Topic) EndOffset(p int) int64 {
	pt := &t.parts[p]
	return pt.start + int64(len(pt.ts))
}

// Append adds a record to partition r.Partition, setting its offset, and
// returns the offset. The topic keeps a copy of r's key and value, not r.
func (t *Topic) Append(r *messages.KafkaRecord) int64 {
	r.Offset = t.AppendRecord(int(r.Partition), r.Timestamp, r.Key, r.Value)
	return r.Offset
}

// AppendRecord adds a record with timestamp ts (ms), key and a copy of
// value to partition p and returns its offset.
func (t *Topic) AppendRecord(p int, ts int64, key string, value []byte) int64 {
	pt := &t.parts[p]
	kn, ok := t.keyNo[key]
	if !ok {
		kn = int32(len(t.keys))
		t.keys = append(t.keys, key)
		t.keyNo[key] = kn
	}
	c := len(pt.chunks) - 1
	if c < 0 || len(pt.chunks[c])+len(value) > cap(pt.chunks[c]) {
		pt.chunks = append(pt.chunks, make([]byte, 0, max(arenaChunk, len(value))))
		c++
	}
	pt.off = append(pt.off, uint32(len(pt.chunks[c])))
	pt.chunks[c] = append(pt.chunks[c], value...)
	pt.chunk = append(pt.chunk, uint32(c))
	pt.n = append(pt.n, uint32(len(value)))
	pt.ts = append(pt.ts, ts)
	pt.key = append(pt.key, kn)
	return pt.start + int64(len(pt.ts)-1)
}

// fill materialises record i (offset start+i) of partition p into r.
func (t *Topic) fill(r *messages.KafkaRecord, p, i int) {
	pt := &t.parts[p]
	r.Partition = int32(p)
	r.Offset = pt.start + int64(i)
	r.Timestamp = pt.ts[i]
	r.Key = t.keys[pt.key[i]]
	if n := pt.n[i]; n > 0 {
		a := pt.off[i]
		r.Value = pt.chunks[pt.chunk[i]][a : a+n : a+n]
	} else {
		r.Value = nil
	}
}

// ReadInto implements Log.
func (t *Topic) ReadInto(dst []*messages.KafkaRecord, p int, offset int64, _ *[]byte) {
	i := int(offset - t.parts[p].start)
	for j, r := range dst {
		t.fill(r, p, i+j)
	}
}

// Read returns up to limit records of partition p starting at offset
// (clamped to the log start offset), as new records.
func (t *Topic) Read(p int, offset int64, limit int) []*messages.KafkaRecord {
	return Read(t, p, offset, limit)
}

// Read returns up to limit records of partition p of l starting at offset
// (clamped to the log start offset), as new records; nil if there are none.
func Read(l Log, p int, offset int64, limit int) []*messages.KafkaRecord {
	offset = Clamp(l, p, offset)
	n := int(min(int64(limit), l.EndOffset(p)-offset))
	if n <= 0 {
		return nil
	}
	dst := NewRecords(n)
	var vals []byte
	l.ReadInto(dst, p, offset, &vals)
	return dst
}

// Clamp is offset raised to partition p's log start offset.
func Clamp(l Log, p int, offset int64) int64 { return max(offset, l.LogStartOffset(p)) }

// NewRecords returns n pointers to n new zero records, allocated together.
func NewRecords(n int) []*messages.KafkaRecord {
	slab := make([]messages.KafkaRecord, n)
	out := make([]*messages.KafkaRecord, n)
	for i := range slab {
		out[i] = &slab[i]
	}
	return out
}

// Total is the number of records in all partitions.
func (t *Topic) Total() int64 {
	var n int64
	for p := range t.parts {
		n += int64(len(t.parts[p].ts))
	}
	return n
}
