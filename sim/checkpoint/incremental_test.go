package checkpoint

import "testing"

// Incremental RocksDB checkpoints upload what changed since the last
// completed checkpoint, by hand: a and b are written before checkpoint 1;
// checkpoint 1 completes, so only keys written after its snapshot count;
// b is written again before checkpoint 2's snapshot and c after it; while 2
// is pending, 1 stays the base, so b and c are changed; once 2 completes
// only c is.
func TestChangeTracker(t *testing.T) {
	c := NewChangeTracker()
	c.Touch("a")
	c.Touch("b")
	if !c.Changed("a") || c.Changed("z") {
		t.Fatal("before any completed checkpoint every written key is changed, an unwritten one is not")
	}
	c.Snapshot(1)
	c.Complete(1)
	if c.Changed("a") || c.Changed("b") {
		t.Fatal("a and b were uploaded by checkpoint 1")
	}
	c.Touch("b")
	c.Snapshot(2)
	c.Touch("c")
	if !c.Changed("b") || !c.Changed("c") || c.Changed("a") {
		t.Fatal("with checkpoint 2 pending, b and c changed since checkpoint 1, a did not")
	}
	c.Complete(2)
	if c.Changed("b") || !c.Changed("c") {
		t.Fatal("after checkpoint 2 only c (written after its snapshot) is changed")
	}
	c.Complete(1) // a late, older completion changes nothing
	if c.Changed("b") {
		t.Fatal("an older completion moved the base back")
	}
}
