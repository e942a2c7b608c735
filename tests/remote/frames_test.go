package remote_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/flinksim/flinksim/messages"
)

// The process protocol written by hand, as a stranger or a fake peer would:
// a 4-byte big-endian length, then a messages.Frame.

func frameBytes(f *messages.Frame) []byte {
	b, err := proto.Marshal(f)
	if err != nil {
		panic(err)
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
	return append(out, b...)
}

func writeFrame(c net.Conn, f *messages.Frame) error {
	_, err := c.Write(frameBytes(f))
	return err
}

func readFrame(c net.Conn) (*messages.Frame, error) {
	var h [4]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(h[:])
	if n > 64<<20 {
		return nil, fmt.Errorf("a frame of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		return nil, err
	}
	var f messages.Frame
	return &f, proto.Unmarshal(b, &f)
}

// dialJM connects to the jobmanager at addr and reads its Challenge.
func dialJM(t testing.TB, addr string) (net.Conn, *messages.Challenge) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	f, err := readFrame(c)
	if err != nil || f.GetChallenge() == nil {
		t.Fatalf("no Challenge from the jobmanager at %s: %v %v", addr, f, err)
	}
	c.SetReadDeadline(time.Time{})
	return c, f.GetChallenge()
}

// closedSoon reports whether the peer closes c within d (a read ends with
// an error other than a timeout).
func closedSoon(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	var b [512]byte
	for {
		_, err := c.Read(b[:])
		if err == nil {
			continue
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return false
		}
		return true
	}
}
