package window

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func mustOperator(t *testing.T, c Config) *Operator {
	t.Helper()
	op, err := NewOperator(c)
	if err != nil {
		t.Fatalf("NewOperator(%+v): %v", c, err)
	}
	return op
}

func TestNewOperatorErrors(t *testing.T) {
	tests := []struct {
		give Config
		want string
	}{
		{Config{Assigner: Tumbling, Size: 0}, "TumblingEventTimeWindows parameters must satisfy abs(offset) < size"},
		{Config{Assigner: Tumbling, Size: 10, Offset: -10, TimeCharacteristic: ProcessingTime}, "TumblingProcessingTimeWindows parameters must satisfy abs(offset) < size"},
		{Config{Assigner: Sliding, Size: 10, Slide: 5, Offset: 5}, "SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0"},
		{Config{Assigner: Sliding, Size: -1, Slide: 5, TimeCharacteristic: ProcessingTime}, "SlidingProcessingTimeWindows parameters must satisfy abs(offset) < slide and size > 0"},
		{Config{Assigner: Session, Gap: 0}, "EventTimeSessionWindows parameters must satisfy 0 < size"},
		{Config{Assigner: Session, Gap: -1, TimeCharacteristic: ProcessingTime}, "ProcessingTimeSessionWindows parameters must satisfy 0 < size"},
		{Config{Assigner: Tumbling, Size: 10, AllowedLateness: -1}, "The allowed lateness cannot be negative."},
		{Config{Size: 10}, "window config: unknown assigner AssignerKind(0)"},
		{Config{Assigner: Tumbling, Size: 10, TimeCharacteristic: 7}, "window config: unknown time characteristic TimeCharacteristic(7)"},
		{Config{Assigner: Tumbling, Size: 10, Aggregate: 9}, "window config: unknown aggregate AggregateKind(9)"},
		{Config{Assigner: Tumbling, Size: 10, Stagger: 5}, "window stagger WindowStagger(5) is not supported (only ALIGNED and NATURAL are deterministic)"},
	}
	for _, tt := range tests {
		_, err := NewOperator(tt.give)
		if err == nil || err.Error() != tt.want {
			t.Errorf("NewOperator(%+v) = %v, want %q", tt.give, err, tt.want)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	op := mustOperator(t, Config{Assigner: Session, Gap: 5, Size: 99, Slide: 7}) // size/slide ignored
	c := op.Config()
	if c.TimeCharacteristic != EventTime || c.Aggregate != Count || c.AllowedLateness != 0 {
		t.Errorf("defaults: %+v", c)
	}
	if op.CurrentWatermark() != math.MinInt64 {
		t.Errorf("initial watermark %d", op.CurrentWatermark())
	}
}

// A failed call changes nothing: a record without timestamp for an
// event-time tumbling window is Flink's RuntimeException.
func TestProcessElementErrorChangesNothing(t *testing.T) {
	op := mustOperator(t, Config{Assigner: Tumbling, Size: 10, Stagger: StaggerNatural})
	out := op.ProcessElement("k", math.MinInt64, 1, 1234)
	var fe *FlinkError
	if !errors.As(out.Err, &fe) || fe.Exception != RuntimeException || !strings.HasPrefix(fe.Message, "Record has Long.MIN_VALUE timestamp") {
		t.Fatalf("got %+v", out)
	}
	if op.NumKeys() != 0 || op.NumWindows() != 0 || len(op.Snapshot()) != 0 {
		t.Errorf("state after error: %v", op.Snapshot())
	}
	// The stagger offset was not fixed by the failed call.
	op.ProcessElement("k", 3, 1, 7)
	if got := op.Snapshot()[0].Windows[0].Window; got != (TimeWindow{-3, 7}) {
		t.Errorf("window %v, want [-3,7) (stagger offset 7)", got)
	}
}

// Sliding windows come from the assigner in descending start order; late
// firings of one element are reported in ascending maxTimestamp order.
func TestLateFiringsOfOneElementAreOrdered(t *testing.T) {
	op := mustOperator(t, Config{Assigner: Sliding, Size: 30, Slide: 10, AllowedLateness: 100})
	op.ProcessElement("k", 25, 1, 0)
	op.AdvanceWatermark(60)
	out := op.ProcessElement("k", 25, 1, 0)
	var got []string
	for _, r := range out.Results {
		got = append(got, fmt.Sprintf("%v#%d late=%v count=%d", r.Window, r.Firing, r.Late, r.Count))
	}
	want := []string{"[0,30)#2 late=true count=2", "[10,40)#2 late=true count=2", "[20,50)#2 late=true count=2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestNextTimers(t *testing.T) {
	op := mustOperator(t, Config{Assigner: Tumbling, Size: 1000, TimeCharacteristic: ProcessingTime})
	if _, ok := op.NextProcessingTimeTimer(); ok {
		t.Error("timer before any element")
	}
	op.ProcessElement("b", 0, 1, 1500)
	op.ProcessElement("a", 0, 1, 2500)
	if ts, ok := op.NextProcessingTimeTimer(); !ok || ts != 1999 {
		t.Errorf("next processing timer %d %v, want 1999", ts, ok)
	}
	if _, ok := op.NextEventTimeTimer(); ok {
		t.Error("processing-time operator registered an event-time timer")
	}
	out := op.AdvanceProcessingTime(1999)
	if len(out.Results) != 1 || out.Results[0].Key != "b" {
		t.Errorf("got %+v", out)
	}
	if ts, _ := op.NextProcessingTimeTimer(); ts != 2999 {
		t.Errorf("next %d, want 2999", ts)
	}
	// Watermarks do not fire processing-time windows.
	if out := op.AdvanceWatermark(math.MaxInt64); len(out.Results) != 0 {
		t.Errorf("watermark fired %+v", out)
	}
}

func TestWatermarkNotAdvancingIsNoOp(t *testing.T) {
	op := mustOperator(t, Config{Assigner: Tumbling, Size: 10})
	op.ProcessElement("k", 5, 1, 0)
	if out := op.AdvanceWatermark(20); len(out.Results) != 1 {
		t.Fatalf("got %+v", out)
	}
	for _, wm := range []int64{20, 3, math.MinInt64} {
		if out := op.AdvanceWatermark(wm); len(out.Results) != 0 || op.CurrentWatermark() != 20 {
			t.Errorf("watermark %d: %+v, current %d", wm, out, op.CurrentWatermark())
		}
	}
}

func TestMergeThatWouldBeLateIsRefused(t *testing.T) {
	// Unreachable through ProcessElement (live windows are never late), so
	// call the merge function directly with a watermark past the result.
	op := mustOperator(t, Config{Assigner: Session, Gap: 10})
	op.watermark = 100
	ks := op.keyStateFor("k")
	err := op.mergeFunc("k", ks)(TimeWindow{0, 50}, []TimeWindow{{0, 10}}, TimeWindow{0, 10}, nil)
	want := "The end timestamp of an event-time window cannot become earlier than the current watermark by merging. Current watermark: 100 window: TimeWindow{start=0, end=50}"
	var fe *FlinkError
	if !errors.As(err, &fe) || fe.Exception != UnsupportedOperationException || err.Error() != want {
		t.Errorf("got %v", err)
	}
}

func TestRestoreErrors(t *testing.T) {
	acc := Accumulator{Count: 1, Sum: 1, Min: 1, Max: 1}
	w := TimeWindow{0, 10}
	tests := []struct {
		name   string
		config Config
		give   []KeyState
		want   string
	}{
		{"duplicate key", Config{Assigner: Tumbling, Size: 10},
			[]KeyState{{Key: "a"}, {Key: "a"}}, `restore: duplicate key "a"`},
		{"empty accumulator", Config{Assigner: Tumbling, Size: 10},
			[]KeyState{{Key: "a", Windows: []WindowState{{Window: w, StateWindow: w}}}}, `restore: key "a" window [0,10): accumulator count 0 < 1`},
		{"state window of non-merging", Config{Assigner: Tumbling, Size: 10},
			[]KeyState{{Key: "a", Windows: []WindowState{{Window: w, StateWindow: TimeWindow{0, 5}, Acc: acc}}}}, `restore: key "a" window [0,10): state window [0,5) differs, but the assigner does not merge`},
		{"duplicate window", Config{Assigner: Tumbling, Size: 10},
			[]KeyState{{Key: "a", Windows: []WindowState{{Window: w, StateWindow: w, Acc: acc}, {Window: w, StateWindow: w, Acc: acc}}}}, `restore: key "a": duplicate state window [0,10)`},
		{"timer of another key", Config{Assigner: Tumbling, Size: 10},
			[]KeyState{{Key: "a", EventTimeTimers: []Timer{{Timestamp: 9, Key: "b", Window: w}}}}, `restore: key "a" holds an event-time timer of key "b"`},
		{"negative firings", Config{Assigner: Session, Gap: 10},
			[]KeyState{{Key: "a", Windows: []WindowState{{Window: w, StateWindow: w, Acc: acc, Fired: -1}}}}, `restore: key "a" window [0,10): negative firing count -1`},
	}
	for _, tt := range tests {
		op := mustOperator(t, tt.config)
		op.ProcessElement("keep", 1, 1, 0)
		err := op.Restore(tt.give)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
		if op.NumKeys() != 1 {
			t.Errorf("%s: a failed restore changed the state: %v", tt.name, op.Snapshot())
		}
	}
}

// Restore resets the watermark like a restarted Flink task; restored timers
// fire again once the new watermark passes them, and a window that already
// fired keeps its firing count.
func TestRestoreResetsWatermark(t *testing.T) {
	cfg := Config{Assigner: Tumbling, Size: 10, AllowedLateness: 100}
	op := mustOperator(t, cfg)
	op.ProcessElement("k", 5, 1, 0)
	op.AdvanceWatermark(50) // fires [0,10), cleanup timer at 109 stays
	snap := op.Snapshot()
	if len(snap) != 1 || snap[0].Windows[0].Fired != 1 || len(snap[0].EventTimeTimers) != 1 || snap[0].EventTimeTimers[0].Timestamp != 109 {
		t.Fatalf("snapshot %+v", snap)
	}
	restored := mustOperator(t, cfg)
	if err := restored.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if restored.CurrentWatermark() != math.MinInt64 {
		t.Errorf("watermark after restore %d", restored.CurrentWatermark())
	}
	// Not late any more for the restored operator: the window takes it and
	// registers its trigger timer again (as in Flink after a restore).
	restored.ProcessElement("k", 6, 1, 0)
	out := restored.AdvanceWatermark(60)
	if len(out.Results) != 1 || out.Results[0].Firing != 2 || out.Results[0].Count != 2 || out.Results[0].Late {
		t.Errorf("got %+v", out)
	}
}

func TestMergingWindowSetStateWindowAndRetire(t *testing.T) {
	s := NewMergingWindowSet()
	add := func(w TimeWindow) (TimeWindow, []string) {
		var calls []string
		got, err := s.AddWindow(w, func(r TimeWindow, merged []TimeWindow, sr TimeWindow, mergedState []TimeWindow) error {
			calls = append(calls, fmt.Sprintf("%v<-%v state %v<-%v", r, merged, sr, mergedState))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got, calls
	}
	add(TimeWindow{0, 10})
	add(TimeWindow{20, 30})
	got, calls := add(TimeWindow{9, 21})
	if got != (TimeWindow{0, 30}) {
		t.Errorf("AddWindow = %v", got)
	}
	// HashSet order of {[0,10), [9,21), [20,30)} is [20,30), [9,21), [0,10)
	// (see TestJavaHashSetOrder): [20,30)'s state window is kept.
	want := []string{"[0,30)<-[[20,30) [0,10)] state [20,30)<-[[0,10)]"}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("merge calls %v, want %v", calls, want)
	}
	if sw, ok := s.StateWindow(TimeWindow{0, 30}); !ok || sw != (TimeWindow{20, 30}) {
		t.Errorf("state window %v %v", sw, ok)
	}
	// A window inside an existing one: no merge call, same result window.
	if got, calls := add(TimeWindow{5, 8}); got != (TimeWindow{0, 30}) || len(calls) != 0 {
		t.Errorf("inner window: %v %v", got, calls)
	}
	if err := s.RetireWindow(TimeWindow{1, 2}); err == nil || err.Error() != "Window TimeWindow{start=1, end=2} is not in in-flight window set." {
		t.Errorf("retire unknown: %v", err)
	}
	if err := s.RetireWindow(TimeWindow{0, 30}); err != nil || s.Len() != 0 {
		t.Errorf("retire: %v, len %d", err, s.Len())
	}
}

func TestMergingWindowSetRollsBackOnError(t *testing.T) {
	s := NewMergingWindowSet()
	s.AddWindow(TimeWindow{0, 10}, nil)
	s.AddWindow(TimeWindow{20, 30}, nil)
	before := fmt.Sprint(s.Mapping())
	boom := errors.New("boom")
	_, err := s.AddWindow(TimeWindow{9, 21}, func(TimeWindow, []TimeWindow, TimeWindow, []TimeWindow) error { return boom })
	if !errors.Is(err, boom) || fmt.Sprint(s.Mapping()) != before {
		t.Errorf("err %v, mapping %v, want %v", err, s.Mapping(), before)
	}
}

func TestAccumulator(t *testing.T) {
	var a Accumulator
	for _, v := range []float64{3, -1, 7} {
		a = a.add(v)
	}
	want := map[AggregateKind]float64{Count: 3, Sum: 9, Min: -1, Max: 7, Avg: 3}
	for k, v := range want {
		if got := a.Result(k); got != v {
			t.Errorf("%v = %v, want %v", k, got, v)
		}
	}
	b := Accumulator{}.add(10)
	if m := a.merge(b); m != (Accumulator{Count: 4, Sum: 19, Min: -1, Max: 10}) {
		t.Errorf("merge %+v", m)
	}
	if m := (Accumulator{}).merge(b); m != b {
		t.Errorf("merge into empty %+v", m)
	}
	if got := (Accumulator{}).Result(Avg); got != 0 {
		t.Errorf("avg of nothing %v", got)
	}
}

// Many re-registrations and deletions keep the timer heap bounded.
func TestTimerQueueCompacts(t *testing.T) {
	q := newTimerQueue()
	tm := Timer{Timestamp: 5, Key: "k", Window: TimeWindow{0, 6}}
	for i := 0; i < 10000; i++ {
		q.register(tm)
		q.delete(tm)
	}
	q.register(tm)
	if len(q.h) > 100 || q.len() != 1 {
		t.Errorf("heap %d entries, %d live", len(q.h), q.len())
	}
	if got, ok := q.popUpTo(5); !ok || got != tm {
		t.Errorf("pop %v %v", got, ok)
	}
	if _, ok := q.peek(); ok {
		t.Error("timer left")
	}
}
