package console

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
)

func TestFormats(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{fmtVT(65_200_000), " 1:05.200"},
		{fmtVT(3_725_000_000), "1:02:05.000"},
		{fmtVT(0), " 0:00.000"},
		{fmtTimestamp(math.MinInt64), "Long.MIN_VALUE"},
		{fmtTimestamp(math.MaxInt64), "Long.MAX_VALUE"},
		{fmtTimestamp(1_700_000_000_123), "22:13:20.123"},
		{fmtTimestamp(15000), "15000"},
		{windowText(1_699_999_980_000, 1_700_000_040_000), "[22:13:00, 22:14:00)"},
		{windowText(0, 15000), "[0, 15000)"},
		{shortCause("org.apache.flink.runtime.jobmanager.scheduler.NoResourceAvailableException: Slot request bulk is not fulfillable!"),
			"NoResourceAvailableException: Slot request bulk is not fulfillable!"},
		{shortCause("The heartbeat of TaskManager with id tm-1 timed out."), "The heartbeat of TaskManager with id tm-1 timed out."},
		{rootException("java.lang.RuntimeException: boom\nCaused by: x.Y: z"), "RuntimeException: boom"},
		{Plural(1, "slot"), "1 slot"},
		{Plural(2, "slot"), "2 slots"},
		{fmtNumber(60004), "60004"},
		{fmtNumber(2.5), "2.50"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// The fix for too few slots names the figures that make the job fit: the
// slots the JobManager asked for (its widest vertex), not parallelism.default.
func TestFailureFix(t *testing.T) {
	const cause = "org.apache...NoResourceAvailableException: Slot request bulk"
	c := config.Default()
	c.Parallelism = 8
	got := failureFix(cause, c, 8)
	want := "the job needs 8 slots (its widest operator's parallelism) and the cluster has 2 (sim.taskmanagers 2 x taskmanager.numberOfTaskSlots 1): --set sim.taskmanagers=8, or --set taskmanager.numberOfTaskSlots=4, or a parallelism of at most 2 (--set parallelism.default=2)"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// source 2, window 3, sink 1 at parallelism.default 2: the window's 3
	c = config.Default()
	c.SourceParallelism, c.WindowParallelism, c.SinkParallelism = 2, 3, 1
	got = failureFix(cause, c, 3)
	want = "the job needs 3 slots (its widest operator's parallelism) and the cluster has 2 (sim.taskmanagers 2 x taskmanager.numberOfTaskSlots 1): --set sim.taskmanagers=3, or --set taskmanager.numberOfTaskSlots=2, or a parallelism of at most 2 (--set job.window.parallelism=2)"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestKindFilters(t *testing.T) {
	only, err := ParseKinds("--only", []string{"checkpoints, window_fired", "job_status"})
	if err != nil || !only["checkpoint_completed"] || !only["window_fired"] || !only["job_status"] || only["task_metrics"] {
		t.Fatalf("%v %v", only, err)
	}
	f := KindFilter{only: only, exclude: map[string]bool{"checkpoint_triggered": true}}
	if !f.pass("checkpoint_completed", false) || f.pass("checkpoint_triggered", false) || f.pass("task_metrics", false) {
		t.Error("pass")
	}
	if _, err := ParseKinds("--exclude", []string{"metrix"}); err == nil || !strings.Contains(err.Error(), `did you mean "metrics"?`) {
		t.Errorf("unknown kind: %v", err)
	}
	// every kind sim/eventlog declares is known to the filters
	for _, k := range allKinds {
		if _, err := ParseKinds("--only", []string{string(k)}); err != nil {
			t.Error(err)
		}
	}
	// a line split over writes is judged whole
	var out bytes.Buffer
	fw := Filtered(&out, KindFilter{only: map[string]bool{"window_fired": true}})
	for _, part := range []string{`{"vt":1,"actor":"a","event":"job_st`, "atus\"}\n{\"vt\":2,\"actor\":\"w\",\"ev", "ent\":\"window_fired\"}\n"} {
		fw.Write([]byte(part))
	}
	if out.String() != `{"vt":2,"actor":"w","event":"window_fired"}`+"\n" {
		t.Errorf("Filtered %q", out.String())
	}
	// the actions group passes what an action given on the command line
	// caused (its line carries the action), and --exclude actions hides it
	acts, err := ParseKinds("--only", []string{"actions"})
	if err != nil {
		t.Fatal(err)
	}
	lines := `{"vt":1,"actor":"tm-1","event":"taskmanager_killed","action":"at=1s kill-taskmanager tm-1","tasks":2}` + "\n" +
		`{"vt":2,"actor":"jobmanager","event":"taskmanager_lost","taskmanager":"tm-1"}` + "\n" +
		`{"vt":3,"actor":"scheduler","event":"action_ignored","action":"x","reason":"y"}` + "\n"
	out.Reset()
	Filtered(&out, KindFilter{only: acts}).Write([]byte(lines))
	if got := strings.Count(out.String(), "\n"); got != 2 || strings.Contains(out.String(), "taskmanager_lost") {
		t.Errorf("--only actions printed %q", out.String())
	}
	out.Reset()
	Filtered(&out, KindFilter{exclude: acts}).Write([]byte(lines))
	if out.String() != `{"vt":2,"actor":"jobmanager","event":"taskmanager_lost","taskmanager":"tm-1"}`+"\n" {
		t.Errorf("--exclude actions printed %q", out.String())
	}
}

func ev(vt int64, actor string, kind eventlog.Kind, fields ...*messages.Field) *eventlog.LogEvent {
	return &eventlog.LogEvent{Vt: vt, Actor: actor, Body: eventlog.F(kind, fields...)}
}

// The Warner on a hand-made event stream: readers without a split become
// one warning once the next event comes; a watermark that stands still 30 s
// while records arrive warns once; a new attempt starts the count afresh.
func TestWarnerOnEvents(t *testing.T) {
	var got []string
	w := NewWarner(config.Default(), func(s string) { got = append(got, s) })
	w.Observe(ev(2800, "jobmanager", eventlog.KindReaderNoSplits, messages.Str("reader", "source-2")))
	w.Observe(ev(2800, "jobmanager", eventlog.KindReaderNoSplits, messages.Str("reader", "source-3")))
	if len(got) != 0 {
		t.Fatal("warned before the readers were all known")
	}
	w.Observe(ev(3000, "source-0", eventlog.KindWatermarkStatus))
	if len(got) != 1 || !strings.HasPrefix(got[0], "warning: 2 source readers (source-2, source-3) have no split") {
		t.Fatalf("%q", got)
	}
	metrics := func(vt, wm, in int64) {
		w.Observe(ev(vt, "window-0", eventlog.KindTaskMetrics, messages.Int("currentInputWatermark", wm), messages.Int("numRecordsIn", in)))
	}
	w.cfg.WindowSize = 10_000_000_000 // 10 s: 30 s is the threshold
	for s := int64(1); s <= 30; s++ {
		metrics(s*1_000_000, math.MinInt64, s*100)
	}
	if len(got) != 1 {
		t.Fatalf("warned before 30 s: %q", got[1:])
	}
	metrics(31_000_000, math.MinInt64, 3100)
	if len(got) != 2 || !strings.Contains(got[1], "has stayed at Long.MIN_VALUE for 30 s of virtual time while 3000 records arrived: a source reader without a split holds it back (see above)") {
		t.Fatalf("%q", got)
	}
	metrics(40_000_000, math.MinInt64, 4000)
	if len(got) != 2 {
		t.Error("warned twice")
	}
	// a FAILED job names the first cause, not "Recovery is suppressed"
	w.Observe(ev(50_000_000, "jobmanager", eventlog.KindFailover, messages.Str("cause", "java.util.concurrent.TimeoutException: The heartbeat of TaskManager with id tm-1 timed out.")))
	w.Observe(ev(50_000_000, "jobmanager", eventlog.KindJobStatus, messages.Str("status", "FAILED"), messages.Str("cause", "org.apache.flink.runtime.JobException: Recovery is suppressed by NoRestartBackoffTimeStrategy")))
	if len(got) != 3 || !strings.HasPrefix(got[2], "warning: the job FAILED; the root cause is TimeoutException: The heartbeat of TaskManager with id tm-1 timed out., from jobmanager at 0:50.000 (the job then stopped: JobException: Recovery is suppressed by NoRestartBackoffTimeStrategy). Fix: with a restart strategy") {
		t.Fatalf("%q", got[2:])
	}
}

// The View groups firings: the first three alone, then one line per
// window bound with the number of keys and the total.
func TestViewFirings(t *testing.T) {
	var out bytes.Buffer
	v := NewView(&Screen{out: &out}, config.Default(), KindFilter{}, false)
	fire := func(vt, start int64, key string, value float64) {
		v.Observe(ev(vt, "window-0", eventlog.KindWindowFired, messages.Str("key", key), messages.Int("window_start", start),
			messages.Int("window_end", start+60000), messages.Float("value", value), messages.Int("firing", 1)))
	}
	for i, k := range []string{"a", "b", "c", "d", "e"} {
		fire(1000, 0, k, float64(i+1))
	}
	fire(2000, 60000, "a", 7)
	v.Observe(ev(3000, "kafka", eventlog.KindTopicCreated))
	want := []string{
		" 0:00.001  window     window-0 [0, 60000) fired: a = 1",
		" 0:00.001  window     window-0 [0, 60000) fired: b = 2",
		" 0:00.001  window     window-0 [0, 60000) fired: c = 3",
		" 0:00.001  window     [0, 60000) fired for 5 keys (total 15) on window-0",
		" 0:00.002  window     [60000, 120000) fired for 1 key (total 7) on window-0",
	}
	if got := strings.Split(strings.TrimRight(out.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
