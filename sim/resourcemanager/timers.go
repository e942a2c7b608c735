package resourcemanager

import "github.com/flinksim/flinksim/messages"

// Timer kinds (messages.TimerKind) of this package's components, one per
// self-envelope purpose.
const (
	timerHeartbeat = messages.TimerKind_TIMER_HEARTBEAT // heartbeat.interval
)
