package watermark

import "errors"

// ErrNonPositiveIdleTimeout is Flink's refusal of a zero or negative idle timeout; the
// text is the IllegalArgumentException message of the WatermarksWithIdleness constructor.
var ErrNonPositiveIdleTimeout = errors.New("idleTimeout must be greater than zero")

// ErrNilGenerator is Flink's refusal of a missing wrapped generator; the text is the
// NullPointerException message of checkNotNull(watermarks, "watermarks") in the
// WatermarksWithIdleness constructor.
var ErrNilGenerator = errors.New("watermarks")

// IdlenessTimer decides, at periodic emits only, whether an output has been idle long
// enough, following WatermarksWithIdleness.IdlenessTimer:
//
//   - each event increments a counter (Activity); no clock is read at an event;
//   - a check that finds the counter changed since the previous check resets the timer
//     and answers "not idle";
//   - the first check that finds no change starts the countdown at that check's time and
//     answers "not idle";
//   - later checks answer "idle" once now - start > timeout (strictly greater).
//
// So with the default 200 ms emit interval, a 1000 ms timeout and a last event at 100,
// the checks at 200 (activity seen), 400 (countdown starts) ... 1400 (1000, not > 1000)
// say active and 1600 says idle, 1500 ms after the event. In general idleness is
// declared no earlier than the timeout after the last event and at most the timeout plus
// three emit intervals after it.
//
// Flink keeps the countdown start in nanoseconds and uses the value 0 to mean "no
// countdown"; with Flink's nanoTime-based clock that value never occurs, so this type
// uses an explicit flag instead, which gives the same timing for a virtual clock that
// starts at 0. Times are virtual milliseconds. The zero value is not usable; use
// NewIdlenessTimer.
type IdlenessTimer struct {
	maxIdleTimeMs int64
	// counter and lastCounter detect activity between two checks; wrapping is harmless.
	counter     uint64
	lastCounter uint64
	// countingDown is true once a check saw no activity; startMs is that check's time.
	countingDown bool
	startMs      int64
}

// NewIdlenessTimer returns a timer for idleTimeoutMs virtual milliseconds of processing
// time; zero or negative is refused with ErrNonPositiveIdleTimeout.
func NewIdlenessTimer(idleTimeoutMs int64) (*IdlenessTimer, error) {
	if idleTimeoutMs <= 0 {
		return nil, ErrNonPositiveIdleTimeout
	}
	return &IdlenessTimer{maxIdleTimeMs: idleTimeoutMs}, nil
}

// Activity records one event (IdlenessTimer.activity).
func (t *IdlenessTimer) Activity() { t.counter++ }

// CheckIfIdle is the periodic probe (IdlenessTimer.checkIfIdle) at virtual time nowMs.
func (t *IdlenessTimer) CheckIfIdle(nowMs int64) bool {
	if t.counter != t.lastCounter {
		// activity since the last check: reset the countdown
		t.lastCounter = t.counter
		t.countingDown = false
		return false
	}
	if !t.countingDown {
		// first check without activity: start the countdown here
		t.countingDown = true
		t.startMs = nowMs
		return false
	}
	return nowMs-t.startMs > t.maxIdleTimeMs
}

// EmissionKind says what a generator handed to its output on a periodic emit.
type EmissionKind int

const (
	// EmissionNone: nothing was handed to the output.
	EmissionNone EmissionKind = 1 + iota
	// EmissionWatermark: Emission.Watermark was offered (WatermarkOutput.emitWatermark).
	EmissionWatermark
	// EmissionIdle: the output was marked idle (WatermarkOutput.markIdle).
	EmissionIdle
)

// String names the kind for logs and test failures.
func (k EmissionKind) String() string {
	switch k {
	case EmissionNone:
		return "none"
	case EmissionWatermark:
		return "watermark"
	case EmissionIdle:
		return "idle"
	default:
		return "invalid"
	}
}

