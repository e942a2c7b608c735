package window

import (
	"math"
	"testing"
)

// The expectations below were printed by java.util.HashSet (OpenJDK 17) for
// a class with Flink's TimeWindow.equals/hashCode, adding the windows in the
// given order to a new HashSet and iterating it.
func TestJavaHashSetOrder(t *testing.T) {
	w := func(s, e int64) TimeWindow { return TimeWindow{Start: s, End: e} }
	tests := []struct {
		give []TimeWindow
		want []TimeWindow
	}{
		{give: []TimeWindow{w(0, 10), w(5, 15)}, want: []TimeWindow{w(5, 15), w(0, 10)}},
		{give: []TimeWindow{w(1, 6), w(5, 10)}, want: []TimeWindow{w(1, 6), w(5, 10)}},
		{give: []TimeWindow{w(0, 10), w(9, 21), w(20, 30)}, want: []TimeWindow{w(20, 30), w(9, 21), w(0, 10)}},
		{
			give: []TimeWindow{w(1000, 6000), w(2000, 7000), w(7000, 12000)},
			want: []TimeWindow{w(7000, 12000), w(1000, 6000), w(2000, 7000)},
		},
		{
			give: []TimeWindow{w(0, 10), w(10, 20), w(20, 30), w(30, 40)},
			want: []TimeWindow{w(20, 30), w(10, 20), w(0, 10), w(30, 40)},
		},
		{give: []TimeWindow{w(10000, 13000), w(11600, 14600)}, want: []TimeWindow{w(11600, 14600), w(10000, 13000)}},
		{
			give: []TimeWindow{w(1000, 4000), w(2000, 5000), w(4500, 7500), w(7000, 10000), w(8500, 11500)},
			want: []TimeWindow{w(4500, 7500), w(1000, 4000), w(2000, 5000), w(8500, 11500), w(7000, 10000)},
		},
		{ // 15 windows: the set grows from 16 to 32 buckets
			give: []TimeWindow{w(0, 1), w(1, 2), w(2, 3), w(3, 4), w(4, 5), w(5, 6), w(6, 7), w(7, 8),
				w(8, 9), w(9, 10), w(10, 11), w(11, 12), w(12, 13), w(13, 14), w(14, 15)},
			want: []TimeWindow{w(8, 9), w(3, 4), w(1, 2), w(14, 15), w(10, 11), w(2, 3), w(6, 7), w(4, 5),
				w(12, 13), w(0, 1), w(7, 8), w(9, 10), w(13, 14), w(5, 6), w(11, 12)},
		},
		{give: []TimeWindow{w(3, 4), w(3, 4)}, want: []TimeWindow{w(3, 4)}},
	}
	for _, tt := range tests {
		if got := javaHashSetOrder(tt.give); !sameWindows(got, tt.want) {
			t.Errorf("javaHashSetOrder(%v) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

func TestJavaHashCode(t *testing.T) {
	tests := []struct {
		give TimeWindow
		want int32
	}{
		{TimeWindow{0, 10}, -1456339591},
		{TimeWindow{-5, 3}, -1552742142},
		{TimeWindow{math.MaxInt64, 7}, -1348648608},
	}
	for _, tt := range tests {
		if got := javaHashCode(tt.give); got != tt.want {
			t.Errorf("javaHashCode(%v) = %d, want %d", tt.give, got, tt.want)
		}
	}
}

func TestWindowStartWithOffsetDegenerateSizes(t *testing.T) {
	// Sizes no assigner accepts must not panic.
	if got := WindowStartWithOffset(42, 0, 0); got != 42 {
		t.Errorf("size 0: got %d", got)
	}
	if got := WindowStartWithOffset(math.MinInt64, 0, -1); got != math.MinInt64 {
		t.Errorf("size -1: got %d", got)
	}
}

func TestAssignerConstructorsRefuseMinOffset(t *testing.T) {
	if _, err := NewTumblingEventTimeWindows(0, math.MinInt64, StaggerAligned); err == nil {
		t.Error("tumbling with offset MinInt64 accepted")
	}
	if _, err := NewSlidingEventTimeWindows(10, 0, math.MinInt64); err == nil {
		t.Error("sliding with offset MinInt64 accepted")
	}
}

func TestSlidingStopsAtMinInt64(t *testing.T) {
	a, err := NewSlidingEventTimeWindows(2, 5, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.AssignWindows(math.MinInt64+3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != (TimeWindow{math.MinInt64 + 3, math.MinInt64 + 5}) {
		t.Errorf("got %v", got)
	}
}

func TestProcessingTimeAssignersIgnoreTimestamp(t *testing.T) {
	tu, _ := NewTumblingProcessingTimeWindows(3000, 0, StaggerAligned)
	sl, _ := NewSlidingProcessingTimeWindows(3000, 1000, 0)
	se, _ := NewProcessingTimeSessionWindows(3000)
	tests := []struct {
		a    WindowAssigner
		want []TimeWindow
	}{
		{tu, []TimeWindow{{0, 3000}}},
		{sl, []TimeWindow{{0, 3000}, {-1000, 2000}, {-2000, 1000}}},
		{se, []TimeWindow{{3, 3003}}},
	}
	for _, tt := range tests {
		got, err := tt.a.AssignWindows(math.MaxInt64, 3)
		if err != nil || !sameWindows(got, tt.want) {
			t.Errorf("%T: got %v, %v; want %v", tt.a, got, err, tt.want)
		}
		if tt.a.IsEventTime() {
			t.Errorf("%T claims event time", tt.a)
		}
	}
	if _, err := NewProcessingTimeSessionWindows(0); err == nil || err.Error() != "ProcessingTimeSessionWindows parameters must satisfy 0 < size" {
		t.Errorf("processing session gap 0: %v", err)
	}
	if _, err := NewSlidingProcessingTimeWindows(0, 5, 0); err == nil || err.Error() != "SlidingProcessingTimeWindows parameters must satisfy abs(offset) < slide and size > 0" {
		t.Errorf("processing sliding size 0: %v", err)
	}
	if _, err := NewTumblingProcessingTimeWindows(5, 5, StaggerAligned); err == nil || err.Error() != "TumblingProcessingTimeWindows parameters must satisfy abs(offset) < size" {
		t.Errorf("processing tumbling offset 5: %v", err)
	}
}

func TestNaturalStaggerIsFixedByFirstElement(t *testing.T) {
	a, _ := NewTumblingEventTimeWindows(5000, 0, StaggerNatural)
	first, _ := a.AssignWindows(100, 12345) // stagger offset 2345
	later, _ := a.AssignWindows(100, 99999) // unchanged
	want := TimeWindow{-2655, 2345}
	if first[0] != want || later[0] != want {
		t.Errorf("got %v then %v, want %v twice", first, later, want)
	}
}
