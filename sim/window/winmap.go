package window

// winMap is a small map from windows to V for the state of one key: the
// first two entries live inline, any further ones in a Go map. A key of a
// tumbling assigner holds one or two windows at a time (the window filling
// and the one waiting for the watermark), so per-key state needs neither a
// map allocation nor hashing. The zero value is empty. Not safe for
// concurrent use.
//
// Cost: get, set and del are O(1) (two comparisons, then a map probe only
// when the map is in use).
type winMap[V any] struct {
	n    int // inline entries in use: k[:n], v[:n]
	k    [2]TimeWindow
	v    [2]V
	more map[TimeWindow]V
}

// get returns w's value and whether w is present.
func (m *winMap[V]) get(w TimeWindow) (V, bool) {
	for i := 0; i < m.n; i++ {
		if m.k[i] == w {
			return m.v[i], true
		}
	}
	if m.more != nil {
		v, ok := m.more[w]
		return v, ok
	}
	var zero V
	return zero, false
}

// set stores v for w.
func (m *winMap[V]) set(w TimeWindow, v V) {
	for i := 0; i < m.n; i++ {
		if m.k[i] == w {
			m.v[i] = v
			return
		}
	}
	if m.more != nil {
		if _, ok := m.more[w]; ok {
			m.more[w] = v
			return
		}
	}
	if m.n < len(m.k) {
		m.k[m.n], m.v[m.n] = w, v
		m.n++
		return
	}
	if m.more == nil {
		m.more = make(map[TimeWindow]V)
	}
	m.more[w] = v
}

// del removes w if present.
func (m *winMap[V]) del(w TimeWindow) {
	for i := 0; i < m.n; i++ {
		if m.k[i] == w {
			last := m.n - 1
			m.k[i], m.v[i] = m.k[last], m.v[last]
			var zero V
			m.k[last], m.v[last] = TimeWindow{}, zero
			m.n--
			return
		}
	}
	delete(m.more, w)
}

// len is the number of entries.
func (m *winMap[V]) len() int { return m.n + len(m.more) }

// each calls f for every entry, in no particular order: callers that need an
// order sort what they collect.
func (m *winMap[V]) each(f func(TimeWindow, V)) {
	for i := 0; i < m.n; i++ {
		f(m.k[i], m.v[i])
	}
	for w, v := range m.more {
		f(w, v)
	}
}
