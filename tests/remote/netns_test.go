package remote_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hosts are three network namespaces standing for three hosts: the
// jobmanager's, joined to host a by one veth pair (10.77.1.0/24) and to
// host b by another (10.77.2.0/24). The jobmanager listens on every
// interface of its host; each taskmanager joins at the address on its link.
type hosts struct {
	jm, a, b     string // namespace names
	linkB        string // the jobmanager's end of the link to b
	jmAddrA      string // the jobmanager as host a reaches it
	jmAddrB      string // ... and host b
	jmAdvertised string
}

// newHosts sets the namespaces up (root only; skipped elsewhere unless
// FLINKSIM_REQUIRE_NETNS=1, as .ci/run sets, which makes it a failure) and
// removes them when the test ends.
func newHosts(t testing.TB) *hosts {
	t.Helper()
	need := os.Getenv("FLINKSIM_REQUIRE_NETNS") == "1"
	skip := func(why string) {
		if need {
			t.Fatalf("network namespaces are required (FLINKSIM_REQUIRE_NETNS=1): %s", why)
		}
		t.Skip(why)
	}
	if os.Geteuid() != 0 {
		skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		skip("no ip command (iproute2)")
	}
	id := fmt.Sprintf("%04x", os.Getpid()&0xffff)
	h := &hosts{jm: "fsr" + id + "jm", a: "fsr" + id + "a", b: "fsr" + id + "b", linkB: "fsr" + id + "jb",
		jmAddrA: "10.77.1.1:6123", jmAddrB: "10.77.2.1:6123", jmAdvertised: "10.77.1.1:6123"}
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	for _, ns := range []string{h.jm, h.a, h.b} {
		exec.Command("ip", "netns", "del", ns).Run() // a leftover of a killed run
		if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
			skip(fmt.Sprintf("ip netns add: %v: %s", err, out))
		}
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		ip("-n", ns, "link", "set", "lo", "up")
	}
	for _, l := range []struct{ ns, jmEnd, otherEnd, subnet string }{
		{h.a, "fsr" + id + "ja", "fsr" + id + "aj", "10.77.1"}, {h.b, h.linkB, "fsr" + id + "bj", "10.77.2"}} {
		ip("link", "add", l.jmEnd, "netns", h.jm, "type", "veth", "peer", "name", l.otherEnd, "netns", l.ns)
		ip("-n", h.jm, "addr", "add", l.subnet+".1/24", "dev", l.jmEnd)
		ip("-n", l.ns, "addr", "add", l.subnet+".2/24", "dev", l.otherEnd)
		ip("-n", h.jm, "link", "set", l.jmEnd, "up")
		ip("-n", l.ns, "link", "set", l.otherEnd, "up")
	}
	return h
}

