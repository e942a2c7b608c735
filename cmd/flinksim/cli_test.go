package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// flinksimBin is the CLI built once for these tests, so that exit codes and
// stdout/stderr are checked exactly as a user sees them.
var flinksimBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "flinksim-cli")
	if err != nil {
		panic(err)
	}
	flinksimBin = filepath.Join(dir, "flinksim")
	if out, err := exec.Command("go", "build", "-o", flinksimBin, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cli runs the binary and returns stdout, stderr and the exit code.
func cli(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(flinksimBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Bad input gets a clear message naming the place and exit code 2, and the
// run does not start (nothing on stdout).
func TestRunBadInput(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		file    string // events file content, written to events.jsonl
		wantErr string
	}{
		{name: "bad JSON", file: "{\"key\":\"a\",\"ts\":1}\n{\"key\": \"b\", ts:2}\n", wantErr: "events.jsonl:2:"},
		{name: "missing key", file: "{\"key\":\"a\",\"ts\":1}\n{\"ts\":2}\n", wantErr: "events.jsonl:2:"},
		{name: "non-integer ts", file: "{\"key\":\"a\",\"ts\":1.5}\n", wantErr: "events.jsonl:1:"},
		{name: "partition out of range", file: "{\"key\":\"a\",\"ts\":1,\"partition\":7}\n", wantErr: "events.jsonl:1:"},
		{name: "unknown setting", args: []string{"--set", "paralelism.default=2"}, wantErr: `did you mean "parallelism.default"`},
		{name: "out of range setting", args: []string{"--set", "taskmanager.numberOfTaskSlots=0"}, wantErr: "taskmanager.numberOfTaskSlots"},
		{name: "bad set syntax", args: []string{"--set", "parallelism.default"}, wantErr: "expected key=value"},
		{name: "parallelism above max parallelism", args: []string{"--set", "parallelism.default=8", "--set", "pipeline.max-parallelism=4"},
			wantErr: "Maximum parallelism must not be smaller than parallelism"},
		{name: "bad filter", args: []string{"--set", "job.filter=amount"}, wantErr: "job.filter"},
		{name: "missing events file", args: []string{"--events", "/nonexistent/file.jsonl"}, wantErr: "/nonexistent/file.jsonl"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run"}, c.args...)
			if c.file != "" {
				args = append(args, "--events", writeTemp(t, "events.jsonl", c.file))
			}
			out, errs, code := cli(t, args...)
			if code != 2 {
				t.Fatalf("exit code %d, want 2; stderr: %s", code, errs)
			}
			if !strings.Contains(errs, c.wantErr) {
				t.Errorf("stderr %q does not contain %q", errs, c.wantErr)
			}
			if out != "" {
				t.Errorf("the run started: stdout has %d bytes", len(out))
			}
		})
	}
}

// run --events --output writes the consumer's view; replay of the log says
// identical; an edited log differs (exit 1); a truncated one is refused
// (exit 2).
func TestRunOutputAndReplay(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "run.log")
	outPath := filepath.Join(dir, "out.jsonl")
	_, errs, code := cli(t, "run", "--events", "../../examples/data/playground-clicks.jsonl", "--set", "job.window.size=15 s",
		"--output", outPath, "--log", logPath)
	if code != 0 {
		t.Fatalf("run exit %d: %s", code, errs)
	}
	out, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 6*8 {
		t.Fatalf("output has %d results, want 48 (6 pages x 8 windows)", len(lines))
	}
	for _, l := range lines {
		if !strings.Contains(l, `"value":1000,`) {
			t.Fatalf("result %s is not 1000 clicks", l)
		}
	}
	stdout, _, code := cli(t, "replay", logPath)
	if code != 0 || strings.TrimSpace(stdout) != "identical" {
		t.Fatalf("replay: exit %d, %q", code, stdout)
	}
	log, _ := os.ReadFile(logPath)
	all := strings.Split(string(log), "\n")
	all[3] = strings.Replace(all[3], `"vt":`, `"vt":1`, 1)
	edited := filepath.Join(dir, "edited.log")
	os.WriteFile(edited, []byte(strings.Join(all, "\n")), 0o644)
	stdout, _, code = cli(t, "replay", edited)
	if code != 1 || !strings.Contains(stdout, "differs at line 4") {
		t.Fatalf("edited replay: exit %d, %q", code, stdout)
	}
	truncated := filepath.Join(dir, "truncated.log")
	os.WriteFile(truncated, log[:len(log)/2], 0o644)
	if _, errs, code = cli(t, "replay", truncated); code != 2 || !strings.Contains(errs, "truncated") {
		t.Fatalf("truncated replay: exit %d, %q", code, errs)
	}
}

