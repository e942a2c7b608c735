package remote

import (
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

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

// A flood of connections that never join: beyond maxJoining they are
// dropped at once, and the count says so.
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
	for i := 0; i < maxJoining+5; i++ {
		c, err := net.Dial("tcp", j.Address())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	deadline := time.Now().Add(5 * time.Second)
	for j.Stats().Dropped < 5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := j.Stats(); st.Dropped != 5 {
		t.Fatalf("%d dropped, want 5", st.Dropped)
	}
	if s := j.dropSummary(); s != "5 messages dropped from non-members or out of the protocol (too many joining 5)" {
		t.Fatalf("summary %q", s)
	}
}

// Address is the host:port the jobmanager listens on (a test helper).
func (j *JobManager) Address() string { return j.addr }
