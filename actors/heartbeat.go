package actors

import (
	"slices"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/heartbeat"
	"github.com/flinksim/flinksim/sim/vt"
)

// heartbeatRound is one round of a heartbeat sender (HeartbeatManagerSenderImpl
// with a HeartbeatMonitorImpl per target), in target name order: a target
// whose monitor timed out is removed and handed to lost; the others get a
// HeartbeatRequest when send is set (the heartbeat.interval tick). A tick
// also sets a check at the earliest deadline, so a timeout is noticed exactly
// heartbeat.timeout after the last heartbeat, as the monitor's own timer does.
func heartbeatRound(o *Out, cfg *config.Config, monitors map[string]*heartbeat.Monitor, send bool, lost func(tm string, m *heartbeat.Monitor)) {
	now := vt.Millis(o.Now())
	names := make([]string, 0, len(monitors))
	for tm := range monitors {
		names = append(names, tm)
	}
	slices.Sort(names)
	next := int64(-1)
	for _, tm := range names {
		m := monitors[tm]
		if m.TimedOut(now) {
			delete(monitors, tm)
			lost(tm, m)
			continue
		}
		if next < 0 || m.Deadline() < next {
			next = m.Deadline()
		}
		if send {
			o.Send(tm, rpcLatency(cfg), &messages.Envelope_HeartbeatRequest{HeartbeatRequest: &messages.HeartbeatRequest{}})
		}
	}
	if send && next >= 0 {
		o.Timer(max(0, vt.FromMillis(next)-o.Now()), timerHeartbeatCheck, next)
	}
}