// Emission is the result of one periodic emit of a generator.
type Emission struct {
	Kind EmissionKind
	// Watermark is the proposed watermark (event-time ms) when Kind is EmissionWatermark.
	Watermark int64
}

// WatermarksWithIdleness is WatermarkStrategy.withIdleness(timeout) around a bounded
// out-of-orderness generator, following org.apache.flink.api.common.eventtime.WatermarksWithIdleness:
// an event feeds the wrapped generator, records activity and clears the idle flag; a
// periodic emit either marks the output idle (once, until the next event) when the
// IdlenessTimer says so, or passes the wrapped generator's proposal through. The zero
// value is not usable; use NewWatermarksWithIdleness.
type WatermarksWithIdleness struct {
	watermarks *BoundedOutOfOrderness
	timer      IdlenessTimer
	isIdleNow  bool
}

// NewWatermarksWithIdleness wraps watermarks with an idle timeout of idleTimeoutMs virtual
// milliseconds of processing time. Errors, checked in Flink's order:
// ErrNonPositiveIdleTimeout for a timeout <= 0, ErrNilGenerator for a nil generator.
func NewWatermarksWithIdleness(watermarks *BoundedOutOfOrderness, idleTimeoutMs int64) (*WatermarksWithIdleness, error) {
	timer, err := NewIdlenessTimer(idleTimeoutMs)
	if err != nil {
		return nil, err
	}
	if watermarks == nil {
		return nil, ErrNilGenerator
	}
	return &WatermarksWithIdleness{watermarks: watermarks, timer: *timer}, nil
}

// OnEvent feeds an event timestamp (event-time ms) to the wrapped generator and records
// activity. It reads no clock.
func (w *WatermarksWithIdleness) OnEvent(ts int64) {
	w.watermarks.OnEvent(ts)
	w.timer.Activity()
	w.isIdleNow = false
}

// OnPeriodicEmit probes idleness at virtual time nowMs. While idle it returns
// EmissionIdle once and then EmissionNone until the next event; otherwise it returns the
// wrapped generator's proposal as EmissionWatermark.
func (w *WatermarksWithIdleness) OnPeriodicEmit(nowMs int64) Emission {
	if w.timer.CheckIfIdle(nowMs) {
		if !w.isIdleNow {
			w.isIdleNow = true
			return Emission{Kind: EmissionIdle}
		}
		return Emission{Kind: EmissionNone}
	}
	return Emission{Kind: EmissionWatermark, Watermark: w.watermarks.OnPeriodicEmit()}
}

// IsIdle reports whether the last periodic emit marked the output idle and no event
// arrived since.
func (w *WatermarksWithIdleness) IsIdle() bool { return w.isIdleNow }

// generator is the per-output watermark generator a WatermarkStrategy creates: bounded
// out-of-orderness, optionally wrapped by withIdleness.
type generator struct {
	bounded  *BoundedOutOfOrderness
	idleness *WatermarksWithIdleness // nil when withIdleness is not configured
}

func newGenerator(outOfOrdernessMs, idleTimeoutMs int64) (generator, error) {
	b, err := NewBoundedOutOfOrderness(outOfOrdernessMs)
	if err != nil {
		return generator{}, err
	}
	g := generator{bounded: b}
	if idleTimeoutMs != 0 {
		w, err := NewWatermarksWithIdleness(b, idleTimeoutMs)
		if err != nil {
			return generator{}, err
		}
		g.idleness = w
	}
	return g, nil
}

func (g generator) onEvent(ts int64) {
	if g.idleness != nil {
		g.idleness.OnEvent(ts)
		return
	}
	g.bounded.OnEvent(ts)
}

func (g generator) onPeriodicEmit(nowMs int64) Emission {
	if g.idleness != nil {
		return g.idleness.OnPeriodicEmit(nowMs)
	}
	return Emission{Kind: EmissionWatermark, Watermark: g.bounded.OnPeriodicEmit()}
}
