package window

import (
	"fmt"
	"math"
	"sort"
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
// watermark. Cost: O(n log n) in windows and timers.
func (o *Operator) Snapshot() []KeyState {
	byKey := make(map[string]*KeyState)
	get := func(key string) *KeyState {
		s := byKey[key]
		if s == nil {
			s = &KeyState{Key: key}
			byKey[key] = s
		}
		return s
	}
	for key, ks := range o.keys {
		s := get(key)
		if ks.set != nil {
			for _, m := range ks.set.Mapping() {
				e, _ := ks.accs.get(m.StateWindow)
				fired, _ := ks.fired.get(m.Window)
				s.Windows = append(s.Windows, WindowState{
					Window: m.Window, StateWindow: m.StateWindow, Acc: e.acc, Fired: fired,
				})
			}
			continue
		}
		ks.accs.each(func(w TimeWindow, e accEntry) {
			fired, _ := ks.fired.get(w)
			s.Windows = append(s.Windows, WindowState{Window: w, StateWindow: w, Acc: e.acc, Fired: fired})
		})
		sort.Slice(s.Windows, func(i, j int) bool { return s.Windows[i].Window.less(s.Windows[j].Window) })
	}
	for _, t := range o.eventTimers.all() {
		s := get(t.Key)
		s.EventTimeTimers = append(s.EventTimeTimers, t)
	}
	for _, t := range o.procTimers.all() {
		s := get(t.Key)
		s.ProcessingTimeTimers = append(s.ProcessingTimeTimers, t)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]KeyState, len(keys))
	for i, k := range keys {
		out[i] = *byKey[k]
	}
	return out
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
