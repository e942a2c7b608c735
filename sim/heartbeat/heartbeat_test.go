package heartbeat

import (
	"testing"

	"pgregory.net/rapid"
)

func TestDefaults(t *testing.T) {
	if DefaultIntervalMs != 10_000 || DefaultTimeoutMs != 50_000 || DefaultRPCFailureThreshold != 2 {
		t.Errorf("defaults %d %d %d, want Flink's 10 s, 50 s, 2", DefaultIntervalMs, DefaultTimeoutMs, DefaultRPCFailureThreshold)
	}
}

// newMonitorWithThreshold is NewMonitor with RPC-failure detection on at
// threshold (heartbeat.rpc-failure-threshold, which the cluster leaves at
// FailedRPCDetectionDisabled).
func newMonitorWithThreshold(timeoutMs, nowMs int64, threshold int) *Monitor {
	m := NewMonitor(timeoutMs, nowMs)
	m.threshold = threshold
	return m
}

// TestMonitorTimings walks one monitor with Flink's 50 s timeout by hand.
func TestMonitorTimings(t *testing.T) {
	m := NewMonitor(DefaultTimeoutMs, 1000) // deadline 51_000
	steps := []struct {
		op           string // "check" or "beat"
		at           int64
		wantTimedOut bool
		wantDeadline int64
		wantLast     int64
	}{
		{op: "check", at: 1000, wantDeadline: 51_000},
		{op: "check", at: 50_999, wantDeadline: 51_000},
		{op: "beat", at: 30_000, wantDeadline: 80_000, wantLast: 30_000},
		{op: "check", at: 51_000, wantDeadline: 80_000, wantLast: 30_000}, // the old deadline no longer counts
		{op: "beat", at: 79_999, wantDeadline: 129_999, wantLast: 79_999},
		{op: "check", at: 129_998, wantDeadline: 129_999, wantLast: 79_999},
		{op: "check", at: 129_999, wantTimedOut: true, wantDeadline: 129_999, wantLast: 79_999},
		// A heartbeat after the timeout is recorded but does not revive the monitor.
		{op: "beat", at: 130_500, wantTimedOut: true, wantDeadline: 129_999, wantLast: 130_500},
		{op: "check", at: 131_000, wantTimedOut: true, wantDeadline: 129_999, wantLast: 130_500},
	}
	for i, st := range steps {
		if st.op == "beat" {
			m.ReportHeartbeat(st.at)
		}
		if got := m.TimedOut(st.at); got != st.wantTimedOut {
			t.Errorf("step %d (%s at %d): TimedOut %v, want %v", i, st.op, st.at, got, st.wantTimedOut)
		}
		if m.Deadline() != st.wantDeadline || m.LastHeartbeat() != st.wantLast {
			t.Errorf("step %d: deadline %d last %d, want %d %d", i, m.Deadline(), m.LastHeartbeat(), st.wantDeadline, st.wantLast)
		}
	}
	if m.State(200_000) != MonitorTimedOut || m.State(200_000).String() != "TIMEOUT" {
		t.Errorf("state %v", m.State(200_000))
	}
}

// TestMonitorHeartbeatAtDeadline: a heartbeat delivered at exactly the
// deadline comes after the timeout, even if nobody asked TimedOut first.
func TestMonitorHeartbeatAtDeadline(t *testing.T) {
	m := NewMonitor(100, 0)
	m.ReportHeartbeat(100)
	if !m.TimedOut(100) || m.Deadline() != 100 {
		t.Errorf("heartbeat at the deadline revived the monitor: timed out %v deadline %d", m.TimedOut(100), m.Deadline())
	}
	m = NewMonitor(100, 0)
	m.ReportHeartbeat(99)
	if m.TimedOut(100) || m.Deadline() != 199 {
		t.Errorf("heartbeat 1 ms before the deadline: timed out %v deadline %d", m.TimedOut(100), m.Deadline())
	}
	// A non-positive timeout (Flink refuses it) is timed out from the start.
	if m := NewMonitor(0, 5); !m.TimedOut(5) {
		t.Error("timeout 0 not timed out at creation")
	}
}

func TestMonitorCancel(t *testing.T) {
	m := NewMonitor(100, 0)
	m.Cancel()
	if m.TimedOut(1_000_000) || m.State(1_000_000) != MonitorCanceled {
		t.Errorf("canceled monitor: state %v", m.State(1_000_000))
	}
	m = NewMonitor(100, 0)
	if !m.TimedOut(100) {
		t.Fatal("not timed out")
	}
	m.Cancel() // too late: stays timed out
	if m.State(100) != MonitorTimedOut {
		t.Errorf("cancel after timeout: %v", m.State(100))
	}
}

