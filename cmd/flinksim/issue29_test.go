package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// --log FILE with --log-format json prints the JSON log on stdout too, as
// the format says, filtered by --exclude (run --help's own example); auto
// on a pipe leaves stdout to the file.
func TestLogFileKeepsStdoutFormat(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "run.log")
	r := cliIn(t, dir, 60*time.Second, "run", "--duration", "30s", "--log", logPath, "--log-format", "json", "--exclude", "metrics")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	file, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(strings.TrimSuffix(string(file), "\n"), "\n") {
		if !strings.Contains(l, `"event":"task_metrics"`) && !strings.Contains(l, `"event":"kafka_metrics"`) {
			want = append(want, l)
		}
	}
	got := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(want) < 10 || len(want) == strings.Count(string(file), "\n") || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stdout has %d lines, want the log's %d lines without metrics (of %d)", len(got), len(want), strings.Count(string(file), "\n"))
	}
	r = cliIn(t, dir, 60*time.Second, "run", "--duration", "30s", "--log", logPath)
	if r.code != 0 || r.stdout != "" {
		t.Errorf("auto on a pipe with --log FILE: exit %d, %d bytes on stdout", r.code, len(r.stdout))
	}
}

// A run that ends well with nothing read or written says why on stderr,
// and the log holds no warning (issue 29, point 2).
func TestSilentRunsSayWhy(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--duration", "5"}, "warning: no record was read: sim.duration is 5 ms, and the job's sources start reading about 120 ms into a run (Flink reads a duration without a unit as milliseconds: did you mean 5s? --duration 5s)"},
		{[]string{"--duration", "8s", "--set", "parallelism.default=4"}, "warning: no record was read: the job needs 4 slots (its widest operator's parallelism) and the cluster has 2"},
		{[]string{"--duration", "10s", "--set", "job.filter=userId == user-1"}, `warning: job.filter "userId == user-1" passed none of the 10000 records read: no record has a field "userId"; a record's fields are key, order_id, amount`},
		{[]string{"--duration", "30s"}, "warning: no window fired: an event-time window fires when the watermark"},
	}
	for i, tt := range tests {
		logPath := filepath.Join(dir, "silent.log")
		r := cliIn(t, dir, 60*time.Second, append([]string{"run", "--log", logPath}, tt.args...)...)
		if r.code != 0 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%d %v: exit %d, stderr lacks %q:\n%s", i, tt.args, r.code, tt.want, r.stderr)
		}
		if strings.Count(r.stderr, "warning: ") != 1 {
			t.Errorf("%v: %d warnings:\n%s", tt.args, strings.Count(r.stderr, "warning: "), r.stderr)
		}
		data, _ := os.ReadFile(logPath)
		if bytes.Contains(data, []byte("warning")) || bytes.Contains(data, []byte("did you mean")) {
			t.Errorf("%v: the warning reached the log", tt.args)
		}
	}
	// a run with results, or one whose silence a warning of the run named
	// already (a reader without a split), gets no second warning
	r := cliIn(t, dir, 60*time.Second, "run", "--duration", "3min")
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("a run with results warns:\n%s", r.stderr)
	}
	r = cliIn(t, dir, 60*time.Second, "run", "--duration", "2min", "--set", "parallelism.default=6", "--set", "sim.taskmanagers=6")
	if strings.Count(r.stderr, "warning: ") != 1 || !strings.Contains(r.stderr, "no split") {
		t.Errorf("readers without splits: want the one warning that names them:\n%s", r.stderr)
	}
}

// A sum beyond a double is written to --output as Flink's Jackson writes
// it: "Infinity", a JSON string (issue 29, point 3).
func TestOutputWritesInfinityAsJackson(t *testing.T) {
	dir := t.TempDir()
	ev := filepath.Join(dir, "inf.jsonl")
	if err := os.WriteFile(ev, []byte("{\"key\":\"a\",\"ts\":1000,\"amount\":1e308}\n{\"key\":\"a\",\"ts\":2000,\"amount\":1e308}\n{\"key\":\"b\",\"ts\":2000,\"amount\":-1e308}\n{\"key\":\"b\",\"ts\":2000,\"amount\":-1e308}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cliIn(t, dir, 60*time.Second, "run", "--events", ev, "--set", "job.window.aggregate=sum", "--output", "-", "--log", filepath.Join(dir, "r.log"))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	values := map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var rec struct {
			Key   string
			Value any
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("not JSON: %s", l)
		}
		values[rec.Key] = rec.Value
	}
	if len(values) != 2 || values["a"] != "Infinity" || values["b"] != "-Infinity" {
		t.Errorf("values %v, want Infinity and -Infinity as strings", values)
	}
}

