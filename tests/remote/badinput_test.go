package remote_test

import (
	"fmt"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/cluster/remote"
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
)

// expect runs one command to its end and checks its exit code and that its
// stderr holds every one of wants.
func expect(t *testing.T, timeout time.Duration, code int, wants []string, args ...string) {
	t.Helper()
	start := time.Now()
	_, stderr, got := flinksim(t, repo, timeout, args...)
	if got != code {
		t.Errorf("flinksim %s: exit %d, want %d:\n%s", strings.Join(args, " "), got, code, stderr)
		return
	}
	for _, w := range wants {
		if !strings.Contains(stderr, w) {
			t.Errorf("flinksim %s: stderr lacks %q:\n%s", strings.Join(args, " "), w, stderr)
		}
	}
	t.Logf("exit %d after %s: %s", got, time.Since(start).Round(time.Millisecond), lastLine(stderr))
}

// A wrong address, an address nobody answers at, a refused connection: a
// clear error naming the address, a non-zero exit, no hang.
func TestBadAddresses(t *testing.T) {
	closed := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	expect(t, 10*time.Second, 2, []string{`--join "nonsense": want HOST:PORT`}, "taskmanager", "--join", "nonsense")
	expect(t, 10*time.Second, 2, []string{"the port must be a number"}, "taskmanager", "--join", "127.0.0.1:http")
	expect(t, 10*time.Second, 2, []string{"--listen", "want HOST:PORT"}, "jobmanager", "--listen", "6123")
	expect(t, 20*time.Second, 5, []string{"cannot join the jobmanager at " + closed, "connection refused"},
		"taskmanager", "--join", closed, "--taskmanager.registration.timeout", "2s")
	expect(t, 20*time.Second, 5, []string{"cannot join the jobmanager at no-such-host.invalid:6123"},
		"taskmanager", "--join", "no-such-host.invalid:6123")
	expect(t, 20*time.Second, 5, []string{"cannot listen on 192.0.2.1:6123"}, "jobmanager", "--listen", "192.0.2.1:6123")
	expect(t, 10*time.Second, 2, []string{"TLS needs all of"}, "taskmanager", "--tls-cert", "x.pem")
}

// A process of another build, one too many, one with a name already
// joined: refused with a clear error on both sides; the run goes on with
// the others.
func TestRefusedJoins(t *testing.T) {
	c := startCluster(t, repo, spec{args: []string{"--duration", "60s", "--log", filepath.Join(t.TempDir(), "log")}})
	refused := func(name string, program string, args ...string) {
		t.Helper()
		p := start(t, name, repo, "", append([]string{program, "taskmanager", "--join", c.addr}, args...)...)
		if code := p.wait(t, 30*time.Second); code != 5 || !strings.Contains(p.stderr.String(), "refused this process") {
			t.Errorf("%s: exit %d:\n%s", name, code, p.stderr)
		}
		t.Logf("%s: %s", name, lastLine(p.stderr.String()))
	}
	// a build with another fingerprint (the test hook remote.buildTag,
	// as a modified tree would have): refused, both fingerprints named
	refused("another build", otherBin)
	c.jm.waitFor(t, "another build: its build fingerprint is", 10*time.Second)
	if s := c.jm.stderr.String(); !strings.Contains(s, ` build:other", the jobmanager's "`) {
		t.Errorf("the refusal does not name both fingerprints:\n%s", s)
	}

	c.addTM(t, spec{tmArgs: []string{"--taskmanager.resource-id", "pod-a"}}, 0)
	c.jm.waitFor(t, "taskmanager process 1 of 2 joined: pod-a", 20*time.Second)
	refused("the same name", bin, "--taskmanager.resource-id", "pod-a")
	c.jm.waitFor(t, "duplicate name", 10*time.Second)

	c.addTM(t, spec{}, 1)
	c.jm.waitFor(t, "TaskManager tm-2 starts", 20*time.Second)
	refused("one too many", bin)
	c.jm.waitFor(t, "too many processes", 10*time.Second)
	if code := c.jm.wait(t, 2*time.Minute); code != 0 {
		t.Fatalf("the jobmanager exited %d:\n%s", code, c.jm.stderr)
	}
	t.Logf("jobmanager:\n%s", c.jm.stderr)
}

