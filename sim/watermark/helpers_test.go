package watermark

import "time"

// NewBoundedOutOfOrdernessFromDuration is NewBoundedOutOfOrderness for a bound given as a
// duration, the way Flink's constructor takes a java.time.Duration: any negative duration
// (even one nanosecond) is refused with ErrNegativeOutOfOrderness, and a positive one is
// truncated to whole milliseconds (Duration.toMillis), so 999999 ns behaves as 0 ms and
// 1.5 ms as 1 ms.
func NewBoundedOutOfOrdernessFromDuration(maxOutOfOrderness time.Duration) (*BoundedOutOfOrderness, error) {
	if maxOutOfOrderness < 0 {
		return nil, ErrNegativeOutOfOrderness
	}
	return NewBoundedOutOfOrderness(maxOutOfOrderness.Milliseconds())
}
