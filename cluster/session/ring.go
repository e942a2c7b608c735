package session

import (
	"encoding/json"
	"sync"
)

// maxLineBytes bounds one line the ring keeps; a longer line (a job graph,
// a large state_restored) is cut and marked. The download is a re-run, so
// the ring never needs whole lines.
const maxLineBytes = 8 << 10

// ring is the live session's event log as it is written: the last cap
// lines, each with a sequence number (1 for the header of a session).
// The session writes it from the scheduler's goroutine (zerolog writes one
// line per Write call); stream clients read it from theirs. Memory is
// bounded by cap × maxLineBytes.
type ring struct {
	gen   int // the session generation whose log this is
	mu    sync.Mutex
	lines [][]byte
	next  uint64 // sequence number of the next line
	start int    // index in lines of the oldest line
	n     int    // lines held
}

func newRing(capacity, gen int) *ring {
	return &ring{lines: make([][]byte, max(1, capacity)), next: 1, gen: gen}
}

// Write implements io.Writer: p is one line of the log (with its newline).
// It never blocks for longer than a copy and never fails.
func (r *ring) Write(p []byte) (int, error) {
	n := len(p)
	line := p
	if len(line) > 0 && line[len(line)-1] == '\n' {
		line = line[:len(line)-1]
	}
	if len(line) > maxLineBytes {
		// a cut line is no longer JSON: keep it as a JSON string
		line, _ = json.Marshal(string(line[:maxLineBytes]) + " …")
	} else {
		line = append([]byte(nil), line...)
	}
	r.mu.Lock()
	i := (r.start + r.n) % len(r.lines)
	if r.n == len(r.lines) {
		r.start = (r.start + 1) % len(r.lines)
	} else {
		r.n++
	}
	r.lines[i] = line
	r.next++
	r.mu.Unlock()
	return n, nil
}

// since appends to dst the lines after sequence number seq, at most max of
// them (the newest when more are held), and returns the sequence number of
// the last line appended and how many lines after seq were skipped because
// they left the ring or exceeded max.
func (r *ring) since(dst [][]byte, seq uint64, max int) ([][]byte, uint64, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	last := r.next - 1
	if seq >= last {
		return dst, last, 0
	}
	oldest := r.next - uint64(r.n) // sequence number of lines[start]
	from := seq + 1
	var skipped uint64
	if from < oldest {
		skipped = oldest - from
		from = oldest
	}
	if count := last - from + 1; count > uint64(max) {
		skipped += count - uint64(max)
		from = last - uint64(max) + 1
	}
	for s := from; s <= last; s++ {
		dst = append(dst, r.lines[(r.start+int(s-oldest))%len(r.lines)])
	}
	return dst, last, skipped
}
