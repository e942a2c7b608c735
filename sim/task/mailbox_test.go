package task

import (
	"testing"

	"github.com/flinksim/flinksim/sim/vt"
)

const ms = 1000 // µs

// One metrics second, by hand: a 300 ms slice from 0, backpressure from
// 500 ms to 800 ms, nothing else: busy 300, backpressured 300, idle 400. A
// slice from 900 ms of 200 ms counts 100 ms in this second and 100 ms in
// the next; backpressure still on at a tick counts up to the tick.
func TestMailboxRates(t *testing.T) {
	m := NewMailbox(0)
	m.Slice(0, 300*ms)
	if !m.Busy(299*ms) || m.Busy(300*ms) {
		t.Fatal("busy until the end of the slice, not after")
	}
	m.Block(500 * ms)
	m.Block(600 * ms) // already blocked: the start stays at 500
	m.Unblock(800 * ms)
	m.Slice(900*ms, 200*ms)
	r, ok := m.Tick(1000 * ms)
	if !ok || r != (Rates{Busy: 400, BackPressured: 300, Idle: 300}) {
		t.Fatalf("first second %+v (ok %v), want busy 400 (300 + 100 of the running slice), backpressured 300, idle 300", r, ok)
	}
	m.Block(1500 * ms)
	r, _ = m.Tick(2000 * ms)
	if r != (Rates{Busy: 100, BackPressured: 500, Idle: 400}) {
		t.Fatalf("second second %+v, want the slice's other 100 ms busy and 500 ms backpressured", r)
	}
	if r, _ := m.Tick(2500 * ms); r != (Rates{Busy: 0, BackPressured: 1000, Idle: 0}) {
		t.Fatalf("half a second all backpressured: %+v", r)
	}
	if _, ok := m.Tick(2500 * ms); ok {
		t.Fatal("an empty interval gave rates")
	}
	if m.Last() != (Rates{Busy: 0, BackPressured: 1000, Idle: 0}) {
		t.Fatalf("last %+v", m.Last())
	}
}

// Work outside a slice (a snapshot's synchronous part) queues behind the
// running slice; a wake-up is scheduled once.
func TestMailboxSpendAndWake(t *testing.T) {
	m := NewMailbox(0)
	m.Slice(0, 10*ms)
	m.Spend(5*ms, 3*ms)
	if m.BusyUntil() != 13*ms {
		t.Fatalf("busy until %d, want 13 ms", m.BusyUntil())
	}
	if d, ok := m.WakeAt(5 * ms); !ok || d != 8*ms {
		t.Fatalf("wake in %d (%v), want 8 ms", d, ok)
	}
	if _, ok := m.WakeAt(6 * ms); ok {
		t.Fatal("a second wake-up scheduled")
	}
	m.Woken()
	if _, ok := m.WakeAt(7 * ms); !ok {
		t.Fatal("no wake-up after the first arrived")
	}
}

// The activity clock (Flink's PausableRelativeClock under the idleness
// timer) stands still while the task is backpressured, across metrics
// ticks: blocked 200-500 ms and from 900 ms, the clock reads 600 at 1000 ms
// (1000 - 300 - 100) and stays at 600 while still blocked.
func TestMailboxActivityClock(t *testing.T) {
	at := func(n int64) vt.Time { return vt.FromMillis(n) }
	m := NewMailbox(0)
	if got := m.ActivityClock(at(100)); got != at(100) {
		t.Fatalf("before any backpressure: %d", got)
	}
	m.Block(at(200))
	m.Tick(at(300)) // a tick in the middle of the backpressure does not move it
	if got := m.ActivityClock(at(400)); got != at(200) {
		t.Errorf("blocked since 200, at 400: %d, want 200 ms", got)
	}
	m.Unblock(at(500))
	m.Block(at(900))
	for _, tt := range []struct{ now, want int64 }{{900, 600}, {1000, 600}, {1200, 600}} {
		if got := m.ActivityClock(at(tt.now)); got != at(tt.want) {
			t.Errorf("at %d ms: %d, want %d ms", tt.now, got, tt.want)
		}
	}
	m.Unblock(at(1200))
	if got := m.ActivityClock(at(1500)); got != at(900) {
		t.Errorf("at 1500 after 300+300 ms blocked: %d, want 900 ms", got)
	}
}
