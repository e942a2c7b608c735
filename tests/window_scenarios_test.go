package tests

// Window scenarios: scripts under testdata/window/*.txt drive one
// sim/window.Operator (Flink's WindowOperator with the assigner's default
// trigger and an aggregate function) and record what it emits. One behaviour
// per file; most carry over the inputs and expected outputs of Flink's
// WindowOperatorTest and EventTimeTriggerTest (release-1.20), as noted at
// the top of each file. Regenerate expectations with
//
//	go test ./tests -run TestWindowScenarios -rewrite
//
// and review the diff as you would code.
//
// Verbs (times and durations are virtual milliseconds; an unknown verb, an
// unknown argument, a malformed value or a leftover argument fails the
// test; errors of the operator itself are written into the output):
//
//	operator assigner=tumbling|sliding|session [size=MS] [slide=MS] [gap=MS]
//	         [offset=MS] [stagger=aligned|natural] [time=event|processing]
//	         [lateness=MS] [side-output] [aggregate=count|sum|min|max|avg]
//	    Creates the operator (window.NewOperator). Prints "ok" or the error.
//
//	element key=K ts=MS [value=V] [pt=MS]
//	    Processes one element: event timestamp ts, aggregate input value
//	    (default 1), processing time pt (default: the last processing-time
//	    given, initially 0). Prints what it emitted.
//
//	elements [pt=MS]
//	K TS [V]
//	...
//	    Processes one element per input line, in order, and prints what they
//	    emitted, in order.
//
//	watermark MS
//	    Advances the watermark (AdvanceWatermark) and prints what fired.
//
//	processing-time MS
//	    Advances the processing time (AdvanceProcessingTime) and prints what
//	    fired.
//
//	restart
//	    Snapshot, then a fresh operator with the same config restored from it
//	    (what Flink's tests do with snapshot / close / initializeState /
//	    open). The watermark starts over at Long.MIN_VALUE.
//
//	state
//	    Prints the watermark, each key's live windows (accumulator, firings,
//	    state window when it differs) and timers, and the counters.
//
//	next-timer
//	    Prints the earliest event-time and processing-time timers.
//
// Output of element, elements, watermark and processing-time, one line each:
//
//	key2 [0,3000) count=3 firing=1          a firing (count aggregate)
//	key1 [10,5500) sum=6 count=3 firing=1   other aggregates show their value
//	... late                                fired by a late element
//	late key2 ts=1998 value=1               sent to the late side output
//	dropped key2 ts=1998 (numLateRecordsDropped=1)
//	error: <message>                        the operator refused the input
//	ok                                      nothing to show

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/flinksim/flinksim/sim/window"
)

func TestWindowScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/window", func(t *testing.T, path string) {
		s := &windowScenario{}
		datadriven.RunTest(t, path, s.handle)
	})
}

type windowScenario struct {
	op          *window.Operator
	cfg         window.Config
	pt          int64 // last processing time given
	seenDropped int64 // NumLateRecordsDropped after the last call
}

// argSet hands out a command's arguments by name and fails the test on an
// unknown or leftover one.
type argSet struct {
	t    *testing.T
	d    *datadriven.TestData
	used map[string]bool
}

func newArgSet(t *testing.T, d *datadriven.TestData) *argSet {
	seen := map[string]bool{}
	for _, a := range d.CmdArgs {
		if seen[a.Key] {
			t.Fatalf("%s: argument %q given twice", d.Pos, a.Key)
		}
		seen[a.Key] = true
	}
	return &argSet{t: t, d: d, used: map[string]bool{}}
}

func (a *argSet) lookup(key string) (datadriven.CmdArg, bool) {
	for _, arg := range a.d.CmdArgs {
		if arg.Key == key {
			a.used[key] = true
			return arg, true
		}
	}
	return datadriven.CmdArg{}, false
}

func (a *argSet) str(key string) (string, bool) {
	arg, ok := a.lookup(key)
	if !ok {
		return "", false
	}
	if len(arg.Vals) != 1 {
		a.t.Fatalf("%s: %s needs exactly one value", a.d.Pos, key)
	}
	return arg.Vals[0], true
}

func (a *argSet) int64(key string, def int64) int64 {
	s, ok := a.str(key)
	if !ok {
		return def
	}
	return parseMillis(a.t, a.d, s)
}