func TestMonitorRPCFailures(t *testing.T) {
	m := newMonitorWithThreshold(DefaultTimeoutMs, 0, DefaultRPCFailureThreshold)
	m.ReportHeartbeatRPCFailure(10_000)
	m.ReportHeartbeatRPCSuccess() // the count restarts
	m.ReportHeartbeatRPCFailure(20_000)
	if m.Unreachable() {
		t.Fatal("unreachable after non-consecutive failures")
	}
	m.ReportHeartbeatRPCFailure(30_000)
	if !m.Unreachable() || m.State(30_000) != MonitorUnreachable {
		t.Fatalf("two consecutive failures: state %v", m.State(30_000))
	}
	// Unreachable is final: no timeout afterwards, heartbeats do not revive.
	m.ReportHeartbeat(31_000)
	if m.TimedOut(1_000_000) || !m.Unreachable() {
		t.Errorf("unreachable monitor changed: %v", m.State(1_000_000))
	}

	// Detection off (NewMonitor): failures never make it unreachable.
	d := NewMonitor(DefaultTimeoutMs, 0)
	for i := int64(1); i <= 10; i++ {
		d.ReportHeartbeatRPCFailure(i * 1000)
	}
	if d.Unreachable() {
		t.Error("detection off but unreachable")
	}
	// A failure reported after the deadline finds the monitor timed out.
	d2 := newMonitorWithThreshold(100, 0, 1)
	d2.ReportHeartbeatRPCFailure(100)
	if d2.State(100) != MonitorTimedOut {
		t.Errorf("failure at the deadline: %v, want TIMEOUT", d2.State(100))
	}
}

// TestLostTaskManager: a JobMaster with Flink's defaults requests heartbeats
// at 0, 10 s, 20 s, ...; the TaskManager answers 5 ms later until it dies at
// 25 s. Its last heartbeat is at 20_005, so the timeout fires at 70_005.
// With heartbeat.rpc-failure-threshold 2 and RPCs to the dead process
// failing as unreachable 5 ms after each request, the requests at 30 s and
// 40 s fail and the TaskManager is marked unreachable at 40_005 instead.
func TestLostTaskManager(t *testing.T) {
	for _, tt := range []struct {
		threshold int
		wantState MonitorState
		wantAt    int64
	}{
		{threshold: FailedRPCDetectionDisabled, wantState: MonitorTimedOut, wantAt: 70_005},
		{threshold: DefaultRPCFailureThreshold, wantState: MonitorUnreachable, wantAt: 40_005},
	} {
		m := newMonitorWithThreshold(DefaultTimeoutMs, 0, tt.threshold)
		const deathMs = 25_000
		lostAt := int64(-1)
		for now := int64(0); now <= 100_000 && lostAt < 0; now++ {
			if m.State(now) != MonitorRunning {
				lostAt = now
				break
			}
			if (now-5)%DefaultIntervalMs == 0 && now >= 5 { // answers to the request 5 ms earlier
				if now-5 < deathMs {
					m.ReportHeartbeat(now)
					m.ReportHeartbeatRPCSuccess()
				} else {
					m.ReportHeartbeatRPCFailure(now)
				}
				if m.State(now) != MonitorRunning {
					lostAt = now
				}
			}
		}
		if lostAt != tt.wantAt || m.State(lostAt) != tt.wantState {
			t.Errorf("threshold %d: lost at %d as %v, want %d as %v", tt.threshold, lostAt, m.State(lostAt), tt.wantAt, tt.wantState)
		}
	}
}

// TestMonitorVsOracle: against the rule "timed out at t iff some deadline
// d = (creation or a heartbeat before d) + timeout has no heartbeat in
// [its start, d)".
func TestMonitorVsOracle(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		timeout := rapid.Int64Range(1, 1000).Draw(rt, "timeout")
		start := rapid.Int64Range(0, 1000).Draw(rt, "start")
		m := NewMonitor(timeout, start)
		beats := rapid.SliceOfN(rapid.Int64Range(0, 1500), 0, 20).Draw(rt, "gaps")
		now := start
		deadline := start + timeout
		dead := false
		for _, g := range beats {
			now += g
			if !dead && now >= deadline {
				dead = true
			}
			m.ReportHeartbeat(now)
			if !dead {
				deadline = now + timeout
			}
			if m.TimedOut(now) != dead || (!dead && m.Deadline() != deadline) {
				rt.Fatalf("at %d: timed out %v deadline %d, oracle %v %d", now, m.TimedOut(now), m.Deadline(), dead, deadline)
			}
		}
	})
}
