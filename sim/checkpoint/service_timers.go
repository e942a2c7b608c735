package checkpoint

// Timer kinds (messages.Timer.Kind) of this package's components, one per
// self-envelope purpose.
const (
	timerCheckpoint = "checkpoint" // the CheckpointCoordinator's trigger and timeout duties
)
