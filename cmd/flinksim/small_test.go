package main

import (
	"bytes"

	"encoding/json"
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, errs, code := cli(t, args...)
		if code != 0 || out != "flinksim 0.1.0 (simulates Apache Flink 1.20; log format flinksim-log/1; "+runtimeVersion()+")\n" {
			t.Errorf("%v: exit %d, %q %q", args, code, out, errs)
		}
	}
}

// Every command's --help says what it takes, the exit codes and at least
// two examples; run's and the root's name every action verb.
func TestEveryHelp(t *testing.T) {
	cmds := [][]string{{}, {"run"}, {"replay"}, {"settings"}, {"explain"}, {"explain", "key"}, {"explain", "split"}, {"explain", "window"}, {"swarm"}, {"version"}}
	for _, c := range cmds {
		out, _, code := cli(t, append(c, "--help")...)
		name := strings.Join(append([]string{"flinksim"}, c...), " ")
		if code != 0 {
			t.Fatalf("%s --help: exit %d", name, code)
		}
		for _, want := range []string{"Usage:", "Exit codes", "  2    bad ", "Examples:"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s --help lacks %q", name, want)
			}
		}
		_, ex, _ := strings.Cut(out, "Examples:")
		ex, _, _ = strings.Cut(ex, "\n\n")
		if n := strings.Count(ex, "flinksim "); n < 2 {
			t.Errorf("%s --help has %d examples", name, n)
		}
		if len(c) == 0 || c[0] == "run" {
			for n := range messages.ActionVerb_name { // every verb on the wire
				v := action.Verb(n)
				if v == 0 {
					continue
				}
				if verb := "at=DURATION " + v.String() + " "; !strings.Contains(out, verb) {
					t.Errorf("%s --help lacks the action %q", name, verb)
				}
			}
		}
	}
	out, _, _ := cli(t, "explain", "--help")
	if !strings.Contains(out, "explain window") || !strings.Contains(out, "  window ") {
		t.Errorf("explain --help does not name window:\n%s", out)
	}
}

// Each command's --help lists its own exit codes: the ones it can end with,
// and none it cannot (issue 29: swarm's 6 and 7, taskmanager's 5, replay's
// 1; no 4 where no job runs).
func TestEveryHelpListsItsOwnExitCodes(t *testing.T) {
	tests := []struct {
		cmd      []string
		has, not []string
	}{
		{[]string{"run"}, []string{"  0    the run ended", "  3    a broken invariant", "  4    the simulated job ended FAILED", "  130  interrupted"}, []string{"  1 ", "  5 ", "  6 "}},
		{[]string{"replay"}, []string{"  0    identical", "  1    the replayed log differs", "  2    bad input"}, []string{"  3 ", "  4 ", "  130"}},
		{[]string{"settings"}, []string{"  0    ok", "  2    bad input"}, []string{"  1 ", "  3 ", "  4 ", "  130"}},
		{[]string{"explain", "window"}, []string{"  0    ok", "  2    bad input"}, []string{"  1 ", "  4 "}},
		{[]string{"swarm"}, []string{"  0    every seed passed", "  2    bad flags", "  3    a safety invariant broke", "  5    a liveness check failed", "  6    a run crashed", "  7    the wall limit"}, []string{"  1 ", "  4 ", "  130"}},
		{[]string{"taskmanager"}, []string{"  0    the run ended", "  2    bad input", "  5    refused"}, []string{"  1 ", "  3 ", "  4 ", "  130"}},
		{[]string{"jobmanager"}, []string{"  4    the simulated job ended FAILED", "  5    the transport failed", "  130  interrupted"}, []string{"  1 ", "  6 "}},
		{[]string{"version"}, []string{"  0    ok"}, []string{"  1 ", "  3 ", "  4 "}},
	}
	for _, tt := range tests {
		out, _, code := cli(t, append(tt.cmd, "--help")...)
		_, codes, ok := strings.Cut(out, "Exit codes")
		if code != 0 || !ok {
			t.Fatalf("%v --help: exit %d, no exit codes:\n%s", tt.cmd, code, out)
		}
		if strings.Count(out, "Exit codes") != 1 {
			t.Errorf("%v --help lists exit codes %d times", tt.cmd, strings.Count(out, "Exit codes"))
		}
		for _, w := range tt.has {
			if !strings.Contains(codes, w) {
				t.Errorf("%v --help: exit codes lack %q:\n%s", tt.cmd, w, codes)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(codes, "\n"+w) {
				t.Errorf("%v --help: exit codes name %q, which it never gives:\n%s", tt.cmd, w, codes)
			}
		}
	}
}

func TestSettingsKey(t *testing.T) {
	out, _, code := cli(t, "settings", "taskmanager.memory.process.size")
	for _, want := range []string{"key              taskmanager.memory.process.size", "type             memory",
		"in the log header  no: the sizes it derives are", "TaskExecutorProcessUtils"} {
		if code != 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("settings KEY: exit %d, lacks %q:\n%s", code, want, out)
		}
	}
	out, _, code = cli(t, "settings", "rest.port")
	if code != 0 || !strings.Contains(out, "rest.port is a Flink 1.20 configuration key that the simulator does not model") {
		t.Errorf("settings rest.port: %d %s", code, out)
	}
	_, errs, code := cli(t, "settings", "rest.prot")
	if code != 2 || !strings.Contains(errs, `did you mean "rest.port"?`) {
		t.Errorf("settings rest.prot: %d %s", code, errs)
	}
	out, _, _ = cli(t, "settings", "--json", "parallelism.default")
	var rows []settingJSON
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || rows[0].SimDefault != "2" || rows[0].FlinkDefault != "1" {
		t.Errorf("settings --json KEY: %v %+v", err, rows)
	}
}

