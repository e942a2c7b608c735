package eventlog

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/logenc"
)

// Event is a typed log event: a flat struct of its fields that its
// producer hands to kernel.Out.Log and that stays as it is until its line
// is written (AppendJSON, straight to the line's bytes: Writer.Write), so
// that no field object is made on the step path. Observers (the summary,
// the terminal view, the UI, the swarm, tests) get it back with Decode and
// read its fields as Go fields. Every kind's payload is tested against
// the line zerolog wrote from its proto fields (typed_test.go).
type Event = kernel.Payload

// LogEvent is one event of the log as the scheduler hands it on: when,
// who, and its typed body.
type LogEvent = kernel.Event

// F is an event given as proto fields (kernel.Fields): for a test, or a
// line read back from a log.
func F(kind Kind, fields ...*messages.Field) kernel.Fields {
	return kernel.Fields{K: kind, List: fields}
}

// Decode returns the typed form of ev: its payload as its producer made
// it, or, for one that came as fields or as JSON text (a log read back, the
// remote transport), the typed payload of its kind read from them; nil for
// such an event of a kind that has no type: it is read through FieldsOf.
func Decode(ev *LogEvent) Event {
	switch b := ev.Body.(type) {
	case kernel.Fields:
		return decodeFields(b.K, b.List)
	case kernel.RawJSON:
		return decodeFields(b.K, ParseFields(b.JSON))
	}
	return ev.Body
}

// decodeFields reads the typed event of kind from its fields.
func decodeFields(kind Kind, list []*messages.Field) Event {
	f := fields(list)
	switch kind {
	case KindJobStatus:
		return JobStatus{JobID: f.str("job_id"), Status: f.str("status"), Previous: f.str("previous"), Cause: f.str("cause")}
	case KindOutputView:
		return OutputView{Topic: f.str("topic"), FromOffset: f.int("from_offset")}
	case KindActionIgnored:
		return ActionIgnored{Action: f.str("action"), Reason: f.str("reason")}
	case KindAction:
		return Action{Action: f.str("action"), To: f.str("to")}
	case KindWindowFired:
		return WindowFired{Key: f.str("key"), WindowStart: f.int("window_start"), WindowEnd: f.int("window_end"),
			Value: f.float("value"), Firing: f.int("firing"), Watermark: f.int("watermark")}
	case KindOutputIsolation:
		return OutputIsolation{IsolationLevel: f.str("isolation_level")}
	case KindFailure:
		return Failure{Invariant: f.str("invariant"), What: f.str("what")}
	case KindFinal:
		return finalCountersOf(list)
	case KindTaskMetrics:
		return taskMetricsOf(f)
	case KindLateSideOutput:
		return LateSideOutput{Key: f.str("key"), Timestamp: f.int("timestamp")}
	case KindCheckpointTriggered:
		return CheckpointTriggered{CheckpointID: f.int("checkpoint_id"), CheckpointKind: f.str("kind"), TimestampMs: f.int("timestamp_ms"),
			Unaligned: f.get("unaligned").GetBool()}
	case KindCheckpointCompleted:
		return CheckpointCompleted{CheckpointID: f.int("checkpoint_id"), CheckpointKind: f.str("kind"), DurationMs: f.int("duration_ms"),
			StateSize: f.int("state_size"), CheckpointedSize: f.int("checkpointed_size"), PersistedRecords: f.int("persisted_records"),
			PersistedBytes: f.int("persisted_bytes"), MaxAlignmentMs: f.int("max_alignment_ms"),
			SourceOffsets: f.get("source_offsets").GetRawJson(), Tasks: f.get("tasks").GetRawJson(), SavepointPath: f.str("savepoint_path")}
	case KindCheckpointFailed:
		return CheckpointFailed{CheckpointID: f.int("checkpoint_id"), CheckpointKind: f.str("kind"), Reason: f.str("reason"),
			Message: f.str("message"), Task: f.str("task")}
	case KindRestore:
		return Restore{From: f.str("from"), CheckpointID: f.int("checkpoint_id"), Reason: f.str("reason")}
	case KindBacklogAnnouncement:
		return BacklogAnnouncement{Producer: f.str("producer"), Backlog: f.int("backlog"), FreeBuffers: f.int("free_buffers"),
			BuffersInUse: f.int("buffers_in_use"), FloatingBuffers: f.int("floating_buffers")}
	case KindNetworkPartition:
		return NetworkPartition{HostA: f.str("host_a"), HostB: f.str("host_b"), DurationMs: f.int("duration_ms"), Action: f.str("action")}
	case KindHostStalled:
		return HostStalled{Host: f.str("host"), DurationMs: f.int("duration_ms"), Action: f.str("action")}
	case KindHostResumed:
		return HostResumed{Host: f.str("host"), HeldEnvelopes: f.int("held_envelopes"), RunEnded: f.get("run_ended").GetBool()}
	case KindNetworkJitter:
		return NetworkJitter{DurationMs: f.int("duration_ms"), MaxJitterUs: f.int("max_jitter_us"), Action: f.str("action")}
	case KindNetworkJitterEnded:
		return NetworkJitterEnded{JitteredEnvelopes: f.int("jittered_envelopes"), RunEnded: f.get("run_ended").GetBool()}
	case KindRPCLost:
		return RPCLost{RPC: f.str("rpc"), From: f.str("from"), To: f.str("to")}
	case KindRPCLossUnused:
		return RPCLossUnused{RPC: f.str("rpc"), RunEnded: f.get("run_ended").GetBool()}
	case KindStorageUnavailable:
		return StorageUnavailable{DurationMs: f.int("duration_ms"), Action: f.str("action")}
	case KindStorageAvailable:
		return StorageAvailable{FailedUploads: f.int("failed_uploads"), RunEnded: f.get("run_ended").GetBool()}
	case KindUploadFailed:
		return UploadFailed{Task: f.str("task"), CheckpointID: f.int("checkpoint_id")}
	case KindKafkaUnavailable:
		return KafkaUnavailable{Host: f.str("host"), DurationMs: f.int("duration_ms"), Action: f.str("action")}
	case KindKafkaAvailable:
		return KafkaAvailable{Host: f.str("host"), HeldEnvelopes: f.int("held_envelopes"), RunEnded: f.get("run_ended").GetBool()}
	case KindNetworkPartitionHealed:
		return NetworkPartitionHealed{HostA: f.str("host_a"), HostB: f.str("host_b"), DroppedEnvelopes: f.int("dropped_envelopes"),
			ConnectionsLost: f.int("connections_lost"), RunEnded: f.get("run_ended").GetBool()}
	case KindChannelError:
		return ChannelError{Producer: f.str("producer"), ConnectionID: f.str("connection_id"), Cause: f.str("cause")}
	}
	if e := decodeShaped(kind, f); e != nil {
		return e
	}
	return decodeSimple(kind, f)
}

