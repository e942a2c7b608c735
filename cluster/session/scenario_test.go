//go:build !js

package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/flinksim/flinksim/examples"
	"github.com/flinksim/flinksim/sim/keygroup"
	"github.com/flinksim/flinksim/sim/vt"
)

// scenarioLog is one scenario's log, read back.
type scenarioLog []map[string]any

func (l scenarioLog) kind(k string) []map[string]any {
	var out []map[string]any
	for _, e := range l {
		if e["event"] == k {
			out = append(out, e)
		}
	}
	return out
}
func (l scenarioLog) summary() map[string]any { return l[len(l)-1] }
func (l scenarioLog) num(e map[string]any, k string) float64 {
	v, _ := e[k].(float64)
	return v
}

// firstVT is the virtual time (µs) of the first event of kind k that match
// accepts (-1: none).
func (l scenarioLog) firstVT(k string, match func(map[string]any) bool) int64 {
	for _, e := range l.kind(k) {
		if match == nil || match(e) {
			return int64(l.num(e, "vt"))
		}
	}
	return -1
}

// scenarioClaims holds, for every scenario, what its narration claims,
// checked on the log of its session (a re-run of its recipe, as the page's
// download is): the figures the narration names, at the times it names them.
var scenarioClaims = map[string]func(t *testing.T, l scenarioLog){
	"readers-without-splits": func(t *testing.T, l scenarioLog) {
		set := l.firstVT("reconfigure", func(e map[string]any) bool { return e["step"] == "submit from savepoint" })
		fired := l.firstVT("window_fired", nil)
		idle := l.firstVT("watermark_status", func(e map[string]any) bool {
			return e["status"] == "IDLE" && strings.HasPrefix(e["actor"].(string), "source-2")
		})
		views := l.kind("output_view")
		if set < 40*int64(vt.Second) || fired <= set || idle < 0 || fired < idle || len(views) != 1 || l.num(views[0], "vt") < float64(set) {
			t.Errorf("job-2 from %d µs, source-2 idle at %d, first window fired at %d, output views %v", set, idle, fired, views)
		}
		if w := l.summary()["windows_fired"]; w == 0.0 {
			t.Errorf("no window fired at all")
		}
	},
	"too-few-slots": func(t *testing.T, l scenarioLog) {
		nr := l.kind("no_resource_available")
		failed := l.firstVT("job_status", func(e map[string]any) bool { return e["status"] == "FAILED" })
		if len(nr) != 1 || l.num(nr[0], "slots_needed") != 4 || l.num(nr[0], "slots_offered") != 2 || failed != int64(l.num(nr[0], "vt")) || failed > 11*int64(vt.Second) {
			t.Errorf("no_resource_available %v, FAILED at %d µs", nr, failed)
		}
		if l.summary()["records_read"] != 0.0 {
			t.Errorf("records read %v, want none", l.summary()["records_read"])
		}
	},
	"late-data": func(t *testing.T, l scenarioLog) {
		if d := l.summary()["numLateRecordsDropped"]; d == 0.0 || len(l.kind("late_side_output")) != 0 {
			t.Errorf("dropped %v, side output %d", d, len(l.kind("late_side_output")))
		}
	},
	"late-data-side-output": func(t *testing.T, l scenarioLog) {
		if d := l.summary()["numLateRecordsDropped"]; d != 0.0 || len(l.kind("late_side_output")) == 0 || l.firstVT("late_side_output", nil) > 10*int64(vt.Second) {
			t.Errorf("dropped %v, side output %d from %d µs", d, len(l.kind("late_side_output")), l.firstVT("late_side_output", nil))
		}
	},
	"backpressure": func(t *testing.T, l scenarioLog) {
		bp := l.firstVT("task_metrics", func(e map[string]any) bool {
			return strings.HasPrefix(e["actor"].(string), "source") && l.num(e, "backPressuredTimeMsPerSecond") > 500
		})
		lags := scenarioLags(l)
		// the buffers between sources and windows fill in about 30 s
		// (Flink's bounds: tests/backpressure_test.go)
		if bp < 0 || bp > 35*int64(vt.Second) || len(lags) < 10 || lags[len(lags)-1] <= 10*max(1, lags[6]) {
			t.Errorf("sources backpressured from %d µs, lag %v", bp, lags)
		}
	},
	"backpressure-async": func(t *testing.T, l scenarioLog) {
		lags := scenarioLags(l)
		if bp := l.summary()["max_backPressuredTimeMsPerSecond"].(float64); bp > 100 || slices.Max(lags) > 600 || l.summary()["windows_fired"] == 0.0 {
			t.Errorf("backpressured %v ms/s, lag %v, windows fired %v", bp, lags, l.summary()["windows_fired"])
		}
	},
	"watermark-alignment": func(t *testing.T, l scenarioLog) {
		p, r := l.firstVT("split_paused", nil), l.firstVT("split_resumed", nil)
		if p < 0 || p > 3*int64(vt.Second) || r < p || r > 10*int64(vt.Second) {
			t.Errorf("first split paused at %d µs, resumed at %d", p, r)
		}
	},
	"exactly-once": func(t *testing.T, l scenarioLog) {
		s := l.summary()
		if s["results_visible"] != 12.0 || s["duplicates"] != 0.0 || len(l.kind("taskmanager_killed")) != 1 || s["job_status"] != "FINISHED" {
			t.Errorf("visible %v, duplicates %v, killed %d, %v", s["results_visible"], s["duplicates"], len(l.kind("taskmanager_killed")), s["job_status"])
		}
		restart := l.firstVT("job_status", func(e map[string]any) bool { return e["status"] == "RUNNING" && e["previous"] == "RESTARTING" })
		if restart < 67*int64(vt.Second) || restart > 73*int64(vt.Second) {
			t.Errorf("running again at %d µs, the narration says about 72 s", restart)
		}
	},
	"at-least-once": func(t *testing.T, l scenarioLog) {
		s := l.summary()
		if s["results_visible"] != 18.0 || s["duplicates"] != 6.0 {
			t.Errorf("visible %v, duplicates %v; want 18 and 6", s["results_visible"], s["duplicates"])
		}
	},
	"rescale": func(t *testing.T, l scenarioLog) {
		ok := false
		for _, e := range l.kind("rescale") {
			ok = ok || e["step"] == "submit from savepoint" && l.num(e, "from_parallelism") == 2 && l.num(e, "to_parallelism") == 3
		}
		third := l.firstVT("state_restored", func(e map[string]any) bool { return e["actor"] == "window-2#1" })
		if !ok || third < 70*int64(vt.Second) || len(l.kind("output_view")) != 1 {
			t.Errorf("rescale 2 -> 3 %v, window-2#1 restored at %d µs, output views %d", ok, third, len(l.kind("output_view")))
		}
		// the key-group ranges the narration names are KeyGroupRangeAssignment's
		for p, want := range map[int]string{2: "0-63 and 64-127", 3: "0-42, 43-85 and 86-127"} {
			var rs []string
			for i := 0; i < p; i++ {
				r, _ := keygroup.RangeForOperatorIndex(128, p, i)
				rs = append(rs, fmt.Sprintf("%d-%d", r.Start, r.End))
			}
			got := strings.Join(rs[:p-1], ", ") + " and " + rs[p-1]
			if p == 2 {
				got = rs[0] + " and " + rs[1]
			}
			if got != want || !strings.Contains(narrationOf(t, "rescale"), want) {
				t.Errorf("parallelism %d: key groups %s, the narration says %s", p, got, want)
			}
		}
	},
	"unaligned-backpressure": func(t *testing.T, l scenarioLog) {
		set := l.firstVT("reconfigure", func(e map[string]any) bool { return e["step"] == "submit from savepoint" })
		var aligned, unaligned []float64
		for _, c := range l.kind("checkpoint_completed") {
			if c["kind"] != "periodic" {
				continue
			}
			if l.num(c, "persisted_records") > 0 {
				if int64(l.num(c, "vt")) < set {
					t.Errorf("checkpoint %v persisted in-flight records before job-2", c["checkpoint_id"])
				}
				unaligned = append(unaligned, l.num(c, "duration_ms"))
			} else {
				aligned = append(aligned, l.num(c, "duration_ms"))
			}
		}
		if set < 20*int64(vt.Second) || set > 35*int64(vt.Second) || len(aligned) < 2 || len(unaligned) < 2 || slices.Min(aligned) < 1000 || slices.Max(unaligned) >= 100 {
			t.Errorf("job-2 from %d µs; aligned %v ms, unaligned %v ms", set, aligned, unaligned)
		}
	},
	"processing-time-bounded": func(t *testing.T, l scenarioLog) {
		s := l.summary()
		end := l.firstVT("job_status", func(e map[string]any) bool { return e["status"] == "FINISHED" })
		if s["windows_fired"] != 0.0 || end < 0 || end > int64(vt.Second) || s["records_read"] != 48000.0 {
			t.Errorf("fired %v, FINISHED at %d µs, read %v", s["windows_fired"], end, s["records_read"])
		}
	},
}

