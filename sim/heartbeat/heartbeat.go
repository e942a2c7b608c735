// Package heartbeat models Flink 1.20's heartbeats between the
// ResourceManager, JobMasters and TaskExecutors
// (org.apache.flink.runtime.heartbeat): the sender side requests a heartbeat
// from every monitored target each interval (HeartbeatManagerSenderImpl); each
// side keeps one monitor per target whose timeout restarts on every heartbeat
// received (DefaultHeartbeatMonitor, formerly HeartbeatMonitorImpl) and, since
// Flink 1.14, a count of consecutive heartbeat RPCs that failed because the
// target was unreachable.
//
// Time is an argument: every instant is virtual milliseconds passed by the
// caller, which must not go backwards for one Monitor. The sender's run is
// Round (round.go), which a component calls from its heartbeat.interval
// timer. Nothing here
// reads a clock or schedules anything; the caller asks when the next request
// is due and whether a target has timed out.
package heartbeat

import "fmt"

// Flink 1.20's defaults (HeartbeatManagerOptions).
const (
	// DefaultIntervalMs is heartbeat.interval: virtual ms between two
	// heartbeat requests of a sender.
	DefaultIntervalMs int64 = 10_000
	// DefaultTimeoutMs is heartbeat.timeout: virtual ms without a heartbeat
	// after which a target is considered lost.
	DefaultTimeoutMs int64 = 50_000
	// DefaultRPCFailureThreshold is heartbeat.rpc-failure-threshold: the
	// number of consecutive heartbeat RPCs failing with an unreachable
	// recipient after which the target is marked unreachable.
	DefaultRPCFailureThreshold = 2
	// FailedRPCDetectionDisabled is the threshold value that turns the
	// RPC-failure detection off (HeartbeatManagerOptions.
	// FAILED_RPC_DETECTION_DISABLED).
	FailedRPCDetectionDisabled = -1
)

// MonitorState is DefaultHeartbeatMonitor's state. A monitor leaves Running
// at most once; the other states are final.
type MonitorState int

const (
	// MonitorRunning: watching; the timeout is armed.
	MonitorRunning MonitorState = 1 + iota
	// MonitorTimedOut: no heartbeat within the timeout (the listener's
	// notifyHeartbeatTimeout).
	MonitorTimedOut
	// MonitorUnreachable: too many consecutive heartbeat RPCs failed with an
	// unreachable recipient (the listener's notifyTargetUnreachable).
	MonitorUnreachable
	// MonitorCanceled: the target was unmonitored or the manager stopped.
	MonitorCanceled
)

// String names the state as Flink's enum does.
func (s MonitorState) String() string {
	switch s {
	case MonitorRunning:
		return "RUNNING"
	case MonitorTimedOut:
		return "TIMEOUT"
	case MonitorUnreachable:
		return "UNREACHABLE"
	case MonitorCanceled:
		return "CANCELED"
	}
	return fmt.Sprintf("MonitorState(%d)", int(s))
}

// Monitor watches one heartbeat target (DefaultHeartbeatMonitor). Created at
// some instant, it times out timeoutMs after its creation or after the last
// heartbeat received while running, whichever is later. The timeout fires at
// the deadline itself: a heartbeat arriving at exactly Deadline() is too late,
// as when a time-ordered scheduler fires the timer due at t before the
// delivery at t.
type Monitor struct {
	timeoutMs       int64
	deadlineMs      int64
	lastHeartbeatMs int64
	threshold       int
	failedRPCs      int
	state           MonitorState
}

// NewMonitor starts a monitor at nowMs with the given timeout (virtual ms) and
// RPC-failure detection off, as HeartbeatManagerImpl.monitorTarget does. The
// first deadline is nowMs + timeoutMs. Flink refuses a timeout <= 0
// (sim/config refuses the setting); here such a monitor is timed out from
// its creation.
func NewMonitor(timeoutMs int64, nowMs int64) *Monitor {
	return &Monitor{
		timeoutMs:  timeoutMs,
		deadlineMs: nowMs + timeoutMs,
		threshold:  FailedRPCDetectionDisabled,
		state:      MonitorRunning,
	}
}

// advance fires the timeout if it is due at nowMs.
func (m *Monitor) advance(nowMs int64) {
	if m.state == MonitorRunning && nowMs >= m.deadlineMs {
		m.state = MonitorTimedOut
	}
}

// ReportHeartbeat records a heartbeat (or, on the receiver side, a heartbeat
// request) from the target at nowMs. It sets LastHeartbeat in any state and,
// if the monitor is still running at nowMs, moves the deadline to
// nowMs + timeout; a timed-out, unreachable or canceled monitor stays so.
func (m *Monitor) ReportHeartbeat(nowMs int64) {
	m.advance(nowMs)
	m.lastHeartbeatMs = nowMs
	if m.state == MonitorRunning {
		m.deadlineMs = nowMs + m.timeoutMs
	}
}

// TimedOut reports whether the heartbeat timeout has fired by nowMs: true
// from Deadline() on if no heartbeat moved it, and for ever after.
func (m *Monitor) TimedOut(nowMs int64) bool {
	m.advance(nowMs)
	return m.state == MonitorTimedOut
}

// Deadline is the virtual time at which the timeout fires if no heartbeat
// arrives before it (creation or last heartbeat while running, plus the
// timeout).
func (m *Monitor) Deadline() int64 { return m.deadlineMs }

// LastHeartbeat is the time of the last ReportHeartbeat, 0 before the first
// (Flink initialises it to 0 too).
func (m *Monitor) LastHeartbeat() int64 { return m.lastHeartbeatMs }

// ReportHeartbeatRPCFailure records that a heartbeat RPC to the target failed
// at nowMs with an unreachable recipient (Flink counts only
// RecipientUnreachableException; other RPC failures are not reported). With
// detection on, the threshold-th consecutive failure of a running monitor
// marks it unreachable.
func (m *Monitor) ReportHeartbeatRPCFailure(nowMs int64) {
	m.advance(nowMs)
	m.failedRPCs++
	if m.threshold > 0 && m.failedRPCs >= m.threshold && m.state == MonitorRunning {
		m.state = MonitorUnreachable
	}
}

// ReportHeartbeatRPCSuccess records a heartbeat RPC that reached the target:
// the count of consecutive failures restarts from 0.
func (m *Monitor) ReportHeartbeatRPCSuccess() { m.failedRPCs = 0 }

// Unreachable reports whether the RPC-failure threshold marked the target
// unreachable.
func (m *Monitor) Unreachable() bool { return m.state == MonitorUnreachable }

// Cancel stops a running monitor (unmonitorTarget / stop): it will never time
// out. No effect in another state.
func (m *Monitor) Cancel() {
	if m.state == MonitorRunning {
		m.state = MonitorCanceled
	}
}

// State is the monitor's state at nowMs (firing a due timeout first).
func (m *Monitor) State(nowMs int64) MonitorState {
	m.advance(nowMs)
	return m.state
}
