package window

import (
	"fmt"
	"math"
	"sort"
)

// AssignerKind selects the window assigner of an Operator. The zero value is
// invalid.
type AssignerKind int

const (
	// Tumbling is TumblingEventTimeWindows / TumblingProcessingTimeWindows:
	// Size, Offset (and Stagger).
	Tumbling AssignerKind = 1 + iota
	// Sliding is SlidingEventTimeWindows / SlidingProcessingTimeWindows:
	// Size, Slide, Offset.
	Sliding
	// Session is EventTimeSessionWindows / ProcessingTimeSessionWindows: Gap.
	Session
)

// String is the lower-case name used by the scenario language.
func (k AssignerKind) String() string {
	switch k {
	case Tumbling:
		return "tumbling"
	case Sliding:
		return "sliding"
	case Session:
		return "session"
	}
	return fmt.Sprintf("AssignerKind(%d)", int(k))
}

// TimeCharacteristic selects the clock windows are measured on. The zero
// value means EventTime (Flink's default since 1.12).
type TimeCharacteristic int

const (
	// EventTime windows use element timestamps and fire on watermarks
	// (EventTimeTrigger).
	EventTime TimeCharacteristic = 1 + iota
	// ProcessingTime windows use the processing-time clock and fire on its
	// timers (ProcessingTimeTrigger); watermarks and allowed lateness play no
	// part.
	ProcessingTime
)

// String is the lower-case name used by the scenario language.
func (c TimeCharacteristic) String() string {
	switch c {
	case EventTime:
		return "event-time"
	case ProcessingTime:
		return "processing-time"
	}
	return fmt.Sprintf("TimeCharacteristic(%d)", int(c))
}

// Config describes a keyed window operator: the assigner, the clock, allowed
// lateness, late-data handling and the aggregate. All durations are virtual
// milliseconds. Fields that do not apply to the assigner are ignored.
type Config struct {
	// Assigner is required.
	Assigner AssignerKind
	// Size is the window length of tumbling and sliding windows (> 0).
	Size int64
	// Slide is the distance between sliding window starts (> |Offset|).
	Slide int64
	// Gap is the session gap (> 0).
	Gap int64
	// Offset shifts tumbling (|Offset| < Size) and sliding (|Offset| <
	// Slide) window starts; 0 aligns windows to the epoch.
	Offset int64
	// Stagger is the WindowStagger of tumbling windows; zero is
	// StaggerAligned. Only ALIGNED and NATURAL exist here.
	Stagger WindowStagger
	// TimeCharacteristic is the clock; zero means EventTime.
	TimeCharacteristic TimeCharacteristic
	// AllowedLateness is how long after a window's maxTimestamp its state is
	// kept for late firings (>= 0, default 0); event time only, ignored for
	// processing time as in Flink.
	AllowedLateness int64
	// SideOutputLateData sends elements that are late for all their windows
	// to Output.Late instead of counting them in NumLateRecordsDropped
	// (WindowedStream.sideOutputLateData).
	SideOutputLateData bool
	// Aggregate is the AggregateFunction; zero means Count.
	Aggregate AggregateKind
}

// newAssigner builds the WindowAssigner c describes, with Flink's errors.
// Fields that do not apply to the assigner are ignored.
func (c Config) newAssigner() (WindowAssigner, error) {
	eventTime := c.TimeCharacteristic != ProcessingTime
	switch c.Assigner {
	case Tumbling:
		if eventTime {
			return NewTumblingEventTimeWindows(c.Size, c.Offset, c.Stagger)
		}
		return NewTumblingProcessingTimeWindows(c.Size, c.Offset, c.Stagger)
	case Sliding:
		if eventTime {
			return NewSlidingEventTimeWindows(c.Size, c.Slide, c.Offset)
		}
		return NewSlidingProcessingTimeWindows(c.Size, c.Slide, c.Offset)
	case Session:
		if eventTime {
			return NewEventTimeSessionWindows(c.Gap)
		}
		return NewProcessingTimeSessionWindows(c.Gap)
	}
	return nil, fmt.Errorf("window config: unknown assigner %v", c.Assigner)
}

