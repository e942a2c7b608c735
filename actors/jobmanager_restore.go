package actors

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/eventlog"
)

// WIP: checkpoints are not wired yet. A restart therefore starts from the
// starting offsets with empty state, as Flink does without a completed
// checkpoint.

// prepareRestore chooses what the new attempt restores from.
func (j *JobManager) prepareRestore(o *Out) {
	o.Log(eventlog.KindRestore, messages.Str("from", "starting offsets"),
		messages.Str("reason", "no completed checkpoint"))
}

// restoreInto puts a subtask's restored state into its deployment.
func (j *JobManager) restoreInto(st *messages.SubmitTask) {}

// abortCheckpoints aborts the pending checkpoints on failover.
func (j *JobManager) abortCheckpoints(o *Out, reason string) {}

// triggerCheckpoint triggers a checkpoint or savepoint.
func (j *JobManager) triggerCheckpoint(o *Out, kind messages.CheckpointKind, manual bool) {
	o.Log(eventlog.KindActionIgnored, messages.Str("kind", kind.String()), messages.Str("reason", "checkpoints are not simulated yet"))
}
