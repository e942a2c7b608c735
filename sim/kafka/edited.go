package kafka

import (
	"sort"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/vt"
)

// EditedTopic is the built-in generator's topic with what users did to it
// (send-event, pause-partition, resume-partition): records appended by hand,
// and partitions whose producer stalled for a while, so the records the
// generator drew for them meanwhile were never produced. The generator's
// own stream, and its draws, stay as they are (GeneratedTopic); each
// partition of the edited topic is a sequence of segments: runs of the
// generated partition (mapped offset for offset) and records appended by
// hand. A partition without edits is one open segment: the generated
// partition itself.
//
// Cost: a read or an end offset is a binary search over a partition's
// segments (two per edit); memory is the hand-appended records and the
// segments. Not safe for concurrent use.
type EditedTopic struct {
	gen   *GeneratedTopic
	parts []editedPartition
	extra int64 // records appended by hand
	drop  int64 // generated records never produced (paused partitions)
}

type editedPartition struct {
	segs   []segment
	paused bool
}

// segment is a run of the edited partition from offset start: generated
// records [genFrom, genTo) of the generated partition (genTo -1: open, up
// to its end), or records appended by hand.
type segment struct {
	start   int64
	genFrom int64
	genTo   int64
	manual  []*messages.KafkaRecord
}

var _ Log = (*EditedTopic)(nil)

// Edit starts editing gen: until an edit, the edited topic is gen.
func Edit(gen *GeneratedTopic) *EditedTopic {
	e := &EditedTopic{gen: gen, parts: make([]editedPartition, gen.NumPartitions())}
	for p := range e.parts {
		e.parts[p].segs = []segment{{start: 0, genFrom: 0, genTo: -1}}
	}
	return e
}

// Generated is the generator's topic under the edits.
func (e *EditedTopic) Generated() *GeneratedTopic { return e.gen }

// NumPartitions is the number of partitions.
func (e *EditedTopic) NumPartitions() int { return len(e.parts) }

// LogStartOffset is 0: nothing is deleted.
func (e *EditedTopic) LogStartOffset(int) int64 { return 0 }

func (s *segment) length(gen *GeneratedTopic, p int) int64 {
	switch {
	case s.manual != nil:
		return int64(len(s.manual))
	case s.genTo >= 0:
		return s.genTo - s.genFrom
	}
	return gen.EndOffset(p) - s.genFrom
}

// EndOffset is partition p's end offset.
func (e *EditedTopic) EndOffset(p int) int64 {
	segs := e.parts[p].segs
	last := &segs[len(segs)-1]
	return last.start + last.length(e.gen, p)
}

// Total is the number of records in all partitions.
func (e *EditedTopic) Total() int64 {
	return e.gen.Total() - e.droppedNow() + e.extra
}

// droppedNow is the generated records never produced: those of closed
// pauses, plus what a paused partition's generator drew since its pause.
func (e *EditedTopic) droppedNow() int64 {
	d := e.drop
	for p := range e.parts {
		if pt := &e.parts[p]; pt.paused {
			d += e.gen.EndOffset(p) - e.pausedAt(p)
		}
	}
	return d
}

// pausedAt is the generated offset where partition p's pause began.
func (e *EditedTopic) pausedAt(p int) int64 {
	segs := e.parts[p].segs
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i].manual == nil {
			return segs[i].genTo
		}
	}
	return 0
}

// closeOpen ends partition p's open generated segment at the generator's
// end offset now.
func (e *EditedTopic) closeOpen(p int) {
	pt := &e.parts[p]
	if last := &pt.segs[len(pt.segs)-1]; last.manual == nil && last.genTo < 0 {
		last.genTo = e.gen.EndOffset(p)
	}
}

// openGen starts a generated segment of partition p at the generator's end
// offset now.
func (e *EditedTopic) openGen(p int) {
	e.parts[p].segs = append(e.parts[p].segs, segment{start: e.EndOffset(p), genFrom: e.gen.EndOffset(p), genTo: -1})
}

// Pause stalls partition p's producer from now: the generator's records
// for it are not produced until Resume. It reports false when p is paused
// already.
func (e *EditedTopic) Pause(p int) bool {
	pt := &e.parts[p]
	if pt.paused {
		return false
	}
	e.closeOpen(p)
	pt.paused = true
	return true
}

// Resume restarts partition p's producer: the generator's records for it
// are produced again from now. It reports false when p is not paused.
func (e *EditedTopic) Resume(p int) bool {
	pt := &e.parts[p]
	if !pt.paused {
		return false
	}
	e.drop += e.gen.EndOffset(p) - e.pausedAt(p)
	pt.paused = false
	e.openGen(p)
	return true
}

// Paused reports whether partition p's producer is stalled.
func (e *EditedTopic) Paused(p int) bool { return e.parts[p].paused }

// Append adds a record by hand to partition p now and returns its offset.
// The topic keeps r (the caller gives it up).
func (e *EditedTopic) Append(p int, r *messages.KafkaRecord) int64 {
	pt := &e.parts[p]
	e.closeOpen(p)
	off := e.EndOffset(p)
	r.Partition, r.Offset = int32(p), off
	if last := &pt.segs[len(pt.segs)-1]; last.manual != nil {
		last.manual = append(last.manual, r)
	} else {
		pt.segs = append(pt.segs, segment{start: off, manual: []*messages.KafkaRecord{r}})
	}
	e.extra++
	if !pt.paused {
		e.openGen(p)
	}
	return off
}

// ReadInto implements Log.
func (e *EditedTopic) ReadInto(dst []*messages.KafkaRecord, p int, offset int64, vals *[]byte) {
	segs := e.parts[p].segs
	i := sort.Search(len(segs), func(i int) bool { return segs[i].start > offset }) - 1
	for ; len(dst) > 0; i++ {
		s := &segs[i]
		from := offset - s.start
		n := min(int64(len(dst)), s.length(e.gen, p)-from)
		if n <= 0 {
			continue
		}
		if s.manual != nil {
			for k := int64(0); k < n; k++ {
				m, d := s.manual[from+k], dst[k]
				d.Partition, d.Offset, d.Timestamp, d.Key, d.Value = m.Partition, m.Offset, m.Timestamp, m.Key, m.Value
			}
		} else {
			e.gen.ReadInto(dst[:n], p, s.genFrom+from, vals)
			for k := int64(0); k < n; k++ {
				dst[k].Offset = offset + k
			}
		}
		dst = dst[n:]
		offset += n
	}
}

// FirstData is the virtual time (µs) of the generator's first tick strictly
// before virtual time before that gives partition p a record at or beyond
// offset (GeneratedTopic.FirstData through the edits: a paused partition
// gets none; records appended by hand are not foreseen).
func (e *EditedTopic) FirstData(p int, offset int64, before vt.Time) (vt.Time, bool) {
	pt := &e.parts[p]
	if pt.paused {
		return 0, false
	}
	last := &pt.segs[len(pt.segs)-1]
	return e.gen.FirstData(p, last.genFrom+(offset-last.start), before)
}
