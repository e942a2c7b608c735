package kafka

// Timer kinds (messages.Timer.Kind) of this package's components, one per
// self-envelope purpose.
const (
	timerPlan       = "plan_fetches"        // parked fetches looked at again (broker_ahead.go)
	timerGenerate   = "generate"            // the generator's tick, with a Kafka latency of 0 only (broker_ahead.go)
	timerFetchWait  = "fetch_max_wait"      // Kafka fetch.max.wait.ms
	timerAppend     = "append_event"        // sim.events.pace=event-time
	timerTxnTimeout = "transaction_timeout" // the sink producer's transaction.timeout.ms
	timerMetrics    = "metrics"             // once per virtual second
)
