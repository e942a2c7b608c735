package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// uiProc is a `flinksim ui` process under test.
type uiProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
	done   chan error
}

// startUI runs the binary's ui command on a free port and waits for the
// URL it prints.
func startUI(t *testing.T, args ...string) *uiProc {
	t.Helper()
	cmd := exec.Command(flinksimBin, append([]string{"ui"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &uiProc{cmd: cmd, stderr: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "flinksim ui: "); ok {
				urls <- strings.Fields(u)[0]
			}
		}
	}()
	go func() { p.done <- cmd.Wait() }()
	select {
	case p.url = <-urls:
	case err := <-p.done:
		t.Fatalf("flinksim ui exited: %v\n%s", err, p.stderr)
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("flinksim ui printed no URL")
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// stop sends Ctrl-C and waits for the exit code.
func (p *uiProc) stop(t *testing.T) int {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatal("flinksim ui did not stop on SIGINT")
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *uiProc) post(t *testing.T, path, body string) string {
	t.Helper()
	resp, err := http.Post(strings.TrimSuffix(p.url, "/")+path, "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s %q: %d %s", path, body, resp.StatusCode, b)
	}
	return string(b)
}

func (p *uiProc) get(t *testing.T, path string) []byte {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(p.url, "/") + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return b
}

// TestUILiveActionsDownloadReplay drives `flinksim ui` as the page does:
// run, act (kill a TaskManager, trigger a checkpoint), take single steps,
// act between them, jump back and fork; the downloaded log replays
// identical with `flinksim replay`, and so does the log --log writes when
// the server stops. `ui --replay` of the file scrubs to its end and
// downloads the same bytes.
func TestUILiveActionsDownloadReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs flinksim ui and replays its logs (~8 s)")
	}
	dir := t.TempDir()
	atExit := filepath.Join(dir, "at-exit.jsonl")
	p := startUI(t, "--listen", "127.0.0.1:0", "--set", "restart-strategy.type=fixed-delay",
		"--set", "execution.checkpointing.interval=10s", "--action", "at=5s trigger-savepoint", "--log", atExit)
	if got := p.get(t, "/sim/state?keyed=0"); !bytes.Contains(got, []byte(`"vt":0,`)) {
		t.Fatalf("a new session is not paused at 0: %.200s", got)
	}
	p.post(t, "/sim/seek", "20s")
	p.post(t, "/sim/action", "kill-taskmanager tm-1")
	p.post(t, "/sim/speed", "max")
	time.Sleep(100 * time.Millisecond)
	p.post(t, "/sim/speed", "pause")
	p.post(t, "/sim/seek", "45s")
	p.post(t, "/sim/action", "trigger-checkpoint")
	for i := 0; i < 7; i++ {
		p.post(t, "/sim/speed", "step")
	}
	p.post(t, "/sim/action", "trigger-savepoint")
	p.post(t, "/sim/seek", "60s")
	p.post(t, "/sim/seek", "50s") // back: the timeline keeps its future
	p.post(t, "/sim/seek", "61s")

	log := p.get(t, "/sim/log")
	file := filepath.Join(dir, "download.jsonl")
	if err := os.WriteFile(file, log, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"event":"action","action":"at=20s kill-taskmanager tm-1"`, `"event":"action","action":"at=45s trigger-checkpoint"`,
		`"job_status":"INTERRUPTED"`, `"event":"taskmanager_killed"`, `"actions":["at=5s trigger-savepoint"]`, `"sim.duration":"365 d"`} {
		if !bytes.Contains(log, []byte(want)) {
			t.Fatalf("the downloaded log lacks %s", want)
		}
	}
	out, errOut, code := cli(t, "replay", file)
	if code != 0 || strings.TrimSpace(out) != "identical" {
		t.Fatalf("replay of the download: exit %d\n%s%s", code, out, errOut)
	}
	if code := p.stop(t); code != exitInterrupted {
		t.Fatalf("flinksim ui exited %d on Ctrl-C, want %d: %s", code, exitInterrupted, p.stderr)
	}
	if out, errOut, code := cli(t, "replay", atExit); code != 0 || strings.TrimSpace(out) != "identical" {
		t.Fatalf("replay of --log: exit %d\n%s%s", code, out, errOut)
	}

	// ui --replay opens the recording paused at 0 with the slider spanning it
	r := startUI(t, "--listen", "127.0.0.1:0", "--replay", file)
	var st struct {
		VT       int64  `json:"vt"`
		Mode     string `json:"mode"`
		Timeline struct {
			Max    int64 `json:"max"`
			Future int   `json:"future"`
		} `json:"timeline"`
	}
	if err := json.Unmarshal(r.get(t, "/sim/state?keyed=0"), &st); err != nil {
		t.Fatal(err)
	}
	if st.VT != 0 || st.Mode != "replay" || st.Timeline.Max != 61_000_000 || st.Timeline.Future < 3 {
		t.Fatalf("ui --replay: %+v", st)
	}
	r.post(t, "/sim/seek", "61s")
	if again := r.get(t, "/sim/log"); !bytes.Equal(again, log) {
		t.Fatalf("the replay's log at the file's end differs from the file")
	}
	r.stop(t)
}

// TestUICtrlCDuringSeek: Ctrl-C ends ui at once, with exit 130, while a
// long jump is under way; with --log it first writes the log of the session
// so far, which replays identical, and SIGTERM gives 143.
func TestUICtrlCDuringSeek(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs flinksim ui three times (~6 s)")
	}
	logFile := filepath.Join(t.TempDir(), "at-exit.jsonl")
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		args []string
	}{
		{syscall.SIGINT, exitInterrupted, nil},
		{syscall.SIGINT, exitInterrupted, []string{"--log", logFile}},
		{syscall.SIGTERM, exitTerminated, nil},
	} {
		p := startUI(t, append([]string{"--listen", "127.0.0.1:0"}, tc.args...)...)
		seek := make(chan error, 1)
		go func() {
			resp, err := http.Post(strings.TrimSuffix(p.url, "/")+"/sim/seek", "text/plain", strings.NewReader("30 d"))
			if err == nil {
				resp.Body.Close()
			}
			seek <- err
		}()
		time.Sleep(800 * time.Millisecond) // the jump runs
		start := time.Now()
		p.cmd.Process.Signal(tc.sig)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%v during a jump: ui still runs after 20 s", tc.sig)
		}
		took := time.Since(start)
		if code := p.cmd.ProcessState.ExitCode(); code != tc.code {
			t.Fatalf("%v during a jump: exit %d, want %d: %s", tc.sig, code, tc.code, p.stderr)
		}
		// without --log nothing is left to do; with it, a re-run of what the
		// session ran (under a second)
		if limit := 2 * time.Second; tc.args == nil && took > limit || took > 3*limit {
			t.Errorf("%v %v: ui took %v to end", tc.sig, tc.args, took)
		}
		<-seek
	}
	if out, errOut, code := cli(t, "replay", logFile); code != 0 || strings.TrimSpace(out) != "identical" {
		t.Fatalf("replay of the log written at Ctrl-C during a jump: exit %d\n%s%s", code, out, errOut)
	}
}

// TestUIListen: a non-loopback address warns on stderr; a bad address is
// bad input; a bad setting is refused with the CLI's message before
// anything is served.
func TestUIListen(t *testing.T) {
	p := startUI(t, "--listen", "0.0.0.0:0")
	for i := 0; i < 100 && !strings.Contains(p.stderr.String(), "warning"); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(p.stderr.String(), "warning: --listen 0.0.0.0:0 is not a loopback address") {
		t.Fatalf("no warning for a non-loopback address: %q", p.stderr)
	}
	p.stop(t)
	if _, errOut, code := cli(t, "ui", "--listen", "no-such-host-:x"); code != exitBadInput || !strings.Contains(errOut, "--listen") {
		t.Fatalf("a bad --listen: exit %d %s", code, errOut)
	}
	if _, errOut, code := cli(t, "ui", "--set", "parallelism.default=0"); code != exitBadInput || !strings.Contains(errOut, "parallelism.default") {
		t.Fatalf("a bad setting: exit %d %s", code, errOut)
	}
	if _, errOut, code := cli(t, "ui", "--replay", writeTemp(t, "x.jsonl", "not a log\n")); code != exitBadInput || !strings.Contains(errOut, "not a flinksim JSON event log") {
		t.Fatalf("a bad --replay: exit %d %s", code, errOut)
	}
}

// newActions are the actions the live diagram offers beyond the first
// five, one of each kind, in the --action syntax.
var newActions = []string{
	"send-event key=probe-key ts=now partition=1 amount=3",
	"send-event key=late-key ts=now-5min",
	"pause-partition 2",
	"resume-partition 2",
	"set job.watermark.idleness=10s",
	"set sim.output.isolation-level=read_committed",
	"set execution.checkpointing.unaligned.enabled=true",
}

// TestNewActionsThroughCLI gives each new action with --action and from
// the live diagram: each does what the README says (the record reaches the
// topic, the producer stalls and resumes, a job setting restarts the job
// from a savepoint, the isolation changes only the view), and both logs
// replay identical.
func TestNewActionsThroughCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two runs of 40 s with replays (~8 s)")
	}
	dir := t.TempDir()
	logFile := filepath.Join(dir, "cli.jsonl")
	args := []string{"run", "--duration", "40s", "--log", logFile}
	for i, a := range newActions {
		args = append(args, "--action", "at="+[]string{"5s", "6s", "8s", "15s", "20s", "25s", "30s"}[i]+" "+a)
	}
	_, errOut, code := cli(t, args...)
	if code != 0 {
		t.Fatalf("run with the new actions: exit %d %s", code, errOut)
	}
	if !strings.Contains(errOut, "visible to a read_committed consumer") {
		t.Fatalf("set sim.output.isolation-level did not change the consumer: %s", errOut)
	}
	checkNewActionEvents(t, logFile)
	if out, errOut, code := cli(t, "replay", logFile); code != 0 || strings.TrimSpace(out) != "identical" {
		t.Fatalf("replay: exit %d %s %s", code, out, errOut)
	}

	p := startUI(t, "--listen", "127.0.0.1:0", "--duration", "40s")
	for i, a := range newActions {
		p.post(t, "/sim/seek", []string{"5s", "6s", "8s", "15s", "20s", "25s", "30s"}[i])
		p.post(t, "/sim/action", a)
	}
	p.post(t, "/sim/seek", "40s")
	live := filepath.Join(dir, "ui.jsonl")
	if err := os.WriteFile(live, p.get(t, "/sim/log"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkNewActionEvents(t, live)
	if out, errOut, code := cli(t, "replay", live); code != 0 || strings.TrimSpace(out) != "identical" {
		t.Fatalf("replay of the UI's log: exit %d %s %s", code, out, errOut)
	}
	p.stop(t)
}

func checkNewActionEvents(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	var probe struct {
		Partition int   `json:"partition"`
		Timestamp int64 `json:"timestamp"`
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var ev struct {
			Event string `json:"event"`
			Key   string `json:"key"`
		}
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		count[ev.Event]++
		if ev.Event == "event_sent" && ev.Key == "probe-key" {
			_ = json.Unmarshal(line, &probe)
		}
	}
	for kind, want := range map[string]int{"event_sent": 2, "partition_paused": 1, "partition_resumed": 1, "reconfigure": 2, "output_isolation": 1} {
		if count[kind] < want {
			t.Errorf("%s: %d %s events, want %d", filepath.Base(path), count[kind], kind, want)
		}
	}
	if probe.Partition != 1 || probe.Timestamp < 1_700_000_000_000 {
		t.Errorf("%s: the probe record went to partition %d with ts %d", filepath.Base(path), probe.Partition, probe.Timestamp)
	}
}
