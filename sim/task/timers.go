package task

import "github.com/flinksim/flinksim/messages"

// Timer kinds (messages.TimerKind) of this package's components, one per
// self-envelope purpose.
const (
	timerContinue            = messages.TimerKind_TIMER_CONTINUE                   // the subtask finished its current slice of work
	timerWatermark           = messages.TimerKind_TIMER_PERIODIC_WATERMARK         // pipeline.auto-watermark-interval
	timerFlush               = messages.TimerKind_TIMER_OUTPUT_FLUSH               // execution.buffer-timeout
	timerMetrics             = messages.TimerKind_TIMER_METRICS                    // once per virtual second
	timerProcessingTime      = messages.TimerKind_TIMER_PROCESSING_TIME            // a processing-time timer of the keyed operator
	timerAlignment           = messages.TimerKind_TIMER_WATERMARK_ALIGNMENT        // job.watermark.alignment.update-interval: report the watermark
	timerCheckpointAlignment = messages.TimerKind_TIMER_ALIGNED_CHECKPOINT_TIMEOUT // execution.checkpointing.aligned-checkpoint-timeout (input)
	timerCheckpointOutput    = messages.TimerKind_TIMER_OUTPUT_BARRIER_TIMEOUT     // the same timeout for a barrier still in the output
	timerReport              = messages.TimerKind_TIMER_REPORT_FINISHED            // a finished task reports once its slice and broker requests are done
	timerInitialized         = messages.TimerKind_TIMER_INITIALIZED                // sim.task.init-time: INITIALIZING ends, the task runs
	timerDebloat             = messages.TimerKind_TIMER_BUFFER_DEBLOAT             // taskmanager.network.memory.buffer-debloat.period
)
