package window

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// WindowState is the checkpointed state of one live window of a key: the
// window, its state window (the namespace holding the accumulator: the
// window itself unless session windows merged), the accumulator, and how
// many times the window has fired so far.
type WindowState struct {
	Window      TimeWindow
	StateWindow TimeWindow
	Acc         Accumulator
	Fired       int
}

// KeyState is the checkpointed state of one key: what Flink keeps in keyed
// state for a WindowOperator (window contents per namespace, the
// merging-window-set mapping) plus the key's timers from the timer service.
// Windows are in ascending (Start, End) order, timers in firing order, and
// every timer's Key equals Key.
type KeyState struct {
	Key                  string
	Windows              []WindowState
	EventTimeTimers      []Timer
	ProcessingTimeTimers []Timer
}

// Snapshot returns a deep copy of all keyed state and timers, sorted by key.
// The watermark is not part of it: Flink does not checkpoint an operator's
// watermark. Cost: O(n log n) in keys, windows and timers, with a handful of
// allocations (the states, windows and timers each share one array).
func (o *Operator) Snapshot() []KeyState {
	// timers in firing order, then grouped by key keeping that order
	et, pt := o.eventTimers.all(), o.procTimers.all()
	byKey := func(a, b Timer) int { return strings.Compare(a.Key, b.Key) }
	slices.SortStableFunc(et, byKey)
	slices.SortStableFunc(pt, byKey)
	// the keys holding state or timers
	keys := make([]string, 0, len(o.keys))
	for k := range o.keys {
		keys = append(keys, k)
	}
	for _, ts := range [][]Timer{et, pt} {
		for i, t := range ts {
			if (i == 0 || ts[i-1].Key != t.Key) && o.keys[t.Key] == nil {
				keys = append(keys, t.Key)
			}
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys) // a stateless key may have timers of both clocks
	n := 0
	for _, ks := range o.keys {
		n += max(ks.numWindows(), ks.accs.len())
	}
	windows := make([]WindowState, 0, n)
	out := make([]KeyState, len(keys))
	for i, key := range keys {
		s := &out[i]
		s.Key = key
		if ks := o.keys[key]; ks != nil {
			a := len(windows)
			if ks.set != nil {
				for _, m := range ks.set.Mapping() {
					e, _ := ks.accs.get(m.StateWindow)
					fired, _ := ks.fired.get(m.Window)
					windows = append(windows, WindowState{Window: m.Window, StateWindow: m.StateWindow, Acc: e.acc, Fired: fired})
				}
			} else {
				ks.accs.each(func(w TimeWindow, e accEntry) {
					fired, _ := ks.fired.get(w)
					windows = append(windows, WindowState{Window: w, StateWindow: w, Acc: e.acc, Fired: fired})
				})
				slices.SortFunc(windows[a:], func(x, y WindowState) int { return x.Window.compare(y.Window) })
			}
			if len(windows) > a {
				s.Windows = windows[a:len(windows):len(windows)]
			}
		}
		s.EventTimeTimers, et = takeKey(et, key)
		s.ProcessingTimeTimers, pt = takeKey(pt, key)
	}
	return out
}

// takeKey splits the timers of key off the front of ts (grouped by key in
// key order): nil if it has none.
func takeKey(ts []Timer, key string) (mine, rest []Timer) {
	n := 0
	for n < len(ts) && ts[n].Key == key {
		n++
	}
	if n == 0 {
		return nil, ts
	}
	return ts[:n:n], ts[n:]
}

// Restore replaces all keyed state and timers with states (as Snapshot
// returns them) and starts over as a restored Flink task does: the watermark
// back at math.MinInt64 and a fresh assigner (a NATURAL stagger offset is
// drawn again from the next element). Timers are restored as given, so a
// window that already fired does not fire again unless a new element
// registers its timer anew. NumLateRecordsDropped and the processing time
// are kept. On error nothing changes. Errors: a duplicate key, window or
// state window; an accumulator with Count < 1; a negative Fired; a state
// window that differs from its window for a non-merging assigner; a timer
// whose Key is not its KeyState's.
func (o *Operator) Restore(states []KeyState) error {
	keys := make(map[string]*keyState, len(states))
	seen := make(map[string]bool, len(states))
	eventTimers, procTimers := newTimerQueue(), newTimerQueue()
	for _, s := range states {
		if seen[s.Key] {
			return fmt.Errorf("restore: duplicate key %q", s.Key)
		}
		seen[s.Key] = true
		ks := &keyState{}
		if o.merging {
			ks.set = NewMergingWindowSet()
		}
		for _, ws := range s.Windows {
			if ws.Acc.Count < 1 {
				return fmt.Errorf("restore: key %q window %v: accumulator count %d < 1", s.Key, ws.Window, ws.Acc.Count)
			}
			if ws.Fired < 0 {
				return fmt.Errorf("restore: key %q window %v: negative firing count %d", s.Key, ws.Window, ws.Fired)
			}
			if !o.merging && ws.StateWindow != ws.Window {
				return fmt.Errorf("restore: key %q window %v: state window %v differs, but the assigner does not merge", s.Key, ws.Window, ws.StateWindow)
			}
			if _, dup := ks.accs.get(ws.StateWindow); dup {
				return fmt.Errorf("restore: key %q: duplicate state window %v", s.Key, ws.StateWindow)
			}
			if ks.set != nil {
				if _, dup := ks.set.StateWindow(ws.Window); dup {
					return fmt.Errorf("restore: key %q: duplicate window %v", s.Key, ws.Window)
				}
				ks.set.put(ws.Window, ws.StateWindow)
			}
			ks.accs.set(ws.StateWindow, accEntry{acc: ws.Acc}) // not armed: the timers are as restored
			if ws.Fired > 0 {
				ks.fired.set(ws.Window, ws.Fired)
			}
		}
		for _, t := range s.EventTimeTimers {
			if t.Key != s.Key {
				return fmt.Errorf("restore: key %q holds an event-time timer of key %q", s.Key, t.Key)
			}
			eventTimers.register(t)
		}
		for _, t := range s.ProcessingTimeTimers {
			if t.Key != s.Key {
				return fmt.Errorf("restore: key %q holds a processing-time timer of key %q", s.Key, t.Key)
			}
			procTimers.register(t)
		}
		if ks.accs.len() > 0 {
			keys[s.Key] = ks
		}
	}
	a, err := o.cfg.newAssigner()
	if err != nil {
		return err // cannot happen: the config was valid at NewOperator
	}
	o.assigner = a
	o.keys = keys
	o.windows = o.countWindows()
	o.eventTimers, o.procTimers = eventTimers, procTimers
	o.watermark = math.MinInt64
	return nil
}
