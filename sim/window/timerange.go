package window

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// TimestampRangeError says that an element's event timestamp is so close to
// Long.MIN_VALUE or Long.MAX_VALUE that the event-time assigner's long
// arithmetic wraps around: Flink would compute a window whose end comes
// before its start (TimeWindow.getWindowStartWithOffset and
// TumblingEventTimeWindows.assignWindows compute start + size without a
// check; EventTimeSessionWindows computes timestamp + gap) or, for sliding
// windows, compare start > timestamp - size with a wrapped right-hand side
// and assign no window at all (SlidingEventTimeWindows.assignWindows).
// Flink accepts such a record and emits the wrapped window; the simulator
// refuses it before the run (Config.CheckTimestamp), since no result of it
// would mean anything.
type TimestampRangeError struct {
	// Timestamp is the element's event timestamp (ms).
	Timestamp int64
	// Assigner is the Flink class whose arithmetic wraps; Windows describes
	// the windows ("tumbling windows of 60000 ms").
	Assigner, Windows string
	// Window is the first window of the element that does not fit in a
	// long, as exact arithmetic gives it (decimal text: it may lie beyond
	// the long range).
	Start, End string
	// Wrapped is what Flink computes instead, or "" when Flink assigns no
	// window.
	Wrapped string
}

func (e *TimestampRangeError) Error() string {
	edge := "Long.MAX_VALUE (9223372036854775807)"
	if e.Timestamp < 0 {
		edge = "Long.MIN_VALUE (-9223372036854775808)"
	}
	what := "Flink's long arithmetic (" + e.Assigner + ") would wrap it to " + e.Wrapped + ", a window that ends before it starts"
	if e.Wrapped == "" {
		what = "Flink's " + e.Assigner + " would wrap its bound and assign the record no window at all"
	}
	return fmt.Sprintf("event time %d is too close to %s for %s: its window [%s, %s) lies beyond the range of a long, and %s; give event times nearer the present (milliseconds since the epoch)",
		e.Timestamp, edge, e.Windows, e.Start, e.End, what)
}

// safeTimestamp bounds the timestamps whose windows cannot reach the edges
// of the long range: window sizes, slides, gaps and offsets come from
// durations of at most 292 years (< 2^53 ms), far below a quarter of it.
const safeTimestamp = math.MaxInt64 / 4

// CheckTimestamp returns a *TimestampRangeError when an element with event
// timestamp ts would be assigned, by c's event-time assigner, a window that
// does not fit in a long (see TimestampRangeError), and nil otherwise: for
// every timestamp within ±2^61 ms, for processing-time windows (which ignore
// the timestamp), and for Long.MIN_VALUE itself, which Flink's tumbling and
// sliding assigners refuse at run time with their own exception. It
// compares the assigner's windows with those of exact arithmetic. Cost: a
// comparison, or near the edges O(size/slide) big-integer operations.
func (c Config) CheckTimestamp(ts int64) error {
	if c.TimeCharacteristic == ProcessingTime || ts == math.MinInt64 || (ts > -safeTimestamp && ts < safeTimestamp) {
		return nil
	}
	bts := big.NewInt(ts)
	switch c.Assigner {
	case Tumbling:
		if c.Size <= 0 {
			return nil // refused when the operator is built
		}
		start := exactStart(bts, c.Offset%c.Size, c.Size)
		end := new(big.Int).Add(start, big.NewInt(c.Size))
		got := TumblingEventTimeWindows{t: tumbling{size: c.Size, globalOffset: c.Offset}}
		ws, _ := got.AssignWindows(ts, 0)
		if len(ws) == 1 && ws[0].Start <= ts && ts < ws[0].End {
			// Flink's window holds the element (its long arithmetic may
			// have wrapped and come out right all the same): that is the
			// window Flink uses
			return nil
		}
		return &TimestampRangeError{Timestamp: ts, Assigner: "TimeWindow.getWindowStartWithOffset, TumblingEventTimeWindows.assignWindows",
			Windows: fmt.Sprintf("tumbling windows of %d ms", c.Size), Start: start.String(), End: end.String(), Wrapped: wrapped(ws)}
	case Sliding:
		if c.Size <= 0 || c.Slide <= 0 {
			return nil
		}
		got := sliding{size: c.Size, slide: c.Slide, offset: c.Offset}.assign(nil, ts)
		if holdAll(got, ts) && len(got) == exactCount(bts, c) {
			return nil // the windows Flink computes hold the element, as many as exact arithmetic gives
		}
		low := new(big.Int).Sub(bts, big.NewInt(c.Size))
		i := 0
		refuse := func(start, end *big.Int) error {
			return &TimestampRangeError{Timestamp: ts, Assigner: "SlidingEventTimeWindows.assignWindows",
				Windows: fmt.Sprintf("sliding windows of %d ms every %d ms", c.Size, c.Slide), Start: start.String(), End: end.String(), Wrapped: wrapped(got[min(i, len(got)):])}
		}
		for start := exactStart(bts, c.Offset, c.Slide); start.Cmp(low) > 0; start.Sub(start, big.NewInt(c.Slide)) {
			end := new(big.Int).Add(start, big.NewInt(c.Size))
			if !fits(start, end) || i >= len(got) || got[i].Start != start.Int64() || got[i].End != end.Int64() {
				return refuse(start, end)
			}
			i++
		}
		if i != len(got) { // windows that exact arithmetic does not give
			return refuse(big.NewInt(got[i].Start), big.NewInt(got[i].End))
		}
		return nil
	case Session:
		end := new(big.Int).Add(bts, big.NewInt(c.Gap))
		if c.Gap <= 0 || fits(bts, end) {
			return nil
		}
		w := TimeWindow{Start: ts, End: ts + c.Gap}
		return &TimestampRangeError{Timestamp: ts, Assigner: "EventTimeSessionWindows.assignWindows",
			Windows: fmt.Sprintf("session windows with a gap of %d ms", c.Gap), Start: bts.String(), End: end.String(), Wrapped: wrapped([]TimeWindow{w})}
	}
	return nil
}

// holdAll reports whether every window of ws holds ts and ends after it
// starts.
func holdAll(ws []TimeWindow, ts int64) bool {
	for _, w := range ws {
		if !(w.Start <= ts && ts < w.End) {
			return false
		}
	}
	return true
}

// exactCount is how many sliding windows exact arithmetic gives ts.
func exactCount(ts *big.Int, c Config) int {
	n := 0
	low := new(big.Int).Sub(ts, big.NewInt(c.Size))
	for start := exactStart(ts, c.Offset, c.Slide); start.Cmp(low) > 0; start.Sub(start, big.NewInt(c.Slide)) {
		n++
	}
	return n
}

// exactStart is TimeWindow.getWindowStartWithOffset in exact arithmetic:
// ts - floorMod(ts - offset, size).
func exactStart(ts *big.Int, offset, size int64) *big.Int {
	rem := new(big.Int).Sub(ts, big.NewInt(offset))
	rem.Mod(rem, big.NewInt(size)) // Euclidean: 0 <= rem < size
	return rem.Sub(ts, rem)
}

// fits reports whether both bounds are longs.
func fits(start, end *big.Int) bool { return start.IsInt64() && end.IsInt64() }

// wrapped renders the first window Flink computes, or "" for none.
func wrapped(ws []TimeWindow) string {
	if len(ws) == 0 {
		return ""
	}
	return "[" + strconv.FormatInt(ws[0].Start, 10) + ", " + strconv.FormatInt(ws[0].End, 10) + ")"
}
