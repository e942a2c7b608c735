package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// logEvents reads a JSON log into one map per line.
func logEvents(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}

// exampleRun is what one example's command produced.
type exampleRun struct {
	code   int
	stderr string
	events []map[string]any
	output []map[string]any
}

func (r exampleRun) kind(k string) []map[string]any {
	var out []map[string]any
	for _, e := range r.events {
		if e["event"] == k {
			out = append(out, e)
		}
	}
	return out
}

func (r exampleRun) summary() map[string]any { return r.events[len(r.events)-1] }

func (r exampleRun) sum(kind, field string) float64 {
	var s float64
	for _, e := range r.kind(kind) {
		if v, ok := e[field].(float64); ok {
			s += v
		}
	}
	return s
}

// duplicatesOf counts the results seen before with the same key, window and
// firing: the consumer's duplicates, counted from --output alone.
func duplicatesOf(out []map[string]any) int {
	seen := map[string]bool{}
	d := 0
	for _, r := range out {
		id, _ := json.Marshal([]any{r["key"], r["window_start"], r["window_end"], r["firing"]})
		if seen[string(id)] {
			d++
		}
		seen[string(id)] = true
	}
	return d
}

// exampleChecks holds, for every example directory, the effect the README
// claims, checked on the run's log, --output and stderr.
var exampleChecks = map[string]func(t *testing.T, r exampleRun){
	"readers-without-splits": func(t *testing.T, r exampleRun) {
		if n := r.summary()["windows_fired"]; n != 0.0 {
			t.Errorf("windows fired %v, want none", n)
		}
		if ns := r.kind("reader_without_splits"); len(ns) != 1 || ns[0]["reader"] != "source-2" {
			t.Errorf("readers without splits %v", ns)
		}
		if !strings.Contains(r.stderr, "source reader source-2 has no split") {
			t.Errorf("no warning:\n%s", r.stderr)
		}
	},
	"readers-with-idleness": func(t *testing.T, r exampleRun) {
		fired := len(r.kind("window_fired"))
		if fired == 0 || r.summary()["windows_fired"] != float64(fired) || len(r.kind("watermark_status")) == 0 {
			t.Errorf("windows fired %d, summary %v", fired, r.summary()["windows_fired"])
		}
	},
	"too-few-slots": func(t *testing.T, r exampleRun) {
		nr := r.kind("no_resource_available")
		if r.code != 4 || len(nr) != 1 || nr[0]["slots_needed"] != 4.0 || nr[0]["slots_offered"] != 2.0 || r.summary()["job_status"] != "FAILED" {
			t.Errorf("exit %d, %v, %v", r.code, nr, r.summary()["job_status"])
		}
	},
	"late-data": func(t *testing.T, r exampleRun) {
		dropped := r.summary()["numLateRecordsDropped"].(float64)
		if dropped == 0 || dropped != r.sum("final_counters", "numLateRecordsDropped") {
			t.Errorf("dropped %v, final counters %v", dropped, r.sum("final_counters", "numLateRecordsDropped"))
		}
		lateDropped = dropped
	},
	"late-data-side-output": func(t *testing.T, r exampleRun) {
		side := len(r.kind("late_side_output"))
		if r.summary()["numLateRecordsDropped"] != 0.0 || side == 0 {
			t.Errorf("dropped %v, side output %d", r.summary()["numLateRecordsDropped"], side)
		}
		if lateDropped != 0 && float64(side) != lateDropped {
			t.Errorf("side output %d records, late-data dropped %v of the same generated records", side, lateDropped)
		}
	},
	"backpressure": func(t *testing.T, r exampleRun) {
		var srcBP, winBusy float64
		for _, m := range r.kind("task_metrics") {
			name := m["actor"].(string)
			if strings.HasPrefix(name, "source") {
				srcBP = max(srcBP, m["backPressuredTimeMsPerSecond"].(float64))
			} else {
				winBusy = max(winBusy, m["busyTimeMsPerSecond"].(float64))
			}
		}
		lags := kafkaLags(r)
		if srcBP < 900 || winBusy < 990 || len(lags) < 10 || lags[len(lags)-1] <= 10*lags[2] {
			t.Errorf("source backpressured %v ms/s, window busy %v ms/s, lag %v", srcBP, winBusy, lags)
		}
	},
	"backpressure-async": func(t *testing.T, r exampleRun) {
		lags := kafkaLags(r)
		if bp := r.summary()["max_backPressuredTimeMsPerSecond"].(float64); bp > 100 || lags[len(lags)-1] > 600 {
			t.Errorf("backpressured %v ms/s, lag %v", bp, lags)
		}
	},
	"unaligned-backpressure": func(t *testing.T, r exampleRun) {
		// aligned checkpoints of job-1 wait behind the backlog; job-2's
		// unaligned ones persist in-flight records and take a tenth or less
		var aligned, unaligned []float64
		for _, c := range r.kind("checkpoint_completed") {
			if c["kind"] != "periodic" {
				continue
			}
			if c["persisted_records"].(float64) > 0 {
				unaligned = append(unaligned, c["duration_ms"].(float64))
			} else {
				aligned = append(aligned, c["duration_ms"].(float64))
			}
		}
		job2 := false
		for _, s := range r.kind("job_status") {
			job2 = job2 || (s["job_id"] == "job-2" && s["status"] == "RUNNING")
		}
		slowest := 0.0
		for _, d := range aligned {
			slowest = max(slowest, d)
		}
		ok := job2 && len(aligned) >= 2 && len(unaligned) >= 2 && slowest >= 1000
		for _, d := range unaligned {
			ok = ok && d*10 <= slowest
		}
		if !ok {
			t.Errorf("job-2 running %v, aligned checkpoints %v ms, unaligned %v ms", job2, aligned, unaligned)
		}
	},
	"watermark-alignment": func(t *testing.T, r exampleRun) {
		if len(r.kind("split_paused")) == 0 || len(r.kind("split_resumed")) == 0 {
			t.Errorf("%d split_paused, %d split_resumed", len(r.kind("split_paused")), len(r.kind("split_resumed")))
		}
	},
	"processing-time-bounded": func(t *testing.T, r exampleRun) {
		if r.summary()["windows_fired"] != 0.0 || r.sum("final_counters", "unfired_windows") == 0 || r.sum("final_counters", "records_in_unfired_windows") != 48000 {
			t.Errorf("fired %v, unfired %v with %v records", r.summary()["windows_fired"], r.sum("final_counters", "unfired_windows"),
				r.sum("final_counters", "records_in_unfired_windows"))
		}
	},
	"failover": func(t *testing.T, r exampleRun) {
		fo := r.kind("failover")
		if len(r.kind("taskmanager_killed")) != 1 || len(fo) != 1 || fo[0]["restart"] != true {
			t.Errorf("killed %d, failover %v", len(r.kind("taskmanager_killed")), fo)
		}
		if d := duplicatesOf(r.output); d == 0 || float64(d) != r.summary()["duplicates"] {
			t.Errorf("duplicates in --output %d, summary %v", d, r.summary()["duplicates"])
		}
	},
	"exactly-once": func(t *testing.T, r exampleRun) {
		if len(r.output) != 12 || duplicatesOf(r.output) != 0 || len(r.kind("taskmanager_killed")) != 1 {
			t.Errorf("%d results, %d duplicates", len(r.output), duplicatesOf(r.output))
		}
		for _, o := range r.output { // a 1-min window holds four 15 s periods of 1000 clicks
			if o["value"] != 4000.0 {
				t.Errorf("result %v", o)
			}
		}
	},
	"at-least-once": func(t *testing.T, r exampleRun) {
		if len(r.output) != 18 || duplicatesOf(r.output) != 6 {
			t.Errorf("%d results, %d duplicates; want 18 and 6", len(r.output), duplicatesOf(r.output))
		}
	},
	"rescale": func(t *testing.T, r exampleRun) {
		var p3, job2 bool
		for _, e := range r.kind("rescale") {
			p3 = p3 || (e["step"] == "submit from savepoint" && e["from_parallelism"] == 2.0 && e["to_parallelism"] == 3.0)
		}
		third := false
		for _, e := range r.kind("final_counters") {
			third = third || strings.HasPrefix(e["actor"].(string), "window-2")
		}
		p3 = p3 && third
		for _, s := range r.kind("job_status") {
			job2 = job2 || (s["job_id"] == "job-2" && s["status"] == "RUNNING")
		}
		if !p3 || !job2 || len(r.kind("output_view")) != 1 || len(r.output) != int(r.summary()["results_visible"].(float64)) {
			t.Errorf("parallelism 3 %v, job-2 running %v, output views %d, output %d", p3, job2, len(r.kind("output_view")), len(r.output))
		}
	},
	"flink-config": func(t *testing.T, r exampleRun) {
		if !strings.Contains(r.stderr, "not simulated (Flink keys accepted and ignored): env.java.opts.all, jobmanager.bind-host, jobmanager.rpc.address") {
			t.Errorf("stderr:\n%s", r.stderr)
		}
		settings := r.events[0]["settings"].(map[string]any)
		if settings["taskmanager.memory.task.heap.size"] != "402653174 bytes" || settings["parallelism.default"] != "1" {
			t.Errorf("settings %v %v", settings["taskmanager.memory.task.heap.size"], settings["parallelism.default"])
		}
	},
	"playground-clicks": func(t *testing.T, r exampleRun) {
		if len(r.output) != 48 {
			t.Errorf("%d results, want 6 pages x 8 windows", len(r.output))
		}
		for _, o := range r.output {
			if o["value"] != 1000.0 {
				t.Errorf("result %v", o)
			}
		}
	},
}

