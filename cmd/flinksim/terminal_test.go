package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/flinksim/flinksim/sim/config"
)

// onTerminal runs the binary with stdout and stderr on a pseudo-terminal of
// 160 columns, as a person's shell does, and returns everything the
// terminal received and the exit code.
func onTerminal(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(flinksimBin, args...)
	cmd.Env = append(os.Environ(), env...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&out, ptmx) // ends with EIO when the child's side closes
		close(done)
	}()
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err = cmd.Wait()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// plain is what a person reads: the terminal text without colour codes,
// with every status-line redraw (\r, erase) resolved to the text that
// stays.
func plain(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if i := strings.LastIndex(l, "\r"); i >= 0 {
			l = l[i+1:]
		}
		lines = append(lines, ansi.ReplaceAllString(l, ""))
	}
	return strings.Join(lines, "\n")
}

// On a terminal, run shows the person's view: short lines for notable
// events, a live status line, a summary table, colour (unless NO_COLOR),
// and no JSON; the warnings for the three traps of issue 12 appear on the
// same terminal.
func TestTerminalView(t *testing.T) {
	if testing.Short() {
		t.Skip("several runs of seconds each: not in the -short edit loop")
	}
	raw, code := onTerminal(t, nil, "run", "--duration", "3min", "--set", "execution.checkpointing.interval=30s",
		"--action", "at=70s kill-taskmanager tm-1")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, raw)
	}
	text := plain(raw)
	for _, want := range []string{
		"flinksim   seed 1, orders (4 partitions) -> keyBy -> 1 min tumbling event-time windows (count) -> orders-per-minute, parallelism 2, 1 action",
		"cluster    2 TaskManagers x 1 slot registered (tm-1, tm-2)",
		"job        job-1 RUNNING",
		"source     source-0 reads partitions 1,3",
		"checkpoint 1 (periodic) completed in",
		"window     window-1 [22:13:00, 22:14:00) fired: user-1 = 415",
		"[22:14:00, 22:15:00) fired for 100 keys (total 60004)",
		"failure    tm-1 killed (at=70s kill-taskmanager tm-1), 2 tasks lost",
		"job        job-1 RESTARTING: TimeoutException: The heartbeat of TaskManager with id tm-1 timed out.",
		"restore    from checkpoint 2",
		"  subtask     records in  records out",
		"  partition of orders  end offset  committed offset  lag",
		"checkpoints  6 completed",
		"results      300 visible to a read_uncommitted consumer, 0 uncommitted, 0 duplicates, 0 late records dropped",
		"job          RUNNING after 3 min of virtual time",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the terminal lacks %q", want)
		}
	}
	if strings.Contains(text, `{"vt":`) {
		t.Error("JSON on the terminal")
	}
	if strings.Contains(text, " virtual, ") { // "job RUNNING in 3 min virtual, 0.57 s wall, ..."
		t.Error("the one-line summary on the terminal after the view's own summary")
	}
	if !strings.Contains(raw, "\r\x1b[K") || !strings.Contains(raw, "▶") {
		t.Error("no live status line")
	}
	if !strings.Contains(raw, "\x1b[32m") {
		t.Error("no colour on a terminal")
	}
	for _, l := range strings.Split(text, "\n") {
		if len([]rune(l)) > 160 && !strings.HasPrefix(l, "warning:") && !strings.HasPrefix(l, "job ") {
			t.Errorf("a line of %d characters: %.100s", len([]rune(l)), l)
		}
	}
	// the subtask rows, with figures the JSON log gives independently
	log := filepath.Join(t.TempDir(), "x.log")
	if _, _, code := cli(t, "run", "--duration", "3min", "--set", "execution.checkpointing.interval=30s", "--action", "at=70s kill-taskmanager tm-1", "--log", log); code != 0 {
		t.Fatal(code)
	}
	lastOut := map[string]int64{}
	f, _ := os.Open(log)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			Actor         string `json:"actor"`
			Event         string `json:"event"`
			NumRecordsOut int64  `json:"numRecordsOut"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Event == "task_metrics" {
			lastOut[ev.Actor] = ev.NumRecordsOut
		}
	}
	f.Close()
	row := regexp.MustCompile(`(?m)^  (source-1#1)\s+-\s+(\d+)\s`)
	m := row.FindStringSubmatch(text)
	if m == nil || m[2] != itoa(lastOut["source-1#1"]) {
		t.Errorf("source-1#1 row %q, the log's last numRecordsOut %d", m, lastOut["source-1#1"])
	}

	noColour, _ := onTerminal(t, []string{"NO_COLOR=1"}, "run", "--duration", "20s")
	if strings.Contains(noColour, "\x1b[3") || strings.Contains(noColour, "\x1b[1m") {
		t.Error("colour with NO_COLOR set")
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// The three traps of issue 12 on a terminal: each warns once, naming the
// setting that fixes it.
func TestTerminalWarnings(t *testing.T) {
	text, code := onTerminal(t, nil, "run", "--set", "parallelism.default=8", "--set", "sim.taskmanagers=4", "--set", "taskmanager.numberOfTaskSlots=2",
		"--set", "job.window.size=10s", "--duration", "1min")
	text = plain(text)
	if code != 0 || strings.Count(text, "have no split") != 1 || !strings.Contains(text, "so no event-time window will fire. Fix: --set job.watermark.idleness=10s") {
		t.Errorf("readers without a split: exit %d\n%s", code, text)
	}
	text, code = onTerminal(t, nil, "run", "--set", "parallelism.default=4")
	text = plain(text)
	if code != 4 || !strings.Contains(text, "warning: the job FAILED; the root cause is NoResourceAvailableException: Slot request bulk is not fulfillable!") ||
		!strings.Contains(text, "--set sim.taskmanagers=4") || !strings.Contains(text, "job          FAILED after 10005 ms of virtual time") {
		t.Errorf("FAILED: exit %d\n%s", code, text)
	}
	text, code = onTerminal(t, nil, "run", "--config", abs(t, "../../examples/processing-time-bounded/config.yaml"), "--events", abs(t, "../../examples/data/playground-clicks.jsonl"))
	text = plain(text)
	// the final counters of window-0 and window-1: 4 + 2 windows, 32000 + 16000 records
	if code != 0 || strings.Count(text, "warning: the input ended with 6 processing-time windows never fired (48000 records in them)") != 1 {
		t.Errorf("processing-time windows at the end of a bounded input: exit %d\n%s", code, text)
	}
	text, code = onTerminal(t, nil, "run", "--events", abs(t, "../../examples/data/orders-sample.jsonl"), "--duration", "10min")
	text = plain(text)
	if code != 0 || strings.Count(text, "warning: sim.duration has no effect in this run: the input is bounded (--events)") != 1 {
		t.Errorf("--duration on a bounded input: exit %d\n%s", code, text)
	}
}

// SIGINT (and SIGTERM) end a long run after the current step: the log is
// whole and ends with an INTERRUPTED summary at the virtual time reached,
// --output holds what the consumer saw so far, stderr says how far it got
// and how to replay, the exit code is 130 (143), and replay reports
// identical.
func TestInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("several runs of seconds each: not in the -short edit loop")
	}
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGINT, 130, "SIGINT"}, {syscall.SIGTERM, 143, "SIGTERM"}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			logPath, outPath := filepath.Join(dir, "run.log"), filepath.Join(dir, "out.jsonl")
			cmd := exec.Command(flinksimBin, "run", "--duration", "3h", "--set", "job.window.size=10s", "--log", logPath, "--output", outPath)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				if st, err := os.Stat(logPath); err == nil && st.Size() > 300_000 {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatal("the run wrote no log")
				}
				time.Sleep(20 * time.Millisecond)
			}
			cmd.Process.Signal(tc.sig)
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			var err error
			select {
			case err = <-waited:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatal("the run did not end after the signal")
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
				t.Fatalf("exit %v, want %d; stderr %s", err, tc.code, errb.String())
			}
			data, _ := os.ReadFile(logPath)
			if !bytes.HasSuffix(data, []byte("\n")) {
				t.Fatal("the log is cut mid-line")
			}
			lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
			for i, l := range lines {
				if !json.Valid(l) {
					t.Fatalf("line %d is not whole JSON: %.100s", i+1, l)
				}
			}
			var sum struct {
				Event          string `json:"event"`
				JobStatus      string `json:"job_status"`
				VT             int64  `json:"vt"`
				ResultsVisible int    `json:"results_visible"`
			}
			json.Unmarshal(lines[len(lines)-1], &sum)
			if sum.Event != "summary" || sum.JobStatus != "INTERRUPTED" || sum.VT <= 0 || sum.VT >= 3*3600*1_000_000 {
				t.Fatalf("last line %s", lines[len(lines)-1])
			}
			out, _ := os.ReadFile(outPath)
			results := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if len(out) == 0 || len(results) != sum.ResultsVisible {
				t.Errorf("--output has %d results, the summary says %d visible", len(results), sum.ResultsVisible)
			}
			for _, r := range results {
				if !json.Valid([]byte(r)) {
					t.Fatalf("--output line %q is not whole", r)
				}
			}
			reached := fmtMs(sum.VT)
			for _, want := range []string{"interrupted (" + tc.name + ") at " + reached + " of virtual time of 3 h",
				"replay to that point with: flinksim replay " + logPath} {
				if !strings.Contains(errb.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, errb.String())
				}
			}
			if stdout, errs, code := cli(t, "replay", logPath); code != 0 || strings.TrimSpace(stdout) != "identical" {
				t.Errorf("replay: exit %d %q %q", code, stdout, errs)
			}
		})
	}
}

