package watermark

import "testing"

func TestEmitterForwardsOnlyStrictlyGreater(t *testing.T) {
	e := NewEmitter()
	steps := []struct {
		give        int64
		want        int64
		wantChanged bool
	}{
		{MinWatermark, MinWatermark, false}, // the initial value is never forwarded
		{-5, -5, true},
		{-5, -5, false}, // equal: dropped
		{10, 10, true},
		{3, 10, false}, // lower: dropped, the last forwarded stays
		{11, 11, true},
		{MaxWatermark, MaxWatermark, true},
		{MaxWatermark, MaxWatermark, false},
	}
	for i, s := range steps {
		got, changed := e.EmitWatermark(s.give)
		if got != s.want || changed != s.wantChanged {
			t.Errorf("step %d EmitWatermark(%d) = (%d, %v), want (%d, %v)", i, s.give, got, changed, s.want, s.wantChanged)
		}
	}
}

func TestEmitterStatusToggles(t *testing.T) {
	e := NewEmitter()
	if e.MarkActive() {
		t.Error("an emitter starts active: MarkActive must forward nothing")
	}
	if !e.MarkIdle() || !e.IsIdle() {
		t.Fatal("first MarkIdle must forward IDLE")
	}
	if e.MarkIdle() {
		t.Error("second MarkIdle must forward nothing")
	}
	// A dropped watermark does not reactivate the output.
	if _, changed := e.EmitWatermark(MinWatermark); changed || !e.IsIdle() {
		t.Error("a dropped watermark must leave the output idle")
	}
	// A forwarded watermark does (ACTIVE then the watermark: two forwarded elements).
	before := e.forwarded
	if _, changed := e.EmitWatermark(7); !changed || e.IsIdle() {
		t.Error("a forwarded watermark must mark the output active")
	}
	if e.forwarded-before != 2 {
		t.Errorf("forwarded %d elements, want 2 (ACTIVE, watermark)", e.forwarded-before)
	}
}
