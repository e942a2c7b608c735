package watermark

import (
	"errors"
	"reflect"
	"testing"
)

func TestAlignmentGroupConstructor(t *testing.T) {
	if _, err := NewAlignmentGroup(MaxWatermark, 0); !errors.Is(err, ErrAlignmentDisabled) {
		t.Errorf("drift MAX: %v", err)
	}
	if _, err := NewAlignmentGroup(1000, -1); !errors.Is(err, ErrNegativeUpdateInterval) {
		t.Errorf("negative interval: %v", err)
	}
	g, err := NewAlignmentGroup(1000, 0)
	if err != nil || g.UpdateIntervalMs() != DefaultAlignmentUpdateIntervalMs || g.MaxAllowedDriftMs() != 1000 {
		t.Fatalf("defaults: %v %+v", err, g)
	}
}

func TestAlignmentGroupMaxAllowedWatermark(t *testing.T) {
	tests := []struct {
		name    string
		drift   int64
		reports [][3]int64 // source index, subtask, watermark
		want    int64
	}{
		{"nothing reported: MIN + drift", 1000, nil, MinWatermark + 1000},
		{"minimum over subtasks", 1000, [][3]int64{{0, 0, 1000}, {0, 1, 3000}}, 2000},
		{"minimum over sources", 1000, [][3]int64{{0, 0, 1000}, {0, 1, 3000}, {1, 0, 500}}, 1500},
		{"a later report replaces", 1000, [][3]int64{{0, 0, 1000}, {0, 0, 4000}}, 5000},
		{"all idle: MAX + drift overflows to MAX", 1000, [][3]int64{{0, 0, MaxWatermark}, {1, 0, MaxWatermark}}, MaxWatermark},
		{"negative drift accepted", -200, [][3]int64{{0, 0, 1000}}, 800},
		{"negative drift below MIN overflows to MAX", -10, nil, MaxWatermark},
		{"zero drift", 0, [][3]int64{{0, 0, 7}}, 7},
	}
	sources := []string{"kafka-a", "kafka-b"}
	for _, tt := range tests {
		g, err := NewAlignmentGroup(tt.drift, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range tt.reports {
			g.ReportWatermark(sources[r[0]], int(r[1]), r[2])
		}
		if got := g.MaxAllowedWatermark(); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

// WatermarkAggregator only forwards a source's minimum to the group when it changes, so
// a first report equal to the default (Long.MIN_VALUE) never reaches the group.
func TestAlignmentGroupSourceUpdatesOnlyOnChange(t *testing.T) {
	g, _ := NewAlignmentGroup(100, 0)
	g.ReportWatermark("a", 0, MinWatermark)
	g.ReportWatermark("b", 0, 500)
	if got := g.CombinedWatermark(); got != 500 {
		t.Errorf("combined %d, want 500 (source a never entered the group)", got)
	}
	if a := g.Announce("a"); !reflect.DeepEqual(a.Subtasks, []int{0}) || a.MaxAllowedWatermark != 600 {
		t.Errorf("announce a: %+v", a)
	}
}

func TestAlignmentGroupTick(t *testing.T) {
	g, _ := NewAlignmentGroup(1000, 1000)
	g.ReportWatermark("b", 1, 3000)
	g.ReportWatermark("b", 0, 2500)
	g.ReportWatermark("a", 0, 1000)
	if got := g.Tick(5000); got != nil {
		t.Fatalf("before Start: %v", got)
	}
	g.Start(0)
	if got := g.Tick(999); got != nil {
		t.Fatalf("t=999: %v", got)
	}
	want := []Announcement{
		{Source: "a", MaxAllowedWatermark: 2000, Subtasks: []int{0}},
		{Source: "b", MaxAllowedWatermark: 2000, Subtasks: []int{0, 1}},
	}
	if got := g.Tick(1000); !reflect.DeepEqual(got, want) {
		t.Fatalf("t=1000: %+v, want %+v", got, want)
	}
	if got := g.Tick(1500); got != nil {
		t.Fatalf("t=1500: %v", got)
	}
	if got := g.Tick(3500); len(got) != 2 {
		t.Fatalf("t=3500 (late): %v", got)
	}
	if got := g.Tick(3999); got != nil {
		t.Fatalf("t=3999: next is 4000, got %v", got)
	}
	if got := g.Tick(4000); len(got) != 2 {
		t.Fatalf("t=4000: %v", got)
	}
}

// Two readers with one split each: the fast one is held back as a whole.
func TestAlignmentEndToEnd(t *testing.T) {
	g, _ := NewAlignmentGroup(1000, 0)
	g.Start(0)
	readers := []*SplitMultiplexer{newMux(t, 0, 0), newMux(t, 0, 0)}
	for i, r := range readers {
		r.AddSplit("p")
		mustEvent(t, r, "p", int64(1000+4000*i), 100)
		emit(r, 200)
	}
	for i, r := range readers {
		if wm, ok := r.ReportedWatermark(); ok {
			g.ReportWatermark("kafka", i, wm)
		}
	}
	ann := g.Tick(1000)
	if len(ann) != 1 || ann[0].MaxAllowedWatermark != 1999 {
		t.Fatalf("announcements %+v, want max allowed 999+1000", ann)
	}
	for _, sub := range ann[0].Subtasks {
		readers[sub].OnWatermarkAlignment(ann[0].MaxAllowedWatermark, 0)
	}
	if readers[0].WaitingForAlignment() || !readers[1].WaitingForAlignment() {
		t.Errorf("want reader 0 polling, reader 1 (4999 > 1999) waiting")
	}
}