// withDefaults fills the zero-valued enums and checks them.
func (c Config) withDefaults() (Config, error) {
	if c.TimeCharacteristic == 0 {
		c.TimeCharacteristic = EventTime
	}
	if c.Aggregate == 0 {
		c.Aggregate = Count
	}
	if c.TimeCharacteristic != EventTime && c.TimeCharacteristic != ProcessingTime {
		return c, fmt.Errorf("window config: unknown time characteristic %v", c.TimeCharacteristic)
	}
	if c.Aggregate < Count || c.Aggregate > Avg {
		return c, fmt.Errorf("window config: unknown aggregate %v", c.Aggregate)
	}
	if c.AllowedLateness < 0 {
		return c, illegalArgument("The allowed lateness cannot be negative.")
	}
	return c, nil
}

// Result is one firing of a window: the aggregate of Key's Window when its
// trigger fired. Firing numbers the firings of that (Key, Window): 1 for the
// first, 2 and up for late firings caused by late elements within the
// allowed lateness. Late is true when an element arriving after the
// watermark passed the window's maxTimestamp caused the firing
// (EventTimeTrigger.onElement returning FIRE), false for timer firings.
// Value is the aggregate, Count the number of elements in the window.
type Result struct {
	Key    string
	Window TimeWindow
	Value  float64
	Count  int64
	Firing int
	Late   bool
}

// LateElement is an element sent to the late-data side output: it was late
// for every window it belongs to (its timestamp + allowed lateness <= the
// watermark).
type LateElement struct {
	Key       string
	Timestamp int64
	Value     float64
}

// Output is what one call emits. Results come in timer order (timestamp,
// then key, then window start, then window end); for ProcessElement, where
// no timer fires, the window's maxTimestamp stands in for the timer
// timestamp. Late holds side-output elements in arrival order. Err is set
// when Flink would throw and fail the task; the call then changed nothing.
type Output struct {
	Results []Result
	Late    []LateElement
	Err     error
}

// keyState is the window state of one key: accumulators by state window
// (the window itself unless the assigner merges), firings by window, and the
// merging window set of a merging assigner.
type keyState struct {
	accs  winMap[accEntry]
	fired winMap[int]
	set   *MergingWindowSet
}

// accEntry is the accumulator of one state window. armed says that an
// element of this operator (not a restore) registered the window's timers
// while the watermark was where it is now or earlier, for a non-merging
// assigner: the trigger timer at maxTimestamp is then still registered
// unless the window already fires on every element (event time, watermark
// at or past maxTimestamp), and the cleanup timer is registered while the
// accumulator exists. The timers of an armed window need no registration,
// which would be a no-op.
type accEntry struct {
	acc   Accumulator
	armed bool
}

// Operator is Flink's keyed WindowOperator with the assigner's default
// trigger (EventTimeTrigger or ProcessingTimeTrigger) and an aggregate
// function, as a pure state machine: inputs carry the current times, outputs
// are returned, never sent
// (org.apache.flink.streaming.runtime.operators.windowing.WindowOperator).
// Not safe for concurrent use.
type Operator struct {
	cfg            Config
	assigner       WindowAssigner
	eventTime      bool
	merging        bool
	keys           map[string]*keyState
	windows        int          // sum of numWindows over keys
	assigned       []TimeWindow // ProcessElement's scratch for the assigner
	neverArm       bool         // tests: register every timer, as the oracle of accEntry.armed
	eventTimers    *timerQueue
	procTimers     *timerQueue
	watermark      int64
	processingTime int64
	lateDropped    int64
}

