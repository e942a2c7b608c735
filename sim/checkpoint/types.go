package checkpoint

import "sort"

// Kind says what a trigger request is for. The zero value is not a kind.
type Kind int

const (
	// KindPeriodic is a checkpoint from the periodic scheduler (CheckpointCoordinator's
	// ScheduledTrigger: isPeriodic=true, not forced). Min pause applies to it.
	KindPeriodic Kind = 1 + iota
	// KindManual is a checkpoint requested by a user (REST triggerCheckpoint:
	// isPeriodic=false, not forced): min pause does not apply, max concurrent does.
	KindManual
	// KindSavepoint is a savepoint (CheckpointCoordinator.triggerSavepoint): not periodic,
	// forced unless unaligned checkpoints are enabled, never subsumed, not added to the
	// completed checkpoint store, and tasks are not told of its completion.
	KindSavepoint
	// KindStopWithSavepoint is the synchronous savepoint of stop-with-savepoint
	// (CheckpointCoordinator.triggerSynchronousSavepoint): like KindSavepoint, but its
	// completion subsumes older checkpoints and is notified to the tasks, and a task-side
	// failure fails the job at once.
	KindStopWithSavepoint
)

// String returns "periodic", "manual", "savepoint", "stop-with-savepoint" or "unknown".
func (k Kind) String() string {
	switch k {
	case KindPeriodic:
		return "periodic"
	case KindManual:
		return "manual"
	case KindSavepoint:
		return "savepoint"
	case KindStopWithSavepoint:
		return "stop-with-savepoint"
	}
	return "unknown"
}

// Valid reports whether k is one of the declared kinds.
func (k Kind) Valid() bool { return k >= KindPeriodic && k <= KindStopWithSavepoint }

// IsSavepoint reports CheckpointProperties.isSavepoint() for the kind.
func (k Kind) IsSavepoint() bool { return k == KindSavepoint || k == KindStopWithSavepoint }

// Status is a checkpoint's state in the statistics (CheckpointStatsStatus).
type Status int

const (
	// StatusInProgress: triggered, not every task acknowledged yet.
	StatusInProgress Status = 1 + iota
	// StatusCompleted: every task acknowledged before the timeout.
	StatusCompleted
	// StatusFailed: expired, declined, subsumed or aborted.
	StatusFailed
)

// String returns Flink's name: IN_PROGRESS, COMPLETED or FAILED ("UNKNOWN" otherwise).
func (s Status) String() string {
	switch s {
	case StatusInProgress:
		return "IN_PROGRESS"
	case StatusCompleted:
		return "COMPLETED"
	case StatusFailed:
		return "FAILED"
	}
	return "UNKNOWN"
}

// SourceOffset is one source split's position stored in a checkpoint: the offset of the
// next record to read (Kafka's committed-offset convention).
type SourceOffset struct {
	Split  string
	Offset int64
}

// TaskAck is what one task reports with its AcknowledgeCheckpoint (CheckpointMetrics and
// the size of its TaskStateSnapshot). Sizes are bytes, durations virtual ms, records a
// count; negative values are stored as given.
type TaskAck struct {
	// StateSizeBytes is the full size of the task's state (the "full" checkpoint size,
	// CheckpointMetrics.getTotalBytesPersisted).
	StateSizeBytes int64
	// IncrementalSizeBytes is what this checkpoint uploaded (the "checkpointed size",
	// CheckpointMetrics.getBytesPersistedOfThisCheckpoint); equals StateSizeBytes for full
	// snapshots.
	IncrementalSizeBytes int64
	// PersistedInFlightRecords and PersistedInFlightBytes are the in-flight data stored as
	// channel state by an unaligned checkpoint (records are the simulator's addition; Flink
	// reports bytes as persisted data).
	PersistedInFlightRecords int64
	PersistedInFlightBytes   int64
	// AlignmentDurationMs is the time from the task's first to its last barrier.
	AlignmentDurationMs int64
	// SyncDurationMs and AsyncDurationMs are the synchronous and asynchronous snapshot parts.
	SyncDurationMs  int64
	AsyncDurationMs int64
	// SourceOffsets are the split positions of a source task (nil for other tasks).
	SourceOffsets []SourceOffset
}

func (a TaskAck) clone() TaskAck {
	if a.SourceOffsets != nil {
		offs := make([]SourceOffset, len(a.SourceOffsets))
		copy(offs, a.SourceOffsets)
		sort.SliceStable(offs, func(i, j int) bool { return offs[i].Split < offs[j].Split })
		a.SourceOffsets = offs
	}
	return a
}

// TaskState is one task's acknowledgement inside a completed checkpoint.
type TaskState struct {
	Task string
	Ack  TaskAck
}

