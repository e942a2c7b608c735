package exchange

import (
	"math"
	"testing"
)

// BufferSizeEMA with 20 samples (alpha 2/21) from the segment size towards
// 0 shrinks by a factor 19/21 a step: Flink's comment in BufferSizeEMA
// gives 32768, 29647, ... for that; and a large sample grows it by at most
// as much (the instant size is capped at twice the current one).
func TestBufferSizeEMA(t *testing.T) {
	e := NewBufferSizeEMA(32768, 256, 20)
	want := 32768.0
	for k := 1; k <= 5; k++ {
		want *= 19.0 / 21
		if got := e.CalculateBufferSize(0, 1); got != int(math.Round(want)) {
			t.Fatalf("step %d: %d, want %d", k, got, int(math.Round(want)))
		}
	}
	if e.CalculateBufferSize(0, 3) != int(math.Round(want*19/21)) {
		t.Fatal("0 bytes over 3 buffers is the same sample as over 1")
	}
	want *= 19.0 / 21
	// growing: min(huge, 2 * current) = 2 * current, so + alpha * current
	if got := e.CalculateBufferSize(1<<40, 1); got != int(math.Round(want*23/21)) {
		t.Errorf("growth step: %d, want %d", got, int(math.Round(want*23/21)))
	}
	// the minimum bounds it
	m := NewBufferSizeEMA(1000, 900, 1) // alpha 1: the sample itself
	if got := m.CalculateBufferSize(10, 1); got != 900 {
		t.Errorf("below the minimum: %d, want 900", got)
	}
}

// Flink's ThroughputCalculatorTest.testIgnoringIdleTime: 7 bytes, 1 ms,
// paused for 9 ms, 3 bytes (which resumes it), 1 ms: 10 bytes in 2 ms.
func TestThroughputCalculatorIgnoresIdleTime(t *testing.T) {
	c := NewThroughputCalculator()
	c.IncomingDataSize(0, 7)
	c.PauseMeasurement(1)
	c.IncomingDataSize(10, 3)
	if got := c.CalculateThroughput(11); got != 5000 {
		t.Errorf("throughput %d B/s, want 5000", got)
	}
	// nothing measured since: the last throughput again
	if got := c.CalculateThroughput(11); got != 5000 {
		t.Errorf("with no time measured: %d, want the last 5000", got)
	}
	// measured time with no bytes: 0
	if got := c.CalculateThroughput(20); got != 0 {
		t.Errorf("9 ms without data: %d, want 0", got)
	}
}

// BufferDebloater: 33,300 B/s over 20 buffers in use with a 1 s target is
// a desired 1665 bytes a buffer. From 32768 the average moves 2/21 of the
// way a step: 1665 + 31103 * (19/21)^k. The first three steps stay within
// 25 % of 32768 (above 24576) and are not announced; the fourth, 22507, is.
func TestBufferDebloater(t *testing.T) {
	d := NewBufferDebloater(1000, 32768, 256, 25, 20)
	for k := 1; k <= 4; k++ {
		size, announce := d.RecalculateBufferSize(33300, 20)
		want := int(math.Round(1665 + 31103*math.Pow(19.0/21, float64(k))))
		if announce != (k == 4) {
			t.Fatalf("step %d: announce %v (size %d)", k, announce, size)
		}
		if k == 4 && size != want {
			t.Fatalf("step 4 announced %d, want %d", size, want)
		}
		if est := int64(want) * 20 * 1000 / 33300; d.LastEstimatedTimeToConsumeMs != est {
			t.Errorf("step %d: estimated %d ms, want %d", k, d.LastEstimatedTimeToConsumeMs, est)
		}
	}
	if d.LastBufferSize() != 22507 {
		t.Errorf("last size %d, want 22507", d.LastBufferSize())
	}
	// the minimum is always announced once reached, whatever the threshold
	small := NewBufferDebloater(1000, 32768, 256, 1000, 1) // alpha 1
	if size, ok := small.RecalculateBufferSize(100, 10); !ok || size != 256 {
		t.Errorf("at the minimum: %d %v, want 256 announced", size, ok)
	}
}

// A subpartition's next buffer takes the announced size: records of
// recordBytes that fit, at least one, at most a segment's; the buffer being
// written keeps its size.
func TestSetBufferSize(t *testing.T) {
	p := NewResultPartition(1, 10, 327, 100)
	p.OnPartitionRequest(0, "c", 100)
	p.AddRecord(0, "k", 0, 0) // opens a 327-record buffer
	if p.SetBufferSize(0, 0) {
		t.Fatal("size 0 accepted")
	}
	p.SetBufferSize(0, 1650)
	for range 326 {
		p.AddRecord(0, "k", 0, 0)
	}
	if got := len(p.Poll(nil)); got != 1 {
		t.Fatalf("%d buffers after 327 records, want the one full buffer", got)
	}
	for range 16 {
		p.AddRecord(0, "k", 0, 0)
	}
	sends := p.Poll(nil)
	if len(sends) != 1 || len(sends[0].Response.Buffer.Kinds) != 16 {
		t.Fatalf("after 16 more records: %d sends, want one buffer of 1650 / 100 = 16 records", len(sends))
	}
	p.SetBufferSize(0, 50)
	p.AddRecord(0, "k", 0, 0)
	if sends := p.Poll(nil); len(sends) != 1 || len(sends[0].Response.Buffer.Kinds) != 1 {
		t.Fatal("a size below one record: buffers of one record")
	}
}
