// Package remote_test runs flinksim over several OS processes: a jobmanager
// and taskmanagers on loopback, in network namespaces joined by veth pairs,
// with TLS, with a process killed or cut off, and with bad input. Every run
// is held to the single-process run of the same recipe, byte for byte.
package remote_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flinksim/flinksim/sim/eventlog"
)

var (
	bin      string // flinksim, built once
	otherBin string // flinksim built with another build tag (another version)
	repo     string // the repository root
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		// the edit loop (go test -short ./...): these tests build the
		// binary twice and start processes; the full go test ./... runs them
		fmt.Fprintln(os.Stderr, "tests/remote: the multi-process tests do not run under -short")
		_ = flag.Set("test.run", "^$")
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "flinksim-remote")
	if err != nil {
		panic(err)
	}
	repo, _ = filepath.Abs(filepath.Join("..", ".."))
	bin = filepath.Join(dir, "flinksim")
	otherBin = filepath.Join(dir, "flinksim-other")
	for _, b := range []struct{ out, ldflags string }{{bin, ""}, {otherBin, "-X github.com/flinksim/flinksim/cluster/remote.buildTag=other"}} {
		cmd := exec.Command("go", "build", "-ldflags", b.ldflags, "-o", b.out, "./cmd/flinksim")
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			os.Stderr.Write(out)
			panic(err)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// lockedBuffer collects a process's output while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proc is a flinksim process under test.
type proc struct {
	name   string
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan struct{}
	code   int
}

// start runs argv (the first element a program) in dir, optionally inside
// network namespace ns.
func start(t testing.TB, name, dir, ns string, argv ...string) *proc {
	t.Helper()
	return startOut(t, nil, name, dir, ns, argv...)
}

// startOut is start with stdout going to out.
func startOut(t testing.TB, out *bytes.Buffer, name, dir, ns string, argv ...string) *proc {
	t.Helper()
	if ns != "" {
		argv = append([]string{"ip", "netns", "exec", ns}, argv...)
	}
	p := &proc{name: name, cmd: exec.Command(argv[0], argv[1:]...), stderr: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd.Dir = dir
	p.cmd.Stderr = p.stderr
	if out != nil {
		p.cmd.Stdout = out
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
			if ee.ExitCode() < 0 {
				p.code = -1
			}
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for p to exit within timeout and returns its exit code; on a
// timeout it kills p and fails the test.
func (p *proc) wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(timeout):
		p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("%s did not exit within %s (killed); its stderr:\n%s", p.name, timeout, p.stderr)
		return -1
	}
}

// waitFor waits until p's stderr contains s.
func (p *proc) waitFor(t testing.TB, s string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(p.stderr.String(), s) {
		select {
		case <-p.done:
			t.Fatalf("%s exited (code %d) before saying %q:\n%s", p.name, p.code, s, p.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not say %q within %s:\n%s", p.name, s, timeout, p.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *proc) signal(sig syscall.Signal) { p.cmd.Process.Signal(sig) }

// cpu is the CPU time (user and system) the process used; it has exited.
func (p *proc) cpu() time.Duration {
	<-p.done
	return p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
}

// freePort is a TCP port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// flinksim runs one command to its end in dir and returns stdout, stderr
// and the exit code.
func flinksim(t testing.TB, dir string, timeout time.Duration, args ...string) (string, string, int) {
	t.Helper()
	var out bytes.Buffer
	p := startOut(t, &out, "flinksim "+args[0], dir, "", append([]string{bin}, args...)...)
	code := p.wait(t, timeout)
	return out.String(), p.stderr.String(), code
}

// procs is a jobmanager and its taskmanagers.
type procs struct {
	jm   *proc
	tms  []*proc
	addr string // where the taskmanagers join
	dir  string
}

// spec is one remote run.
type spec struct {
	args    []string // the jobmanager's run flags (and remote flags)
	tms     int      // taskmanager processes to start
	tmArgs  []string // extra flags of every taskmanager
	jmNS    string   // network namespaces ("": none)
	tmNS    []string
	listen  string // the jobmanager's --listen ("": loopback, a free port)
	joinTo  []string
	timeout time.Duration
}

// startCluster starts the jobmanager, waits until it listens, then starts
// the taskmanagers.
func startCluster(t testing.TB, dir string, s spec) *procs {
	t.Helper()
	c := &procs{dir: dir, addr: s.listen}
	if c.addr == "" {
		c.addr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	}
	args := append([]string{bin, "jobmanager", "--listen", c.addr, "--join-timeout", "60s"}, s.args...)
	c.jm = start(t, "jobmanager", dir, s.jmNS, args...)
	c.jm.waitFor(t, "waiting up to", 30*time.Second)
	for i := 0; i < s.tms; i++ {
		c.addTM(t, s, i)
	}
	return c
}

func (c *procs) addTM(t testing.TB, s spec, i int) *proc {
	t.Helper()
	join := c.addr
	if i < len(s.joinTo) {
		join = s.joinTo[i]
	}
	ns := ""
	if i < len(s.tmNS) {
		ns = s.tmNS[i]
	}
	p := start(t, fmt.Sprintf("taskmanager %d", i+1), c.dir, ns, append([]string{bin, "taskmanager", "--join", join}, s.tmArgs...)...)
	c.tms = append(c.tms, p)
	return p
}

// hosting is the taskmanager process that hosts TaskManager name.
func (c *procs) hosting(t testing.TB, name string) *proc {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, p := range c.tms {
			if strings.Contains(p.stderr.String(), "hosting TaskManager "+name+"\n") {
				return p
			}
		}
	}
	t.Fatalf("no taskmanager process hosts %s", name)
	return nil
}

// firstDiff names the first line where two logs differ ("" when equal).
func firstDiff(a, b []byte) string {
	line, x, y, differ := eventlog.FirstDifference(a, b)
	if !differ {
		return ""
	}
	return fmt.Sprintf("line %d:\n  one process: %.500s\n  remote: %.500s", line, x, y)
}

func read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }
