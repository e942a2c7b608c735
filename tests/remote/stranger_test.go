package remote_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/flinksim/flinksim/cluster/remote"
	"github.com/flinksim/flinksim/messages"
)

// recorder is a TCP proxy to the jobmanager that keeps what its one client
// (a real taskmanager) sends: what a stranger on the path could record and
// play again.
type recorder struct {
	addr string
	mu   sync.Mutex
	sent bytes.Buffer
}

func newRecorder(t *testing.T, to string) *recorder {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	r := &recorder{addr: l.Addr().String()}
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", to)
		if err != nil {
			c.Close()
			return
		}
		go func() { io.Copy(c, up); c.Close() }()
		io.Copy(io.MultiWriter(up, writerFunc(func(b []byte) {
			r.mu.Lock()
			if r.sent.Len() < 1<<20 {
				r.sent.Write(b)
			}
			r.mu.Unlock()
		})), c)
		up.Close()
	}()
	return r
}

type writerFunc func([]byte)

func (w writerFunc) Write(b []byte) (int, error) { w(b); return len(b), nil }

func (r *recorder) recorded() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.sent.Bytes())
}

// A stranger that never joined sends, while the run goes on, what the
// issue's attacks sent: bytes that do not decode, forged Bye, RunOver,
// Pong, InspectReply and StepReply messages with Dones for guessed steps,
// a join without the token, and a real taskmanager's recorded join and
// answers played again. Every one is dropped and counted (stderr and the
// summary line), each connection is closed, the log is byte-identical to
// one process and every process exits 0.
func TestStrangerCannotDisturb(t *testing.T) {
	token := tokenFile(t)
	tmp := t.TempDir()
	args := []string{"--duration", "2min", "--set", "execution.checkpointing.interval=20s"}
	oneLog, remLog := filepath.Join(tmp, "one.log"), filepath.Join(tmp, "remote.log")
	if _, stderr, code := flinksim(t, repo, 2*time.Minute, append([]string{"run", "--log", oneLog}, args...)...); code != 0 {
		t.Fatalf("flinksim run: exit %d\n%s", code, stderr)
	}
	tm := []string{"--join-token-file", token}
	c := startCluster(t, repo, spec{args: append(append([]string{"--join-token-file", token}, args...), "--log", remLog)})
	rec := newRecorder(t, c.addr)
	c.addTM(t, spec{joinTo: []string{rec.addr}, tmArgs: tm}, 0)
	c.jm.waitFor(t, "process 1 of 2 joined", 20*time.Second)
	c.addTM(t, spec{tmArgs: tm}, 1)
	c.hosting(t, "tm-2")
	for deadline := time.Now().Add(30 * time.Second); len(rec.recorded()) < 10_000; time.Sleep(20 * time.Millisecond) { // its join and a few answers
		if time.Now().After(deadline) {
			t.Fatalf("taskmanager 1 sent %d bytes in 30 s:\n%s", len(rec.recorded()), c.tms[0].stderr)
		}
	}

	attacks := 0
	attack := func(what string, send func(net.Conn, *messages.Challenge)) {
		t.Helper()
		attacks++
		conn, ch := dialJM(t, c.addr)
		// before any proof the jobmanager says nothing but its nonce (no
		// build fingerprint, no version)
		if got, want := frameBytes(&messages.Frame{Body: &messages.Frame_Challenge{Challenge: ch}}),
			frameBytes(&messages.Frame{Body: &messages.Frame_Challenge{Challenge: &messages.Challenge{Nonce: ch.Nonce}}}); !bytes.Equal(got, want) || len(ch.Nonce) != 32 {
			t.Fatalf("the Challenge says more than a 32-byte nonce: %x", got)
		}
		defer conn.Close()
		send(conn, ch)
		if !closedSoon(conn, 5*time.Second) {
			t.Errorf("%s: the jobmanager kept the connection open", what)
		}
	}
	frame := func(f *messages.Frame) func(net.Conn, *messages.Challenge) {
		return func(c net.Conn, _ *messages.Challenge) { writeFrame(c, f) }
	}
	attack("a length beyond the limit", func(c net.Conn, _ *messages.Challenge) { c.Write([]byte{0xff, 0xff, 0xff, 0xff}) })
	attack("a frame that is not one", func(c net.Conn, _ *messages.Challenge) {
		c.Write(append(binary.BigEndian.AppendUint32(nil, 5), 0xff, 0xff, 0xff, 0xff, 0xff))
	})
	attack("a forged Bye", frame(&messages.Frame{Body: &messages.Frame_Bye{Bye: &messages.Bye{}}}))
	attack("a forged RunOver", frame(&messages.Frame{Body: &messages.Frame_RunOver{RunOver: &messages.RunOver{Reason: "forged", Failed: true}}}))
	attack("a forged Pong", frame(&messages.Frame{Body: &messages.Frame_Pong{Pong: &messages.Pong{Seq: 1}}}))
	attack("a forged InspectReply", frame(&messages.Frame{Body: &messages.Frame_InspectReply{InspectReply: &messages.InspectReply{Id: 1, Actor: "tm-1"}}}))
	for step := uint64(1); step <= 12; step++ {
		var dones []*messages.Done
		for _, a := range []string{"tm-1", "tm-2", "source-1#1"} {
			dones = append(dones, &messages.Done{Step: step, Actor: a})
		}
		b, _ := proto.Marshal(&messages.DoneBatch{Dones: dones})
		attack("a forged StepReply", frame(&messages.Frame{Body: &messages.Frame_StepReply{StepReply: &messages.StepReply{Step: step, DoneBatch: b}}}))
	}
	attack("a join without the token", func(c net.Conn, ch *messages.Challenge) {
		writeFrame(c, &messages.Frame{Body: &messages.Frame_JoinRequest{JoinRequest: &messages.JoinRequest{
			Version: remote.Version(), ResourceId: "stranger", Fingerprint: remote.Fingerprint()}}})
	})
	attack("a recorded join and its answers played again", func(c net.Conn, _ *messages.Challenge) { c.Write(rec.recorded()) })

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
	stderr := c.jm.stderr.String()
	m := regexp.MustCompile(`(\d+) messages dropped from non-members`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no count of dropped messages in the summary:\n%s", stderr)
	}
	if n, _ := strconv.Atoi(m[1]); n != attacks {
		t.Errorf("%d messages dropped, want %d (one per attack):\n%s", n, attacks, stderr)
	}
	for _, want := range []string{"cannot decode", "a Bye from a connection that has not joined", "a RunOver from a connection that has not joined",
		"a StepReply from a connection that has not joined", "further drops from 127.0.0.1 are counted",
		"(bad token 2, not joined 16, undecodable 2)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "stranger") && strings.Contains(stderr, "joined: stranger") {
		t.Errorf("the stranger joined:\n%s", stderr)
	}
	t.Logf("%s", lastLine(stderr))
}
