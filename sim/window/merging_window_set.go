package window

import (
	"fmt"
	"sort"
)

// MergingWindowSet tracks the in-flight windows of one key of a merging
// (session) assigner and, for each, its state window: the window whose
// namespace holds the accumulated contents. When windows merge, one of the
// merged windows' state windows is kept for the result, so contents never
// move (org.apache.flink.streaming.runtime.operators.windowing.MergingWindowSet).
//
// The zero value is not usable; call NewMergingWindowSet. Not safe for
// concurrent use.
type MergingWindowSet struct {
	mapping map[TimeWindow]TimeWindow
}

// NewMergingWindowSet returns an empty set.
func NewMergingWindowSet() *MergingWindowSet {
	return &MergingWindowSet{mapping: make(map[TimeWindow]TimeWindow)}
}

// StateWindow returns the state window of the in-flight window w, and false
// when w is not in flight (getStateWindow returning null).
func (s *MergingWindowSet) StateWindow(w TimeWindow) (TimeWindow, bool) {
	sw, ok := s.mapping[w]
	return sw, ok
}

// Len is the number of in-flight windows.
func (s *MergingWindowSet) Len() int { return len(s.mapping) }

// Windows returns the in-flight windows in ascending (Start, End) order.
func (s *MergingWindowSet) Windows() []TimeWindow {
	out := make([]TimeWindow, 0, len(s.mapping))
	for w := range s.mapping {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j]) })
	return out
}

// RetireWindow removes w from the in-flight windows. Error: w is not in
// flight (Flink's IllegalStateException "Window <w> is not in in-flight
// window set.", with Java's TimeWindow.toString).
func (s *MergingWindowSet) RetireWindow(w TimeWindow) error {
	if _, ok := s.mapping[w]; !ok {
		return notInFlight(w)
	}
	delete(s.mapping, w)
	return nil
}

func notInFlight(w TimeWindow) error {
	return &FlinkError{
		Exception: IllegalStateException,
		Message:   fmt.Sprintf("Window TimeWindow{start=%d, end=%d} is not in in-flight window set.", w.Start, w.End),
	}
}

// MergeFunc is MergingWindowSet.MergeFunction: called when adding a window
// merges in-flight windows. mergedWindows are the in-flight windows that
// merge into mergeResult (the new window itself is never among them, it has
// no state yet), in Java HashSet order; stateWindowResult is the state window
// kept for mergeResult; mergedStateWindows are the state windows whose
// contents must be merged into it. A non-nil error aborts AddWindow.
type MergeFunc func(mergeResult TimeWindow, mergedWindows []TimeWindow, stateWindowResult TimeWindow, mergedStateWindows []TimeWindow) error

// AddWindow adds newWindow to the in-flight windows, merging it (through
// TimeWindow.mergeWindows) with every in-flight window it intersects or
// touches, and returns the window the new window ended up in: newWindow
// itself, or the merge result. Adding elements and calling the trigger must
// then use that returned window.
//
// For each merge, in the order MergeWindows reports them: the merge result
// takes the state window of the first merged window in Java HashSet order,
// the merged windows leave the set, and merge is called, unless the only
// merged window is the result itself (a new window inside an existing one).
// With a merging assigner whose in-flight windows are always merged there is
// at most one merge per call. If merge returns an error, AddWindow restores
// the set as it was and returns the error. Cost: O(n log n) for n in-flight
// windows.
func (s *MergingWindowSet) AddWindow(newWindow TimeWindow, merge MergeFunc) (TimeWindow, error) {
	// Flink lists mapping.keySet() then the new window; only the relative
	// order of equal starts matters to the stable sort, and in-flight windows
	// never share a start, so the sorted key order stands in for Java's.
	windows := append(s.Windows(), newWindow)
	merges := MergeWindows(windows)

	var undo map[TimeWindow]TimeWindow
	if len(merges) > 0 && merge != nil {
		undo = make(map[TimeWindow]TimeWindow, len(s.mapping))
		for k, v := range s.mapping {
			undo[k] = v
		}
	}

	resultWindow := newWindow
	mergedNewWindow := false
	for _, m := range merges {
		mergedWindows := make([]TimeWindow, 0, len(m.Merged))
		for _, w := range m.Merged {
			if w == newWindow {
				mergedNewWindow = true
				resultWindow = m.Result
				continue
			}
			mergedWindows = append(mergedWindows, w)
		}

		mergedStateWindow := s.mapping[mergedWindows[0]]
		var mergedStateWindows []TimeWindow
		for _, w := range mergedWindows {
			if sw, ok := s.mapping[w]; ok {
				delete(s.mapping, w)
				mergedStateWindows = append(mergedStateWindows, sw)
			}
		}
		s.mapping[m.Result] = mergedStateWindow
		mergedStateWindows = removeFirst(mergedStateWindows, mergedStateWindow)

		if len(mergedWindows) == 1 && mergedWindows[0] == m.Result {
			continue
		}
		if merge == nil {
			continue
		}
		if err := merge(m.Result, mergedWindows, s.mapping[m.Result], mergedStateWindows); err != nil {
			s.mapping = undo
			return TimeWindow{}, err
		}
	}

	if len(merges) == 0 || (resultWindow == newWindow && !mergedNewWindow) {
		s.mapping[resultWindow] = resultWindow
	}
	return resultWindow, nil
}

// removeFirst is ArrayList.remove(Object): it drops the first element equal
// to w, if any.
func removeFirst(ws []TimeWindow, w TimeWindow) []TimeWindow {
	for i, x := range ws {
		if x == w {
			return append(ws[:i:i], ws[i+1:]...)
		}
	}
	return ws
}

// WindowMapping is one entry of a MergingWindowSet: an in-flight window and
// its state window.
type WindowMapping struct {
	Window      TimeWindow
	StateWindow TimeWindow
}

// Mapping returns every in-flight window with its state window, in ascending
// (Start, End) order of the window.
func (s *MergingWindowSet) Mapping() []WindowMapping {
	ws := s.Windows()
	out := make([]WindowMapping, len(ws))
	for i, w := range ws {
		out[i] = WindowMapping{Window: w, StateWindow: s.mapping[w]}
	}
	return out
}

// put sets the state window of w (used by Restore).
func (s *MergingWindowSet) put(w, stateWindow TimeWindow) { s.mapping[w] = stateWindow }
