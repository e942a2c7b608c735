package remote_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sameAsOneProcess runs the recipe args with `flinksim run` and over a
// jobmanager with s.tms taskmanager processes, and requires the two logs and
// the two outputs to be byte-identical. It returns the remote log and the
// cluster (ended).
func sameAsOneProcess(t *testing.T, s spec, args ...string) ([]byte, *procs) {
	t.Helper()
	tmp := t.TempDir()
	oneLog, oneOut := filepath.Join(tmp, "one.log"), filepath.Join(tmp, "one.out")
	remLog, remOut := filepath.Join(tmp, "remote.log"), filepath.Join(tmp, "remote.out")
	_, stderr, code := flinksim(t, repo, 2*time.Minute, append([]string{"run", "--log", oneLog, "--output", oneOut}, args...)...)
	if code != 0 && code != 4 {
		t.Fatalf("flinksim run exited %d:\n%s", code, stderr)
	}
	s.args = append(append(s.args, "--log", remLog, "--output", remOut), args...)
	c := startCluster(t, repo, s)
	timeout := s.timeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	jcode := c.jm.wait(t, timeout)
	if jcode != code {
		t.Fatalf("the jobmanager exited %d, flinksim run %d; jobmanager stderr:\n%s", jcode, code, c.jm.stderr)
	}
	for _, p := range c.tms {
		if got := p.wait(t, 30*time.Second); got != 0 {
			t.Errorf("%s exited %d:\n%s", p.name, got, p.stderr)
		}
	}
	one, rem := read(t, oneLog), read(t, remLog)
	if d := firstDiff(one, rem); d != "" {
		t.Fatalf("the logs differ at %s\njobmanager stderr:\n%s", d, c.jm.stderr)
	}
	if !bytes.Equal(read(t, oneOut), read(t, remOut)) {
		t.Fatalf("the outputs differ")
	}
	t.Logf("%d log bytes identical; %s", len(rem), lastLine(c.jm.stderr.String()))
	return rem, c
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// The default job (5 minutes of virtual time) over three processes on
// loopback writes flinksim run's log and output.
func TestDefaultJobThreeProcesses(t *testing.T) {
	sameAsOneProcess(t, spec{tms: 2})
}

// A bounded events-file run.
func TestEventsFileThreeProcesses(t *testing.T) {
	sameAsOneProcess(t, spec{tms: 2}, "--events", "examples/data/orders-sample.jsonl")
}

// Checkpoints, the exactly-once sink and a kill-taskmanager action; the
// replacement TaskManager starts in the spare process.
func TestCheckpointsExactlyOnceKillThreeProcesses(t *testing.T) {
	_, c := sameAsOneProcess(t, spec{tms: 3, args: []string{"--spare-taskmanagers", "1"}},
		"--events", "examples/data/playground-clicks.jsonl", "--set", "sim.events.pace=event-time",
		"--set", "execution.checkpointing.interval=10s", "--set", "sink.delivery-guarantee=exactly-once",
		"--set", "sim.output.isolation-level=read_committed", "--action", "at=67s kill-taskmanager tm-1")
	if !strings.Contains(c.jm.stderr.String(), "TaskManager tm-3 starts on spare taskmanager process 3") {
		t.Errorf("the replacement did not start in the spare process:\n%s", c.jm.stderr)
	}
	c.hosting(t, "tm-3")
}

// A replacement without a spare process starts inside the jobmanager.
func TestReplacementInsideJobManager(t *testing.T) {
	_, c := sameAsOneProcess(t, spec{tms: 2}, "--duration", "90s", "--set", "restart-strategy.type=fixed-delay",
		"--action", "at=10s kill-taskmanager tm-2")
	if !strings.Contains(c.jm.stderr.String(), "TaskManager tm-3 starts inside the jobmanager process") {
		t.Errorf("no word of where the replacement started:\n%s", c.jm.stderr)
	}
}

// replays runs flinksim replay on log (in the repository root) and requires
// "identical".
func replays(t *testing.T, log []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lost.log")
	if err := writeFile(path, log); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := flinksim(t, repo, 3*time.Minute, "replay", path)
	if code != 0 || strings.TrimSpace(out) != "identical" {
		t.Fatalf("flinksim replay exited %d: %s\n%s", code, out, stderr)
	}
}

// lostRun checks the outcome of a run that lost tm-2's process: the
// jobmanager reported it, the log holds the kill as a live action and the
// TaskManager's loss, and it replays in one process.
func lostRun(t *testing.T, c *procs, logPath string, code int) {
	t.Helper()
	if code != 0 && code != 4 {
		t.Fatalf("the jobmanager exited %d:\n%s", code, c.jm.stderr)
	}
	stderr := c.jm.stderr.String()
	if !strings.Contains(stderr, "lost taskmanager process") || !strings.Contains(stderr, `injected "at=`) {
		t.Fatalf("the jobmanager did not report the loss:\n%s", stderr)
	}
	log := read(t, logPath)
	for _, want := range []string{`"event":"action","action":"at=`, `kill-taskmanager tm-2"`, `"event":"taskmanager_killed"`, `"event":"taskmanager_lost","task_manager":"tm-2"`} {
		if !bytes.Contains(log, []byte(want)) {
			t.Fatalf("the log lacks %s; jobmanager stderr:\n%s", want, stderr)
		}
	}
	replays(t, log)
	t.Logf("%s", lastLine(stderr))
}

// SIGKILL of a taskmanager process mid-run is a TaskManager loss at the
// virtual time it is noticed; the run finishes and replays in one process.
func TestSIGKILLTaskManager(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "remote.log")
	c := startCluster(t, repo, spec{tms: 2, args: []string{"--log", logPath, "--duration", "2min",
		"--set", "restart-strategy.type=fixed-delay", "--set", "execution.checkpointing.interval=10s"}})
	c.jm.waitFor(t, "TaskManager tm-2 starts", 30*time.Second)
	victim := c.hosting(t, "tm-2")
	time.Sleep(2 * time.Second)
	victim.signal(syscall.SIGKILL)
	code := c.jm.wait(t, 3*time.Minute)
	lostRun(t, c, logPath, code)
	if got := c.hosting(t, "tm-1").wait(t, 30*time.Second); got != 0 {
		t.Errorf("the surviving taskmanager exited %d", got)
	}
}
