package jobmaster

import "github.com/flinksim/flinksim/messages"

// Timer kinds (messages.TimerKind) of this package's components, one per
// self-envelope purpose.
const (
	timerSlotRequestTimeout = messages.TimerKind_TIMER_SLOT_REQUEST_TIMEOUT // slot.request.timeout of the current attempt
	timerAlignment          = messages.TimerKind_TIMER_WATERMARK_ALIGNMENT  // job.watermark.alignment.update-interval: announce the group's max watermark
	timerHeartbeat          = messages.TimerKind_TIMER_HEARTBEAT            // heartbeat.interval
	timerRestart            = messages.TimerKind_TIMER_RESTART              // the restart strategy's backoff
	timerSubmitTask         = messages.TimerKind_TIMER_SUBMIT_TASK_TIMEOUT  // pekko.ask.timeout of a deployment's submitTask calls
)
