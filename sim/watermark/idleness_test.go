package watermark

import (
	"errors"
	"testing"
)

func TestIdlenessTimerTiming(t *testing.T) {
	// 1000 ms timeout, periodic checks every 200 ms, one event at 100.
	timer, err := NewIdlenessTimer(1000)
	if err != nil {
		t.Fatal(err)
	}
	timer.Activity() // event at 100
	// 200: activity seen; 400: countdown starts; idle once now-400 > 1000.
	for now := int64(200); now <= 1800; now += 200 {
		want := now >= 1600
		if got := timer.CheckIfIdle(now); got != want {
			t.Errorf("CheckIfIdle(%d) = %v, want %v", now, got, want)
		}
	}
	// Activity resets the countdown: the next check says active and restarts nothing,
	// the one after starts the countdown again.
	timer.Activity()
	if timer.CheckIfIdle(2000) {
		t.Error("activity must reset idleness")
	}
	if timer.CheckIfIdle(2200) || timer.CheckIfIdle(3200) {
		t.Error("countdown restarted at 2200; 3200-2200 = 1000 is not > 1000")
	}
	if !timer.CheckIfIdle(3201) {
		t.Error("3201-2200 > 1000 must be idle")
	}
}

func TestIdlenessTimerCountdownStartsAtZero(t *testing.T) {
	// Flink uses 0 as "no countdown"; a virtual clock at 0 must still start it.
	timer, _ := NewIdlenessTimer(10)
	if timer.CheckIfIdle(0) {
		t.Fatal("first check is never idle")
	}
	if timer.CheckIfIdle(10) {
		t.Fatal("10-0 is not > 10")
	}
	if !timer.CheckIfIdle(11) {
		t.Fatal("11-0 > 10 must be idle")
	}
}

func TestWatermarksWithIdleness(t *testing.T) {
	b, _ := NewBoundedOutOfOrderness(100)
	w, err := NewWatermarksWithIdleness(b, 1000)
	if err != nil {
		t.Fatal(err)
	}
	w.OnEvent(5000) // at 100
	steps := []struct {
		now  int64
		want Emission
	}{
		{200, Emission{Kind: EmissionWatermark, Watermark: 4899}},
		{400, Emission{Kind: EmissionWatermark, Watermark: 4899}}, // countdown starts
		{1400, Emission{Kind: EmissionWatermark, Watermark: 4899}},
		{1600, Emission{Kind: EmissionIdle}},
		{1800, Emission{Kind: EmissionNone}}, // idle is marked once
	}
	for _, s := range steps {
		if got := w.OnPeriodicEmit(s.now); got != s.want {
			t.Errorf("OnPeriodicEmit(%d) = %+v, want %+v", s.now, got, s.want)
		}
	}
	if !w.IsIdle() {
		t.Error("want idle")
	}
	w.OnEvent(4000) // an older event still counts as activity
	if w.IsIdle() {
		t.Error("an event clears idleness at once")
	}
	if got := w.OnPeriodicEmit(2000); got != (Emission{Kind: EmissionWatermark, Watermark: 4899}) {
		t.Errorf("after the event: %+v", got)
	}
}

func TestIdlenessConstructorErrors(t *testing.T) {
	b, _ := NewBoundedOutOfOrderness(0)
	tests := []struct {
		name    string
		gen     *BoundedOutOfOrderness
		timeout int64
		want    error
	}{
		{"zero timeout", b, 0, ErrNonPositiveIdleTimeout},
		{"negative timeout", b, -1, ErrNonPositiveIdleTimeout},
		{"nil generator", nil, 10, ErrNilGenerator},
		{"timeout checked first", nil, 0, ErrNonPositiveIdleTimeout},
	}
	for _, tt := range tests {
		_, err := NewWatermarksWithIdleness(tt.gen, tt.timeout)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: err %v, want %v", tt.name, err, tt.want)
		}
	}
	if ErrNonPositiveIdleTimeout.Error() != "idleTimeout must be greater than zero" {
		t.Error("message must be Flink's")
	}
}
