package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Stream limits: a client gets the latest frame when it is ready for one
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

// serveStream is GET /sim/stream: server-sent events, one "frame" event
// per published frame the client is ready for:
//
//	id: GEN.SEQ
//	event: frame
//	data: {"gen":GEN,"reset":bool,"skipped":N,"events":[log lines...],"traffic":[batches...],"traffic_skipped":N,"state":{...}}
//
// events are the log lines after the client's cursor (reset: the client's
// lines belong to another generation, start over; skipped: lines that left
// the ring or did not fit). Last-Event-ID or ?since=GEN.SEQ resumes.
// traffic is what was delivered since the client's last frame (Batch, one
// per published frame, so a client that missed frames misses no delivery
// while it is within trafficKept frames; traffic_skipped counts those it
// missed beyond); a new connection starts with the newest batch.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	poke, ok := s.hub.join()
	if !ok {
		http.Error(w, fmt.Sprintf("too many stream clients (at most %d)", s.hub.max), http.StatusServiceUnavailable)
		return
	}
	defer s.hub.leave(poke)
	cur, _ := parseCursor(r.Header.Get("Last-Event-ID"))
	if q := r.URL.Query().Get("since"); q != "" {
		cur, _ = parseCursor(q)
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	ping := time.NewTicker(keepAlive)
	defer ping.Stop()
	var lines, batches [][]byte
	var buf bytes.Buffer
	tgen, tseq := 0, uint64(0) // the client's place in the traffic
	send := true
	for {
		if send {
			f := s.hub.latest.Load()
			buf.Reset()
			reset := cur.gen != f.ring.gen
			if reset {
				cur = cursor{gen: f.ring.gen}
			}
			var last, skipped uint64
			lines, last, skipped = f.ring.since(lines[:0], cur.seq, maxFrameEvents)
			fmt.Fprintf(&buf, "id: %d.%d\nevent: frame\ndata: {\"gen\":%d,\"reset\":%t,\"skipped\":%d,\"events\":[",
				cur.gen, last, cur.gen, reset, skipped)
			for i, l := range lines {
				if i > 0 {
					buf.WriteByte(',')
				}
				buf.Write(l)
			}
			if tgen != f.gen {
				tgen, tseq = f.gen, 0
			}
			var tskipped uint64
			batches, tseq, tskipped = s.hub.trafficSince(batches[:0], tgen, tseq)
			buf.WriteString(`],"traffic":[`)
			for i, b := range batches {
				if i > 0 {
					buf.WriteByte(',')
				}
				buf.Write(b)
			}
			fmt.Fprintf(&buf, `],"traffic_skipped":%d,"state":`, tskipped)
			buf.Write(f.state)
			buf.WriteString("}\n\n")
			cur.seq = last
			_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
			if _, err := w.Write(buf.Bytes()); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
			send = false
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		case <-poke:
			send = true
		case <-ping.C:
			_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
			if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	}
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
