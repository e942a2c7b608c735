// Package window is Flink 1.20's event-time and processing-time windowing as a
// pure state machine: TimeWindow and its helpers, the window assigners
// (tumbling, sliding, session, each on the event-time and on the
// processing-time clock), MergingWindowSet, and a keyed WindowOperator driven
// by elements, watermarks and processing-time advances that returns what it
// emits.
//
// Nothing here reads a clock, starts a goroutine or draws a random number:
// every input carries the current time (virtual milliseconds), and every
// output comes in a documented, deterministic order. The package follows
// org.apache.flink.streaming.api.windowing.* and
// org.apache.flink.streaming.runtime.operators.windowing.* (release-1.20).
package window

import (
	"fmt"
	"math"
	"sort"
)

// FlinkError is an error Flink raises as a Java exception: Exception is the
// Java class name (java.lang.IllegalArgumentException, ...), Message is
// Flink's own text, and Error returns Message unchanged.
type FlinkError struct {
	Exception string
	Message   string
}

// Error returns Flink's message unchanged.
func (e *FlinkError) Error() string { return e.Message }

// Java exception class names carried by FlinkError.Exception.
const (
	IllegalArgumentException      = "java.lang.IllegalArgumentException"
	IllegalStateException         = "java.lang.IllegalStateException"
	RuntimeException              = "java.lang.RuntimeException"
	UnsupportedOperationException = "java.lang.UnsupportedOperationException"
)

func illegalArgument(msg string) error {
	return &FlinkError{Exception: IllegalArgumentException, Message: msg}
}

// TimeWindow is the half-open interval [Start, End) of virtual milliseconds
// (org.apache.flink.streaming.api.windowing.windows.TimeWindow). Arithmetic
// wraps around like Java's long, so a window at the very end of the time
// line may have End < Start, exactly as Flink computes it.
type TimeWindow struct {
	Start int64
	End   int64
}

// MaxTimestamp is the largest timestamp that still belongs to w: End - 1
// (wrapping like Java). EventTimeTrigger fires w when the watermark reaches it.
func (w TimeWindow) MaxTimestamp() int64 { return w.End - 1 }

// Intersects reports whether w and other overlap or touch: a window that ends
// exactly where the other starts intersects it (TimeWindow.intersects), which
// is why touching session windows merge.
func (w TimeWindow) Intersects(other TimeWindow) bool {
	return w.Start <= other.End && w.End >= other.Start
}

// Cover is the smallest window containing both w and other (TimeWindow.cover).
func (w TimeWindow) Cover(other TimeWindow) TimeWindow {
	return TimeWindow{Start: min(w.Start, other.Start), End: max(w.End, other.End)}
}

// String renders w as "[start,end)".
func (w TimeWindow) String() string { return fmt.Sprintf("[%d,%d)", w.Start, w.End) }

// less orders windows by Start, then End.
func (w TimeWindow) less(o TimeWindow) bool {
	if w.Start != o.Start {
		return w.Start < o.Start
	}
	return w.End < o.End
}

// compare is less as a three-way comparison (for slices.SortFunc).
func (w TimeWindow) compare(o TimeWindow) int {
	switch {
	case w.less(o):
		return -1
	case o.less(w):
		return 1
	}
	return 0
}

// WindowStartWithOffset is TimeWindow.getWindowStartWithOffset: the start of
// the window of length size (> 0, milliseconds), shifted by offset, that
// contains timestamp. With rem = (timestamp - offset) % size (Go's % truncates
// toward zero, as Java's does) the start is timestamp - rem, or
// timestamp - (rem + size) when rem is negative. Offsets with |offset| >= size
// are not rejected here (Flink does not check them either), and the
// arithmetic wraps like Java's long. A size of 0 would divide by zero: the
// function returns timestamp unchanged instead of panicking.
func WindowStartWithOffset(timestamp, offset, size int64) int64 {
	if size == 0 {
		return timestamp
	}
	if size == -1 {
		// Java's Long.MIN_VALUE % -1 is 0; Go's panics. Only reachable with a
		// size no assigner accepts.
		return timestamp
	}
	rem := (timestamp - offset) % size
	if rem < 0 {
		return timestamp - (rem + size)
	}
	return timestamp - rem
}