// narrationOf is the whole text of a scenario's steps.
func narrationOf(t *testing.T, name string) string {
	list, err := LoadScenarios(examples.FS)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, sc := range list {
		if sc.Name == name {
			for _, st := range sc.Steps {
				b.WriteString(st.Say + "\n")
			}
		}
	}
	return b.String()
}

func scenarioLags(l scenarioLog) []float64 {
	var lags []float64
	for _, m := range l.kind("kafka_metrics") {
		var lag float64
		for _, p := range m["partitions"].([]any) {
			lag += p.(map[string]any)["lag"].(float64)
		}
		lags = append(lags, lag)
	}
	return lags
}

// TestScenarioFiles reads every scenario from the embedded examples: each
// parses, reads its example's command, has a claim check below, and the
// menu covers the topics issue 25 lists.
func TestScenarioFiles(t *testing.T) {
	list, err := LoadScenarios(examples.FS)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sc := range list {
		names = append(names, sc.Name)
		if _, ok := scenarioClaims[sc.Name]; !ok {
			t.Errorf("scenario %s has no claim check in scenarioClaims", sc.Name)
		}
		if _, err := sc.Recipe(examples.FS); err != nil {
			t.Errorf("%s: %v", sc.Name, err)
		}
	}
	want := []string{"readers-without-splits", "too-few-slots", "late-data", "late-data-side-output", "backpressure", "backpressure-async",
		"watermark-alignment", "exactly-once", "at-least-once", "rescale", "unaligned-backpressure", "processing-time-bounded"}
	if !slices.Equal(names, want) {
		t.Errorf("scenarios in menu order %v, want %v", names, want)
	}
	for name := range scenarioClaims {
		if !slices.Contains(names, name) {
			t.Errorf("claim check for %s, which is no scenario", name)
		}
	}
}