// tokenFile writes a join token into a file for --join-token-file.
func tokenFile(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "join-token")
	if err := os.WriteFile(path, []byte("a test join token of 32 bytes..\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// start runs the jobmanager in its host, then a taskmanager in host a
// (tm-1) and one in host b (tm-2), joining with a token (without TLS or a
// token only loopback may join).
func (h *hosts) start(t *testing.T, args ...string) *procs {
	t.Helper()
	token := tokenFile(t)
	s := spec{args: append([]string{"--jobmanager.bind-host", "0.0.0.0", "--join-token-file", token}, args...), listen: h.jmAdvertised, jmNS: h.jm,
		tmNS: []string{h.a, h.b}, joinTo: []string{h.jmAddrA, h.jmAddrB}, tmArgs: []string{"--join-token-file", token}}
	c := startCluster(t, repo, s)
	c.addTM(t, s, 0)
	c.jm.waitFor(t, "process 1 of 2 joined", 20*time.Second)
	c.addTM(t, s, 1)
	c.hosting(t, "tm-2")
	if !strings.Contains(c.tms[1].stderr.String(), "(from 10.77.2.2:") {
		t.Fatalf("the taskmanager on host b did not take its address from its link:\n%s", c.tms[1].stderr)
	}
	return c
}

// A jobmanager and a taskmanager on each of two other hosts write the
// single-process log.
func TestSeparateHostsSameLog(t *testing.T) {
	h := newHosts(t)
	tmp := t.TempDir()
	args := []string{"--duration", "2min", "--set", "execution.checkpointing.interval=20s"}
	oneLog, remLog := filepath.Join(tmp, "one.log"), filepath.Join(tmp, "remote.log")
	if _, stderr, code := flinksim(t, repo, 2*time.Minute, append([]string{"run", "--log", oneLog}, args...)...); code != 0 {
		t.Fatalf("flinksim run: exit %d\n%s", code, stderr)
	}
	c := h.start(t, append(args, "--log", remLog)...)
	if code := c.jm.wait(t, 3*time.Minute); code != 0 {
		t.Fatalf("the jobmanager exited %d:\n%s", code, c.jm.stderr)
	}
	for _, p := range c.tms {
		if code := p.wait(t, 30*time.Second); code != 0 {
			t.Errorf("%s exited %d:\n%s", p.name, code, p.stderr)
		}
	}
	if d := firstDiff(read(t, oneLog), read(t, remLog)); d != "" {
		t.Fatalf("the logs differ at %s\n%s", d, c.jm.stderr)
	}
	t.Logf("%s", lastLine(c.jm.stderr.String()))
}

// The link to host b goes down mid-run: the jobmanager reports tm-2 lost
// within the watchdog timeout, the run finishes, and its log replays in one
// process; the cut-off taskmanager gives the jobmanager up.
func TestSeparateHostsLinkDown(t *testing.T) {
	h := newHosts(t)
	logPath := filepath.Join(t.TempDir(), "remote.log")
	c := h.start(t, "--duration", "2min", "--set", "restart-strategy.type=fixed-delay", "--watchdog-timeout", "3s", "--log", logPath)
	time.Sleep(2 * time.Second)
	cut := time.Now()
	if out, err := exec.Command("ip", "-n", h.jm, "link", "set", h.linkB, "down").CombinedOutput(); err != nil {
		t.Fatalf("ip link set down: %v\n%s", err, out)
	}
	c.jm.waitFor(t, "lost taskmanager process 2", 20*time.Second)
	t.Logf("lost after %s", time.Since(cut).Round(time.Millisecond))
	code := c.jm.wait(t, 3*time.Minute)
	lostRun(t, c, logPath, code)
	if code := c.tms[1].wait(t, 30*time.Second); code != 5 || !strings.Contains(c.tms[1].stderr.String(), "lost the jobmanager at "+h.jmAddrB) {
		t.Errorf("the cut-off taskmanager: exit %d:\n%s", code, c.tms[1].stderr)
	}
	if code := c.tms[0].wait(t, 30*time.Second); code != 0 {
		t.Errorf("the other taskmanager: exit %d:\n%s", code, c.tms[0].stderr)
	}
}

// Without TLS or a join token, a taskmanager on another host is refused
// (only loopback may join), and so is one with the wrong token; neither
// ends the jobmanager's wait.
func TestSeparateHostsNeedTokenOrTLS(t *testing.T) {
	h := newHosts(t)
	c := startCluster(t, repo, spec{args: []string{"--jobmanager.bind-host", "0.0.0.0", "--duration", "10s"}, listen: h.jmAdvertised, jmNS: h.jm})
	p := start(t, "taskmanager on host a", repo, h.a, bin, "taskmanager", "--join", h.jmAddrA)
	if code := p.wait(t, 30*time.Second); code != 5 || !strings.Contains(p.stderr.String(), "only processes on its loopback may join") {
		t.Errorf("a taskmanager from host a without a token: exit %d:\n%s", code, p.stderr)
	}
	c.jm.waitFor(t, "a connection from outside loopback", 10*time.Second)
	c.jm.signal(syscall.SIGINT)
	c.jm.wait(t, 30*time.Second)

	token := tokenFile(t)
	wrong := filepath.Join(t.TempDir(), "wrong")
	os.WriteFile(wrong, []byte("another token, also 32 bytes...."), 0o600)
	c = startCluster(t, repo, spec{args: []string{"--jobmanager.bind-host", "0.0.0.0", "--duration", "10s", "--join-token-file", token}, listen: h.jmAdvertised, jmNS: h.jm})
	p = start(t, "taskmanager with the wrong token", repo, h.a, bin, "taskmanager", "--join", h.jmAddrA, "--join-token-file", wrong)
	if code := p.wait(t, 30*time.Second); code != 5 || !strings.Contains(p.stderr.String(), "the join token does not match") {
		t.Errorf("a taskmanager with the wrong token: exit %d:\n%s", code, p.stderr)
	}
	c.jm.waitFor(t, "does not prove the join token", 10*time.Second)
	if strings.Contains(c.jm.stderr.String(), "joined:") {
		t.Errorf("a refused taskmanager joined:\n%s", c.jm.stderr)
	}
	c.jm.signal(syscall.SIGINT)
	c.jm.wait(t, 30*time.Second)
}
