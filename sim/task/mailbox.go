package task

import "github.com/flinksim/flinksim/sim/vt"

// Mailbox is a task's single thread (StreamTask's MailboxProcessor) as
// virtual time sees it: the task works in slices, each busy for the sum of
// its per-record costs; while a slice runs nothing else is processed; a task
// whose output has no free buffer is backpressured until one is recycled.
// It accounts busy, backpressured and idle time per metrics tick as Flink's
// busyTimeMsPerSecond, backPressuredTimeMsPerSecond and idleTimeMsPerSecond
// (TaskIOMetricGroup), which add up to about 1000.
//
// Times are virtual µs.
type Mailbox struct {
	busyUntil    vt.Time // end of the current slice of work
	wakePending  bool    // a wake-up is scheduled for busyUntil
	blocked      bool    // backpressured: no free output buffer
	blockedSince vt.Time
	busyAcc      vt.Time // busy time since the last tick
	bpAcc        vt.Time // backpressured time since the last tick, up to the last unblock
	busyCarry    vt.Time // busy time of a slice running past the last tick, counted in the next
	lastTick     vt.Time
	last         Rates
	bpTotal      vt.Time // backpressured time of the whole run, up to the last unblock
	blockStart   vt.Time // when the current backpressure began
}

// Rates are one tick's ms per second.
type Rates struct{ Busy, BackPressured, Idle int64 }

// NewMailbox starts a mailbox at now; the first tick covers from now.
func NewMailbox(now vt.Time) Mailbox { return Mailbox{lastTick: now} }

// Busy reports whether a slice is still running at now.
func (m *Mailbox) Busy(now vt.Time) bool { return now < m.busyUntil }

// BusyUntil is when the current slice ends.
func (m *Mailbox) BusyUntil() vt.Time { return m.busyUntil }

// WakeAt asks for a wake-up when the current slice ends: it returns the
// delay from now and true, unless one is scheduled already.
func (m *Mailbox) WakeAt(now vt.Time) (delay vt.Time, schedule bool) {
	if m.wakePending {
		return 0, false
	}
	m.wakePending = true
	return m.busyUntil - now, true
}

// Woken is the scheduled wake-up arriving.
func (m *Mailbox) Woken() { m.wakePending = false }

// Slice starts a slice of cost at now (cost > 0); more input waiting wakes
// the task when it ends (WakeAfter).
func (m *Mailbox) Slice(now, cost vt.Time) {
	m.busyAcc += cost
	m.busyUntil = now + cost
}

// WakeAfter schedules the wake-up at the end of the slice just started.
func (m *Mailbox) WakeAfter() { m.wakePending = true }

// Spend makes the task busy for cost more, after what it is doing (work
// outside a slice: a snapshot's synchronous part, a priority barrier).
func (m *Mailbox) Spend(now, cost vt.Time) {
	m.busyUntil = max(m.busyUntil, now) + cost
	m.busyAcc += cost
}

// Blocked reports whether the task is backpressured.
func (m *Mailbox) Blocked() bool { return m.blocked }

// Block marks the task backpressured from now (it found no free output
// buffer).
func (m *Mailbox) Block(now vt.Time) {
	if !m.blocked {
		m.blocked = true
		m.blockedSince = now
		m.blockStart = now
	}
}

// Unblock ends backpressure at now.
func (m *Mailbox) Unblock(now vt.Time) {
	if m.blocked {
		m.blocked = false
		m.bpAcc += now - m.blockedSince
		m.bpTotal += now - m.blockStart
	}
}

// ActivityClock is now less all the time the task has been backpressured:
// Flink's PausableRelativeClock that SourceOperator registers as a listener
// of backPressuredTimeMsPerSecond, so that a source whose output is full does
// not take its splits for idle (WatermarksWithIdleness reads this clock).
func (m *Mailbox) ActivityClock(now vt.Time) vt.Time {
	bp := m.bpTotal
	if m.blocked {
		bp += now - m.blockStart
	}
	return now - bp
}

// Tick closes the metrics interval at now and returns its rates (ok false
// for an empty interval). A slice running past now counts its rest in the
// next interval; busy time is capped at the interval, backpressure at what
// busy time leaves, idle is the rest.
func (m *Mailbox) Tick(now vt.Time) (r Rates, ok bool) {
	span := now - m.lastTick
	if span <= 0 {
		return Rates{}, false
	}
	busy := m.busyAcc + m.busyCarry
	m.busyCarry = 0
	if m.busyUntil > now {
		over := m.busyUntil - now
		busy -= over
		m.busyCarry = over
	}
	bp := m.bpAcc
	if m.blocked {
		bp += now - m.blockedSince
		m.blockedSince = now
	}
	busy = min(max(busy, 0), span)
	bp = min(bp, span-busy)
	perSec := func(v vt.Time) int64 { return int64(v * 1000 / span) }
	r = Rates{Busy: perSec(busy), BackPressured: perSec(bp), Idle: perSec(span - busy - bp)}
	m.busyAcc, m.bpAcc = 0, 0
	m.lastTick = now
	m.last = r
	return r, true
}

// Last are the rates of the last tick.
func (m *Mailbox) Last() Rates { return m.last }