// Merge is one merge reported by MergeWindows: the windows in Merged (in
// Java HashSet iteration order, see MergeWindows) become Result.
type Merge struct {
	Result TimeWindow
	Merged []TimeWindow
}

// MergeWindows is TimeWindow.mergeWindows: it sorts windows by start (a stable
// sort, so windows with equal starts keep their input order), sweeps them
// merging every window that intersects (or touches) the current cover, and
// reports each group of more than one distinct window, in ascending order of
// start. Equal windows count once, as in Flink's HashSet. Merged lists each
// group in the order Java's HashSet<TimeWindow> iterates it (see
// javaHashSetOrder), which is the order Flink's MergingWindowSet sees.
// Cost: O(n log n).
func MergeWindows(windows []TimeWindow) []Merge {
	sorted := append([]TimeWindow(nil), windows...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Start < sorted[j].Start })

	var merges []Merge
	var cover TimeWindow
	var group []TimeWindow
	flush := func() {
		set := javaHashSetOrder(group)
		if len(set) > 1 {
			merges = append(merges, Merge{Result: cover, Merged: set})
		}
	}
	for i, candidate := range sorted {
		switch {
		case i == 0:
			cover, group = candidate, []TimeWindow{candidate}
		case cover.Intersects(candidate):
			cover = cover.Cover(candidate)
			group = append(group, candidate)
		default:
			flush()
			cover, group = candidate, []TimeWindow{candidate}
		}
	}
	if len(sorted) > 0 {
		flush()
	}
	return merges
}

// javaHashCode is TimeWindow.hashCode: MathUtils.longToIntWithBitMixing(start + end).
func javaHashCode(w TimeWindow) int32 {
	in := uint64(w.Start + w.End)
	in = (in ^ (in >> 30)) * 0xbf58476d1ce4e5b9
	in = (in ^ (in >> 27)) * 0x94d049bb133111eb
	in ^= in >> 31
	return int32(uint32(in))
}

// javaHashSetOrder returns the distinct windows of insertion (given in
// insertion order) in the order a java.util.HashSet built by adding them one
// by one iterates them: by bucket index ((h ^ (h >>> 16)) & (capacity - 1),
// with the default capacity 16 doubled whenever the size exceeds 3/4 of it),
// and by insertion order within a bucket. Flink picks "any" merged window's
// state window as the merge target by taking the first element of such a set,
// so this order decides which state window survives a merge. (Java turns a
// bucket of 8 or more colliding windows into a tree; that case is not
// modelled.)
func javaHashSetOrder(insertion []TimeWindow) []TimeWindow {
	distinct := make([]TimeWindow, 0, len(insertion))
	seen := make(map[TimeWindow]bool, len(insertion))
	for _, w := range insertion {
		if !seen[w] {
			seen[w] = true
			distinct = append(distinct, w)
		}
	}
	capacity := 16
	for len(distinct) > capacity*3/4 {
		capacity *= 2
	}
	bucket := func(w TimeWindow) int {
		h := uint32(javaHashCode(w))
		return int((h ^ (h >> 16)) & uint32(capacity-1))
	}
	sort.SliceStable(distinct, func(i, j int) bool { return bucket(distinct[i]) < bucket(distinct[j]) })
	return distinct
}

// cleanupTimeOf is WindowOperator.cleanupTime for event time: maxTimestamp +
// allowedLateness, or math.MaxInt64 when that sum overflows.
func cleanupTimeOf(w TimeWindow, allowedLateness int64) int64 {
	c := w.MaxTimestamp() + allowedLateness
	if c >= w.MaxTimestamp() {
		return c
	}
	return math.MaxInt64
}
