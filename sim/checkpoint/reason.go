package checkpoint

import "strings"

// FailureReason is org.apache.flink.runtime.checkpoint.CheckpointFailureReason: why a
// checkpoint (or a request to trigger one) failed. Message returns Flink's own text, String
// the Java constant's name. The zero value is not a reason.
type FailureReason int

// The reasons of CheckpointFailureReason (Flink 1.20), in Flink's declaration order.
const (
	ReasonPeriodicSchedulerShutdown FailureReason = 1 + iota
	ReasonTooManyCheckpointRequests
	ReasonMinimumTimeBetweenCheckpoints
	ReasonNotAllRequiredTasksRunning
	ReasonIOException
	ReasonBlockingOutputExist
	ReasonCheckpointAsyncException
	ReasonChannelStateSharedStreamException
	ReasonCheckpointExpired
	ReasonCheckpointSubsumed
	ReasonCheckpointDeclined
	ReasonCheckpointDeclinedTaskNotReady
	ReasonCheckpointDeclinedTaskClosing
	ReasonCheckpointDeclinedSubsumed
	ReasonCheckpointDeclinedOnCancellationBarrier
	ReasonCheckpointDeclinedInputEndOfStream
	ReasonCheckpointCoordinatorShutdown
	ReasonCheckpointCoordinatorSuspend
	ReasonJobFailoverRegion
	ReasonTaskFailure
	ReasonTaskCheckpointFailure
	ReasonUnknownTaskCheckpointNotificationFailure
	ReasonFinalizeCheckpointFailure
	ReasonTriggerCheckpointFailure
	reasonEnd
)

type reasonInfo struct {
	name      string
	message   string
	preFlight bool
	// counted: the failure goes against execution.checkpointing.tolerable-failed-checkpoints
	// (CheckpointFailureManager.checkFailureCounter).
	counted bool
}

// reasons holds each constant's name, message and flags, copied from
// CheckpointFailureReason (messages verbatim, including their missing full stops) and the
// switch in CheckpointFailureManager.checkFailureCounter.
var reasons = [reasonEnd]reasonInfo{
	ReasonPeriodicSchedulerShutdown:                {"PERIODIC_SCHEDULER_SHUTDOWN", "Periodic checkpoint scheduler is shut down.", true, false},
	ReasonTooManyCheckpointRequests:                {"TOO_MANY_CHECKPOINT_REQUESTS", "The maximum number of queued checkpoint requests exceeded", true, false},
	ReasonMinimumTimeBetweenCheckpoints:            {"MINIMUM_TIME_BETWEEN_CHECKPOINTS", "The minimum time between checkpoints is still pending. Checkpoint will be triggered after the minimum time.", true, false},
	ReasonNotAllRequiredTasksRunning:               {"NOT_ALL_REQUIRED_TASKS_RUNNING", "Not all required tasks are currently running.", true, false},
	ReasonIOException:                              {"IO_EXCEPTION", "An Exception occurred while triggering the checkpoint. IO-problem detected.", true, true},
	ReasonBlockingOutputExist:                      {"BLOCKING_OUTPUT_EXIST", "Blocking output edge exists in running tasks.", true, false},
	ReasonCheckpointAsyncException:                 {"CHECKPOINT_ASYNC_EXCEPTION", "Asynchronous task checkpoint failed.", false, true},
	ReasonChannelStateSharedStreamException:        {"CHANNEL_STATE_SHARED_STREAM_EXCEPTION", "The checkpoint was aborted due to exception of other subtasks sharing the ChannelState file.", false, false},
	ReasonCheckpointExpired:                        {"CHECKPOINT_EXPIRED", "Checkpoint expired before completing.", false, true},
	ReasonCheckpointSubsumed:                       {"CHECKPOINT_SUBSUMED", "Checkpoint has been subsumed.", false, false},
	ReasonCheckpointDeclined:                       {"CHECKPOINT_DECLINED", "Checkpoint was declined.", false, true},
	ReasonCheckpointDeclinedTaskNotReady:           {"CHECKPOINT_DECLINED_TASK_NOT_READY", "Checkpoint was declined (tasks not ready)", false, false},
	ReasonCheckpointDeclinedTaskClosing:            {"CHECKPOINT_DECLINED_TASK_CLOSING", "Checkpoint was declined (task is closing)", false, false},
	ReasonCheckpointDeclinedSubsumed:               {"CHECKPOINT_DECLINED_SUBSUMED", "Checkpoint was canceled because a barrier from newer checkpoint was received.", false, false},
	ReasonCheckpointDeclinedOnCancellationBarrier:  {"CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER", "Task received cancellation from one of its inputs", false, false},
	ReasonCheckpointDeclinedInputEndOfStream:       {"CHECKPOINT_DECLINED_INPUT_END_OF_STREAM", "Checkpoint was declined because one input stream is finished", false, false},
	ReasonCheckpointCoordinatorShutdown:            {"CHECKPOINT_COORDINATOR_SHUTDOWN", "CheckpointCoordinator shutdown.", false, false},
	ReasonCheckpointCoordinatorSuspend:             {"CHECKPOINT_COORDINATOR_SUSPEND", "Checkpoint Coordinator is suspending.", false, false},
	ReasonJobFailoverRegion:                        {"JOB_FAILOVER_REGION", "FailoverRegion is restarting.", false, false},
	ReasonTaskFailure:                              {"TASK_FAILURE", "Task has failed.", false, false},
	ReasonTaskCheckpointFailure:                    {"TASK_CHECKPOINT_FAILURE", "Task local checkpoint failure.", false, false},
	ReasonUnknownTaskCheckpointNotificationFailure: {"UNKNOWN_TASK_CHECKPOINT_NOTIFICATION_FAILURE", "Unknown task for the checkpoint to notify.", false, false},
	ReasonFinalizeCheckpointFailure:                {"FINALIZE_CHECKPOINT_FAILURE", "Failure to finalize checkpoint.", false, true},
	ReasonTriggerCheckpointFailure:                 {"TRIGGER_CHECKPOINT_FAILURE", "Trigger checkpoint failure.", false, false},
}