// NewOperator returns an operator for c with no state, the watermark at
// math.MinInt64 (Long.MIN_VALUE) and the processing time at 0. Errors: the
// assigner's constructor errors (Flink's IllegalArgumentException
// messages), "The allowed lateness cannot be negative." and unknown enum
// values.
func NewOperator(c Config) (*Operator, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	a, err := c.newAssigner()
	if err != nil {
		return nil, err
	}
	return &Operator{
		cfg:         c,
		assigner:    a,
		eventTime:   a.IsEventTime(),
		merging:     a.IsMerging(),
		keys:        make(map[string]*keyState),
		eventTimers: newTimerQueue(),
		procTimers:  newTimerQueue(),
		watermark:   math.MinInt64,
	}, nil
}

// Config returns the operator's configuration with defaults filled in.
func (o *Operator) Config() Config { return o.cfg }

// CurrentWatermark is the last watermark advanced to (math.MinInt64 before
// the first).
func (o *Operator) CurrentWatermark() int64 { return o.watermark }

// NumLateRecordsDropped is Flink's numLateRecordsDropped counter: elements
// late for all their windows while no late side output is configured.
func (o *Operator) NumLateRecordsDropped() int64 { return o.lateDropped }

// NumKeys is the number of keys holding at least one live window.
func (o *Operator) NumKeys() int { return len(o.keys) }

// NumWindows is the number of live (key, window) states. Cost: O(1) (kept
// up to date by every call that changes a key's windows).
func (o *Operator) NumWindows() int { return o.windows }

func (ks *keyState) numWindows() int {
	if ks.set != nil {
		return ks.set.Len()
	}
	return ks.accs.len()
}

// countWindows is NumWindows by a scan of every key (tests compare the two).
func (o *Operator) countWindows() int {
	n := 0
	for _, ks := range o.keys {
		n += ks.numWindows()
	}
	return n
}

// NextProcessingTimeTimer returns the earliest registered processing-time
// timer, so the caller can schedule AdvanceProcessingTime; false when there
// is none.
func (o *Operator) NextProcessingTimeTimer() (int64, bool) {
	t, ok := o.procTimers.peek()
	return t.Timestamp, ok
}

// NextEventTimeTimer returns the earliest registered event-time timer; false
// when there is none.
func (o *Operator) NextEventTimeTimer() (int64, bool) {
	t, ok := o.eventTimers.peek()
	return t.Timestamp, ok
}

// cleanupTime is WindowOperator.cleanupTime: maxTimestamp + allowedLateness
// (math.MaxInt64 on overflow) for event time, maxTimestamp for processing
// time.
func (o *Operator) cleanupTime(w TimeWindow) int64 {
	if o.eventTime {
		return cleanupTimeOf(w, o.cfg.AllowedLateness)
	}
	return w.MaxTimestamp()
}

// isWindowLate is WindowOperator.isWindowLate: event time and cleanup time
// <= watermark.
func (o *Operator) isWindowLate(w TimeWindow) bool {
	return o.eventTime && o.cleanupTime(w) <= o.watermark
}

// isElementLate is WindowOperator.isElementLate: event time and
// timestamp + allowedLateness <= watermark (wrapping like Java).
func (o *Operator) isElementLate(ts int64) bool {
	return o.eventTime && ts+o.cfg.AllowedLateness <= o.watermark
}

func (o *Operator) timersOf(eventTime bool) *timerQueue {
	if eventTime {
		return o.eventTimers
	}
	return o.procTimers
}

// registerCleanupTimer and deleteCleanupTimer are WindowOperator's: no
// timer for a cleanup time of Long.MAX_VALUE.
func (o *Operator) registerCleanupTimer(key string, w TimeWindow) {
	if c := o.cleanupTime(w); c != math.MaxInt64 {
		o.timersOf(o.eventTime).register(Timer{Timestamp: c, Key: key, Window: w})
	}
}

func (o *Operator) deleteCleanupTimer(key string, w TimeWindow) {
	if c := o.cleanupTime(w); c != math.MaxInt64 {
		o.timersOf(o.eventTime).delete(Timer{Timestamp: c, Key: key, Window: w})
	}
}

