package remote

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/flinksim/flinksim/messages"
)

// Frames cross in order and whole; a length beyond the limit, bytes that
// are not a Frame and an empty Frame are undecodable (errUndecodable), a
// cut mid-frame is the connection's error.
func TestConnFrames(t *testing.T) {
	a, b := net.Pipe()
	ka, kb := newConn(a), newConn(b)
	defer ka.close()
	defer kb.close()
	for i := uint64(1); i <= 100; i++ {
		if !ka.send(&messages.Frame{Body: &messages.Frame_Ping{Ping: &messages.Ping{Seq: i}}}) {
			t.Fatal("send on an open connection failed")
		}
	}
	for i := uint64(1); i <= 100; i++ {
		f, err := kb.read()
		if err != nil || f.GetPing().GetSeq() != i {
			t.Fatalf("frame %d: %v %v", i, f, err)
		}
	}
	ka.close()
	if ka.send(&messages.Frame{Body: &messages.Frame_Bye{Bye: &messages.Bye{}}}) {
		t.Error("send on a closed connection succeeded")
	}

	for _, tc := range []struct {
		name  string
		bytes []byte
		want  string
	}{
		{"beyond the limit", binary.BigEndian.AppendUint32(nil, maxMessageBytes+1), "above the limit of 268435456"},
		{"beyond the limit before a join", binary.BigEndian.AppendUint32(nil, joinFrameBytes+1), "above the limit of 1048576"},
		{"not a Frame", append(binary.BigEndian.AppendUint32(nil, 3), 0xff, 0xff, 0xff), "undecodable"},
		{"an empty Frame", binary.BigEndian.AppendUint32(nil, 0), "an empty frame"},
	} {
		a, b := net.Pipe()
		k := newConn(b)
		if !strings.Contains(tc.name, "before a join") {
			k.member()
		}
		go a.Write(tc.bytes)
		_, err := k.read()
		if !errors.Is(err, errUndecodable) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
		a.Close()
		k.close()
	}
	a, b = net.Pipe()
	k := newConn(b)
	go func() { a.Write(append(binary.BigEndian.AppendUint32(nil, 10), 1, 2)); a.Close() }()
	if _, err := k.read(); err == nil || errors.Is(err, errUndecodable) {
		t.Errorf("a cut mid-frame: %v", err)
	}
	k.close()
}

// A flood of connections that never join: one host holds at most
// maxJoiningPerHost joining slots, all hosts together maxJoining; beyond
// them a connection is dropped at once, and the count says so. A
// connection that sends no JoinRequest loses its slot within
// joinRequestTimeout, and Close ends the rest.
func TestJoiningBounded(t *testing.T) {
	j, err := StartJobManager(JobManagerConfig{Endpoint: Endpoint{Advertise: "127.0.0.1:0"}, TaskManagers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close("test over", true)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// from (any address of loopback's 127/8, one host each)
	dial := func(from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", j.Address())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		return c
	}
	waitDropped := func(n uint64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for j.Stats().Dropped < n && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if st := j.Stats(); st.Dropped != n {
			t.Fatalf("%d dropped, want %d", st.Dropped, n)
		}
	}
	for i := 0; i < maxJoiningPerHost+3; i++ {
		dial("127.0.0.2")
	}
	waitDropped(3)
	// other hosts fill the rest: 64 in all, then 5 more are dropped
	for i := 0; i < maxJoining-maxJoiningPerHost+5; i++ {
		dial(fmt.Sprintf("127.0.1.%d", 1+i/maxJoiningPerHost))
	}
	waitDropped(8)
	if s := j.dropSummary(); s != "8 messages dropped from non-members or out of the protocol (too many joining 8)" {
		t.Fatalf("summary %q", s)
	}
	// a connection that sends nothing is closed after the Challenge within
	// joinRequestTimeout, which frees its slot
	start := time.Now()
	if !closedSoon(conns[0], joinRequestTimeout+2*time.Second) {
		t.Fatalf("an idle connection was not closed within %s", joinRequestTimeout+2*time.Second)
	}
	if d := time.Since(start); d < joinRequestTimeout-time.Second {
		t.Fatalf("closed after %s, before the join's deadline", d)
	}
	deadline := time.Now().Add(3 * time.Second)
	for len(j.joining) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	j.mu.Lock()
	left, hosts := len(j.joining), len(j.joiningFrom)
	j.mu.Unlock()
	if left != 0 || hosts != 0 {
		t.Fatalf("after the deadline %d joining slots are held, %d hosts counted", left, hosts)
	}
}

// closedSoon reports whether the peer closes c within d (reads end with an
// error other than a timeout).
func closedSoon(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	var b [512]byte
	for {
		_, err := c.Read(b[:])
		if err == nil {
			continue
		}
		var ne net.Error
		return !errors.As(err, &ne) || !ne.Timeout()
	}
}

// Close stops every goroutine the jobmanager started: the watchdog's
// ticker, the acceptor, the handshakes of connections still joining, and
// losses queued for a driver that never takes them send on no goroutine.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	j, err := StartJobManager(JobManagerConfig{Endpoint: Endpoint{Advertise: "127.0.0.1:0"}, TaskManagers: 1, WatchdogInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", j.Address())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(j.joining) < len(conns) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	j.mu.Lock()
	j.started = true
	for i := 0; i < 200; i++ { // more than any buffer would hold
		a, b := net.Pipe()
		defer b.Close()
		p := &peer{id: fmt.Sprint("p", i), addr: fmt.Sprint("10.0.0.1:", i), c: newConn(a), names: map[string]bool{"tm-1": true}}
		j.peers = append(j.peers, p)
		j.lose(p, "test")
	}
	j.mu.Unlock()
	if n := len(j.takeLosses()); n != 200 {
		t.Fatalf("%d losses queued, want 200", n)
	}
	j.Close("test over", true)
	for _, c := range conns {
		if !closedSoon(c, 2*time.Second) {
			t.Fatal("Close left a joining connection open")
		}
	}
	deadline = time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+engineGoroutines && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+engineGoroutines {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after Close, %d before (+%d of the engine):\n%s", n, before, engineGoroutines, buf[:runtime.Stack(buf, true)])
	}
}

// Address is the host:port the jobmanager listens on (a test helper).
func (j *JobManager) Address() string { return j.addr }

// engineGoroutines are those a Hollywood engine keeps for its life (its
// event stream), which no API of it ends: measured, not the jobmanager's.
var engineGoroutines = func() int {
	before := runtime.NumGoroutine()
	if _, err := actor.NewEngine(actor.NewEngineConfig()); err != nil {
		panic(err)
	}
	time.Sleep(50 * time.Millisecond)
	return runtime.NumGoroutine() - before
}()