// Kinds of the network partitions and the scheduler's other faults (logged
// by the scheduler, sim/kernel) and of their effect on a data connection
// (logged by the input channel).
const (
	KindNetworkPartition       Kind = "network_partition"
	KindNetworkPartitionHealed Kind = "network_partition_healed"
	KindChannelError           Kind = "channel_error"
	KindHostStalled            Kind = kernel.KindHostStalled
	KindHostResumed            Kind = kernel.KindHostResumed
	KindNetworkJitter          Kind = kernel.KindNetworkJitter
	KindNetworkJitterEnded     Kind = kernel.KindJitterEnded
	KindRPCLost                Kind = kernel.KindRPCLost
	KindRPCLossUnused          Kind = kernel.KindRPCLossUnused
	KindStorageUnavailable     Kind = kernel.KindStorageUnavailable
	KindStorageAvailable       Kind = kernel.KindStorageAvailable
	KindUploadFailed           Kind = kernel.KindUploadFailed
	KindKafkaUnavailable       Kind = kernel.KindKafkaUnavailable
	KindKafkaAvailable         Kind = kernel.KindKafkaAvailable
)

// KindAction is a live user action, logged by the scheduler when it is
// delivered (a UI session's or a replayed one's; actions of the header are
// not logged again).
const KindAction = kernel.KindAction

// The scheduler's own events (sim/kernel).
type (
	Action                 = kernel.Action
	ActionIgnored          = kernel.ActionIgnored
	Failure                = kernel.Failure
	NetworkPartition       = kernel.NetworkPartition
	NetworkPartitionHealed = kernel.NetworkPartitionHealed
	HostStalled            = kernel.HostStalled
	HostResumed            = kernel.HostResumed
	NetworkJitter          = kernel.NetworkJitter
	NetworkJitterEnded     = kernel.NetworkJitterEnded
	RPCLost                = kernel.RPCLost
	RPCLossUnused          = kernel.RPCLossUnused
	StorageUnavailable     = kernel.StorageUnavailable
	StorageAvailable       = kernel.StorageAvailable
	UploadFailed           = kernel.UploadFailed
	KafkaUnavailable       = kernel.KafkaUnavailable
	KafkaAvailable         = kernel.KafkaAvailable
)