// TestScenarioClaims runs every scenario's session to its end, as the page
// starts it (the example's settings and events, the steps' actions live at
// their times), and checks its claim on the log; each step's action is in
// the log as a live action at the step's time.
func TestScenarioClaims(t *testing.T) {
	if testing.Short() {
		t.Skip("12 runs: not in the -short edit loop")
	}
	list, err := LoadScenarios(examples.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range list {
		t.Run(sc.Name, func(t *testing.T) {
			r, err := sc.Recipe(examples.FS)
			if err != nil {
				t.Fatal(err)
			}
			data, err := r.Download(0)
			if err != nil {
				t.Fatal(err)
			}
			var l scenarioLog
			sc2 := bufio.NewScanner(bytes.NewReader(data))
			sc2.Buffer(nil, 16<<20)
			for sc2.Scan() {
				var m map[string]any
				if err := json.Unmarshal(sc2.Bytes(), &m); err != nil {
					t.Fatal(err)
				}
				l = append(l, m)
			}
			var acts []string
			for _, e := range l.kind("action") {
				acts = append(acts, e["action"].(string))
			}
			var want []string
			for _, st := range sc.Steps {
				if st.Action != "" {
					want = append(want, st.act.String())
					if got := l.firstVT("action", func(e map[string]any) bool { return e["action"] == st.act.String() }); got != st.AtUs {
						t.Errorf("step %q logged at %d µs, want %d", st.Action, got, st.AtUs)
					}
				}
			}
			if !slices.Equal(acts, want) {
				t.Errorf("logged actions %v, want the steps' %v", acts, want)
			}
			scenarioClaims[sc.Name](t, l)
		})
	}
}

// TestScenarioParseErrors: a broken scenario file is refused with a message
// that names the file and line, every problem at once.
func TestScenarioParseErrors(t *testing.T) {
	for _, tc := range []struct{ give, want string }{
		{"title: x\nsummary: y\nspeed: 1\n", "x/scenario.txt: no steps"},
		{"summary: y\nspeed: 1\nat=0s\nhello\n", "x/scenario.txt: no title: line"},
		{"title: x\nsummary: y\nspeed: fast\nat=0s\nhello\n", "x/scenario.txt:3: speed \"fast\""},
		{"title: x\nsummary: y\nspeed: 1\ncolour: red\nat=0s\nhello\n", "x/scenario.txt:4: unknown header key \"colour\""},
		{"title: x\nsummary: y\nspeed: 1\nat=10\nhello\n", "x/scenario.txt:4: at=10 needs a unit"},
		{"title: x\nsummary: y\nspeed: 1\nat=10s\nhello\nat=5s\nworld\n", "x/scenario.txt:6: the step at 5 s comes before"},
		{"title: x\nsummary: y\nspeed: 1\nat=10s fly-away\nhello\n", "x/scenario.txt:4: action \"at=10s fly-away\""},
		{"title: x\nsummary: y\nspeed: 1\nat=10s\n", "x/scenario.txt:4: the step at 10 s says nothing"},
		{"title: x\nsummary: y\nspeed: 1\nhello\nat=0s\nhi\n", "x/scenario.txt:4: expected a header line"},
	} {
		_, err := ParseScenario("examples/x/scenario.txt", []byte(tc.give))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.give, err, tc.want)
		}
	}
	// a scenario whose steps do not take its example's actions is refused
	fsys := fstest.MapFS{
		"x/scenario.txt": {Data: []byte("title: x\nsummary: y\nspeed: 1\nat=0s\nhello\n")},
		"x/command":      {Data: []byte("flinksim run --config examples/x/config.yaml --actions examples/x/actions.txt\n")},
		"x/config.yaml":  {Data: []byte("sim.duration: 1 min\n")},
		"x/actions.txt":  {Data: []byte("at=5s trigger-checkpoint\n")},
		"y/scenario.txt": {Data: []byte("title: y\nsummary: y\nspeed: 1\nnext: z\nat=0s\nhello\n")},
		"y/command":      {Data: []byte("flinksim run --config examples/y/config.yaml --seed 3\n")},
	}
	_, err := LoadScenarios(fsys)
	for _, want := range []string{"examples/x/scenario.txt: its steps' actions [] are not the example's examples/x/actions.txt [at=5s trigger-checkpoint]",
		"examples/y/command: --seed: a scenario takes the example's --config, --events and --actions only"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}

