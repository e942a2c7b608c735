package window

import (
	"fmt"
	"math"
)

// noTimestampMessage is the RuntimeException Flink's event-time tumbling and
// sliding assigners throw for a record whose timestamp is Long.MIN_VALUE.
const noTimestampMessage = "Record has Long.MIN_VALUE timestamp (= no timestamp marker). " +
	"Is the time characteristic set to 'ProcessingTime', or did you forget to call " +
	"'DataStream.assignTimestampsAndWatermarks(...)'?"

// WindowAssigner assigns an element to windows
// (org.apache.flink.streaming.api.windowing.assigners.WindowAssigner).
type WindowAssigner interface {
	// AssignWindows returns the windows of an element with the given event
	// timestamp (virtual ms) at the given current processing time (virtual
	// ms), in the order Flink returns them. Event-time assigners use the
	// timestamp, processing-time assigners the processing time. An error is
	// the exception Flink would throw.
	AssignWindows(timestamp, currentProcessingTime int64) ([]TimeWindow, error)
	// AppendWindows is AssignWindows appending to dst: the operator passes
	// a scratch slice so that no element allocates.
	AppendWindows(dst []TimeWindow, timestamp, currentProcessingTime int64) ([]TimeWindow, error)
	// IsEventTime reports whether windows are measured on the event-time
	// clock (watermarks) rather than the processing-time clock.
	IsEventTime() bool
	// IsMerging reports whether the assigner is a MergingWindowAssigner.
	IsMerging() bool
}

// WindowStagger staggers the offset of tumbling windows per operator
// (org.apache.flink.streaming.api.windowing.assigners.WindowStagger). The
// zero value is StaggerAligned. Flink's RANDOM stagger draws a random number
// and is not offered: the simulator stays deterministic.
type WindowStagger int

const (
	// StaggerAligned (Flink's default) adds no offset: all panes of all
	// parallel instances fire together.
	StaggerAligned WindowStagger = iota
	// StaggerNatural uses, as offset, how far the processing time of the
	// first element is into its window of the given size:
	// max(0, pt - WindowStartWithOffset(pt, 0, size)).
	StaggerNatural
)

// String is Flink's enum constant name.
func (s WindowStagger) String() string {
	switch s {
	case StaggerAligned:
		return "ALIGNED"
	case StaggerNatural:
		return "NATURAL"
	}
	return fmt.Sprintf("WindowStagger(%d)", int(s))
}

// StaggerOffset is WindowStagger.getStaggerOffset for the given processing
// time and window size (ms).
func (s WindowStagger) StaggerOffset(currentProcessingTime, size int64) int64 {
	if s == StaggerNatural {
		return max(0, currentProcessingTime-WindowStartWithOffset(currentProcessingTime, 0, size))
	}
	return 0
}

// tumbling holds what the event-time and processing-time tumbling assigners
// share: Flink computes the stagger offset once, from the processing time of
// the first element the assigner sees, and keeps it.
type tumbling struct {
	size, globalOffset int64
	stagger            WindowStagger
	staggerOffset      int64
	staggerKnown       bool
}

func newTumbling(name string, size, offset int64, stagger WindowStagger) (tumbling, error) {
	// offset == math.MinInt64 passes Flink's check (Math.abs keeps it
	// negative) and then divides by a zero or negative size; it is refused
	// here with Flink's message instead.
	if absJava(offset) >= size || offset == math.MinInt64 {
		return tumbling{}, illegalArgument(name + " parameters must satisfy abs(offset) < size")
	}
	if stagger != StaggerAligned && stagger != StaggerNatural {
		return tumbling{}, fmt.Errorf("window stagger %v is not supported (only ALIGNED and NATURAL are deterministic)", stagger)
	}
	return tumbling{size: size, globalOffset: offset, stagger: stagger}, nil
}

func (t *tumbling) assign(dst []TimeWindow, timestamp, currentProcessingTime int64) []TimeWindow {
	if !t.staggerKnown {
		t.staggerOffset = t.stagger.StaggerOffset(currentProcessingTime, t.size)
		t.staggerKnown = true
	}
	start := WindowStartWithOffset(timestamp, (t.globalOffset+t.staggerOffset)%t.size, t.size)
	return append(dst, TimeWindow{Start: start, End: start + t.size})
}