// explain window --ts takes RFC 3339 as well as epoch milliseconds, with
// the same windows.
func TestExplainWindowRFC3339(t *testing.T) {
	a, _, c1 := cli(t, "explain", "window", "--ts", "2023-11-14T22:13:20.123Z", "--size", "1min", "--json")
	b, _, c2 := cli(t, "explain", "window", "--ts", "1700000000123", "--size", "1min", "--json")
	if c1 != 0 || c2 != 0 || a != b || !strings.Contains(a, `"start": 1699999980000`) {
		t.Errorf("exit %d %d\n%s\n%s", c1, c2, a, b)
	}
	_, errs, code := cli(t, "explain", "window", "--ts", "yesterday", "--size", "1min")
	if code != 2 || !strings.Contains(errs, `--ts "yesterday": expected epoch milliseconds (e.g. 1700000000123) or an RFC 3339 time`) {
		t.Errorf("exit %d %q", code, errs)
	}
}

// --output - writes the results to stdout (no file named -), --log - the
// log; a piped run prints the JSON log, and --log FILE gets the same bytes
// whatever stdout shows.
func TestStdoutDashAndLogIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("several runs of seconds each: not in the -short edit loop")
	}
	dir := t.TempDir()
	ev := abs(t, "../../examples/data/playground-clicks.jsonl")
	r := cliIn(t, dir, time.Minute, "run", "--events", ev, "--set", "job.window.size=15s", "--output", "-")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 48 || !strings.HasPrefix(lines[0], `{"key":`) {
		t.Fatalf("exit %d, %d lines: %.300s", r.code, len(lines), r.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
		t.Error("--output - wrote a file named -")
	}
	piped := cliIn(t, dir, time.Minute, "run", "--events", ev, "--set", "job.window.size=15s")
	dash := cliIn(t, dir, time.Minute, "run", "--events", ev, "--set", "job.window.size=15s", "--log", "-")
	if piped.stdout != dash.stdout || !strings.HasPrefix(piped.stdout, `{"vt":0,"actor":"flinksim","event":"header"`) {
		t.Error("--log - differs from the piped log")
	}
	var logs []string
	for _, format := range []string{"json", "console", "human", "auto"} {
		p := filepath.Join(dir, format+".log")
		r := cliIn(t, dir, time.Minute, "run", "--events", ev, "--set", "job.window.size=15s", "--log-format", format, "--log", p)
		data, _ := os.ReadFile(p)
		if r.code != 0 {
			t.Fatalf("%s: exit %d", format, r.code)
		}
		logs = append(logs, string(data))
	}
	for i, l := range logs {
		if l != piped.stdout {
			t.Errorf("--log FILE with format %d differs from the piped JSON log", i)
		}
	}
	// filters print only some kinds; --log still gets everything
	p := filepath.Join(dir, "filtered.log")
	f := cliIn(t, dir, time.Minute, "run", "--events", ev, "--set", "job.window.size=15s", "--log-format", "json", "--only", "window_fired,job_status", "--log", "-")
	if f.stdout != piped.stdout {
		t.Error("--only changed what --log - gets")
	}
	f = cliIn(t, dir, time.Minute, "run", "--events", ev, "--set", "job.window.size=15s", "--only", "window_fired", "--exclude", "job_status")
	n := strings.Count(f.stdout, "\n")
	if n != 48 || strings.Count(f.stdout, `"event":"window_fired"`) != 48 {
		t.Errorf("--only window_fired printed %d lines", n)
	}
	q := cliIn(t, dir, time.Minute, "run", "--events", ev, "--set", "job.window.size=15s", "--quiet", "--log", p)
	if strings.Count(q.stdout, "\n") != 0 {
		t.Errorf("--quiet with --log printed %q", q.stdout)
	}
	q = cliIn(t, dir, time.Minute, "run", "--events", ev, "--set", "job.window.size=15s", "--quiet")
	if !strings.HasPrefix(q.stdout, `{"vt":`) || strings.Count(q.stdout, "\n") != 1 || !strings.Contains(q.stdout, `"event":"summary"`) {
		t.Errorf("--quiet printed %q", q.stdout)
	}
	bad := cliIn(t, dir, time.Minute, "run", "--only", "window_fird")
	if bad.code != 2 || !strings.Contains(bad.stderr, `--only "window_fird": no such event kind or group (did you mean "window_fired"?)`) {
		t.Errorf("exit %d %q", bad.code, bad.stderr)
	}
}

