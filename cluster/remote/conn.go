package remote

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/flinksim/flinksim/messages"
)

// conn is one framed connection between the jobmanager process and one
// taskmanager process (TCP, or TLS over it): each message is a 4-byte
// big-endian length and a messages.Frame. The sender of every message read
// from it is the member the connection belongs to, whatever the message
// says. Sends never block: frames queue and one goroutine writes them, so a
// peer that stops reading stalls nobody but itself (the watchdog loses it).
type conn struct {
	c     net.Conn
	r     *bufio.Reader
	limit atomic.Uint32 // the largest frame read: joinFrameBytes until the peer joined

	mu      sync.Mutex
	queue   [][]byte
	wake    chan struct{}
	closed  chan struct{}
	drained chan struct{} // closed when the queue is empty after close was asked
	once    sync.Once
	closing bool
}

func newConn(c net.Conn) *conn {
	k := &conn{c: c, r: bufio.NewReaderSize(c, 64<<10), wake: make(chan struct{}, 1), closed: make(chan struct{}), drained: make(chan struct{})}
	k.limit.Store(joinFrameBytes)
	go k.writer()
	return k
}

// joinFrameBytes is the largest frame read before a join was accepted (a
// Challenge, a JoinRequest, a JoinAccepted with the run's header): a
// stranger cannot make the jobmanager hold a large buffer.
const joinFrameBytes = 1 << 20

// member lifts the frame limit to maxMessageBytes: the peer joined.
func (k *conn) member() { k.limit.Store(maxMessageBytes) }

// errUndecodable is a frame that does not decode: too long, or not a Frame.
var errUndecodable = errors.New("undecodable")

func (k *conn) writer() {
	w := bufio.NewWriterSize(k.c, 64<<10)
	for {
		k.mu.Lock()
		q := k.queue
		k.queue = nil
		closing := k.closing
		k.mu.Unlock()
		for _, b := range q {
			if _, err := w.Write(b); err != nil {
				k.close()
				return
			}
		}
		if len(q) > 0 {
			if err := w.Flush(); err != nil {
				k.close()
				return
			}
			continue
		}
		if closing {
			close(k.drained)
			return
		}
		select {
		case <-k.wake:
		case <-k.closed:
			return
		}
	}
}

// send queues f; false when the connection is closed.
func (k *conn) send(f *messages.Frame) bool {
	b, err := proto.Marshal(f)
	if err != nil {
		return false
	}
	buf := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	copy(buf[4:], b)
	select {
	case <-k.closed:
		return false
	default:
	}
	k.mu.Lock()
	k.queue = append(k.queue, buf)
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
	return true
}

// read returns the next frame; errUndecodable (wrapped) for one that does
// not decode, the connection's error otherwise. One goroutine reads.
func (k *conn) read() (*messages.Frame, error) {
	var h [4]byte
	if _, err := io.ReadFull(k.r, h[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(h[:])
	if limit := k.limit.Load(); n > limit {
		return nil, fmt.Errorf("%w: a frame of %d bytes, above the limit of %d", errUndecodable, n, limit)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(k.r, b); err != nil {
		return nil, err
	}
	var f messages.Frame
	if err := proto.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%w: %v", errUndecodable, err)
	}
	if f.Body == nil {
		return nil, fmt.Errorf("%w: an empty frame", errUndecodable)
	}
	return &f, nil
}

// close closes the connection at once.
func (k *conn) close() {
	k.once.Do(func() {
		close(k.closed)
		_ = k.c.Close() // at once: what was not yet written is dropped, as asked
	})
}

// flushClose writes what is queued (waiting up to d), then closes.
func (k *conn) flushClose(d time.Duration) {
	k.mu.Lock()
	k.closing = true
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
	select {
	case <-k.drained:
	case <-k.closed:
	case <-time.After(d):
	}
	k.close()
}

// nonce is 32 fresh random bytes.
func nonce() []byte {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return b
}

// joinMAC is HMAC-SHA256 under the join token over who is speaking, both
// nonces and the fields named: a recorded join does not join again (the
// jobmanager's nonce is fresh) and a jobmanager without the token cannot
// accept a process.
func joinMAC(token []byte, who string, jmNonce, tmNonce []byte, fields ...string) []byte {
	m := hmac.New(sha256.New, token)
	put := func(b []byte) {
		var l [4]byte
		binary.BigEndian.PutUint32(l[:], uint32(len(b)))
		m.Write(l[:])
		m.Write(b)
	}
	put([]byte("flinksim join v1 " + who))
	put(jmNonce)
	put(tmNonce)
	for _, f := range fields {
		put([]byte(f))
	}
	return m.Sum(nil)
}

// acceptMAC is the jobmanager's proof on its JoinAccepted a: joinMAC over
// both nonces, the process's name and the SHA-256 of a as it is with mac
// empty (deterministic encoding), so that it covers every field of the
// answer, those added later too: nobody between the two can change the
// settings, the watchdog or the position the process is told.
func acceptMAC(token, jmNonce, tmNonce []byte, resourceID string, a *messages.JoinAccepted) []byte {
	c := proto.Clone(a).(*messages.JoinAccepted)
	c.Mac = nil
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	if err != nil {
		return nil // never equal to a MAC: the join fails
	}
	sum := sha256.Sum256(b)
	return joinMAC(token, RoleJobManager, jmNonce, tmNonce, resourceID, string(sum[:]))
}

// isLoopback reports whether a is a loopback address.
func isLoopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}
