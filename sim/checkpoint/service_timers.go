package checkpoint

import "github.com/flinksim/flinksim/messages"

// Timer kinds (messages.TimerKind) of this package's components, one per
// self-envelope purpose.
const (
	timerCheckpointDuty = messages.TimerKind_TIMER_CHECKPOINT           // the CheckpointCoordinator's trigger and timeout duties
	timerFinalized      = messages.TimerKind_TIMER_CHECKPOINT_FINALIZED // the end of a checkpoint's metadata write
)