// JobStatus is a job status transition (JobStatus in Flink:
// org.apache.flink.api.common.JobStatus).
type JobStatus struct {
	JobID    string
	Status   string // CREATED, RUNNING, RESTARTING, FAILING, FAILED, FINISHED, CANCELED
	Previous string // "" for the first status of a job
	Cause    string // "" when there is none
}

// Kind is KindJobStatus.
func (JobStatus) Kind() Kind { return KindJobStatus }

// AppendJSON appends the JobStatus event's fields to b in the log's order.
func (e JobStatus) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "job_id", e.JobID)
	b = logenc.Str(b, "status", e.Status)
	if e.Previous != "" {
		b = logenc.Str(b, "previous", e.Previous)
	}
	if e.Cause != "" {
		b = logenc.Str(b, "cause", e.Cause)
	}
	return b
}

// OutputView says where a job started from a savepoint begins to write: a
// consumer of its output reads the sink topic from FromOffset.
type OutputView struct {
	Topic      string
	FromOffset int64
}

// Kind is KindOutputView.
func (OutputView) Kind() Kind { return KindOutputView }

// AppendJSON appends the OutputView event's fields to b in the log's order.
func (e OutputView) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "topic", e.Topic)
	b = logenc.Int(b, "from_offset", e.FromOffset)
	return b
}

// WindowFired is one firing of a window (WindowOperator emitting a result).
type WindowFired struct {
	Key                    string
	WindowStart, WindowEnd int64 // ms
	Value                  float64
	Firing                 int64 // 1, then 2.. for late firings
	Watermark              int64 // the operator's watermark when it fired (ms)
}

// Kind is KindWindowFired.
func (WindowFired) Kind() Kind { return KindWindowFired }

// AppendJSON appends the WindowFired event's fields to b in the log's order.
func (e WindowFired) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "key", e.Key)
	b = logenc.Int(b, "window_start", e.WindowStart)
	b = logenc.Int(b, "window_end", e.WindowEnd)
	b = logenc.Float(b, "value", e.Value)
	b = logenc.Int(b, "firing", e.Firing)
	b = logenc.Int(b, "watermark", e.Watermark)
	return b
}

// OutputIsolation is a change of the output consumer's isolation.level
// (sim.output.isolation-level): it changes only which sink records the
// output view shows.
type OutputIsolation struct {
	IsolationLevel string // read_uncommitted or read_committed
}

// Kind is KindOutputIsolation.
func (OutputIsolation) Kind() Kind { return KindOutputIsolation }

// AppendJSON appends the OutputIsolation event's fields to b in the log's order.
func (e OutputIsolation) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "isolation_level", e.IsolationLevel)
	return b
}

// LateSideOutput is a record too late for every window it falls into, sent
// to the late side output (WindowOperator.sideOutput).
type LateSideOutput struct {
	Key       string
	Timestamp int64 // ms
}

// Kind is KindLateSideOutput.
func (LateSideOutput) Kind() Kind { return KindLateSideOutput }

// AppendJSON appends the LateSideOutput event's fields to b in the log's order.
func (e LateSideOutput) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "key", e.Key)
	b = logenc.Int(b, "timestamp", e.Timestamp)
	return b
}

// CheckpointTriggered is the CheckpointCoordinator starting a checkpoint
// or savepoint (CheckpointKind: periodic, manual, savepoint,
// stop-with-savepoint) at TimestampMs (virtual ms).
type CheckpointTriggered struct {
	CheckpointID   int64
	CheckpointKind string
	TimestampMs    int64
	Unaligned      bool
}

// Kind is KindCheckpointTriggered.
func (CheckpointTriggered) Kind() Kind { return KindCheckpointTriggered }

// AppendJSON appends the CheckpointTriggered event's fields to b in the log's order.
func (e CheckpointTriggered) AppendJSON(b []byte) []byte {
	b = logenc.Int(b, "checkpoint_id", e.CheckpointID)
	b = logenc.Str(b, "kind", e.CheckpointKind)
	b = logenc.Int(b, "timestamp_ms", e.TimestampMs)
	b = logenc.Bool(b, "unaligned", e.Unaligned)
	return b
}

// CheckpointCompleted is a checkpoint or savepoint the coordinator
// completed (CheckpointKind: periodic, manual, savepoint,
// stop-with-savepoint): its duration (ms), full and checkpointed sizes and
// persisted in-flight data (bytes), longest alignment (ms), the source
// offsets it stored (a JSON array) and, for a savepoint, its path.
type CheckpointCompleted struct {
	CheckpointID                                     int64
	CheckpointKind                                   string
	DurationMs, StateSize, CheckpointedSize          int64
	PersistedRecords, PersistedBytes, MaxAlignmentMs int64
	SourceOffsets                                    string // raw JSON, "" when absent
	Tasks                                            string // raw JSON: each task's part, "" when absent
	SavepointPath                                    string // "" for a checkpoint
}

