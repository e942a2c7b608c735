package tests

// Process-function scenarios: scripts under testdata/process/*.txt drive one
// sim/process.Function (the counting KeyedProcessFunction with a TTL'd
// ValueState<Long>, Flink 1.20's StateTtlConfig with OnCreateAndWrite,
// NeverReturnExpired, processing time and cleanupFullSnapshot) and record
// what it emits and holds. One behaviour per file; the expected values are
// worked out by hand in each file's comments. Regenerate expectations with
//
//	go test ./tests -run TestProcessScenarios -rewrite
//
// and review the diff as you would code.
//
// Verbs (times are virtual milliseconds of processing time, "max"/"min" and
// "max-5" style offsets allowed; a TTL is milliseconds or a Go duration such
// as 10s or 1m30s; an unknown verb, an unknown argument, a malformed value
// or a leftover argument fails the test; errors of the function itself are
// written into the output):
//
//	function [ttl=DURATION]
//	    Creates the function (process.New); no ttl or ttl=0 means no TTL.
//	    Prints "ok" or the error.
//
//	element key=K now=MS [ts=MS]
//	    Processes one element at processing time now with event timestamp ts
//	    (default: now). Prints what it emitted.
//
//	elements
//	K NOW [TS]
//	...
//	    One element per input line, in order; prints one output line each.
//
//	snapshot now=MS
//	    Takes a full snapshot at processing time now, prints its entries
//	    ("empty" when none) and keeps it for restore.
//
//	restore
//	    A fresh function with the same config restored from the last
//	    snapshot (what a task restart does). Prints the restored key count.
//
//	state [now=MS]
//	    Prints the held key count and expired-read counter, then every held
//	    entry (expired ones included); with now, entries expired at now are
//	    marked "expired".
//
// Output lines:
//
//	a count=2 ts=5000                      an emitted count
//	a count=1 ts=16000 expired-state-read  the read found an expired value
//	a count=2 last-access=5000             a snapshot or state entry

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/flinksim/flinksim/sim/process"
)

func TestProcessScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/process", func(t *testing.T, path string) {
		s := &processScenario{}
		datadriven.RunTest(t, path, s.handle)
	})
}

type processScenario struct {
	fn   *process.Function
	cfg  process.Config
	snap []process.Entry
	has  bool // a snapshot was taken
}

func (s *processScenario) handle(t *testing.T, d *datadriven.TestData) string {
	args := newArgSet(t, d)
	if d.Cmd != "elements" && d.Input != "" {
		t.Fatalf("%s: %s takes no input lines", d.Pos, d.Cmd)
	}
	if d.Cmd != "function" && s.fn == nil {
		t.Fatalf("%s: %s before function", d.Pos, d.Cmd)
	}
	var out strings.Builder
	switch d.Cmd {
	case "function":
		var cfg process.Config
		if v, ok := args.str("ttl"); ok {
			cfg.TTLMs = processDurationMs(t, d, v)
		}
		args.done()
		fn, err := process.New(cfg)
		if err != nil {
			s.fn = nil
			return "error: " + err.Error() + "\n"
		}
		*s = processScenario{fn: fn, cfg: cfg}
		return "ok\n"

	case "element":
		key, ok := args.str("key")
		if !ok {
			t.Fatalf("%s: key is required", d.Pos)
		}
		now := args.required("now")
		ts := args.int64("ts", now)
		args.done()
		processWriteOutput(&out, s.fn.ProcessElement(key, ts, now))

	case "elements":
		args.done()
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || len(f) > 3 {
				t.Fatalf("%s: element line %q: want KEY NOW [TS]", d.Pos, line)
			}
			now := parseMillis(t, d, f[1])
			ts := now
			if len(f) == 3 {
				ts = parseMillis(t, d, f[2])
			}
			processWriteOutput(&out, s.fn.ProcessElement(f[0], ts, now))
		}

	case "snapshot":
		now := args.required("now")
		args.done()
		s.snap, s.has = s.fn.Snapshot(now), true
		if len(s.snap) == 0 {
			return "empty\n"
		}
		for _, e := range s.snap {
			fmt.Fprintf(&out, "%s count=%d last-access=%d\n", e.Key, e.Count, e.LastAccessMs)
		}

	case "restore":
		args.done()
		if !s.has {
			t.Fatalf("%s: restore before snapshot", d.Pos)
		}
		fn, err := process.New(s.cfg)
		if err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
		if err := fn.Restore(s.snap); err != nil {
			return "error: " + err.Error() + "\n"
		}
		s.fn = fn
		return fmt.Sprintf("restored %d key(s)\n", fn.NumKeys())

	case "state":
		_, withNow := args.lookup("now")
		now := args.int64("now", 0)
		args.done()
		live := map[string]bool{}
		if withNow {
			for _, e := range s.fn.Snapshot(now) {
				live[e.Key] = true
			}
		}
		fmt.Fprintf(&out, "keys=%d expired-state-reads=%d\n", s.fn.NumKeys(), s.fn.ExpiredStateCount())
		for _, e := range s.fn.Entries() {
			fmt.Fprintf(&out, "%s count=%d last-access=%d", e.Key, e.Count, e.LastAccessMs)
			if withNow && !live[e.Key] {
				out.WriteString(" expired")
			}
			out.WriteString("\n")
		}

	default:
		t.Fatalf("%s: unknown verb %q", d.Pos, d.Cmd)
	}
	if out.Len() == 0 {
		return "ok\n"
	}
	return out.String()
}

func processWriteOutput(out *strings.Builder, o process.Output) {
	fmt.Fprintf(out, "%s count=%d ts=%d", o.Key, o.Count, o.Timestamp)
	if o.ExpiredRead {
		out.WriteString(" expired-state-read")
	}
	out.WriteString("\n")
}

// processDurationMs reads a TTL: plain milliseconds (with parseMillis's
// "max"/"min" forms) or a Go duration string in whole milliseconds.
func processDurationMs(t *testing.T, d *datadriven.TestData, s string) int64 {
	if _, err := strconv.ParseInt(s, 10, 64); err == nil || strings.HasPrefix(s, "max") || strings.HasPrefix(s, "min") {
		return parseMillis(t, d, s)
	}
	dur, err := time.ParseDuration(s)
	if err != nil || dur%time.Millisecond != 0 {
		t.Fatalf("%s: %q is not a duration in whole milliseconds", d.Pos, s)
	}
	return dur.Milliseconds()
}
