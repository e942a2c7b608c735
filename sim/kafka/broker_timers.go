package kafka

import "github.com/flinksim/flinksim/messages"

// Timer kinds (messages.TimerKind) of this package's components, one per
// self-envelope purpose.
const (
	timerPlan       = messages.TimerKind_TIMER_PLAN_FETCHES        // parked fetches looked at again (broker_ahead.go)
	timerGenerate   = messages.TimerKind_TIMER_GENERATE            // the generator's tick, with a Kafka latency of 0 only (broker_ahead.go)
	timerFetchWait  = messages.TimerKind_TIMER_FETCH_MAX_WAIT      // Kafka fetch.max.wait.ms
	timerAppend     = messages.TimerKind_TIMER_APPEND_EVENT        // sim.events.pace=event-time
	timerTxnTimeout = messages.TimerKind_TIMER_TRANSACTION_TIMEOUT // the sink producer's transaction.timeout.ms
	timerMetrics    = messages.TimerKind_TIMER_METRICS             // once per virtual second
)
