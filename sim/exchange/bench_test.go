package exchange

import "testing"

// BenchmarkAddRecord writes records round robin into 4 subpartitions of 64
// records per buffer and sends every finished buffer (Poll, every 64 records), the consumer
// granting a credit back for each: the producer side of a keyBy exchange.
func BenchmarkAddRecord(b *testing.B) {
	p := NewResultPartition(4, PoolSize(4, 2, 8), 64, 48)
	for i := 0; i < 4; i++ {
		p.OnPartitionRequest(i, "ch", 2)
	}
	var sends []Send
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sub := i % 4
		p.AddRecord(sub, "user-17", int64(i), 1)
		if i%64 == 63 {
			sends = p.Poll(sends[:0])
			for _, s := range sends {
				p.OnAddCredit(s.Subpartition, 1)
			}
		}
	}
}