// Kind is KindCheckpointCompleted.
func (CheckpointCompleted) Kind() Kind { return KindCheckpointCompleted }

// AppendJSON appends the CheckpointCompleted event's fields to b in the log's order.
func (e CheckpointCompleted) AppendJSON(b []byte) []byte {
	b = logenc.Int(b, "checkpoint_id", e.CheckpointID)
	b = logenc.Str(b, "kind", e.CheckpointKind)
	b = logenc.Int(b, "duration_ms", e.DurationMs)
	b = logenc.Int(b, "state_size", e.StateSize)
	b = logenc.Int(b, "checkpointed_size", e.CheckpointedSize)
	b = logenc.Int(b, "persisted_records", e.PersistedRecords)
	b = logenc.Int(b, "persisted_bytes", e.PersistedBytes)
	b = logenc.Int(b, "max_alignment_ms", e.MaxAlignmentMs)
	if e.SourceOffsets != "" {
		b = logenc.Raw(b, "source_offsets", e.SourceOffsets)
	}
	if e.Tasks != "" {
		b = logenc.Raw(b, "tasks", e.Tasks)
	}
	if e.SavepointPath != "" {
		b = logenc.Str(b, "savepoint_path", e.SavepointPath)
	}
	return b
}

// CheckpointFailed is a checkpoint or savepoint that failed (Reason:
// CheckpointFailureReason's name; Task: the task that declined it, if one
// did).
type CheckpointFailed struct {
	CheckpointID                    int64
	CheckpointKind, Reason, Message string
	Task                            string
}

// Kind is KindCheckpointFailed.
func (CheckpointFailed) Kind() Kind { return KindCheckpointFailed }

// AppendJSON appends the CheckpointFailed event's fields to b in the log's order.
func (e CheckpointFailed) AppendJSON(b []byte) []byte {
	b = logenc.Int(b, "checkpoint_id", e.CheckpointID)
	b = logenc.Str(b, "kind", e.CheckpointKind)
	b = logenc.Str(b, "reason", e.Reason)
	b = logenc.Str(b, "message", e.Message)
	if e.Task != "" {
		b = logenc.Str(b, "task", e.Task)
	}
	return b
}

// Restore is what a new attempt of the job starts from: From "checkpoint"
// (the latest completed one, CheckpointID) or "starting offsets" (none
// completed; Reason says so).
type Restore struct {
	From         string
	CheckpointID int64
	Reason       string
}

// Kind is KindRestore.
func (Restore) Kind() Kind { return KindRestore }

// AppendJSON appends the Restore event's fields to b in the log's order.
func (e Restore) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "from", e.From)
	if e.From == "checkpoint" {
		b = logenc.Int(b, "checkpoint_id", e.CheckpointID)
	}
	if e.Reason != "" {
		b = logenc.Str(b, "reason", e.Reason)
	}
	return b
}

// BacklogAnnouncement is an input channel hearing a producer's backlog
// without credit, with its own buffer counts.
type BacklogAnnouncement struct {
	Producer                                            string
	Backlog, FreeBuffers, BuffersInUse, FloatingBuffers int64
}

// Kind is KindBacklogAnnouncement.
func (BacklogAnnouncement) Kind() Kind { return KindBacklogAnnouncement }

// AppendJSON appends the BacklogAnnouncement event's fields to b in the log's order.
func (e BacklogAnnouncement) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "producer", e.Producer)
	b = logenc.Int(b, "backlog", e.Backlog)
	b = logenc.Int(b, "free_buffers", e.FreeBuffers)
	b = logenc.Int(b, "buffers_in_use", e.BuffersInUse)
	b = logenc.Int(b, "floating_buffers", e.FloatingBuffers)
	return b
}

// ChannelError is a remote input channel whose connection to its producer
// broke: it fails its task with Cause.
type ChannelError struct {
	Producer, ConnectionID, Cause string
}

// Kind is KindChannelError.
func (ChannelError) Kind() Kind { return KindChannelError }

// AppendJSON appends the ChannelError event's fields to b in the log's order.
func (e ChannelError) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "producer", e.Producer)
	b = logenc.Str(b, "connection_id", e.ConnectionID)
	b = logenc.Str(b, "cause", e.Cause)
	return b
}
