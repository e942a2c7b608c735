package resourcemanager

// Timer kinds (messages.Timer.Kind) of this package's components, one per
// self-envelope purpose.
const (
	timerHeartbeat = "heartbeat" // heartbeat.interval
)