// triggerOnElement is EventTimeTrigger.onElement (FIRE when the watermark is
// already past maxTimestamp, else a timer at maxTimestamp) or
// ProcessingTimeTrigger.onElement (always a timer at maxTimestamp). It
// reports whether the trigger fired.
func (o *Operator) triggerOnElement(key string, w TimeWindow) bool {
	if o.eventTime {
		if w.MaxTimestamp() <= o.watermark {
			return true
		}
		o.eventTimers.register(Timer{Timestamp: w.MaxTimestamp(), Key: key, Window: w})
		return false
	}
	o.procTimers.register(Timer{Timestamp: w.MaxTimestamp(), Key: key, Window: w})
	return false
}

// triggerOnMerge is EventTimeTrigger.onMerge / ProcessingTimeTrigger.onMerge:
// a timer at the merged window's maxTimestamp unless its clock is already
// there (then onElement fires instead).
func (o *Operator) triggerOnMerge(key string, w TimeWindow) {
	now := o.watermark
	if !o.eventTime {
		now = o.processingTime
	}
	if w.MaxTimestamp() > now {
		o.timersOf(o.eventTime).register(Timer{Timestamp: w.MaxTimestamp(), Key: key, Window: w})
	}
}

// triggerClear is Trigger.clear: delete the maxTimestamp timer of w.
func (o *Operator) triggerClear(key string, w TimeWindow) {
	o.timersOf(o.eventTime).delete(Timer{Timestamp: w.MaxTimestamp(), Key: key, Window: w})
}

// emit records a firing of key's window w with contents acc.
func (o *Operator) emit(out *Output, key string, ks *keyState, w TimeWindow, acc Accumulator, late bool) {
	n, _ := ks.fired.get(w)
	n++
	ks.fired.set(w, n)
	out.Results = append(out.Results, Result{
		Key:    key,
		Window: w,
		Value:  acc.Result(o.cfg.Aggregate),
		Count:  acc.Count,
		Firing: n,
		Late:   late,
	})
}

func (o *Operator) keyStateFor(key string) *keyState {
	ks := o.keys[key]
	if ks == nil {
		ks = &keyState{}
		if o.merging {
			ks.set = NewMergingWindowSet()
		}
		o.keys[key] = ks
	}
	return ks
}

// changed accounts for a change of key's windows from before to what ks
// holds now and forgets the key if it holds no window.
func (o *Operator) changed(key string, ks *keyState, before int) {
	n := ks.numWindows()
	o.windows += n - before
	if n == 0 && ks.accs.len() == 0 {
		delete(o.keys, key)
	}
}

// ProcessElement is WindowOperator.processElement for an element of key with
// event timestamp ts (virtual ms; ignored for window assignment under
// processing time), aggregate input value (ignored by Count), arriving at
// processing time processingTime (virtual ms; used by processing-time
// assigners and the NATURAL stagger, and remembered as the operator's
// current processing time).
//
// The element is added to each of its windows that is not late (cleanup
// time > watermark); session windows are first merged through the key's
// MergingWindowSet, with accumulators merged and timers moved as Flink's
// merge function and EventTimeTrigger.onMerge do. A window whose
// maxTimestamp the watermark already passed fires at once (a late firing,
// Result.Late). If the element was added to no window and ts +
// allowedLateness <= watermark (event time only), it goes to Output.Late
// when SideOutputLateData is set and is counted in NumLateRecordsDropped
// otherwise; an element that falls in a gap between sliding windows and is
// not late is silently ignored, as in Flink. ProcessElement fires no
// processing-time timer: call AdvanceProcessingTime first when the clock has
// moved.
//
// Errors (Output.Err, nothing changed): a math.MinInt64 timestamp for an
// event-time tumbling or sliding assigner (Flink's RuntimeException), and a
// merge whose result would already be late (Flink's
// UnsupportedOperationException).
func (o *Operator) ProcessElement(key string, ts int64, value float64, processingTime int64) Output {
	windows, err := o.assigner.AppendWindows(o.assigned[:0], ts, processingTime)
	o.assigned = windows[:0]
	if err != nil {
		return Output{Err: err}
	}
	prevProcessingTime := o.processingTime
	o.processingTime = processingTime
	ks := o.keyStateFor(key)
	before := ks.numWindows()
	out, err := o.processElement(key, ks, windows, ts, value)
	if err != nil {
		o.processingTime = prevProcessingTime
		out = Output{Err: err}
	}
	o.changed(key, ks, before)
	if len(out.Results) > 1 {
		sort.SliceStable(out.Results, func(i, j int) bool {
			a, b := out.Results[i], out.Results[j]
			return timerLess(Timer{a.Window.MaxTimestamp(), a.Key, a.Window}, Timer{b.Window.MaxTimestamp(), b.Key, b.Window})
		})
	}
	return out
}

