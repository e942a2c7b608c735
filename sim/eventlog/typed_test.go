package eventlog

import (
	"reflect"
	"testing"

	"github.com/flinksim/flinksim/messages"
)

// Every typed event decodes back from its own fields.
func TestTypedEventsRoundTrip(t *testing.T) {
	for _, e := range []Event{
		JobStatus{JobID: "job-1", Status: "RUNNING", Previous: "CREATED", Cause: "x"},
		OutputView{Topic: "out", FromOffset: 7},
		ActionIgnored{Action: "at=1s rescale 2", Reason: "why"},
		Action{Action: "at=1s trigger-checkpoint", To: "jobmanager"},
		WindowFired{Key: "k", WindowStart: 0, WindowEnd: 5000, Value: 3, Firing: 1, Watermark: 4999},
		OutputIsolation{IsolationLevel: "read_committed"},
		Failure{Invariant: "credit_non_negative", What: "w"},
		TaskMetrics{BusyTimeMsPerSecond: 1, BackPressuredTimeMsPerSecond: 2, IdleTimeMsPerSecond: 997, NumRecordsIn: 4, NumRecordsOut: 5},
		TaskMetrics{Watermark: 42, HasWatermark: true, InputWatermark: true},
		TaskMetrics{Watermark: -9, HasWatermark: true},
		LateSideOutput{Key: "k", Timestamp: 12},
		CheckpointCompleted{CheckpointID: 3, CheckpointKind: "periodic"},
		CheckpointCompleted{CheckpointID: 5, CheckpointKind: "savepoint", DurationMs: 4, StateSize: 472, CheckpointedSize: 100,
			PersistedRecords: 3, PersistedBytes: 300, MaxAlignmentMs: 2, SourceOffsets: `[{"split":"orders-0","offset":1}]`,
			SavepointPath: "file:/flinksim/savepoints/savepoint-5"},
		CheckpointTriggered{CheckpointID: 6, CheckpointKind: "manual", TimestampMs: 1234, Unaligned: true},
		CheckpointFailed{CheckpointID: 7, CheckpointKind: "periodic", Reason: "CHECKPOINT_EXPIRED", Message: "m", Task: "window-0"},
		CheckpointFailed{CheckpointID: 8, CheckpointKind: "periodic", Reason: "r", Message: "m"},
		Restore{From: "checkpoint", CheckpointID: 4},
		Restore{From: "starting offsets", Reason: "no completed checkpoint"},
		CheckpointSnapshot{CheckpointID: 3, CheckpointKind: "savepoint"},
		CheckpointSnapshot{CheckpointID: 4, CheckpointKind: "checkpoint", Unaligned: true, StateSize: 900, CheckpointedSize: 300,
			PersistedRecords: 6, AlignmentMs: 12},
		SubmitTask{Task: "window-0#1", Attempt: 1, TaskManager: "tm-2"},
		BacklogAnnouncement{Producer: "source-0", Backlog: 3, FreeBuffers: 0, BuffersInUse: 2, FloatingBuffers: 1},
		Failover{Cause: "c", Restart: true, Restarts: 2},
		NoResourceAvailable{SlotsNeeded: 4, SlotsOffered: 2},
		NetworkPartition{HostA: "tm-1", HostB: "jobmanager", DurationMs: 3000, Action: "at=1s partition-network tm-1 jobmanager for 3s"},
		NetworkPartitionHealed{HostA: "tm-1", HostB: "tm-2", DroppedEnvelopes: 10, ConnectionsLost: 4, RunEnded: true},
		ChannelError{Producer: "source-1", ConnectionID: "tm-2:data#0", Cause: "RemoteTransportException"},
		HeartbeatTimeout{TaskManager: "tm-1", Cause: "c"},
		HeartbeatTimeout{JobManager: "jobmanager", Cause: "c"},
		TaskState{Task: "window-0#2", State: "FAILED", Reason: "r"},
		TaskState{Task: "source-1", State: "RUNNING"},
		HostStalled{Host: "tm-3", DurationMs: 9000},
		RPCLost{RPC: "acknowledge-checkpoint", From: "window-1#1", To: "checkpoint-coordinator"},
	} {
		got := Decode(&messages.LogEvent{Kind: string(e.Kind()), Fields: e.Fields()})
		if !reflect.DeepEqual(got, e) {
			t.Errorf("%s: decoded %+v, want %+v", e.Kind(), got, e)
		}
	}
}
