package window

import (
	"errors"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The cases of issue 29: 1-minute tumbling windows near both ends of the
// long range, as Flink's arithmetic wraps them (hand-checked:
// 9223372036854775807 = 153722867280912 * 60000 + 55807).
func TestCheckTimestampTumblingEdges(t *testing.T) {
	c := Config{Assigner: Tumbling, Size: 60000}
	tests := []struct {
		ts      int64
		refused bool
		want    string
	}{
		{9223372036854775000, true, "its window [9223372036854720000, 9223372036854780000) lies beyond the range of a long, and Flink's long arithmetic (TimeWindow.getWindowStartWithOffset, TumblingEventTimeWindows.assignWindows) would wrap it to [9223372036854720000, -9223372036854771616)"},
		{9223372036854720000, true, "too close to Long.MAX_VALUE (9223372036854775807) for tumbling windows of 60000 ms"},
		{9223372036854719999, false, ""}, // the last window that ends within the range
		{-9223372036854775000, true, "its window [-9223372036854780000, -9223372036854720000) lies beyond the range of a long, and Flink's long arithmetic (TimeWindow.getWindowStartWithOffset, TumblingEventTimeWindows.assignWindows) would wrap it to [9223372036854771616, -9223372036854720000)"},
		{-9223372036854720001, true, "too close to Long.MIN_VALUE (-9223372036854775808)"},
		{-9223372036854720000, false, ""}, // the first window that starts within the range
		{math.MinInt64, false, ""},        // Flink's "no timestamp": its own RuntimeException at run time
		{1700000000000, false, ""},
	}
	for _, tt := range tests {
		err := c.CheckTimestamp(tt.ts)
		if (err != nil) != tt.refused || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("CheckTimestamp(%d) = %v, want refused %v with %q", tt.ts, err, tt.refused, tt.want)
		}
		var re *TimestampRangeError
		if err != nil && !errors.As(err, &re) {
			t.Errorf("CheckTimestamp(%d): %T, want a *TimestampRangeError", tt.ts, err)
		}
	}
	if err := (Config{Assigner: Tumbling, Size: 60000, TimeCharacteristic: ProcessingTime}).CheckTimestamp(math.MaxInt64); err != nil {
		t.Errorf("processing-time windows ignore the timestamp, got %v", err)
	}
}

// Sliding windows near Long.MIN_VALUE: Flink compares start > ts - size,
// whose right-hand side wraps to a large positive number, and assigns no
// window at all.
func TestCheckTimestampSlidingAndSession(t *testing.T) {
	sl := Config{Assigner: Sliding, Size: 10000, Slide: 5000}
	// Long.MIN_VALUE = -808 (mod 5000): the last start of MIN+908 is MIN+808,
	// and MIN+908-10000 wraps
	if err := sl.CheckTimestamp(math.MinInt64 + 908); err == nil || !strings.Contains(err.Error(), "would wrap its bound and assign the record no window at all") {
		t.Errorf("sliding near Long.MIN_VALUE: %v", err)
	}
	// MIN+3's last start wraps too: [9223372036854771616, ...)
	if err := sl.CheckTimestamp(math.MinInt64 + 3); err == nil || !strings.Contains(err.Error(), "would wrap it to [9223372036854771616, -9223372036854770000)") {
		t.Errorf("sliding near Long.MIN_VALUE: %v", err)
	}
	if err := sl.CheckTimestamp(math.MaxInt64 - 3); err == nil || !strings.Contains(err.Error(), "sliding windows of 10000 ms every 5000 ms") {
		t.Errorf("sliding near Long.MAX_VALUE: %v", err)
	}
	se := Config{Assigner: Session, Gap: 30000}
	if err := se.CheckTimestamp(math.MaxInt64 - 29999); err == nil || !strings.Contains(err.Error(), "EventTimeSessionWindows.assignWindows") {
		t.Errorf("session near Long.MAX_VALUE: %v", err)
	}
	if err := se.CheckTimestamp(math.MaxInt64 - 30000); err != nil {
		t.Errorf("a session window ending at Long.MAX_VALUE fits: %v", err)
	}
	if err := se.CheckTimestamp(math.MinInt64 + 1); err != nil {
		t.Errorf("a session window starting at the timestamp fits: %v", err)
	}
}

// sane is the oracle, written from what a window must be rather than from
// exact arithmetic: every window the assigner gives holds ts and ends after
// it starts, and there are as many as for a timestamp of the same phase in
// the middle of the range.
func sane(c Config, ts int64) bool {
	var a WindowAssigner
	var err error
	switch c.Assigner {
	case Tumbling:
		a, err = NewTumblingEventTimeWindows(c.Size, c.Offset, StaggerAligned)
	case Sliding:
		a, err = NewSlidingEventTimeWindows(c.Size, c.Slide, c.Offset)
	default:
		a, err = NewEventTimeSessionWindows(c.Gap)
	}
	if err != nil {
		panic(err)
	}
	ws, _ := a.AssignWindows(ts, 0)
	for _, w := range ws {
		if !(w.Start <= ts && ts < w.End) {
			return false
		}
	}
	if c.Assigner == Sliding {
		phase := ts % c.Slide
		if phase < 0 {
			phase += c.Slide
		}
		mid, _ := a.AssignWindows(phase+1000*c.Slide, 0)
		return len(ws) == len(mid)
	}
	return len(ws) == 1
}

func TestCheckTimestampAgainstOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := Config{Assigner: AssignerKind(rapid.IntRange(int(Tumbling), int(Session)).Draw(t, "assigner"))}
		c.Size = rapid.Int64Range(1, 100).Draw(t, "size")
		c.Slide = rapid.Int64Range(1, 100).Draw(t, "slide")
		c.Gap = c.Size
		bound := c.Size
		if c.Assigner == Sliding {
			bound = c.Slide
		}
		if c.Assigner != Session {
			c.Offset = rapid.Int64Range(-(bound-1), bound-1).Draw(t, "offset")
		}
		d := rapid.Int64Range(0, 300).Draw(t, "from the edge")
		ts := int64(math.MaxInt64) - d
		if rapid.Bool().Draw(t, "near Long.MIN_VALUE") {
			ts = math.MinInt64 + 1 + d
		}
		err := c.CheckTimestamp(ts)
		if want := sane(c, ts); (err == nil) != want {
			t.Fatalf("%+v ts %d: CheckTimestamp = %v, the oracle says sane %v", c, ts, err, want)
		}
	})
}
