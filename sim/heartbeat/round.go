package heartbeat

import (
	"slices"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// TimerCheck is the timer kind of the check at the earliest monitor
// deadline (Round sets it; the component's timer handler calls Round with
// send false).
const TimerCheck = messages.TimerKind_TIMER_HEARTBEAT_TIMEOUT

// Round is one round of a heartbeat sender (HeartbeatManagerSenderImpl
// with a DefaultHeartbeatMonitor per target), in target name order: a
// target whose monitor timed out is removed and handed to lost; the others
// get a HeartbeatRequest, latency from now, when send is set (the Sender's
// run). A run also sets a check (TimerCheck) at the earliest deadline, so a
// timeout is noticed exactly heartbeat.timeout after the last heartbeat, as
// the monitor's own timer does. Targets are visited in name order, lost ones
// included, so what lost sends interleaves with the requests the same way
// in every run.
func Round(o *kernel.Out, monitors map[string]*Monitor, send bool, latency vt.Time, lost func(target string, m *Monitor)) {
	now := vt.Millis(o.Now())
	names := make([]string, 0, len(monitors))
	for t := range monitors {
		names = append(names, t)
	}
	slices.Sort(names)
	next := int64(-1)
	for _, t := range names {
		m := monitors[t]
		if m.TimedOut(now) {
			delete(monitors, t)
			lost(t, m)
			continue
		}
		if next < 0 || m.Deadline() < next {
			next = m.Deadline()
		}
		if send {
			o.Send(t, latency, &messages.Envelope_HeartbeatRequest{HeartbeatRequest: &messages.HeartbeatRequest{}})
		}
	}
	if send && next >= 0 {
		o.Timer(max(0, vt.FromMillis(next)-o.Now()), TimerCheck, next)
	}
}