// CompletedCheckpoint is a checkpoint or savepoint every task acknowledged in time
// (org.apache.flink.runtime.checkpoint.CompletedCheckpoint with its
// CompletedCheckpointStats). It is a copy; changing it changes nothing in the coordinator.
type CompletedCheckpoint struct {
	ID   int64
	Kind Kind
	// TriggerMs is the checkpoint's timestamp (when it was triggered) and CompletionMs the
	// virtual time of the last acknowledgement, both ms.
	TriggerMs    int64
	CompletionMs int64
	// Sums over every task's acknowledgement (PendingCheckpointStats.reportSubtaskStats).
	StateSizeBytes           int64
	IncrementalSizeBytes     int64
	PersistedInFlightRecords int64
	PersistedInFlightBytes   int64
	// MaxAlignmentDurationMs is the largest AlignmentDurationMs of any task.
	MaxAlignmentDurationMs int64
	// NotifyTasks: send notifyCheckpointComplete to every task (sendAcknowledgeMessages).
	// True for checkpoints and stop-with-savepoint, false for a plain savepoint.
	NotifyTasks bool
	// Tasks holds every task's acknowledgement, sorted by task name; source offsets are
	// sorted by split.
	Tasks []TaskState
}

func (c *CompletedCheckpoint) clone() *CompletedCheckpoint {
	if c == nil {
		return nil
	}
	cp := *c
	cp.Tasks = make([]TaskState, len(c.Tasks))
	for i, t := range c.Tasks {
		cp.Tasks[i] = TaskState{Task: t.Task, Ack: t.Ack.clone()}
	}
	return &cp
}

// TriggerResult is the decision on one trigger request (CheckpointTriggerRequest): started
// with a new checkpoint id, declined with Flink's reason, or queued until the
// CheckpointRequestDecider lets it run.
type TriggerResult struct {
	// RequestID numbers trigger requests from 1 in submission order; it identifies a
	// queued request when its outcome arrives later in Ready.
	RequestID int64
	Kind      Kind
	// CheckpointID is the new checkpoint's id (> 0) when the request started; 0 otherwise.
	// Checkpoints and savepoints share one counter that starts at 1.
	CheckpointID int64
	// Savepoint is Kind.IsSavepoint().
	Savepoint bool
	// AtMs is the virtual time of the decision: the checkpoint's timestamp when started.
	AtMs int64
	// Queued: neither started nor declined yet; the outcome comes later in Ready.Triggered.
	Queued bool
	// Declined: the request failed before a checkpoint started; Reason is Flink's message
	// (FailureReason.Message) and FailureReason the reason.
	Declined      bool
	Reason        string
	FailureReason FailureReason
}

// FailedCheckpoint reports a pending checkpoint that failed (expired, declined, subsumed,
// aborted), or a queued request that was dropped by an abort-all.
type FailedCheckpoint struct {
	// CheckpointID is the failed checkpoint's id; 0 for a queued request that never
	// started (then RequestID says which).
	CheckpointID int64
	RequestID    int64
	Kind         Kind
	// TriggerMs is when the checkpoint was triggered (0 for a queued request) and FailureMs
	// when it failed, both virtual ms.
	TriggerMs int64
	FailureMs int64
	Reason    FailureReason
	// Message is Reason.Message(), the text of Flink's CheckpointException.
	Message string
	// Task is the declining task; "" when the coordinator decided (timeout, subsumption,
	// abort).
	Task string
	// NotifyTasks: send notifyCheckpointAborted to every task (sendAbortedMessages); true
	// whenever a checkpoint had started.
	NotifyTasks bool
	// JobFailure is non-empty when this failure must fail the job, with the message of
	// the exception Flink fails it with (CheckpointFailureManager): the tolerable-failure
	// threshold was exceeded, or a stop-with-savepoint failed on a task.
	JobFailure string
}

// CheckpointStats is one row of the checkpoint history (AbstractCheckpointStats and its
// Pending/Completed/FailedCheckpointStats, as DefaultCheckpointStatsTracker keeps them).
type CheckpointStats struct {
	ID     int64
	Kind   Kind
	Status Status
	// TriggerMs is the trigger time; EndMs the completion or failure time, -1 while in
	// progress.
	TriggerMs int64
	EndMs     int64
	// DurationMs is Flink's end-to-end duration: failure time - trigger time for a failed
	// checkpoint, latest acknowledgement - trigger time otherwise, -1 when in progress with
	// no acknowledgement yet.
	DurationMs int64
	// NumAcknowledged of NumTasks tasks have acknowledged.
	NumAcknowledged int
	NumTasks        int
	// Sums over the acknowledgements received (full state size, checkpointed/incremental
	// size, persisted in-flight data) and the largest alignment duration.
	StateSizeBytes           int64
	IncrementalSizeBytes     int64
	PersistedInFlightRecords int64
	PersistedInFlightBytes   int64
	MaxAlignmentDurationMs   int64
	// FailureReason and FailureMessage are set when Status is StatusFailed.
	FailureReason  FailureReason
	FailureMessage string
}

// Ready holds the side effects of calls that their own return value cannot carry: outcomes
// of queued trigger requests decided later (started or dropped), and pending checkpoints
// subsumed by a completed one or aborted by a scheduler restart. The caller takes them
// with Coordinator.TakeReady after each call, in the order they happened.
type Ready struct {
	Triggered []TriggerResult
	Failed    []FailedCheckpoint
}

// Empty reports whether there is nothing to act on.
func (r Ready) Empty() bool { return len(r.Triggered) == 0 && len(r.Failed) == 0 }