func (a *argSet) required(key string) int64 {
	if _, ok := a.lookup(key); !ok {
		a.t.Fatalf("%s: %s is required", a.d.Pos, key)
	}
	return a.int64(key, 0)
}

func (a *argSet) flag(key string) bool {
	arg, ok := a.lookup(key)
	if ok && len(arg.Vals) != 0 {
		a.t.Fatalf("%s: %s takes no value", a.d.Pos, key)
	}
	return ok
}

// positional returns the only argument's key (for "watermark 2999").
func (a *argSet) positional() string {
	if len(a.d.CmdArgs) != 1 || len(a.d.CmdArgs[0].Vals) != 0 {
		a.t.Fatalf("%s: %s takes exactly one plain argument", a.d.Pos, a.d.Cmd)
	}
	a.used[a.d.CmdArgs[0].Key] = true
	return a.d.CmdArgs[0].Key
}

func (a *argSet) done() {
	for _, arg := range a.d.CmdArgs {
		if !a.used[arg.Key] {
			a.t.Fatalf("%s: unknown or leftover argument %q for %s", a.d.Pos, arg.Key, a.d.Cmd)
		}
	}
}

// parseMillis reads an int64 number of milliseconds; "max" and "min" are
// Long.MAX_VALUE and Long.MIN_VALUE, "max-1750" and "min+3" offsets from them.
func parseMillis(t *testing.T, d *datadriven.TestData, s string) int64 {
	base, rest := int64(0), s
	switch {
	case strings.HasPrefix(s, "max"):
		base, rest = math.MaxInt64, strings.TrimPrefix(s, "max")
	case strings.HasPrefix(s, "min"):
		base, rest = math.MinInt64, strings.TrimPrefix(s, "min")
	}
	if rest == "" {
		return base
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil {
		t.Fatalf("%s: %q is not a number of milliseconds", d.Pos, s)
	}
	return base + n
}

func (s *windowScenario) handle(t *testing.T, d *datadriven.TestData) string {
	args := newArgSet(t, d)
	if d.Cmd != "operator" && d.Cmd != "elements" && d.Input != "" {
		t.Fatalf("%s: %s takes no input lines", d.Pos, d.Cmd)
	}
	if d.Cmd != "operator" && s.op == nil {
		t.Fatalf("%s: %s before operator", d.Pos, d.Cmd)
	}
	var out strings.Builder
	switch d.Cmd {
	case "operator":
		cfg := s.parseConfig(args)
		args.done()
		op, err := window.NewOperator(cfg)
		if err != nil {
			s.op = nil
			return "error: " + err.Error() + "\n"
		}
		s.op, s.cfg, s.pt, s.seenDropped = op, cfg, 0, 0
		return "ok\n"

	case "element":
		key, ok := args.str("key")
		if !ok {
			t.Fatalf("%s: key is required", d.Pos)
		}
		ts := args.required("ts")
		value := s.value(args)
		s.pt = args.int64("pt", s.pt)
		args.done()
		s.write(&out, key, ts, s.op.ProcessElement(key, ts, value, s.pt))

	case "elements":
		s.pt = args.int64("pt", s.pt)
		args.done()
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || len(f) > 3 {
				t.Fatalf("%s: element line %q: want KEY TS [VALUE]", d.Pos, line)
			}
			ts := parseMillis(t, d, f[1])
			value := 1.0
			if len(f) == 3 {
				v, err := strconv.ParseFloat(f[2], 64)
				if err != nil {
					t.Fatalf("%s: element line %q: %v", d.Pos, line, err)
				}
				value = v
			}
			s.write(&out, f[0], ts, s.op.ProcessElement(f[0], ts, value, s.pt))
		}

	case "watermark":
		wm := parseMillis(t, d, args.positional())
		args.done()
		s.write(&out, "", 0, s.op.AdvanceWatermark(wm))

	case "processing-time":
		s.pt = parseMillis(t, d, args.positional())
		args.done()
		s.write(&out, "", 0, s.op.AdvanceProcessingTime(s.pt))

	case "restart":
		args.done()
		snap := s.op.Snapshot()
		op, err := window.NewOperator(s.cfg)
		if err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
		if err := op.Restore(snap); err != nil {
			return "error: " + err.Error() + "\n"
		}
		s.op, s.seenDropped = op, 0
		return fmt.Sprintf("restored %d key(s), %d window(s)\n", op.NumKeys(), op.NumWindows())

	case "state":
		args.done()
		s.writeState(&out)

	case "next-timer":
		args.done()
		for _, c := range []struct {
			name string
			next func() (int64, bool)
		}{{"event-time", s.op.NextEventTimeTimer}, {"processing-time", s.op.NextProcessingTimeTimer}} {
			if ts, ok := c.next(); ok {
				fmt.Fprintf(&out, "next %s timer %d\n", c.name, ts)
			} else {
				fmt.Fprintf(&out, "no %s timer\n", c.name)
			}
		}

	default:
		t.Fatalf("%s: unknown verb %q", d.Pos, d.Cmd)
	}
	if out.Len() == 0 {
		return "ok\n"
	}
	return out.String()
}

