package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Frames limits: a client gets the latest frame when it is ready for one
// (frames in between are dropped, never queued), with at most
// maxFrameEvents log lines; a client that cannot take a frame within
// writeTimeout is disconnected. Memory per client is one cursor and one
// notification slot, whatever its speed.
const (
	maxFrameEvents = 2000
	writeTimeout   = 10 * time.Second
	keepAlive      = 15 * time.Second
)

// frameMsg is one published frame: the state as JSON, the log ring it
// belongs to, and the traffic delivered since the frame before (nil: none
// to draw, as during a re-run).
type frameMsg struct {
	gen     int
	state   []byte
	ring    *ring
	traffic *Batch
}

// trafficKept is how many frames' traffic the hub keeps, so that a client
// that missed frames (it gets only the newest) still draws what was
// delivered meanwhile: 32 frames are 1.6 s at 20 frames a second.
const trafficKept = 32

// trafficEntry is one frame's traffic as JSON.
type trafficEntry struct {
	gen  int
	seq  uint64
	json []byte
}

// hub hands the latest frame to every stream client without ever waiting
// for one: publish stores the frame and pokes each client's one-slot
// channel; a client that has not taken the last poke simply gets the newest
// frame when it does.
type hub struct {
	latest  atomic.Pointer[frameMsg]
	mu      sync.Mutex
	clients map[chan struct{}]struct{}
	max     int

	tmu     sync.Mutex
	traffic [trafficKept]trafficEntry // a ring by seq % trafficKept
}

func newHub(maxClients int) *hub {
	return &hub{clients: map[chan struct{}]struct{}{}, max: maxClients}
}

func (h *hub) publish(f *frameMsg) {
	if f.traffic != nil {
		b, err := jsonMarshal(f.traffic)
		if err == nil {
			h.tmu.Lock()
			h.traffic[f.traffic.Seq%trafficKept] = trafficEntry{gen: f.gen, seq: f.traffic.Seq, json: b}
			h.tmu.Unlock()
		}
	}
	h.latest.Store(f)
	h.mu.Lock()
	for c := range h.clients {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	h.mu.Unlock()
}

// trafficSince appends to dst the traffic of generation gen after batch
// seq, oldest first (from the newest batch only when seq is 0, a client's
// first frame), and returns the last batch's seq and how many batches after
// seq had already left the ring.
func (h *hub) trafficSince(dst [][]byte, gen int, seq uint64) ([][]byte, uint64, uint64) {
	h.tmu.Lock()
	defer h.tmu.Unlock()
	last := uint64(0)
	for i := range h.traffic {
		if e := &h.traffic[i]; e.gen == gen && e.seq > last {
			last = e.seq
		}
	}
	if last == 0 || seq >= last {
		return dst, max(seq, last), 0
	}
	from := seq + 1
	if seq == 0 {
		from = last
	}
	var skipped uint64
	if last-from+1 > trafficKept {
		skipped = last - from + 1 - trafficKept
		from = last - trafficKept + 1
	}
	for s := from; s <= last; s++ {
		if e := &h.traffic[s%trafficKept]; e.gen == gen && e.seq == s {
			dst = append(dst, e.json)
		} else {
			skipped++
		}
	}
	return dst, last, skipped
}

// join registers a client; false when there are already max.
func (h *hub) join() (chan struct{}, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.clients) >= h.max {
		return nil, false
	}
	c := make(chan struct{}, 1)
	h.clients[c] = struct{}{}
	return c, true
}

func (h *hub) leave(c chan struct{}) {
	h.mu.Lock()
	delete(h.clients, c)
	h.mu.Unlock()
}

// cursor is where a client is in the log: generation and line sequence
// number, "GEN.SEQ" as the SSE event id (so a reconnecting EventSource
// sends it back as Last-Event-ID and resumes where it was).
type cursor struct {
	gen int
	seq uint64
}

func parseCursor(s string) (cursor, bool) {
	g, q, ok := strings.Cut(strings.TrimSpace(s), ".")
	if !ok {
		return cursor{}, false
	}
	gen, err1 := strconv.Atoi(g)
	seq, err2 := strconv.ParseUint(q, 10, 64)
	if err1 != nil || err2 != nil {
		return cursor{}, false
	}
	return cursor{gen, seq}, true
}

// jsonMarshal encodes v without escaping <, > and & (the page is not HTML
// in a script tag).
func jsonMarshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Frames is one client's view of the session's frames: Ready is poked when
// a new frame is published (one slot: a client that has not taken the last
// poke gets the newest frame when it does), Next writes the frame the
// client is ready for. The server's GET /sim/stream is one Frames per
// connection; the WebAssembly build posts a Frames's frames to the page.
type Frames struct {
	core    *Core
	Ready   chan struct{}
	cur     cursor
	tgen    int
	tseq    uint64 // the client's place in the traffic
	lines   [][]byte
	batches [][]byte
}

// Subscribe opens a stream at cursor since ("GEN.SEQ", the SSE event id;
// "": from the newest lines). It fails when MaxClients streams are open.
func (s *Core) Subscribe(since string) (*Frames, error) {
	poke, ok := s.hub.join()
	if !ok {
		return nil, fmt.Errorf("too many stream clients (at most %d)", s.hub.max)
	}
	cur, _ := parseCursor(since)
	return &Frames{core: s, Ready: poke, cur: cur}, nil
}

// Close leaves the hub.
func (st *Frames) Close() { st.core.hub.leave(st.Ready) }

// Next appends to buf the frame after the client's cursor, as JSON:
//
//	{"gen":GEN,"reset":bool,"skipped":N,"events":[log lines...],"traffic":[batches...],"traffic_skipped":N,"state":{...}}
//
// events are the log lines after the client's cursor (reset: the client's
// lines belong to another generation, start over; skipped: lines that left
// the ring or did not fit, at most maxFrameEvents a frame). traffic is what
// was delivered since the client's last frame (Batch, one per published
// frame, so a client that missed frames misses no delivery while it is
// within trafficKept frames; traffic_skipped counts those it missed
// beyond); a new stream starts with the newest batch. It returns the
// frame and the client's new cursor, "GEN.SEQ".
func (st *Frames) Next(buf []byte) ([]byte, string) {
	f := st.core.hub.latest.Load()
	b := bytes.NewBuffer(buf)
	reset := st.cur.gen != f.ring.gen
	if reset {
		st.cur = cursor{gen: f.ring.gen}
	}
	var last, skipped uint64
	st.lines, last, skipped = f.ring.since(st.lines[:0], st.cur.seq, maxFrameEvents)
	fmt.Fprintf(b, "{\"gen\":%d,\"reset\":%t,\"skipped\":%d,\"events\":[", st.cur.gen, reset, skipped)
	for i, l := range st.lines {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(l)
	}
	if st.tgen != f.gen {
		st.tgen, st.tseq = f.gen, 0
	}
	var tskipped uint64
	st.batches, st.tseq, tskipped = st.core.hub.trafficSince(st.batches[:0], st.tgen, st.tseq)
	b.WriteString(`],"traffic":[`)
	for i, t := range st.batches {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(t)
	}
	fmt.Fprintf(b, `],"traffic_skipped":%d,"state":`, tskipped)
	b.Write(f.state)
	b.WriteString("}")
	st.cur.seq = last
	return b.Bytes(), fmt.Sprintf("%d.%d", st.cur.gen, last)
}
