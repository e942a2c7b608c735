package window

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// The golden vectors were computed by Flink 1.20's own classes (see the
// file's "source"). Every case is run; a missing file, a file without cases
// or a case kind this test does not know fails the test.

const goldenDir = "../../testdata/golden"

type javaError struct {
	Exception string `json:"exception"`
	Message   string `json:"message"`
}

type pair [2]int64

func (p pair) window() TimeWindow { return TimeWindow{Start: p[0], End: p[1]} }

func windowsOf(ps []pair) []TimeWindow {
	out := make([]TimeWindow, len(ps))
	for i, p := range ps {
		out[i] = p.window()
	}
	return out
}

type goldenMerge struct {
	Result        pair   `json:"result"`
	Merged        []pair `json:"merged"`
	MergedWindows []pair `json:"merged_windows"`
}

type goldenStep struct {
	Timestamp    int64         `json:"timestamp"`
	Assigned     []pair        `json:"assigned"`
	ResultWindow pair          `json:"result_window"`
	MergeCalls   []goldenMerge `json:"merge_calls"`
	WindowsAfter []pair        `json:"windows_after"`
}

type goldenCase struct {
	CaseID         string        `json:"case_id"`
	Kind           string        `json:"kind"`
	Timestamp      *int64        `json:"timestamp"`
	Offset         int64         `json:"offset"`
	Size           int64         `json:"size"`
	Slide          int64         `json:"slide"`
	Gap            int64         `json:"gap"`
	Start          int64         `json:"start"`
	Stagger        string        `json:"stagger"`
	StaggerOffset  *int64        `json:"stagger_offset"`
	ProcessingTime int64         `json:"processing_time"`
	Windows        []pair        `json:"windows"`
	Error          *javaError    `json:"error"`
	Input          []pair        `json:"input"`
	Merges         []goldenMerge `json:"merges"`
	Steps          []goldenStep  `json:"steps"`
	Window         pair          `json:"window"`
	MaxTimestamp   int64         `json:"max_timestamp"`
	A              pair          `json:"a"`
	B              pair          `json:"b"`
	Intersects     bool          `json:"intersects"`
	Cover          pair          `json:"cover"`
}

func loadWindowsGolden(t *testing.T) []goldenCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(goldenDir, "windows.json"))
	if err != nil {
		t.Fatalf("golden file: %v", err)
	}
	var doc struct {
		CaseCount int          `json:"case_count"`
		Cases     []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("windows.json: %v", err)
	}
	if len(doc.Cases) == 0 {
		t.Fatal("windows.json: no cases")
	}
	if doc.CaseCount != len(doc.Cases) {
		t.Fatalf("windows.json: case_count %d but %d cases", doc.CaseCount, len(doc.Cases))
	}
	return doc.Cases
}

func wantFlinkError(t *testing.T, id string, err error, want *javaError) {
	t.Helper()
	if want == nil {
		t.Fatalf("%s: golden case has no error", id)
	}
	var fe *FlinkError
	if !errors.As(err, &fe) {
		t.Errorf("%s: got error %v (%T), want %s %q", id, err, err, want.Exception, want.Message)
		return
	}
	if fe.Exception != want.Exception || err.Error() != want.Message {
		t.Errorf("%s: got %s %q, want %s %q", id, fe.Exception, err.Error(), want.Exception, want.Message)
	}
}

func sameWindows(a, b []TimeWindow) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sortedWindows(ws []TimeWindow) []TimeWindow {
	out := append([]TimeWindow(nil), ws...)
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j]) })
	return out
}

func TestGoldenWindows(t *testing.T) {
	counts := map[string]int{}
	for _, c := range loadWindowsGolden(t) {
		counts[c.Kind]++
		switch c.Kind {
		case "window_start":
			if got := WindowStartWithOffset(*c.Timestamp, c.Offset, c.Size); got != c.Start {
				t.Errorf("%s: WindowStartWithOffset(%d, %d, %d) = %d, want %d", c.CaseID, *c.Timestamp, c.Offset, c.Size, got, c.Start)
			}
		case "tumbling":
			checkTumbling(t, c)
		case "tumbling_error":
			a, err := NewTumblingEventTimeWindows(c.Size, c.Offset, StaggerAligned)
			if err == nil && c.Timestamp != nil {
				_, err = a.AssignWindows(*c.Timestamp, 0)
			}
			wantFlinkError(t, c.CaseID, err, c.Error)
		case "sliding":
			a, err := NewSlidingEventTimeWindows(c.Size, c.Slide, c.Offset)
			if err != nil {
				t.Errorf("%s: %v", c.CaseID, err)
				continue
			}
			got, err := a.AssignWindows(*c.Timestamp, 0)
			if err != nil || !sameWindows(got, windowsOf(c.Windows)) {
				t.Errorf("%s: sliding(%d,%d,%d).assign(%d) = %v, %v; want %v", c.CaseID, c.Size, c.Slide, c.Offset, *c.Timestamp, got, err, windowsOf(c.Windows))
			}
			p, _ := NewSlidingProcessingTimeWindows(c.Size, c.Slide, c.Offset)
			if got, _ := p.AssignWindows(0, *c.Timestamp); !sameWindows(got, windowsOf(c.Windows)) {
				t.Errorf("%s: processing-time twin assigned %v", c.CaseID, got)
			}
		case "sliding_error":
			_, err := NewSlidingEventTimeWindows(c.Size, c.Slide, c.Offset)
			wantFlinkError(t, c.CaseID, err, c.Error)
		case "session_error":
			_, err := NewEventTimeSessionWindows(c.Gap)
			wantFlinkError(t, c.CaseID, err, c.Error)
		case "merge":
			checkMerge(t, c)
		case "session_sequence":
			checkSessionSequence(t, c)
		case "max_timestamp":
			if got := c.Window.window().MaxTimestamp(); got != c.MaxTimestamp {
				t.Errorf("%s: %v.MaxTimestamp() = %d, want %d", c.CaseID, c.Window, got, c.MaxTimestamp)
			}
		case "intersects":
			a, b := c.A.window(), c.B.window()
			if got := a.Intersects(b); got != c.Intersects {
				t.Errorf("%s: %v.Intersects(%v) = %v, want %v", c.CaseID, a, b, got, c.Intersects)
			}
			if got := a.Cover(b); got != c.Cover.window() {
				t.Errorf("%s: %v.Cover(%v) = %v, want %v", c.CaseID, a, b, got, c.Cover.window())
			}
		default:
			t.Errorf("%s: unknown case kind %q", c.CaseID, c.Kind)
		}
	}
	for _, kind := range []string{"window_start", "tumbling", "sliding", "tumbling_error", "sliding_error",
		"session_error", "merge", "session_sequence", "max_timestamp", "intersects"} {
		if counts[kind] == 0 {
			t.Errorf("windows.json has no %q case", kind)
		}
	}
	t.Logf("golden cases run: %v", counts)
}