// processElement adds the element to its windows (see ProcessElement).
func (o *Operator) processElement(key string, ks *keyState, windows []TimeWindow, ts int64, value float64) (Output, error) {
	var out Output
	var err error
	skipped := true
	for _, w := range windows {
		actual := w
		stateWindow := w
		if o.merging {
			actual, err = ks.set.AddWindow(w, o.mergeFunc(key, ks))
			if err != nil {
				return out, err
			}
			if o.isWindowLate(actual) {
				if err := ks.set.RetireWindow(actual); err != nil {
					return out, err
				}
				continue
			}
			sw, ok := ks.set.StateWindow(actual)
			if !ok {
				return out, notInFlight(w)
			}
			stateWindow = sw
		} else if o.isWindowLate(w) {
			continue
		}
		skipped = false

		e, had := ks.accs.get(stateWindow)
		e.acc = e.acc.add(value)
		if had && e.armed {
			// the window's timers are registered (accEntry); the trigger
			// fires at once if the watermark passed maxTimestamp
			ks.accs.set(stateWindow, e)
			if o.eventTime && actual.MaxTimestamp() <= o.watermark {
				o.emit(&out, key, ks, actual, e.acc, true)
			}
			continue
		}
		e.armed = !o.merging && !o.neverArm
		ks.accs.set(stateWindow, e)
		fired := o.triggerOnElement(key, actual)
		if fired {
			o.emit(&out, key, ks, actual, e.acc, true)
		}
		if fired || o.cleanupTime(actual) != actual.MaxTimestamp() {
			// otherwise the cleanup timer is the trigger timer just registered
			o.registerCleanupTimer(key, actual)
		}
	}

	if skipped && o.isElementLate(ts) {
		if o.cfg.SideOutputLateData {
			out.Late = append(out.Late, LateElement{Key: key, Timestamp: ts, Value: value})
		} else {
			o.lateDropped++
		}
	}
	return out, nil
}

// mergeFunc is the MergeFunction WindowOperator.processElement hands to
// MergingWindowSet.addWindow: refuse a merge that would be late, let the
// trigger register the merged window's timer, clear the merged windows'
// trigger timers and cleanup timers, and merge their accumulators into the
// state window of the result.
func (o *Operator) mergeFunc(key string, ks *keyState) MergeFunc {
	return func(mergeResult TimeWindow, mergedWindows []TimeWindow, stateWindowResult TimeWindow, mergedStateWindows []TimeWindow) error {
		// Flink adds without the overflow guard of cleanupTime here.
		if o.eventTime && mergeResult.MaxTimestamp()+o.cfg.AllowedLateness <= o.watermark {
			return &FlinkError{Exception: UnsupportedOperationException, Message: fmt.Sprintf(
				"The end timestamp of an event-time window cannot become earlier than the current watermark by merging. Current watermark: %d window: TimeWindow{start=%d, end=%d}",
				o.watermark, mergeResult.Start, mergeResult.End)}
		}
		if !o.eventTime && mergeResult.MaxTimestamp() <= o.processingTime {
			return &FlinkError{Exception: UnsupportedOperationException, Message: fmt.Sprintf(
				"The end timestamp of a processing-time window cannot become earlier than the current processing time by merging. Current processing time: %d window: TimeWindow{start=%d, end=%d}",
				o.processingTime, mergeResult.Start, mergeResult.End)}
		}
		o.triggerOnMerge(key, mergeResult)
		for _, m := range mergedWindows {
			o.triggerClear(key, m)
			o.deleteCleanupTimer(key, m)
			if m != mergeResult {
				ks.fired.del(m)
			}
		}
		mergeNamespaces(&ks.accs, stateWindowResult, mergedStateWindows)
		return nil
	}
}

