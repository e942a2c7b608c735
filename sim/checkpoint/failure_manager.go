package checkpoint

import (
	"fmt"
	"math"
)

// ExceededTolerableFailuresMessage is CheckpointFailureManager's
// EXCEEDED_CHECKPOINT_TOLERABLE_FAILURE_MESSAGE.
const ExceededTolerableFailuresMessage = "Exceeded checkpoint tolerable failure threshold."

// failureManager is org.apache.flink.runtime.checkpoint.CheckpointFailureManager: it counts
// the checkpoint failures that count against execution.checkpointing.tolerable-failed-checkpoints
// (each checkpoint id once, none at or below the latest success) and says when the job must
// fail. The Coordinator owns one and tells it of every failure and success.
type failureManager struct {
	tolerable     int // tolerableCpFailureNumber
	counter       int // continuousFailureCounter
	countedIDs    map[int64]bool
	lastSucceeded int64
}

func newFailureManager(tolerable int) failureManager {
	return failureManager{tolerable: tolerable, countedIDs: make(map[int64]bool), lastSucceeded: math.MinInt64}
}

// handleCheckpointException is CheckpointFailureManager.handleCheckpointException; it
// returns the message of the exception the job must fail with, or "".
func (f *failureManager) handleCheckpointException(reason FailureReason, id int64, kind Kind, fromTask bool) string {
	jobLevel := reason.PreFlight() || !fromTask
	if jobLevel {
		if kind.IsSavepoint() {
			return "" // savepoint failures on the JobManager are a manual action's business
		}
		return f.checkAgainstCounter(reason, id)
	}
	if kind == KindStopWithSavepoint {
		return reason.Message() // failJob(exception): a failed synchronous savepoint fails the job
	}
	return f.checkAgainstCounter(reason, id)
}

// checkAgainstCounter is CheckpointFailureManager.checkFailureAgainstCounter with
// checkFailureCounter.
func (f *failureManager) checkAgainstCounter(reason FailureReason, id int64) string {
	if id != unknownCheckpointID && id <= f.lastSucceeded {
		return ""
	}
	if reason.CountsAgainstTolerableFailures() {
		if id == unknownCheckpointID || !f.countedIDs[id] {
			if id != unknownCheckpointID {
				f.countedIDs[id] = true
			}
			f.counter++
		}
	}
	if f.counter > f.tolerable {
		f.clearCount()
		return fmt.Sprintf("%s The latest checkpoint failed due to %s, view the Checkpoint History tab or the Job Manager log to find out why continuous checkpoints failed.",
			ExceededTolerableFailuresMessage, reason.Message())
	}
	return ""
}

// handleCheckpointSuccess is CheckpointFailureManager.handleCheckpointSuccess.
func (f *failureManager) handleCheckpointSuccess(id int64) {
	if id > f.lastSucceeded {
		f.lastSucceeded = id
		f.clearCount()
	}
}

// clearCount is CheckpointFailureManager.clearCount.
func (f *failureManager) clearCount() {
	f.counter = 0
	clear(f.countedIDs)
}