func checkTumbling(t *testing.T, c goldenCase) {
	t.Helper()
	stagger := StaggerAligned
	switch c.Stagger {
	case "ALIGNED":
	case "NATURAL":
		stagger = StaggerNatural
	default:
		t.Errorf("%s: unknown stagger %q", c.CaseID, c.Stagger)
		return
	}
	if c.StaggerOffset != nil {
		if got := stagger.StaggerOffset(c.ProcessingTime, c.Size); got != *c.StaggerOffset {
			t.Errorf("%s: StaggerOffset(%d, %d) = %d, want %d", c.CaseID, c.ProcessingTime, c.Size, got, *c.StaggerOffset)
		}
	}
	a, err := NewTumblingEventTimeWindows(c.Size, c.Offset, stagger)
	if err != nil {
		t.Errorf("%s: %v", c.CaseID, err)
		return
	}
	got, err := a.AssignWindows(*c.Timestamp, c.ProcessingTime)
	if err != nil || !sameWindows(got, windowsOf(c.Windows)) {
		t.Errorf("%s: tumbling(%d,%d,%s).assign(%d) = %v, %v; want %v", c.CaseID, c.Size, c.Offset, c.Stagger, *c.Timestamp, got, err, windowsOf(c.Windows))
	}
	if stagger == StaggerAligned {
		p, _ := NewTumblingProcessingTimeWindows(c.Size, c.Offset, stagger)
		if got, _ := p.AssignWindows(0, *c.Timestamp); !sameWindows(got, windowsOf(c.Windows)) {
			t.Errorf("%s: processing-time twin assigned %v", c.CaseID, got)
		}
	}
}

func checkMerge(t *testing.T, c goldenCase) {
	t.Helper()
	got := MergeWindows(windowsOf(c.Input))
	if len(got) != len(c.Merges) {
		t.Errorf("%s: MergeWindows(%v) = %v, want %d merges", c.CaseID, c.Input, got, len(c.Merges))
		return
	}
	for i, m := range c.Merges {
		if got[i].Result != m.Result.window() || !sameWindows(sortedWindows(got[i].Merged), windowsOf(m.Merged)) {
			t.Errorf("%s: merge %d = %v, want %v <- %v", c.CaseID, i, got[i], m.Result, m.Merged)
		}
	}
}

func checkSessionSequence(t *testing.T, c goldenCase) {
	t.Helper()
	a, err := NewEventTimeSessionWindows(c.Gap)
	if err != nil {
		t.Fatalf("%s: %v", c.CaseID, err)
	}
	set := NewMergingWindowSet()
	for i, step := range c.Steps {
		assigned, _ := a.AssignWindows(step.Timestamp, 0)
		if !sameWindows(assigned, windowsOf(step.Assigned)) {
			t.Errorf("%s step %d: assigned %v, want %v", c.CaseID, i, assigned, step.Assigned)
		}
		var calls []goldenMerge
		var got TimeWindow
		for _, w := range assigned {
			got, err = set.AddWindow(w, func(result TimeWindow, merged []TimeWindow, stateResult TimeWindow, mergedState []TimeWindow) error {
				var m goldenMerge
				m.Result = pair{result.Start, result.End}
				for _, w := range sortedWindows(merged) {
					m.MergedWindows = append(m.MergedWindows, pair{w.Start, w.End})
				}
				calls = append(calls, m)
				return nil
			})
			if err != nil {
				t.Fatalf("%s step %d: %v", c.CaseID, i, err)
			}
		}
		if got != step.ResultWindow.window() {
			t.Errorf("%s step %d: AddWindow = %v, want %v", c.CaseID, i, got, step.ResultWindow)
		}
		if len(calls) != len(step.MergeCalls) {
			t.Errorf("%s step %d: merge calls %v, want %v", c.CaseID, i, calls, step.MergeCalls)
		} else {
			for j := range calls {
				if calls[j].Result != step.MergeCalls[j].Result || !sameWindows(windowsOf(calls[j].MergedWindows), windowsOf(step.MergeCalls[j].MergedWindows)) {
					t.Errorf("%s step %d: merge call %v, want %v", c.CaseID, i, calls[j], step.MergeCalls[j])
				}
			}
		}
		if got := set.Windows(); !sameWindows(got, windowsOf(step.WindowsAfter)) {
			t.Errorf("%s step %d: windows after %v, want %v", c.CaseID, i, got, step.WindowsAfter)
		}
	}
}
