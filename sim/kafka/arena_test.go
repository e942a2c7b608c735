package kafka

import "testing"

// TestRecordArenaOutgrown: a fetch whose values outgrow the room values
// gave must not leave its first values where the next fetch writes.
func TestRecordArenaOutgrown(t *testing.T) {
	var a recordArena
	v := a.values(4)
	v = append(v, "AAAA"...)
	first := v[0:4:4]
	for len(v) <= cap(a.vals) { // outgrow the slab: append moves v
		v = append(v, 'x')
	}
	a.used(v)
	w := a.values(4)
	w = append(w, "BBBB"...)
	a.used(w)
	if string(first) != "AAAA" {
		t.Fatalf("the first fetch's value reads %q after the next fetch, want AAAA", first)
	}
	// the usual case: the next fetch's values start after the last's
	x := a.values(4)
	x = append(x, "CCCC"...)
	a.used(x)
	if string(w) != "BBBB" || string(x) != "CCCC" {
		t.Fatalf("values %q %q, want BBBB CCCC", w, x)
	}
}
