package cluster

import (
	"cmp"
	"math"
	"slices"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/kafka"
)

// OutputSummary is the sink topic as one consumer sees it at a moment of a
// run: the figures the summary line reports at the end (results_visible,
// results_uncommitted, duplicates), read while the run goes on.
type OutputSummary struct {
	// Isolation is the consumer's isolation.level: read_committed or
	// read_uncommitted.
	Isolation string `json:"isolation"`
	// FromOffset is where the output view starts: 0, or where the last job
	// started from a savepoint began writing (output_view).
	FromOffset int64 `json:"from_offset"`
	// Visible is the number of records the consumer reads from FromOffset.
	Visible int64 `json:"visible"`
	// Uncommitted is the number of sink records in transactions still in
	// progress (open or pre-committed), over the whole topic.
	Uncommitted int64 `json:"uncommitted"`
	// Duplicates is the number of visible records whose identity the
	// consumer read before (resultSet.countDuplicates).
	Duplicates int64 `json:"duplicates"`
}

// Output is what a consumer of the sink topic with the given isolation
// level ("" for the output consumer's: sim.output.isolation-level, or what
// a set action made it) sees now, from where the current output view
// starts: what the summary would report if the run ended here. Like
// Inspect it is answered between two steps and changes nothing in the run;
// the broker's topics are read from the session's goroutine, which the
// driver's report of the last step orders after every write.
//
// The session keeps one consumer position (outputCursor) and reads only
// what became visible since the last call with the same isolation level
// and output view: a read_uncommitted consumer sees an append-only log,
// and a read_committed one the records below the last stable offset,
// which only moves forward and below which every record is decided. Cost:
// one JSON decode per record that became visible since the last call (a
// new isolation level or output view reads the topic again from the view's
// start); memory: one identity per distinct result seen.
func (s *Session) Output(isolation string) OutputSummary {
	if isolation == "" {
		isolation = string(s.cfg.OutputIsolation)
		if s.tally.OutputIsolation != "" {
			isolation = s.tally.OutputIsolation
		}
	}
	sink := s.broker.SinkLog()
	from := s.tally.OutputViewFrom
	c := s.out
	if c == nil || c.isolation != isolation || c.from != from {
		c = newOutputCursor(isolation, from)
		s.out = c
	}
	c.advance(sink)
	open, preCommitted, _, _, _ := sink.Counts()
	return OutputSummary{Isolation: isolation, FromOffset: from, Visible: c.visible,
		Uncommitted: int64(open + preCommitted), Duplicates: c.duplicates}
}

// outputChunk is how many records one read of the output cursor takes.
const outputChunk = 4096

// outputCursor is one consumer of the sink topic's partition 0 (the
// output view) reading from an offset on, counting the records it read and
// those whose identity it had read before (kafka.IdentityOf, as
// resultSet.countDuplicates counts them).
type outputCursor struct {
	isolation           string
	from, next          int64 // the view's first offset; the consumer's position
	visible, duplicates int64
	seen                *resultSet
}

func newOutputCursor(isolation string, from int64) *outputCursor {
	return &outputCursor{isolation: isolation, from: from, next: from, seen: newResultSet()}
}

// advance reads what became visible since the last call.
func (c *outputCursor) advance(sink *kafka.TxnLog) {
	for {
		var recs []*messages.KafkaRecord
		if c.isolation == "read_committed" {
			recs, c.next = sink.FetchCommitted(0, c.next, outputChunk)
		} else {
			recs = sink.Topic().Read(0, c.next, outputChunk)
			if len(recs) > 0 {
				c.next = recs[len(recs)-1].Offset + 1
			}
		}
		c.visible += int64(len(recs))
		c.duplicates += c.seen.countDuplicates(recs)
		if len(recs) < outputChunk {
			return
		}
	}
}

// resultSet holds result identities exactly and compactly. A window
// result's key is interned to a number and its identity packed into 24
// bytes (windowID); the identities live in a sorted slice with a small map
// of the newest beside it, merged into the slice when the map grows past an
// eighth of it, so that a result costs about 24 bytes instead of a map
// entry's 60 or more, a look-up a binary search and a map probe, and an
// insertion amortised O(1) copies. Any other result is held by its record
// key and value in a map.
type resultSet struct {
	keys    map[string]uint32
	sorted  []windowID            // ascending
	recent  map[windowID]struct{} // not yet in sorted
	other   map[kafka.ResultID]struct{}
	scratch []windowID
}

// windowID is a window result's identity: the interned key and the firing
// in one word (key << 32 | firing), the window's bounds (ms).
type windowID struct {
	keyFiring  uint64
	start, end int64
}

func (a windowID) compare(b windowID) int {
	if c := cmp.Compare(a.keyFiring, b.keyFiring); c != 0 {
		return c
	}
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	return cmp.Compare(a.end, b.end)
}

// minMerge is the size of recent below which it is never merged.
const minMerge = 1024

func newResultSet() *resultSet {
	return &resultSet{keys: map[string]uint32{}, recent: map[windowID]struct{}{}, other: map[kafka.ResultID]struct{}{}}
}

// countDuplicates adds recs (a consumer's view, in the order it reads them)
// to the set and returns how many of them it held already: a result seen
// three times counts two duplicates (the identity is kafka.IdentityOf's).
func (s *resultSet) countDuplicates(recs []*messages.KafkaRecord) (duplicates int64) {
	for _, r := range recs {
		if !s.add(kafka.IdentityOf(r)) {
			duplicates++
		}
	}
	return duplicates
}

// add records id and reports whether it is new.
func (s *resultSet) add(id kafka.ResultID) bool {
	if !id.Window || id.Firing < 0 || id.Firing > math.MaxUint32 {
		if _, ok := s.other[id]; ok {
			return false
		}
		s.other[id] = struct{}{}
		return true
	}
	k, ok := s.keys[id.Key]
	if !ok {
		k = uint32(len(s.keys))
		s.keys[id.Key] = k
	}
	w := windowID{keyFiring: uint64(k)<<32 | uint64(id.Firing), start: id.WindowStart, end: id.WindowEnd}
	if _, ok := s.recent[w]; ok {
		return false
	}
	if _, ok := slices.BinarySearchFunc(s.sorted, w, windowID.compare); ok {
		return false
	}
	s.recent[w] = struct{}{}
	if len(s.recent) > max(minMerge, len(s.sorted)/8) {
		s.merge()
	}
	return true
}

// merge moves recent into sorted.
func (s *resultSet) merge() {
	s.scratch = s.scratch[:0]
	for w := range s.recent { // sorted next: the map's order does not matter
		s.scratch = append(s.scratch, w)
	}
	slices.SortFunc(s.scratch, windowID.compare)
	out := make([]windowID, 0, len(s.sorted)+len(s.scratch))
	i, j := 0, 0
	for i < len(s.sorted) && j < len(s.scratch) {
		if s.sorted[i].compare(s.scratch[j]) < 0 {
			out = append(out, s.sorted[i])
			i++
		} else {
			out = append(out, s.scratch[j])
			j++
		}
	}
	out = append(append(out, s.sorted[i:]...), s.scratch[j:]...)
	s.sorted = out
	clear(s.recent)
}
