package actors

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/vt"
)

// Fixed actor names. TaskManagers are tm-1, tm-2, ...; subtasks and input
// channels are named by sim/jobgraph (SubtaskName, ChannelName).
const (
	JobManagerName      = "jobmanager"
	ResourceManagerName = "resourcemanager"
	KafkaName           = "kafka"
	JobID               = "job-1"
)

// Timer kinds (messages.Timer.Kind), one per self-envelope purpose.
const (
	timerSlotRequestTimeout  = "slot_request_timeout"
	timerContinue            = "continue"                   // a subtask finished its current slice of work
	timerWatermark           = "periodic_watermark"         // pipeline.auto-watermark-interval
	timerFlush               = "output_flush"               // execution.buffer-timeout
	timerMetrics             = "metrics"                    // once per virtual second
	timerGenerate            = "generate"                   // the broker's data generator
	timerFetchWait           = "fetch_max_wait"             // Kafka fetch.max.wait.ms
	timerAppend              = "append_event"               // sim.events.pace=event-time
	timerProcessingTime      = "processing_time"            // a processing-time timer of the keyed operator
	timerAlignment           = "watermark_alignment"        // job.watermark.alignment.update-interval
	timerHeartbeat           = "heartbeat"                  // heartbeat.interval
	timerHeartbeatCheck      = "heartbeat_timeout"          // the earliest heartbeat monitor deadline
	timerRestart             = "restart"                    // the restart strategy's backoff
	timerCheckpoint          = "checkpoint"                 // the CheckpointCoordinator's trigger and timeout duties
	timerCheckpointAlignment = "aligned_checkpoint_timeout" // execution.checkpointing.aligned-checkpoint-timeout (input)
	timerCheckpointOutput    = "output_barrier_timeout"     // the same timeout for a barrier still in the output
	timerTxnTimeout          = "transaction_timeout"        // the sink producer's transaction.timeout.ms
	timerReport              = "report_finished"            // a finished task reports once its slice and broker requests are done
)

// rpcLatency is the virtual delay of an RPC between cluster components
// (JobManager, ResourceManager, TaskManagers, broker): the remote network
// latency setting.
func rpcLatency(c *config.Config) vt.Time { return vt.FromDuration(c.NetworkLatency) }

func start() messages.Body { return &messages.Envelope_Start{Start: &messages.Start{}} }
