package jobmaster

// Timer kinds (messages.Timer.Kind) of this package's components, one per
// self-envelope purpose.
const (
	timerSlotRequestTimeout = "slot_request_timeout" // slot.request.timeout of the current attempt
	timerAlignment          = "watermark_alignment"  // job.watermark.alignment.update-interval: announce the group's max watermark
	timerHeartbeat          = "heartbeat"            // heartbeat.interval
	timerRestart            = "restart"              // the restart strategy's backoff
	timerSubmitTask         = "submit_task_timeout"  // pekko.ask.timeout of a deployment's submitTask calls
)