func (s *windowScenario) value(args *argSet) float64 {
	v, ok := args.str("value")
	if !ok {
		return 1
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		args.t.Fatalf("%s: value %q: %v", args.d.Pos, v, err)
	}
	return f
}

func (s *windowScenario) parseConfig(args *argSet) window.Config {
	var c window.Config
	name, ok := args.str("assigner")
	if !ok {
		args.t.Fatalf("%s: assigner is required", args.d.Pos)
	}
	switch name {
	case "tumbling":
		c.Assigner = window.Tumbling
	case "sliding":
		c.Assigner = window.Sliding
	case "session":
		c.Assigner = window.Session
	default:
		args.t.Fatalf("%s: unknown assigner %q", args.d.Pos, name)
	}
	c.Size = args.int64("size", 0)
	c.Slide = args.int64("slide", 0)
	c.Gap = args.int64("gap", 0)
	c.Offset = args.int64("offset", 0)
	c.AllowedLateness = args.int64("lateness", 0)
	c.SideOutputLateData = args.flag("side-output")
	if v, ok := args.str("stagger"); ok {
		switch v {
		case "aligned":
			c.Stagger = window.StaggerAligned
		case "natural":
			c.Stagger = window.StaggerNatural
		default:
			args.t.Fatalf("%s: unknown stagger %q", args.d.Pos, v)
		}
	}
	if v, ok := args.str("time"); ok {
		switch v {
		case "event":
			c.TimeCharacteristic = window.EventTime
		case "processing":
			c.TimeCharacteristic = window.ProcessingTime
		default:
			args.t.Fatalf("%s: unknown time %q", args.d.Pos, v)
		}
	}
	if v, ok := args.str("aggregate"); ok {
		kinds := map[string]window.AggregateKind{
			"count": window.Count, "sum": window.Sum, "min": window.Min, "max": window.Max, "avg": window.Avg,
		}
		k, known := kinds[v]
		if !known {
			args.t.Fatalf("%s: unknown aggregate %q", args.d.Pos, v)
		}
		c.Aggregate = k
	}
	return c
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// write prints one call's output; key and ts describe the element for the
// "dropped" line (ProcessElement only).
func (s *windowScenario) write(out *strings.Builder, key string, ts int64, o window.Output) {
	if o.Err != nil {
		fmt.Fprintf(out, "error: %v\n", o.Err)
		return
	}
	agg := s.op.Config().Aggregate
	for _, r := range o.Results {
		fmt.Fprintf(out, "%s %v", r.Key, r.Window)
		if agg != window.Count {
			fmt.Fprintf(out, " %v=%s", agg, fmtFloat(r.Value))
		}
		fmt.Fprintf(out, " count=%d firing=%d", r.Count, r.Firing)
		if r.Late {
			out.WriteString(" late")
		}
		out.WriteString("\n")
	}
	for _, l := range o.Late {
		fmt.Fprintf(out, "late %s ts=%d value=%s\n", l.Key, l.Timestamp, fmtFloat(l.Value))
	}
	// Only ProcessElement drops; report a drop by the counter's increase.
	if n := s.op.NumLateRecordsDropped(); n > s.seenDropped {
		fmt.Fprintf(out, "dropped %s ts=%d (numLateRecordsDropped=%d)\n", key, ts, n)
		s.seenDropped = n
	}
}

func (s *windowScenario) writeState(out *strings.Builder) {
	wm := s.op.CurrentWatermark()
	wmText := strconv.FormatInt(wm, 10)
	if wm == math.MinInt64 {
		wmText = "Long.MIN_VALUE"
	}
	fmt.Fprintf(out, "watermark=%s keys=%d windows=%d dropped=%d\n",
		wmText, s.op.NumKeys(), s.op.NumWindows(), s.op.NumLateRecordsDropped())
	agg := s.op.Config().Aggregate
	for _, ks := range s.op.Snapshot() {
		fmt.Fprintf(out, "%s:\n", ks.Key)
		for _, w := range ks.Windows {
			fmt.Fprintf(out, "  window %v count=%d", w.Window, w.Acc.Count)
			if agg != window.Count {
				fmt.Fprintf(out, " %v=%s", agg, fmtFloat(w.Acc.Result(agg)))
			}
			fmt.Fprintf(out, " fired=%d", w.Fired)
			if w.StateWindow != w.Window {
				fmt.Fprintf(out, " state-window=%v", w.StateWindow)
			}
			out.WriteString("\n")
		}
		for _, tm := range ks.EventTimeTimers {
			fmt.Fprintf(out, "  event-time timer %d %v\n", tm.Timestamp, tm.Window)
		}
		for _, tm := range ks.ProcessingTimeTimers {
			fmt.Fprintf(out, "  processing-time timer %d %v\n", tm.Timestamp, tm.Window)
		}
	}
}

// TestExplainWindowCLI runs "flinksim explain window" as a user does (the
// command is built into a temporary directory) and checks its JSON against a
// sample of the golden assigner vectors computed by Flink's own classes
// (testdata/golden/windows.json), its refusals (exit code 2, Flink's
// messages) and one table by hand.
func TestExplainWindowCLI(t *testing.T) {
	skipInShort(t)
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to build the CLI")
	}
	bin := filepath.Join(t.TempDir(), "flinksim")
	if out, err := exec.Command(goTool, "build", "-o", bin, "../cmd/flinksim").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(args ...string) (string, int) {
		cmd := exec.Command(bin, append([]string{"explain", "window"}, args...)...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return string(out), 0
		case errors.As(err, &ee):
			return string(out), ee.ExitCode()
		}
		t.Fatalf("run %v: %v", args, err)
		return "", -1
	}
	type jsonWindow struct {
		Start        int64 `json:"start"`
		End          int64 `json:"end"`
		MaxTimestamp int64 `json:"max_timestamp"`
		CleanupTime  int64 `json:"cleanup_time"`
	}
	runJSON := func(args ...string) []jsonWindow {
		out, code := run(append(args, "--json")...)
		if code != 0 {
			t.Fatalf("explain window %v: exit %d: %s", args, code, out)
		}
		var doc struct {
			Windows []jsonWindow `json:"windows"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Windows == nil {
			t.Fatalf("explain window %v: bad JSON %q: %v", args, out, err)
		}
		return doc.Windows
	}

	// A sample of the golden tumbling and sliding cases.
	raw, err := os.ReadFile("../testdata/golden/windows.json")
	if err != nil {
		t.Fatalf("golden file: %v", err)
	}
	var doc struct {
		Cases []struct {
			CaseID    string     `json:"case_id"`
			Kind      string     `json:"kind"`
			Stagger   string     `json:"stagger"`
			Timestamp int64      `json:"timestamp"`
			Size      int64      `json:"size"`
			Slide     int64      `json:"slide"`
			Offset    int64      `json:"offset"`
			Windows   [][2]int64 `json:"windows"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	sampled := 0
	for i, c := range doc.Cases {
		if (c.Kind != "tumbling" || c.Stagger != "ALIGNED") && c.Kind != "sliding" {
			continue
		}
		if i%53 != 0 && !(c.Kind == "sliding" && len(c.Windows) == 0 && sampled%5 == 0) {
			continue
		}
		sampled++
		args := []string{fmt.Sprintf("--ts=%d", c.Timestamp), fmt.Sprintf("--size=%d", c.Size), fmt.Sprintf("--offset=%d", c.Offset)}
		if c.Kind == "sliding" {
			args = append(args, fmt.Sprintf("--slide=%d", c.Slide))
		}
		got := runJSON(args...)
		want := make([][2]int64, len(c.Windows))
		copy(want, c.Windows)
		sort.Slice(want, func(i, j int) bool { return want[i][0] < want[j][0] })
		if len(got) != len(want) {
			t.Errorf("%s: explain window %v = %v, want %v", c.CaseID, args, got, want)
			continue
		}
		for j, w := range got {
			if w.Start != want[j][0] || w.End != want[j][1] || w.MaxTimestamp != w.End-1 || w.CleanupTime != w.End-1 {
				t.Errorf("%s: explain window %v = %v, want %v", c.CaseID, args, got, want)
			}
		}
	}
	if sampled < 20 {
		t.Fatalf("only %d golden cases sampled", sampled)
	}

	// Durations in Flink's syntax, lateness, overflow and sessions.
	tests := []struct {
		args []string
		want []jsonWindow
	}{
		{[]string{"--ts=4500", "--size=5 s"}, []jsonWindow{{0, 5000, 4999, 4999}}},
		{[]string{"--ts=4500", "--size=10s", "--slide=5000", "--allowed-lateness=1 min"},
			[]jsonWindow{{-5000, 5000, 4999, 64999}, {0, 10000, 9999, 69999}}},
		{[]string{"--ts=1700000000123", "--size=1 d", "--offset=-8 h"},
			[]jsonWindow{{1699977600000, 1700064000000, 1700063999999, 1700063999999}}},
		{[]string{"--ts=4500", "--gap=500 ms", "--allowed-lateness=2"}, []jsonWindow{{4500, 5000, 4999, 5001}}},
		{[]string{"--ts=15", "--size=10", "--slide=20"}, []jsonWindow{}},
		{[]string{"--ts=9223372036854774057", "--size=1000", "--allowed-lateness=2000"},
			[]jsonWindow{{9223372036854774000, 9223372036854775000, 9223372036854774999, math.MaxInt64}}},
	}
	for _, tt := range tests {
		if got := runJSON(tt.args...); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("explain window %v = %v, want %v", tt.args, got, tt.want)
		}
	}

	refusals := []struct {
		args []string
		want string
	}{
		{[]string{"--ts=1", "--size=1000", "--offset=1000"}, "TumblingEventTimeWindows parameters must satisfy abs(offset) < size"},
		{[]string{"--ts=1", "--size=10", "--slide=5", "--offset=5"}, "SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0"},
		{[]string{"--ts=1", "--gap=0"}, "EventTimeSessionWindows parameters must satisfy 0 < size"},
		{[]string{"--ts=-9223372036854775808", "--size=10"}, "Record has Long.MIN_VALUE timestamp"},
		{[]string{"--ts=1", "--size=3 fortnights"}, "Time interval unit label 'fortnights' does not match any of the recognized units"},
		{[]string{"--ts=1", "--size=-5"}, "text does not start with a number"},
		{[]string{"--size=10"}, "--ts is required"},
		{[]string{"--ts=1"}, "give --size (tumbling or sliding windows) or --gap (session windows)"},
		{[]string{"--ts=1", "--gap=5", "--size=5"}, "--gap (session windows) cannot be combined"},
		{[]string{"--ts=1", "--size=5", "extra"}, "explain window takes no arguments"},
		{[]string{"--ts=x", "--size=5"}, "expected epoch milliseconds (e.g. 1700000000123) or an RFC 3339 time"},
	}
	for _, tt := range refusals {
		out, code := run(tt.args...)
		if code != 2 || !strings.Contains(out, tt.want) {
			t.Errorf("explain window %v: exit %d, output %q; want exit 2 and %q", tt.args, code, out, tt.want)
		}
	}

	table, code := run("--ts=4500", "--size=10s", "--slide=5s", "--allowed-lateness=2s")
	wantTable := `timestamp 4500, sliding windows, size 10 s, slide 5 s, offset 0 ms, allowed lateness 2 s

WINDOW        FIRES AT WATERMARK (maxTimestamp)  STATE CLEANED AT WATERMARK (cleanup time)
[-5000,5000)  4999                               6999
[0,10000)     9999                               11999

the element is late (side output, or dropped and counted in numLateRecordsDropped) once the watermark reaches 11999
`
	if code != 0 || table != wantTable {
		t.Errorf("table: exit %d\n%s\nwant\n%s", code, table, wantTable)
	}
}
