package window

import (
	"strconv"
	"testing"
)

// BenchmarkProcessElement is the default job's window operator: tumbling
// 60 s event-time windows, 100 keys, count, a record every 1 ms of event
// time and the watermark advanced every 1,000 records (firing 100 windows a
// minute). Allocations per op come from the firings only.
func BenchmarkProcessElement(b *testing.B) {
	benchWindows(b, 100)
}

// BenchmarkProcessElementManyKeys is BenchmarkProcessElement over 1,000,000
// keys: nearly every record opens a (key, window) state and registers its
// timer.
func BenchmarkProcessElementManyKeys(b *testing.B) {
	benchWindows(b, 1_000_000)
}

func benchWindows(b *testing.B, keys int) {
	op, err := NewOperator(Config{Assigner: Tumbling, Size: 60_000})
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, keys)
	for i := range names {
		names[i] = "user-" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ts := int64(i)
		op.ProcessElement(names[(i*7919)%keys], ts, 1, ts)
		if i%1000 == 999 {
			op.AdvanceWatermark(ts - 2000)
		}
		if i%100_000 == 0 {
			_ = op.NumWindows() // the per-second gauge
		}
	}
}

// BenchmarkSnapshot copies the state of 100,000 keys with one open window
// and its timer each (a checkpoint of the window operator, or the task's
// final counts).
func BenchmarkSnapshot(b *testing.B) {
	op, err := NewOperator(Config{Assigner: Tumbling, Size: 60_000})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 100_000; i++ {
		op.ProcessElement("user-"+strconv.Itoa(i), int64(i%60_000), 1, 0)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		op.Snapshot()
	}
}
