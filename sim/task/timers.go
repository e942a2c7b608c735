package task

// Timer kinds (messages.Timer.Kind) of this package's components, one per
// self-envelope purpose.
const (
	timerContinue            = "continue"                   // the subtask finished its current slice of work
	timerWatermark           = "periodic_watermark"         // pipeline.auto-watermark-interval
	timerFlush               = "output_flush"               // execution.buffer-timeout
	timerMetrics             = "metrics"                    // once per virtual second
	timerProcessingTime      = "processing_time"            // a processing-time timer of the keyed operator
	timerAlignment           = "watermark_alignment"        // job.watermark.alignment.update-interval: report the watermark
	timerCheckpointAlignment = "aligned_checkpoint_timeout" // execution.checkpointing.aligned-checkpoint-timeout (input)
	timerCheckpointOutput    = "output_barrier_timeout"     // the same timeout for a barrier still in the output
	timerReport              = "report_finished"            // a finished task reports once its slice and broker requests are done
	timerInitialized         = "initialized"                // sim.task.init-time: INITIALIZING ends, the task runs
)