// Valid reports whether r is one of the declared reasons.
func (r FailureReason) Valid() bool { return r > 0 && r < reasonEnd }

// String returns the Java constant's name ("CHECKPOINT_EXPIRED"), or "UNKNOWN" for a value
// that is not a reason.
func (r FailureReason) String() string {
	if !r.Valid() {
		return "UNKNOWN"
	}
	return reasons[r].name
}

// Message returns Flink's text for r (CheckpointFailureReason.message()), the text of the
// CheckpointException Flink raises with it; "" for a value that is not a reason.
func (r FailureReason) Message() string {
	if !r.Valid() {
		return ""
	}
	return reasons[r].message
}

// PreFlight reports CheckpointFailureReason.isPreFlight(): the failure happened before the
// checkpoint was passed to the tasks.
func (r FailureReason) PreFlight() bool { return r.Valid() && reasons[r].preFlight }

// CountsAgainstTolerableFailures reports whether a failure with this reason goes against
// execution.checkpointing.tolerable-failed-checkpoints (the switch in
// CheckpointFailureManager.checkFailureCounter): IO_EXCEPTION, CHECKPOINT_ASYNC_EXCEPTION,
// CHECKPOINT_DECLINED, CHECKPOINT_EXPIRED and FINALIZE_CHECKPOINT_FAILURE do; every other
// reason is ignored.
func (r FailureReason) CountsAgainstTolerableFailures() bool { return r.Valid() && reasons[r].counted }

// ParseFailureReason maps a reason's Java name ("CHECKPOINT_DECLINED") or its exact message
// back to the reason, for decoding a DeclineCheckpoint message. Names match
// case-insensitively; messages must match exactly. ok is false for any other text.
func ParseFailureReason(s string) (r FailureReason, ok bool) {
	for i := FailureReason(1); i < reasonEnd; i++ {
		if strings.EqualFold(reasons[i].name, s) || reasons[i].message == s {
			return i, true
		}
	}
	return 0, false
}
