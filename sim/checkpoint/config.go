package checkpoint

import (
	"errors"
	"fmt"
)

// Flink's defaults and limits for checkpointing (CheckpointingOptions in Flink 1.20,
// CheckpointCoordinatorConfiguration, CheckpointConfig).
const (
	// MinimalCheckpointTimeMs is CheckpointCoordinatorConfiguration.MINIMAL_CHECKPOINT_TIME:
	// the least interval and timeout, in ms.
	MinimalCheckpointTimeMs int64 = 10
	// DefaultTimeoutMs is execution.checkpointing.timeout's default, 10 min.
	DefaultTimeoutMs int64 = 10 * 60 * 1000
	// DefaultMaxConcurrent is execution.checkpointing.max-concurrent-checkpoints' default.
	DefaultMaxConcurrent = 1
	// maxMinPauseMs: the coordinator caps the min pause at one year to avoid overflow.
	maxMinPauseMs int64 = 365 * 24 * 60 * 60 * 1000
	// maxQueuedRequests is CheckpointRequestDecider.DEFAULT_MAX_QUEUED_REQUESTS.
	maxQueuedRequests = 1000
	// numGhostCheckpointIDs is CheckpointCoordinator.NUM_GHOST_CHECKPOINT_IDS: how many
	// expired checkpoint ids are remembered to tell late acknowledgements from unknown ones.
	numGhostCheckpointIDs = 16
)

// CoordinatorConfig is the job's checkpointing configuration as the coordinator sees it
// (CheckpointCoordinatorConfiguration). Every duration is virtual milliseconds. The zero
// value is Flink 1.20's default configuration: periodic checkpointing off, timeout 10 min,
// min pause 0, one checkpoint at a time, no tolerated failure, aligned checkpoints.
type CoordinatorConfig struct {
	// IntervalMs is execution.checkpointing.interval, the period of the periodic trigger.
	// 0 disables periodic checkpointing (Flink's default: the option is unset); otherwise
	// it must be at least 10. When smaller than MinPauseMs the coordinator uses MinPauseMs.
	IntervalMs int64
	// TimeoutMs is execution.checkpointing.timeout: a checkpoint not fully acknowledged
	// this long after its trigger expires. 0 means Flink's default, 10 min; otherwise at
	// least 10.
	TimeoutMs int64
	// MinPauseMs is execution.checkpointing.min-pause: the least time between the
	// completion of one checkpoint and the trigger of the next periodic one. 0 (default)
	// means no pause; negative is refused. Values above one year are capped at one year.
	MinPauseMs int64
	// MaxConcurrent is execution.checkpointing.max-concurrent-checkpoints: how many
	// checkpoints may be pending at once (forced savepoints excepted). 0 means Flink's
	// default, 1; negative is refused.
	MaxConcurrent int
	// TolerableFailures is execution.checkpointing.tolerable-failed-checkpoints: how many
	// consecutive counted failures are tolerated before the job must fail (default 0:
	// the first counted failure fails the job). Negative is refused.
	TolerableFailures int
	// Unaligned is execution.checkpointing.unaligned.enabled (default false). The
	// coordinator only uses it to decide whether savepoints are forced (a savepoint
	// bypasses MaxConcurrent only when unaligned checkpoints are off, as
	// CheckpointCoordinator.triggerSavepoint does with forSavepoint(!unaligned)). Flink
	// documents that unaligned checkpoints need MaxConcurrent 1; that is not enforced here.
	Unaligned bool
	// FinalizeMs is how long the coordinator takes to finalize a checkpoint
	// every task acknowledged (PendingCheckpoint.finalizeCheckpoint writes its
	// _metadata file under the coordinator's lock): it completes that much
	// after its last acknowledgement, which is when min-pause starts to
	// count and queued requests start. Negative counts as 0.
	FinalizeMs int64
}

// configError is an IllegalArgumentException's message from CheckpointConfig's setters.
type configError string

func (e configError) Error() string { return string(e) }

// Errors for invalid configurations, with the messages of Flink's CheckpointConfig setters.
var (
	ErrIntervalTooSmall      error = configError(fmt.Sprintf("Checkpoint interval must be larger than or equal to %d ms", MinimalCheckpointTimeMs))
	ErrTimeoutTooSmall       error = configError(fmt.Sprintf("Checkpoint timeout must be larger than or equal to %d ms", MinimalCheckpointTimeMs))
	ErrNegativeMinPause      error = configError("Pause value must be zero or positive")
	ErrMaxConcurrentTooSmall error = configError("The maximum number of concurrent attempts must be at least one.")
	ErrNegativeTolerable     error = configError("The tolerable failure checkpoint number must be non-negative.")
	// ErrNoTasks refuses a coordinator with nobody to acknowledge (not a Flink message:
	// Flink always has at least one task in a checkpoint plan).
	ErrNoTasks = errors.New("checkpoint coordinator needs at least one task to acknowledge")
	// ErrDuplicateTask refuses a task list naming a task twice.
	ErrDuplicateTask = errors.New("checkpoint coordinator task list names a task twice")
)

// normalized returns the configuration with zero values replaced by Flink's defaults, the
// min pause capped and the base interval raised to the min pause, or the first violated
// rule (CheckpointConfig setters, then CheckpointCoordinator's constructor).
func (c CoordinatorConfig) normalized() (CoordinatorConfig, error) {
	if c.IntervalMs < 0 || (c.IntervalMs > 0 && c.IntervalMs < MinimalCheckpointTimeMs) {
		return c, ErrIntervalTooSmall
	}
	if c.TimeoutMs == 0 {
		c.TimeoutMs = DefaultTimeoutMs
	}
	if c.TimeoutMs < MinimalCheckpointTimeMs {
		return c, ErrTimeoutTooSmall
	}
	if c.MinPauseMs < 0 {
		return c, ErrNegativeMinPause
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.MaxConcurrent < 1 {
		return c, ErrMaxConcurrentTooSmall
	}
	if c.TolerableFailures < 0 {
		return c, ErrNegativeTolerable
	}
	if c.MinPauseMs > maxMinPauseMs {
		c.MinPauseMs = maxMinPauseMs
	}
	if c.IntervalMs > 0 && c.IntervalMs < c.MinPauseMs {
		// "it does not make sense to schedule checkpoints more often then the desired time
		// between checkpoints" (CheckpointCoordinator constructor)
		c.IntervalMs = c.MinPauseMs
	}
	return c, nil
}

// InitialDelayRange returns the bounds, in ms and both inclusive, of the delay before the
// first periodic trigger: Flink draws it uniformly from [min pause, base interval]
// (CheckpointCoordinator.getRandomInitDelay). The caller draws from its own seeded generator
// and passes the value to Coordinator.StartScheduler. ok is false when the configuration is
// invalid or periodic checkpointing is off.
func (c CoordinatorConfig) InitialDelayRange() (lo, hi int64, ok bool) {
	n, err := c.normalized()
	if err != nil || n.IntervalMs == 0 {
		return 0, 0, false
	}
	return n.MinPauseMs, n.IntervalMs, true
}