// A taskmanager interrupted while it waits for the run leaves it; others
// take its place. A jobmanager interrupted while it waits tells the
// processes that joined, which exit non-zero.
func TestInterruptedJoin(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "log")
	c := startCluster(t, repo, spec{args: []string{"--duration", "20s", "--log", logPath}, tms: 1})
	c.jm.waitFor(t, "process 1 of 2 joined", 20*time.Second)
	c.tms[0].signal(syscall.SIGINT)
	if code := c.tms[0].wait(t, 10*time.Second); code != 5 || !strings.Contains(c.tms[0].stderr.String(), "interrupted") {
		t.Errorf("the interrupted taskmanager: exit %d:\n%s", code, c.tms[0].stderr)
	}
	c.jm.waitFor(t, "left before the run started", 10*time.Second)
	c.addTM(t, spec{}, 1)
	c.addTM(t, spec{}, 2)
	if code := c.jm.wait(t, time.Minute); code != 0 {
		t.Fatalf("the jobmanager exited %d:\n%s", code, c.jm.stderr)
	}
	replays(t, read(t, logPath))

	c = startCluster(t, repo, spec{tms: 1})
	c.jm.waitFor(t, "process 1 of 2 joined", 20*time.Second)
	c.jm.signal(syscall.SIGINT)
	if code := c.jm.wait(t, 10*time.Second); code != 5 || !strings.Contains(c.jm.stderr.String(), "interrupted while waiting") {
		t.Errorf("the interrupted jobmanager: exit %d:\n%s", code, c.jm.stderr)
	}
	if code := c.tms[0].wait(t, 10*time.Second); code != 5 || !strings.Contains(c.tms[0].stderr.String(), "interrupted before the run started") {
		t.Errorf("its taskmanager: exit %d:\n%s", code, c.tms[0].stderr)
	}
}

// A jobmanager killed mid-run: its taskmanagers give it up within the
// watchdog timeout and exit non-zero.
func TestJobManagerKilled(t *testing.T) {
	c := startCluster(t, repo, spec{tms: 2, args: []string{"--watchdog-timeout", "2s"}})
	c.hosting(t, "tm-2")
	time.Sleep(time.Second)
	c.jm.signal(syscall.SIGKILL)
	for _, p := range c.tms {
		if code := p.wait(t, 15*time.Second); code != 5 || !strings.Contains(p.stderr.String(), "the jobmanager at "+c.addr) {
			t.Errorf("%s: exit %d:\n%s", p.name, code, p.stderr)
		}
		t.Logf("%s: %s", p.name, lastLine(p.stderr.String()))
	}
}

var garbage = []byte{0xff, 0xff, 0xff, 0xff}

