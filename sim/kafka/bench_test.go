package kafka

import (
	"testing"

	"github.com/flinksim/flinksim/sim/vt"
)

// BenchmarkGeneratedTopicHead is the generator at 20,000 records per
// virtual second on 4 partitions with a consumer at the head: one op is one
// 10 ms tick made visible and its records fetched (materialised in one slab
// per partition, values formatted), as the broker does.
func BenchmarkGeneratedTopicHead(b *testing.B) {
	c := GeneratorConfig{Partitions: 4, Rate: 20000, Keys: 100, DisorderMs: 2000, LateMs: 62000, EpochMs: 1_700_000_000_000,
		TickUs: 10_000, Seed: 1, Stream: 2}
	g := NewGeneratedTopic("orders", c)
	read := make([]int64, c.Partitions)
	var vals []byte
	records := 0
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		g.AdvanceTo(vt.Time(i) * c.TickUs)
		vals = vals[:0]
		for p := range read {
			n := int(g.EndOffset(p) - read[p])
			if n == 0 {
				continue
			}
			dst := NewRecords(n)
			g.ReadInto(dst, p, read[p], &vals)
			read[p] += int64(n)
			records += n
		}
	}
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkGeneratedTopicReread reads the generator's records again from
// the start, 500 at a time, long after they left the cache: each block of
// ~4096 records is recomputed from its seed state once.
func BenchmarkGeneratedTopicReread(b *testing.B) {
	c := GeneratorConfig{Partitions: 1, Rate: 20000, Keys: 100, TickUs: 10_000, Seed: 1, Stream: 2}
	g := NewGeneratedTopic("orders", c)
	g.AdvanceTo(60 * 1_000_000) // 1.2M records, most of them evicted
	var vals []byte
	dst := NewRecords(500)
	off := int64(0)
	records := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if off+500 > g.EndOffset(0) {
			off = 0
		}
		vals = vals[:0]
		g.ReadInto(dst, 0, off, &vals)
		off += 500
		records += 500
	}
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkTopicAppendRead appends window results to a stored topic and
// reads each back, as the sink topic and an events file's topic do.
func BenchmarkTopicAppendRead(b *testing.B) {
	t := NewTopic("out", 1)
	value := []byte(`{"key":"user-17","window_start":1700000000000,"window_end":1700000060000,"firing":1,"count":42}`)
	dst := NewRecords(1)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		off := t.AppendRecord(0, int64(i), "user-17", value)
		t.ReadInto(dst, 0, off, nil)
	}
}