// lateDropped carries late-data's count to late-data-side-output (the same
// generated records), when both run.
var lateDropped float64

func kafkaLags(r exampleRun) []float64 {
	var lags []float64
	for _, m := range r.kind("kafka_metrics") {
		var lag float64
		for _, p := range m["partitions"].([]any) {
			lag += p.(map[string]any)["lag"].(float64)
		}
		lags = append(lags, lag)
	}
	return lags
}

// splitCommand splits an example's command line as a shell would, for the
// forms the examples use (words, 'single quotes').
func splitCommand(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, in := false, false
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// Every example under examples/ runs with its one command (from the
// repository root, as the README says) and has the effect the README
// claims; every example has a check.
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("15 runs, ~30 s: not in the -short edit loop")
	}
	root := abs(t, "../..")
	dirs, err := filepath.Glob(filepath.Join(root, "examples", "*", "command"))
	if err != nil || len(dirs) < len(exampleChecks) {
		t.Fatalf("%d example commands, %d checks (%v)", len(dirs), len(exampleChecks), err)
	}
	names := make([]string, 0, len(dirs))
	for _, c := range dirs {
		names = append(names, filepath.Base(filepath.Dir(c)))
	}
	// late-data before late-data-side-output: Glob sorts, so it is
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			check, ok := exampleChecks[name]
			if !ok {
				t.Fatalf("examples/%s has no check in exampleChecks", name)
			}
			text, _ := os.ReadFile(filepath.Join(root, "examples", name, "command"))
			args := splitCommand(string(text))
			if len(args) < 2 || args[0] != "flinksim" || args[1] != "run" {
				t.Fatalf("command %q is not 'flinksim run ...'", text)
			}
			dir := t.TempDir()
			logPath, outPath := filepath.Join(dir, "run.log"), filepath.Join(dir, "out.jsonl")
			res := cliIn(t, root, 2*time.Minute, append(args[1:], "--log", logPath, "--output", outPath)...)
			if res.code != 0 && name != "too-few-slots" {
				t.Fatalf("exit %d:\n%s", res.code, res.stderr)
			}
			r := exampleRun{code: res.code, stderr: res.stderr, events: logEvents(t, logPath)}
			if data, err := os.ReadFile(outPath); err == nil {
				for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
					if l == "" {
						continue
					}
					var m map[string]any
					if err := json.Unmarshal([]byte(l), &m); err != nil {
						t.Fatal(err)
					}
					r.output = append(r.output, m)
				}
			}
			check(t, r)
		})
	}
}