// A jobmanager that sends a step the taskmanager cannot decode: the
// taskmanager names it and exits non-zero.
func TestUndecodableStepFromJobManager(t *testing.T) {
	cfg := config.Default()
	header := cluster.HeaderLine(cfg, cluster.Options{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		writeFrame(c, &messages.Frame{Body: &messages.Frame_Challenge{Challenge: &messages.Challenge{Nonce: make([]byte, 32)}}})
		if f, err := readFrame(c); err != nil || f.GetJoinRequest() == nil {
			return
		}
		writeFrame(c, &messages.Frame{Body: &messages.Frame_JoinAccepted{JoinAccepted: &messages.JoinAccepted{Position: 1, Expected: 2, Header: header, WatchdogTimeoutMs: 5000}}})
		writeFrame(c, &messages.Frame{Body: &messages.Frame_StepBatch{StepBatch: &messages.StepBatch{Step: 1, DeliverBatch: garbage}}})
		io.Copy(io.Discard, c)
	}()
	addr := l.Addr().String()
	expect(t, 30*time.Second, 5, []string{"cannot decode step 1 from the jobmanager at " + addr}, "taskmanager", "--join", addr)
}

// A member (a process that joined) that answers a step with what the
// jobmanager cannot decode: the jobmanager names it, treats it as lost (the
// run goes on and replays in one process) and exits non-zero at the end.
func TestUndecodableReplyFromTaskManager(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "log")
	c := startCluster(t, repo, spec{tms: 1, args: []string{"--duration", "30s", "--log", logPath}})
	c.jm.waitFor(t, "process 1 of 2 joined", 20*time.Second)
	conn, _ := dialJM(t, c.addr)
	defer conn.Close()
	// the fake takes its fingerprint from what the jobmanager prints (the
	// Challenge names none): the check is for honest mistakes, not for a
	// peer that lies (README, "Threat model")
	writeFrame(conn, &messages.Frame{Body: &messages.Frame_JoinRequest{JoinRequest: &messages.JoinRequest{
		Version: remote.Version(), ResourceId: "fake", Fingerprint: jmBuild(t, c.jm.stderr.String())}}})
	go func() {
		for {
			f, err := readFrame(conn)
			if err != nil {
				return
			}
			switch {
			case f.GetPing() != nil:
				writeFrame(conn, &messages.Frame{Body: &messages.Frame_Pong{Pong: &messages.Pong{Seq: f.GetPing().Seq}}})
			case f.GetStepBatch() != nil:
				writeFrame(conn, &messages.Frame{Body: &messages.Frame_StepReply{StepReply: &messages.StepReply{Step: f.GetStepBatch().Step, DoneBatch: garbage}}})
			}
		}
	}()
	code := c.jm.wait(t, 2*time.Minute)
	stderr := c.jm.stderr.String()
	if code != 5 || !strings.Contains(stderr, "cannot decode the answer to step") || !strings.Contains(stderr, "(fake at "+conn.LocalAddr().String()+")") {
		t.Fatalf("the jobmanager: exit %d:\n%s", code, stderr)
	}
	t.Logf("%s", lastLine(stderr))
	replays(t, read(t, logPath))
}

// A "jobmanager" that accepts a taskmanager joining with a token but cannot
// prove it holds the token itself (its JoinAccepted carries no MAC): the
// taskmanager does not trust it and exits non-zero before building anything.
func TestJobManagerWithoutTokenNotTrusted(t *testing.T) {
	cfg := config.Default()
	header := cluster.HeaderLine(cfg, cluster.Options{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan *messages.JoinRequest, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		writeFrame(c, &messages.Frame{Body: &messages.Frame_Challenge{Challenge: &messages.Challenge{Nonce: make([]byte, 32)}}})
		f, err := readFrame(c)
		if err != nil || f.GetJoinRequest() == nil {
			return
		}
		got <- f.GetJoinRequest()
		writeFrame(c, &messages.Frame{Body: &messages.Frame_JoinAccepted{JoinAccepted: &messages.JoinAccepted{Position: 1, Expected: 2, Header: header, WatchdogTimeoutMs: 5000}}})
		io.Copy(io.Discard, c)
	}()
	addr := l.Addr().String()
	expect(t, 30*time.Second, 5, []string{"the jobmanager at " + addr + " accepted this process without proving the join token"},
		"taskmanager", "--join", addr, "--join-token-file", tokenFile(t))
	req := <-got
	if len(req.Nonce) != 32 || len(req.Mac) != 32 {
		t.Errorf("the join carries a nonce of %d bytes and a MAC of %d, want 32 and 32", len(req.Nonce), len(req.Mac))
	}
}

// jmBuild is the build fingerprint a jobmanager's stderr names when it
// starts listening.
func jmBuild(t *testing.T, stderr string) string {
	t.Helper()
	m := regexp.MustCompile(`; build (.*)\); waiting up to`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("the jobmanager names no build:\n%s", stderr)
	}
	return m[1]
}