// TestScenarioEndpoints: GET /sim/scenarios lists the menu; POST
// /sim/scenario starts the scenario's session at its speed with its steps'
// actions ahead on the timeline, an unknown name gets 404 and changes
// nothing, and new settings leave the scenario.
func TestScenarioEndpoints(t *testing.T) {
	ts := newTestServer(t, recipeOf(t, "sim.duration=365 d"))
	st, b := ts.get(t, "/sim/scenarios")
	var menu struct{ Scenarios []Scenario }
	if err := json.Unmarshal(b, &menu); st != http.StatusOK || err != nil || len(menu.Scenarios) != len(scenarioClaims) {
		t.Fatalf("GET /sim/scenarios: %d %v %d scenarios", st, err, len(menu.Scenarios))
	}
	if code, body := ts.post(t, "/sim/scenario", "no-such"); code != http.StatusNotFound || !strings.Contains(body, "no scenario \"no-such\"") {
		t.Errorf("unknown scenario: %d %s", code, body)
	}
	if s := ts.state(t); s.Scenario != "" || s.Generation != 1 {
		t.Errorf("after a refused scenario: %q generation %d", s.Scenario, s.Generation)
	}
	rep := ts.mustPost(t, "/sim/scenario", "exactly-once")
	if rep["scenario"] != "exactly-once" || rep["speed"] != "10" {
		t.Errorf("reply %v", rep)
	}
	ts.mustPost(t, "/sim/speed", "pause")
	s := ts.state(t)
	if s.Scenario != "exactly-once" || s.Generation != 2 || s.Timeline.Future != 1 || s.Settings.Guarantee != "exactly-once" || s.Settings.Isolation != "read_committed" {
		t.Errorf("state: scenario %q generation %d future %d guarantee %s isolation %s", s.Scenario, s.Generation, s.Timeline.Future, s.Settings.Guarantee, s.Settings.Isolation)
	}
	hdr, _, _ := bytes.Cut(ts.log(2), []byte("\n"))
	if !bytes.Contains(hdr, []byte(`"events_file":"examples/data/playground-clicks.jsonl"`)) {
		t.Errorf("header %.300s", hdr)
	}
	ts.mustPost(t, "/sim/settings", "parallelism.default=2")
	deadline := time.Now().Add(10 * time.Second)
	for ts.state(t).Scenario != "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if s := ts.state(t); s.Scenario != "" {
		t.Errorf("new settings kept the scenario %q", s.Scenario)
	}
}
