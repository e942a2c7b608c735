package checkpoint

import (
	"encoding/json"

	"github.com/flinksim/flinksim/sim/vt"
)

// CheckpointCoordinatorView is the CheckpointCoordinator: counts, the
// recent checkpoints and savepoints (DefaultCheckpointStatsTracker's
// history), and what a restore would use.
type CheckpointCoordinatorView struct {
	JobID      string           `json:"jid"`
	Completed  int64            `json:"completed"`
	Failed     int64            `json:"failed"`
	InProgress int              `json:"in_progress"`
	Latest     int64            `json:"latest_completed"` // 0: none
	Savepoint  int64            `json:"latest_savepoint"` // 0: none
	History    []CheckpointView `json:"history"`          // the last 20, oldest first
}

// CheckpointView is one checkpoint of the history.
type CheckpointView struct {
	ID                       int64  `json:"id"`
	Kind                     string `json:"kind"`
	Status                   string `json:"status"`
	TriggerMs                int64  `json:"trigger_timestamp"`
	EndMs                    int64  `json:"latest_ack_timestamp"`
	DurationMs               int64  `json:"end_to_end_duration"`
	NumAcknowledged          int    `json:"num_acknowledged_subtasks"`
	NumTasks                 int    `json:"num_subtasks"`
	StateSize                int64  `json:"state_size"`
	CheckpointedSize         int64  `json:"checkpointed_size"`
	PersistedInFlightRecords int64  `json:"persisted_records"`
	PersistedData            int64  `json:"persisted_data"`
	AlignmentMs              int64  `json:"alignment_duration"`
	FailureMessage           string `json:"failure_message,omitempty"`
	SourceOffsets            any    `json:"source_offsets,omitempty"`
}

// Inspect implements kernel.Inspector.
func (c *Service) Inspect(now vt.Time) any {
	v := &CheckpointCoordinatorView{JobID: c.jobID, Completed: c.completed, Failed: c.failed}
	if c.latest != nil {
		v.Latest = c.latest.ID
	}
	if c.savepoint != nil {
		v.Savepoint = c.savepoint.ID
	}
	if c.coord == nil {
		return v
	}
	v.InProgress = len(c.coord.Pending())
	h := c.coord.History()
	for _, st := range h[max(0, len(h)-20):] {
		cv := CheckpointView{ID: st.ID, Kind: st.Kind.String(), Status: st.Status.String(), TriggerMs: st.TriggerMs, EndMs: st.EndMs,
			DurationMs: st.DurationMs, NumAcknowledged: st.NumAcknowledged, NumTasks: st.NumTasks, StateSize: st.StateSizeBytes,
			CheckpointedSize: st.IncrementalSizeBytes, PersistedInFlightRecords: st.PersistedInFlightRecords,
			PersistedData: st.PersistedInFlightBytes, AlignmentMs: st.MaxAlignmentDurationMs, FailureMessage: st.FailureMessage}
		if o, ok := c.offsets[st.ID]; ok {
			cv.SourceOffsets = json.RawMessage(o)
		}
		v.History = append(v.History, cv)
	}
	return v
}