// fmtMs is a virtual time in µs as Flink prints a duration of whole ms.
func fmtMs(us int64) string { return config.FormatDuration(time.Duration(us/1000) * time.Millisecond) }

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The view is live: while a long run is under way the terminal already
// shows event lines and the status line (virtual time, records/s, lag,
// watermark, results); Ctrl-C then ends it with the summary table, exit 130.
func TestTerminalLive(t *testing.T) {
	cmd := exec.Command(flinksimBin, "run", "--duration", "3h", "--set", "job.window.size=10s")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var out syncBuffer
	go io.Copy(&out, ptmx)
	status := regexp.MustCompile(`▶ +\d+:\d\d\.\d{3}  RUNNING  \d+ rec/s  lag \d+  watermark \d\d:\d\d:\d\d\.\d{3}  results \d+`)
	deadline := time.Now().Add(40 * time.Second)
	for !(strings.Contains(out.String(), "fired for 100 keys") && status.MatchString(ansi.ReplaceAllString(out.String(), ""))) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no live view within 40 s:\n%s", plain(out.String()))
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(os.Interrupt)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130", err)
	}
	time.Sleep(200 * time.Millisecond)
	text := plain(out.String())
	if !strings.Contains(text, "job          INTERRUPTED after") || !strings.Contains(text, "interrupted (SIGINT) at") {
		t.Errorf("the end of an interrupted run:\n%s", text)
	}
}