func TestRunCheckDeterminism(t *testing.T) {
	_, errs, code := cli(t, "run", "--duration", "30s", "--check-determinism", "--log", filepath.Join(t.TempDir(), "x.log"))
	if code != 0 || !strings.Contains(errs, "identical logs") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// A job that ends FAILED (too few slots) exits 4, after writing its log.
func TestRunFailedJobExitCode(t *testing.T) {
	out, _, code := cli(t, "run", "--set", "parallelism.default=4")
	if code != 4 || !strings.Contains(out, "Slot request bulk is not fulfillable!") {
		t.Fatalf("exit %d; log has the exception: %v", code, strings.Contains(out, "Slot request bulk"))
	}
}

// The summary counts the records read by the attempts that ran to the end
// (a killed TaskManager's attempts report no final counters, as their
// metrics die with them in Flink), and says so when an attempt was lost:
// with tm-1 killed at 20 s, source-1 alone read 12,663 of the ~24,000.
func TestRunSummaryAfterALostAttempt(t *testing.T) {
	_, stderr, code := cli(t, "run", "--duration", "30s", "--quiet", "--action", "at=20s kill-taskmanager tm-1")
	if code != 4 || !strings.Contains(stderr, "records read by the last attempts,") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
	_, stderr, code = cli(t, "run", "--duration", "30s", "--quiet")
	if code != 0 || !strings.Contains(stderr, " 30000 records read, ") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}

// An unwritable --output, or --output naming the --log file, is refused
// before the run starts.
func TestRunOutputRefusedBeforeTheRun(t *testing.T) {
	out, errs, code := cli(t, "run", "--output", "/nonexistent/dir/x.jsonl")
	if code != 2 || out != "" || !strings.Contains(errs, "--output") {
		t.Fatalf("exit %d, %d bytes of log, %q", code, len(out), errs)
	}
	p := filepath.Join(t.TempDir(), "same.jsonl")
	if _, errs, code = cli(t, "run", "--output", p, "--log", p); code != 2 || !strings.Contains(errs, "same file") {
		t.Fatalf("exit %d, %q", code, errs)
	}
}

// Actions are recorded in the log header: replay of a run with a killed
// TaskManager and a restart is identical. A bad action is refused (exit 2).
func TestReplayWithActions(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "kill.log")
	script := writeTemp(t, "actions.txt", "# a failure\nat=20s kill-taskmanager tm-2\n")
	_, errs, code := cli(t, "run", "--duration", "40s", "--set", "execution.checkpointing.interval=5s",
		"--actions", script, "--action", "at=30s trigger-savepoint", "--log", logPath)
	if code != 0 {
		t.Fatalf("run exit %d: %s", code, errs)
	}
	log, _ := os.ReadFile(logPath)
	for _, want := range []string{`"actions":["at=20s kill-taskmanager tm-2","at=30s trigger-savepoint"]`, `"event":"taskmanager_killed"`,
		`"event":"failover"`, `"event":"restore","from":"checkpoint"`, `"kind":"savepoint","duration_ms"`} {
		if !strings.Contains(string(log), want) {
			t.Fatalf("log lacks %s", want)
		}
	}
	if stdout, _, code := cli(t, "replay", logPath); code != 0 || strings.TrimSpace(stdout) != "identical" {
		t.Fatalf("replay: exit %d, %q", code, stdout)
	}
	if _, errs, code := cli(t, "run", "--action", "at=5s explode"); code != 2 || !strings.Contains(errs, "unknown verb") {
		t.Fatalf("bad action: exit %d, %q", code, errs)
	}
	// actions that cannot be carried out are warned about on stderr
	_, errs, code = cli(t, "run", "--duration", "10s", "--action", "at=1ms trigger-checkpoint", "--action", "at=5s kill-taskmanager tm-9",
		"--action", "at=20s kill-taskmanager tm-1", "--log", filepath.Join(dir, "ignored.log"))
	for _, want := range []string{"warning: action not carried out: at=1ms trigger-checkpoint: the job is not submitted yet",
		"warning: action not carried out: at=5s kill-taskmanager tm-9: no such actor: tm-9",
		"warning: action not carried out: at=20s kill-taskmanager tm-1: the run ended before its time"} {
		if code != 0 || !strings.Contains(errs, want) {
			t.Fatalf("exit %d, stderr lacks %q:\n%s", code, want, errs)
		}
	}
}