// absJava is Math.abs(long): Long.MIN_VALUE stays negative.
func absJava(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// TumblingEventTimeWindows assigns each element to the one window of Size ms
// (shifted by Offset and the stagger offset) that holds its event timestamp
// (TumblingEventTimeWindows). Default trigger: EventTimeTrigger.
type TumblingEventTimeWindows struct{ t tumbling }

// NewTumblingEventTimeWindows returns the assigner for windows of size ms
// shifted by offset ms. Errors: |offset| >= size (so also size <= 0), or
// offset == math.MinInt64 (see newTumbling), gives
// Flink's IllegalArgumentException "TumblingEventTimeWindows parameters must
// satisfy abs(offset) < size".
func NewTumblingEventTimeWindows(size, offset int64, stagger WindowStagger) (*TumblingEventTimeWindows, error) {
	t, err := newTumbling("TumblingEventTimeWindows", size, offset, stagger)
	if err != nil {
		return nil, err
	}
	return &TumblingEventTimeWindows{t: t}, nil
}

// AssignWindows returns the single window holding timestamp. A timestamp of
// math.MinInt64 (Flink's "no timestamp") gives Flink's RuntimeException. The
// first call fixes the stagger offset from currentProcessingTime.
func (a *TumblingEventTimeWindows) AssignWindows(timestamp, currentProcessingTime int64) ([]TimeWindow, error) {
	return a.AppendWindows(nil, timestamp, currentProcessingTime)
}

// AppendWindows is AssignWindows appending to dst.
func (a *TumblingEventTimeWindows) AppendWindows(dst []TimeWindow, timestamp, currentProcessingTime int64) ([]TimeWindow, error) {
	if timestamp == math.MinInt64 {
		return dst, &FlinkError{Exception: RuntimeException, Message: noTimestampMessage}
	}
	return a.t.assign(dst, timestamp, currentProcessingTime), nil
}

// IsEventTime is true.
func (a *TumblingEventTimeWindows) IsEventTime() bool { return true }

// IsMerging is false.
func (a *TumblingEventTimeWindows) IsMerging() bool { return false }

// TumblingProcessingTimeWindows is TumblingEventTimeWindows on the
// processing-time clock (TumblingProcessingTimeWindows): the element's
// timestamp is ignored. Default trigger: ProcessingTimeTrigger.
type TumblingProcessingTimeWindows struct{ t tumbling }

// NewTumblingProcessingTimeWindows returns the assigner; errors as
// NewTumblingEventTimeWindows with "TumblingProcessingTimeWindows" in the
// message.
func NewTumblingProcessingTimeWindows(size, offset int64, stagger WindowStagger) (*TumblingProcessingTimeWindows, error) {
	t, err := newTumbling("TumblingProcessingTimeWindows", size, offset, stagger)
	if err != nil {
		return nil, err
	}
	return &TumblingProcessingTimeWindows{t: t}, nil
}

// AssignWindows returns the window holding currentProcessingTime.
func (a *TumblingProcessingTimeWindows) AssignWindows(timestamp, currentProcessingTime int64) ([]TimeWindow, error) {
	return a.AppendWindows(nil, timestamp, currentProcessingTime)
}

// AppendWindows is AssignWindows appending to dst.
func (a *TumblingProcessingTimeWindows) AppendWindows(dst []TimeWindow, _, currentProcessingTime int64) ([]TimeWindow, error) {
	return a.t.assign(dst, currentProcessingTime, currentProcessingTime), nil
}

// IsEventTime is false.
func (a *TumblingProcessingTimeWindows) IsEventTime() bool { return false }

// IsMerging is false.
func (a *TumblingProcessingTimeWindows) IsMerging() bool { return false }

// sliding holds what both sliding assigners share.
type sliding struct{ size, slide, offset int64 }

func newSliding(name string, size, slide, offset int64) (sliding, error) {
	// offset == math.MinInt64 passes Flink's check with a zero or negative
	// slide, on which Java's assignWindows never ends; it is refused here.
	if absJava(offset) >= slide || size <= 0 || offset == math.MinInt64 {
		return sliding{}, illegalArgument(name + " parameters must satisfy abs(offset) < slide and size > 0")
	}
	return sliding{size: size, slide: slide, offset: offset}, nil
}

// assign walks back from the last window start holding ts, one slide at a
// time, while start > ts - size (so the windows come in descending start
// order, as Flink returns them, and there are none when ts falls in a gap
// between windows shorter than the slide). Unlike Java, the walk stops
// instead of wrapping past Long.MIN_VALUE, and after ceil(size/slide)
// windows (the most that can hold one timestamp), where Java, its last
// start wrapped around near Long.MIN_VALUE, would loop until it runs out of
// memory (Config.CheckTimestamp refuses such timestamps before a run).
// Cost: O(size/slide).
func (s sliding) assign(windows []TimeWindow, ts int64) []TimeWindow {
	lastStart := WindowStartWithOffset(ts, s.offset, s.slide)
	most := s.size/s.slide + 1
	for start, n := lastStart, int64(0); start > ts-s.size && n < most; start, n = start-s.slide, n+1 {
		windows = append(windows, TimeWindow{Start: start, End: start + s.size})
		if start < math.MinInt64+s.slide {
			break
		}
	}
	return windows
}

// SlidingEventTimeWindows assigns each element to every window of Size ms,
// starting every Slide ms (shifted by Offset), that holds its event
// timestamp (SlidingEventTimeWindows). Default trigger: EventTimeTrigger.
type SlidingEventTimeWindows struct{ s sliding }

// NewSlidingEventTimeWindows returns the assigner. Errors: |offset| >= slide
// (so also slide <= 0), size <= 0 or offset == math.MinInt64 gives Flink's IllegalArgumentException
// "SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and
// size > 0". A slide larger than the size is allowed and leaves gaps.
func NewSlidingEventTimeWindows(size, slide, offset int64) (*SlidingEventTimeWindows, error) {
	s, err := newSliding("SlidingEventTimeWindows", size, slide, offset)
	if err != nil {
		return nil, err
	}
	return &SlidingEventTimeWindows{s: s}, nil
}

// AssignWindows returns the windows holding timestamp, in descending start
// order; none if it falls in a gap. math.MinInt64 gives Flink's
// RuntimeException.
func (a *SlidingEventTimeWindows) AssignWindows(timestamp, currentProcessingTime int64) ([]TimeWindow, error) {
	return a.AppendWindows(nil, timestamp, currentProcessingTime)
}

// AppendWindows is AssignWindows appending to dst.
func (a *SlidingEventTimeWindows) AppendWindows(dst []TimeWindow, timestamp, _ int64) ([]TimeWindow, error) {
	if timestamp == math.MinInt64 {
		return dst, &FlinkError{Exception: RuntimeException, Message: noTimestampMessage}
	}
	return a.s.assign(dst, timestamp), nil
}

// IsEventTime is true.
func (a *SlidingEventTimeWindows) IsEventTime() bool { return true }

// IsMerging is false.
func (a *SlidingEventTimeWindows) IsMerging() bool { return false }

// SlidingProcessingTimeWindows is SlidingEventTimeWindows on the
// processing-time clock (SlidingProcessingTimeWindows).
type SlidingProcessingTimeWindows struct{ s sliding }

// NewSlidingProcessingTimeWindows returns the assigner; errors as
// NewSlidingEventTimeWindows with "SlidingProcessingTimeWindows" in the
// message.
func NewSlidingProcessingTimeWindows(size, slide, offset int64) (*SlidingProcessingTimeWindows, error) {
	s, err := newSliding("SlidingProcessingTimeWindows", size, slide, offset)
	if err != nil {
		return nil, err
	}
	return &SlidingProcessingTimeWindows{s: s}, nil
}

// AssignWindows returns the windows holding currentProcessingTime.
func (a *SlidingProcessingTimeWindows) AssignWindows(timestamp, currentProcessingTime int64) ([]TimeWindow, error) {
	return a.AppendWindows(nil, timestamp, currentProcessingTime)
}

// AppendWindows is AssignWindows appending to dst.
func (a *SlidingProcessingTimeWindows) AppendWindows(dst []TimeWindow, _, currentProcessingTime int64) ([]TimeWindow, error) {
	return a.s.assign(dst, currentProcessingTime), nil
}

// IsEventTime is false.
func (a *SlidingProcessingTimeWindows) IsEventTime() bool { return false }

// IsMerging is false.
func (a *SlidingProcessingTimeWindows) IsMerging() bool { return false }

// EventTimeSessionWindows gives each element the window [ts, ts+Gap) and
// merges windows that intersect or touch (EventTimeSessionWindows). Default
// trigger: EventTimeTrigger.
type EventTimeSessionWindows struct{ gap int64 }

// NewEventTimeSessionWindows returns the assigner for sessions closed after
// gap ms of inactivity. Errors: gap <= 0 gives Flink's
// IllegalArgumentException "EventTimeSessionWindows parameters must satisfy
// 0 < size".
func NewEventTimeSessionWindows(gap int64) (*EventTimeSessionWindows, error) {
	if gap <= 0 {
		return nil, illegalArgument("EventTimeSessionWindows parameters must satisfy 0 < size")
	}
	return &EventTimeSessionWindows{gap: gap}, nil
}

// AssignWindows returns [timestamp, timestamp+gap). Flink does not reject a
// missing (Long.MIN_VALUE) timestamp here.
func (a *EventTimeSessionWindows) AssignWindows(timestamp, currentProcessingTime int64) ([]TimeWindow, error) {
	return a.AppendWindows(nil, timestamp, currentProcessingTime)
}

// AppendWindows is AssignWindows appending to dst.
func (a *EventTimeSessionWindows) AppendWindows(dst []TimeWindow, timestamp, _ int64) ([]TimeWindow, error) {
	return append(dst, TimeWindow{Start: timestamp, End: timestamp + a.gap}), nil
}

// IsEventTime is true.
func (a *EventTimeSessionWindows) IsEventTime() bool { return true }

// IsMerging is true.
func (a *EventTimeSessionWindows) IsMerging() bool { return true }

// ProcessingTimeSessionWindows is EventTimeSessionWindows on the
// processing-time clock (ProcessingTimeSessionWindows).
type ProcessingTimeSessionWindows struct{ gap int64 }

// NewProcessingTimeSessionWindows returns the assigner. Errors: gap <= 0
// gives "ProcessingTimeSessionWindows parameters must satisfy 0 < size".
func NewProcessingTimeSessionWindows(gap int64) (*ProcessingTimeSessionWindows, error) {
	if gap <= 0 {
		return nil, illegalArgument("ProcessingTimeSessionWindows parameters must satisfy 0 < size")
	}
	return &ProcessingTimeSessionWindows{gap: gap}, nil
}

// AssignWindows returns [currentProcessingTime, currentProcessingTime+gap).
func (a *ProcessingTimeSessionWindows) AssignWindows(timestamp, currentProcessingTime int64) ([]TimeWindow, error) {
	return a.AppendWindows(nil, timestamp, currentProcessingTime)
}

// AppendWindows is AssignWindows appending to dst.
func (a *ProcessingTimeSessionWindows) AppendWindows(dst []TimeWindow, _, currentProcessingTime int64) ([]TimeWindow, error) {
	return append(dst, TimeWindow{Start: currentProcessingTime, End: currentProcessingTime + a.gap}), nil
}

// IsEventTime is false.
func (a *ProcessingTimeSessionWindows) IsEventTime() bool { return false }

// IsMerging is true.
func (a *ProcessingTimeSessionWindows) IsMerging() bool { return true }

var (
	_ WindowAssigner = (*TumblingEventTimeWindows)(nil)
	_ WindowAssigner = (*TumblingProcessingTimeWindows)(nil)
	_ WindowAssigner = (*SlidingEventTimeWindows)(nil)
	_ WindowAssigner = (*SlidingProcessingTimeWindows)(nil)
	_ WindowAssigner = (*EventTimeSessionWindows)(nil)
	_ WindowAssigner = (*ProcessingTimeSessionWindows)(nil)
)
