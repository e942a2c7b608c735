package watermark

import "errors"

// ErrNegativeOutOfOrderness is Flink's refusal of a negative bound; the text is the
// message of the IllegalArgumentException thrown by the BoundedOutOfOrdernessWatermarks
// constructor.
var ErrNegativeOutOfOrderness = errors.New("maxOutOfOrderness cannot be negative")

// BoundedOutOfOrderness is the periodic watermark generator of
// WatermarkStrategy.forBoundedOutOfOrderness, following
// org.apache.flink.api.common.eventtime.BoundedOutOfOrdernessWatermarks.
//
// It tracks the largest event timestamp seen and, on every periodic emit, proposes
// maxTimestamp - outOfOrderness - 1. The maximum starts at
// Long.MIN_VALUE + outOfOrderness + 1, so the proposal before any event is exactly
// Long.MIN_VALUE. Arithmetic wraps on overflow exactly as Java's long does (an event at
// Long.MIN_VALUE leaves the proposal at Long.MIN_VALUE; an event at Long.MAX_VALUE
// proposes Long.MAX_VALUE - outOfOrderness - 1).
//
// The generator never filters: it re-proposes the same value on every call. Dropping
// values that are not strictly greater than the last forwarded one is the job of the
// output (see Emitter). The zero value is not usable; use NewBoundedOutOfOrderness.
type BoundedOutOfOrderness struct {
	maxTimestamp     int64
	outOfOrdernessMs int64
}

// NewBoundedOutOfOrderness returns a generator for a bound of outOfOrdernessMs virtual
// milliseconds. Zero means in-order streams (the proposal is maxTimestamp - 1, as for
// WatermarkStrategy.forMonotonousTimestamps). A negative bound is refused with
// ErrNegativeOutOfOrderness, as Flink's constructor does.
func NewBoundedOutOfOrderness(outOfOrdernessMs int64) (*BoundedOutOfOrderness, error) {
	if outOfOrdernessMs < 0 {
		return nil, ErrNegativeOutOfOrderness
	}
	return &BoundedOutOfOrderness{
		// Flink: "start so that our lowest watermark would be Long.MIN_VALUE".
		maxTimestamp:     MinWatermark + outOfOrdernessMs + 1,
		outOfOrdernessMs: outOfOrdernessMs,
	}, nil
}

// OutOfOrdernessMs is the bound in virtual milliseconds.
func (b *BoundedOutOfOrderness) OutOfOrdernessMs() int64 { return b.outOfOrdernessMs }

// OnEvent records an event timestamp (event-time milliseconds); only a new maximum
// changes the state (BoundedOutOfOrdernessWatermarks.onEvent). It emits nothing.
func (b *BoundedOutOfOrderness) OnEvent(ts int64) {
	if ts > b.maxTimestamp {
		b.maxTimestamp = ts
	}
}

// OnPeriodicEmit returns the watermark proposed on a periodic emit
// (pipeline.auto-watermark-interval, default 200 ms): maxTimestamp - outOfOrderness - 1,
// Long.MIN_VALUE before any event. It does not change the state.
func (b *BoundedOutOfOrderness) OnPeriodicEmit() int64 {
	return b.maxTimestamp - b.outOfOrdernessMs - 1
}
