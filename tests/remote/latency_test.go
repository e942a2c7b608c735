package remote_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// inNetns runs f on an OS thread that entered network namespace ns: the
// sockets f makes live there (the thread is never handed back, it ends with
// its goroutine).
func inNetns(ns string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		fd, err := os.Open("/run/netns/" + ns)
		if err != nil {
			errc <- err
			return
		}
		defer fd.Close()
		if err := unix.Setns(int(fd.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %v", ns, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}

// delayProxy listens on listen in namespace ns and forwards each connection
// to target (in ns too), holding every chunk of bytes for oneWay in each
// direction before it goes on: tc netem is not on this machine, so the
// added latency is this proxy's, 2*oneWay per round trip.
func delayProxy(t testing.TB, ns, listen, target string, oneWay time.Duration) {
	t.Helper()
	var l net.Listener
	if err := inNetns(ns, func() (err error) { l, err = net.Listen("tcp", listen); return }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			var up net.Conn
			if err := inNetns(ns, func() (err error) { up, err = net.Dial("tcp", target); return }); err != nil {
				c.Close()
				continue
			}
			go delayCopy(up, c, oneWay)
			go delayCopy(c, up, oneWay)
		}
	}()
}

func delayCopy(dst, src net.Conn, d time.Duration) {
	type chunk struct {
		at time.Time
		b  []byte
	}
	ch := make(chan chunk, 1<<14)
	go func() {
		defer close(ch)
		for {
			buf := make([]byte, 64<<10)
			n, err := src.Read(buf)
			if n > 0 {
				ch <- chunk{time.Now().Add(d), buf[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
	io.Copy(io.Discard, src)
}

// BenchmarkRemoteLatency20ms runs the default job's first virtual seconds
// (FLINKSIM_LATENCY_DURATION, 10s by default) with the jobmanager in one
// network namespace and a taskmanager in each of two others, 20 ms added
// to every round trip between them (10 ms each way, by delayProxy in the
// jobmanager's namespace), and reports wall seconds per virtual second and
// round trips per virtual second (root only).
//
//	go test ./tests/remote -run XXX -bench RemoteLatency20ms -benchtime 1x
func BenchmarkRemoteLatency20ms(b *testing.B) {
	dur := os.Getenv("FLINKSIM_LATENCY_DURATION")
	if dur == "" {
		dur = "10s"
	}
	for i := 0; i < b.N; i++ {
		h := newHosts(b)
		token := tokenFile(b)
		logPath := filepath.Join(b.TempDir(), "remote.log")
		delayProxy(b, h.jm, "0.0.0.0:7000", "127.0.0.1:6123", 10*time.Millisecond)
		s := spec{args: []string{"--join-token-file", token, "--duration", dur, "--log", logPath}, listen: "127.0.0.1:6123", jmNS: h.jm,
			tmNS: []string{h.a, h.b}, joinTo: []string{"10.77.1.1:7000", "10.77.2.1:7000"}, tmArgs: []string{"--join-token-file", token}}
		c := startCluster(b, repo, s)
		c.addTM(b, s, 0)
		c.addTM(b, s, 1)
		if code := c.jm.wait(b, 30*time.Minute); code != 0 {
			b.Fatalf("the jobmanager exited %d:\n%s", code, c.jm.stderr)
		}
		out := c.jm.stderr.String()
		b.ReportMetric(number(b, out, `([0-9.]+)s wall per virtual second`), "wall-s/virtual-s")
		b.ReportMetric(number(b, out, `([0-9]+) per virtual second`), "round-trips/virtual-s")
		b.ReportMetric(float64(duration(b, out, `heartbeat round trip median ([0-9.]+[µm]?s)`).Microseconds())/1e3, "heartbeat-rtt-ms")
		b.Logf("%s", lastLine(out))
	}
}