// mergeNamespaces is InternalMergingState.mergeNamespaces for the heap
// backend: fold the source accumulators in order, removing them, then merge
// the fold into the target's accumulator.
func mergeNamespaces(accs *winMap[accEntry], target TimeWindow, sources []TimeWindow) {
	var merged Accumulator
	for _, s := range sources {
		if src, ok := accs.get(s); ok {
			accs.del(s)
			merged = merged.merge(src.acc)
		}
	}
	if merged.Count == 0 {
		return
	}
	t, _ := accs.get(target)
	accs.set(target, accEntry{acc: t.acc.merge(merged)})
}

// AdvanceWatermark is processWatermark: it sets the watermark to wm (virtual
// ms) and fires, one by one in timer order, every event-time timer at or
// before wm: a trigger timer fires its window (EventTimeTrigger.onEventTime
// at maxTimestamp), a cleanup timer (maxTimestamp + allowedLateness) clears
// the window's state. A watermark at or below the current one changes
// nothing and returns an empty Output.
func (o *Operator) AdvanceWatermark(wm int64) Output {
	var out Output
	if wm <= o.watermark {
		return out
	}
	o.watermark = wm
	for {
		t, ok := o.eventTimers.popUpTo(wm)
		if !ok {
			break
		}
		o.onTimer(&out, t, true)
	}
	return out
}

// AdvanceProcessingTime sets the processing time to t (virtual ms) and fires,
// in timer order, every processing-time timer at or before t
// (ProcessingTimeTrigger fires the window, whose state is then cleared).
func (o *Operator) AdvanceProcessingTime(t int64) Output {
	var out Output
	o.processingTime = t
	for {
		tm, ok := o.procTimers.popUpTo(t)
		if !ok {
			break
		}
		o.onTimer(&out, tm, false)
	}
	return out
}

// onTimer is WindowOperator.onEventTime (eventTimeTimer) or onProcessingTime.
func (o *Operator) onTimer(out *Output, t Timer, eventTimeTimer bool) {
	ks := o.keys[t.Key]
	if ks == nil {
		return
	}
	defer o.changed(t.Key, ks, ks.numWindows())
	stateWindow := t.Window
	if o.merging {
		sw, ok := ks.set.StateWindow(t.Window)
		if !ok {
			return
		}
		stateWindow = sw
	}

	var fire bool
	if o.eventTime {
		fire = eventTimeTimer && t.Timestamp == t.Window.MaxTimestamp()
	} else {
		fire = !eventTimeTimer
	}
	if e, ok := ks.accs.get(stateWindow); fire && ok {
		o.emit(out, t.Key, ks, t.Window, e.acc, false)
	}

	if o.eventTime == eventTimeTimer && t.Timestamp == o.cleanupTime(t.Window) {
		ks.accs.del(stateWindow)
		o.triggerClear(t.Key, t.Window)
		ks.fired.del(t.Window)
		if ks.set != nil {
			_ = ks.set.RetireWindow(t.Window) // in flight: StateWindow found it
		}
	}
}