// yes for a boolean option is refused alike in a config.yaml (YAML 1.2:
// a string) and with --set, with Flink's message (issue 29, point 6).
func TestYesIsRefusedAlike(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfg, []byte("pipeline:\n  operator-chaining:\n    enabled: yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const flink = "Could not parse value 'yes' for key 'pipeline.operator-chaining.enabled'. Unrecognized option for boolean: yes. Expected either true or false(case insensitive) (allowed: true|false)"
	r := cliIn(t, dir, 30*time.Second, "run", "--config", cfg)
	if r.code != 2 || !strings.Contains(r.stderr, cfg+":3: "+flink) {
		t.Errorf("config.yaml: exit %d, %s", r.code, r.stderr)
	}
	r = cliIn(t, dir, 30*time.Second, "run", "--set", "pipeline.operator-chaining.enabled=yes")
	if r.code != 2 || !strings.Contains(r.stderr, "--set "+flink) {
		t.Errorf("--set: exit %d, %s", r.code, r.stderr)
	}
}

// --join HOST:0 is refused at once, not retried until the registration
// timeout (issue 29, point 9).
func TestJoinPortZeroIsRefusedAtOnce(t *testing.T) {
	r := cliIn(t, t.TempDir(), 30*time.Second, "taskmanager", "--join", "127.0.0.1:0")
	if r.code != 2 || !strings.Contains(r.stderr, "--join 127.0.0.1:0: port 0 names no port to connect to") || r.wall > 5*time.Second {
		t.Errorf("exit %d after %v: %s", r.code, r.wall, r.stderr)
	}
}

// Replay (issue 29, points 10-12): another build's log is compared by its
// events and named as such with both fingerprints; a difference names its
// field; a log without its final newline replays; the events file is found
// beside the log from another directory, or given with --events, and is
// checked by its sha256.
func TestReplayTellsBuildsFieldsAndFiles(t *testing.T) {
	dir := t.TempDir()
	runDir := filepath.Join(dir, "run")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../examples/data/orders-sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	write := func(path string, b []byte) string {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write(filepath.Join(runDir, "orders.jsonl"), data)
	r := cliIn(t, runDir, 60*time.Second, "run", "--events", "orders.jsonl", "--log", "run.log")
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	logPath := filepath.Join(runDir, "run.log")
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := bytes.Cut(log, []byte("\n"))
	var h struct{ Build string }
	if err := json.Unmarshal(first, &h); err != nil || !strings.HasPrefix(h.Build, "program=flinksim/0.1.0 go=") {
		t.Fatalf("header build %q: %v", h.Build, err)
	}
	// from another directory: found beside the log
	r = cliIn(t, dir, 60*time.Second, "replay", logPath)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "identical" {
		t.Errorf("replay from elsewhere: exit %d, %q %s", r.code, r.stdout, r.stderr)
	}
	// elsewhere and alone: refused, naming where the path is relative to
	alone := write(filepath.Join(dir, "alone.log"), log)
	r = cliIn(t, dir, 60*time.Second, "replay", alone)
	if r.code != 2 || !strings.Contains(r.stderr, alone+":1: events_file orders.jsonl: not found: the recorded path is relative to the directory where 'flinksim run' was started") ||
		!strings.Contains(r.stderr, "give --events FILE") {
		t.Errorf("replay alone: exit %d, %s", r.code, r.stderr)
	}
	r = cliIn(t, dir, 60*time.Second, "replay", alone, "--events", filepath.Join(runDir, "orders.jsonl"))
	if r.code != 0 || strings.TrimSpace(r.stdout) != "identical" {
		t.Errorf("replay --events: exit %d, %q %s", r.code, r.stdout, r.stderr)
	}
	other := write(filepath.Join(dir, "other.jsonl"), []byte("{\"key\":\"a\",\"ts\":1}\n"))
	r = cliIn(t, dir, 60*time.Second, "replay", alone, "--events", other)
	if r.code != 2 || !strings.Contains(r.stderr, "--events "+other+": not the events file of the run: its sha256 is ") {
		t.Errorf("replay --events of another file: exit %d, %s", r.code, r.stderr)
	}
	// no final newline
	r = cliIn(t, runDir, 60*time.Second, "replay", write(filepath.Join(runDir, "nonl.log"), bytes.TrimSuffix(log, []byte("\n"))))
	if r.code != 0 || strings.TrimSpace(r.stdout) != "identical (the file lacks its final newline)" {
		t.Errorf("replay without the final newline: exit %d, %q", r.code, r.stdout)
	}
	// another build with the same version string
	const otherFP = "program=flinksim/0.1.0 go=go1.0 arch=amd64 vcs=0123456789ab deps=000000000000"
	otherBuild := bytes.Replace(first, []byte(h.Build), []byte(otherFP), 1)
	r = cliIn(t, runDir, 60*time.Second, "replay", write(filepath.Join(runDir, "other-build.log"), append(append(otherBuild, '\n'), rest...)))
	if r.code != 0 || r.stdout != "identical\nthe log was recorded by another build, which may run other rules:\n  recorded:   "+otherFP+"\n  this build: "+h.Build+"\n" {
		t.Errorf("replay of another build's log: exit %d, %q", r.code, r.stdout)
	}
	// a changed result names its field, not a cut of the line
	i := bytes.Index(log, []byte(`"event":"window_fired"`))
	j := i + bytes.Index(log[i:], []byte(`"value":`)) + len(`"value":`)
	changed := append(append(append([]byte{}, log[:j]...), '9'), log[j:]...)
	line := bytes.Count(log[:i], []byte("\n")) + 1
	r = cliIn(t, runDir, 60*time.Second, "replay", write(filepath.Join(runDir, "changed.log"), changed))
	if r.code != 1 || !strings.Contains(r.stdout, "differs at line "+strconv.Itoa(line)+" (window_fired of ") || !strings.Contains(r.stdout, `: field "value": expected 9`) {
		t.Errorf("replay of a changed result: exit %d, %q", r.code, r.stdout)
	}
}