// A UTF-8 byte order mark and CRLF line ends read the same in every input
// file: events (JSON lines and CSV), actions, settings, and a log to replay.
func TestBOMAndCRLFEverywhere(t *testing.T) {
	dir := t.TempDir()
	crlf := func(s string) string { return "\xef\xbb\xbf" + strings.ReplaceAll(s, "\n", "\r\n") }
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	jsonl := "{\"key\":\"a\",\"ts\":1000}\n{\"key\":\"b\",\"ts\":2000}\n{\"key\":\"a\",\"ts\":61000}\n"
	csv := "key,ts\na,1000\nb,2000\na,61000\n"
	actions := "# actions\nat=1s trigger-checkpoint\n"
	settings := "sim:\n  seed: 7\njob.window.size: 30s\n"
	var outs []string
	for _, v := range []func(string) string{func(s string) string { return s }, crlf} {
		for _, ev := range []string{write("e.jsonl", v(jsonl)), write("e.csv", v(csv))} {
			out := filepath.Join(dir, "out.jsonl")
			r := cliIn(t, dir, time.Minute, "run", "--events", ev, "--actions", write("a.txt", v(actions)), "--config", write("c.yaml", v(settings)),
				"--set", "sim.events.pace=event-time", "--output", out, "--log", filepath.Join(dir, "run.log"))
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			data, _ := os.ReadFile(out)
			outs = append(outs, string(data))
		}
	}
	for i := range outs {
		if outs[i] != outs[0] || strings.Count(outs[0], "\n") != 3 {
			t.Errorf("output %d differs or is not 3 results:\n%s\n%s", i, outs[i], outs[0])
		}
	}
	// a log saved with a BOM and CRLF line ends still replays identical
	log, _ := os.ReadFile(filepath.Join(dir, "run.log"))
	p := write("crlf.log", crlf(string(log)))
	r := cliIn(t, dir, time.Minute, "replay", p)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "identical" {
		t.Errorf("replay of a CRLF log: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// A Flink 1.20 config.yaml (as Flink ships it, with a few documented keys
// more) runs; the keys the simulator does not model are listed once on
// stderr as not simulated; the task heap, managed and network memory the
// header carries are Flink's derivation from 1728m.
func TestFlinkConfigYAMLRuns(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.yaml")
	os.WriteFile(p, []byte(`env:
  java:
    opts:
      all: --add-exports=java.base/sun.net.util=ALL-UNNAMED
jobmanager:
  bind-host: localhost
  rpc:
    address: localhost
    port: 6123
  memory:
    process:
      size: 1600m
  execution:
    failover-strategy: region
taskmanager:
  bind-host: localhost
  host: localhost
  numberOfTaskSlots: 2
  memory:
    process:
      size: 1728m
parallelism:
  default: 2
rest:
  address: localhost
  bind-address: localhost
  port: 8081
execution.checkpointing.mode: EXACTLY_ONCE
sink.delivery-guarantee: EXACTLY_ONCE
`), 0o644)
	logPath := filepath.Join(dir, "run.log")
	r := cliIn(t, dir, time.Minute, "run", "--config", p, "--duration", "10s", "--log", logPath, "--set", "rest.port=9091")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := "flinksim: not simulated (Flink keys accepted and ignored): env.java.opts.all, jobmanager.bind-host, jobmanager.rpc.address, jobmanager.rpc.port, jobmanager.memory.process.size, jobmanager.execution.failover-strategy, taskmanager.bind-host, taskmanager.host, rest.address, rest.bind-address, rest.port, execution.checkpointing.mode\n"
	if !strings.Contains(r.stderr, want) || strings.Count(r.stderr, "not simulated") != 1 {
		t.Errorf("stderr:\n%s\nwant the line\n%s", r.stderr, want)
	}
	log, _ := os.ReadFile(logPath)
	header, _, _ := bytes.Cut(log, []byte("\n"))
	for _, kv := range []string{`"taskmanager.memory.task.heap.size":"402653174 bytes"`, `"taskmanager.memory.managed.size":"536870920 bytes"`,
		`"taskmanager.memory.network.max":"134217730 bytes"`, `"sink.delivery-guarantee":"exactly-once"`, `"taskmanager.numberOfTaskSlots":"2"`} {
		if !bytes.Contains(header, []byte(kv)) {
			t.Errorf("header lacks %s", kv)
		}
	}
	if bytes.Contains(header, []byte("process.size")) || bytes.Contains(header, []byte("rest.port")) {
		t.Error("the header carries an input-only or not-simulated key")
	}
	if rr := cliIn(t, dir, time.Minute, "replay", logPath); rr.code != 0 || strings.TrimSpace(rr.stdout) != "identical" {
		t.Errorf("replay: %d %q %q", rr.code, rr.stdout, rr.stderr)
	}
	r = cliIn(t, dir, time.Minute, "run", "--set", "rest.prot=8081")
	if r.code != 2 || !strings.Contains(r.stderr, `unknown setting "rest.prot"; did you mean "rest.port"?`) {
		t.Errorf("unknown key: %d %q", r.code, r.stderr)
	}
}

// Warnings that name the trap, on stderr, once each, with the fix, also
// when stdout is piped.
func TestWarningsNameTheTrap(t *testing.T) {
	dir := t.TempDir()
	lp := filepath.Join(dir, "x.log")
	r := cliIn(t, dir, time.Minute, "run", "--set", "parallelism.default=8", "--set", "sim.taskmanagers=4", "--set", "taskmanager.numberOfTaskSlots=2",
		"--set", "job.window.size=10s", "--duration", "1min", "--log", lp)
	want := "warning: 4 source readers (source-0, source-1, source-2, source-7) have no split (4 partitions of orders, source parallelism 8) and job.watermark.idleness is off"
	if r.code != 0 || strings.Count(r.stderr, want) != 1 || !strings.Contains(r.stderr, "so no event-time window will fire. Fix: --set job.watermark.idleness=10s") {
		t.Errorf("no-split: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "warning: the window operators' watermark has stayed at Long.MIN_VALUE for 30 s of virtual time") {
		t.Errorf("stuck watermark:\n%s", r.stderr)
	}
	r = cliIn(t, dir, time.Minute, "run", "--set", "parallelism.default=4", "--log", lp)
	for _, w := range []string{"warning: the job FAILED; the root cause is NoResourceAvailableException: Slot request bulk is not fulfillable!",
		"from the JobManager at 0:10.005: 4 slots needed, 2 offered within slot.request.timeout 10 s",
		"Fix: the job needs 4 slots (its widest operator's parallelism) and the cluster has 2 (sim.taskmanagers 2 x taskmanager.numberOfTaskSlots 1): --set sim.taskmanagers=4, or --set taskmanager.numberOfTaskSlots=2, or a parallelism of at most 2 (--set parallelism.default=2)",
		"flinksim: the job FAILED: org.apache.flink.runtime.jobmanager.scheduler.NoResourceAvailableException"} {
		if r.code != 4 || !strings.Contains(r.stderr, w) {
			t.Errorf("FAILED: exit %d, lacks %q:\n%s", r.code, w, r.stderr)
		}
	}
	r = cliIn(t, dir, time.Minute, "run", "--events", abs(t, "../../examples/data/orders-sample.jsonl"), "--duration", "10min", "--log", lp)
	if !strings.Contains(r.stderr, "warning: sim.duration has no effect in this run: the input is bounded (--events)") {
		t.Errorf("duration:\n%s", r.stderr)
	}
	r = cliIn(t, dir, time.Minute, "run", "--duration", "2min", "--set", "sim.source.late-fraction=0.01", "--log", lp)
	if strings.Count(r.stderr, "warning: records arrived after the watermark had passed the end of all their windows") != 1 ||
		!strings.Contains(r.stderr, "--set job.window.side-output-late-data=true to keep them") {
		t.Errorf("late:\n%s", r.stderr)
	}
	// a restarted job's old subtasks stop reporting: their watermark is not "stuck"
	r = cliIn(t, dir, time.Minute, "run", "--duration", "4min", "--set", "execution.checkpointing.interval=30s", "--action", "at=70s kill-taskmanager tm-1", "--log", lp)
	if r.code != 0 || strings.Contains(r.stderr, "watermark has stayed") {
		t.Errorf("a failover run warns of a stuck watermark: exit %d\n%s", r.code, r.stderr)
	}
	r = cliIn(t, dir, time.Minute, "run", "--duration", "10s", "--action", "at=5s kill-taskmanager tm-9", "--log", lp)
	if !strings.Contains(r.stderr, "warning: action not carried out: at=5s kill-taskmanager tm-9: no such actor: tm-9 (the TaskManagers are tm-1..tm-2 (sim.taskmanagers))") {
		t.Errorf("action:\n%s", r.stderr)
	}
}

func runtimeVersion() string { return goVersion }
