//go:build !flinksim_nofence

package jobgraph

// FenceStaleAttempts is whether the JobMaster and the CheckpointCoordinator
// ignore what an execution attempt that is no longer current sends them (a
// zombie's task state, its checkpoint acknowledgement), as Flink does by
// its ExecutionAttemptID (SchedulerBase.updateTaskExecutionState finds no
// current execution for it; PendingCheckpoint.acknowledgeTask answers
// UNKNOWN). True in every real build; the swarm's honesty test builds with
// -tags flinksim_nofence, which skips the fencing, and requires the swarm
// to catch it (invariant no_fenced_attempt).
const FenceStaleAttempts = true

// NoFenceBuild names the build tag of that deliberately broken build (""
// in every real build).
const NoFenceBuild = ""
