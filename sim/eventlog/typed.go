package eventlog

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/kernel"
)

// Event is a typed log event: producers build one and log its Fields;
// observers (the summary, the terminal view, the UI, tests) get it back
// with Decode instead of reading fields by name. Each type's Fields and its
// decoder are tested against each other (typed_test.go).
type Event interface {
	Kind() Kind
	Fields() []*messages.Field
}

// Decode returns the typed form of ev, or nil for a kind that has no type
// (yet): such events are read through their fields.
func Decode(ev *messages.LogEvent) Event {
	f := fieldsOf(ev)
	switch Kind(ev.Kind) {
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
		return FinalCounters{List: ev.Fields}
	case KindTaskMetrics:
		m := TaskMetrics{BusyTimeMsPerSecond: f.int("busyTimeMsPerSecond"),
			BackPressuredTimeMsPerSecond: f.int("backPressuredTimeMsPerSecond"),
			IdleTimeMsPerSecond:          f.int("idleTimeMsPerSecond"),
			NumRecordsIn:                 f.int("numRecordsIn"), NumRecordsOut: f.int("numRecordsOut")}
		if x := f.get("currentInputWatermark"); x != nil {
			m.Watermark, m.HasWatermark, m.InputWatermark = x.GetInt(), true, true
		} else if x := f.get("currentOutputWatermark"); x != nil {
			m.Watermark, m.HasWatermark = x.GetInt(), true
		}
		return m
	case KindLateSideOutput:
		return LateSideOutput{Key: f.str("key"), Timestamp: f.int("timestamp")}
	case KindCheckpointTriggered:
		return CheckpointTriggered{CheckpointID: f.int("checkpoint_id"), CheckpointKind: f.str("kind"), TimestampMs: f.int("timestamp_ms"),
			Unaligned: f.get("unaligned").GetBool()}
	case KindCheckpointCompleted:
		return CheckpointCompleted{CheckpointID: f.int("checkpoint_id"), CheckpointKind: f.str("kind"), DurationMs: f.int("duration_ms"),
			StateSize: f.int("state_size"), CheckpointedSize: f.int("checkpointed_size"), PersistedRecords: f.int("persisted_records"),
			PersistedBytes: f.int("persisted_bytes"), MaxAlignmentMs: f.int("max_alignment_ms"),
			SourceOffsets: f.get("source_offsets").GetRawJson(), SavepointPath: f.str("savepoint_path")}
	case KindCheckpointFailed:
		return CheckpointFailed{CheckpointID: f.int("checkpoint_id"), CheckpointKind: f.str("kind"), Reason: f.str("reason"),
			Message: f.str("message"), Task: f.str("task")}
	case KindRestore:
		return Restore{From: f.str("from"), CheckpointID: f.int("checkpoint_id"), Reason: f.str("reason")}
	case KindCheckpointSnapshot:
		return CheckpointSnapshot{CheckpointID: f.int("checkpoint_id"), CheckpointKind: f.str("kind"),
			Unaligned: f.get("unaligned").GetBool(), StateSize: f.int("state_size"), CheckpointedSize: f.int("checkpointed_size"),
			PersistedRecords: f.int("persisted_records"), AlignmentMs: f.int("alignment_ms")}
	case KindSubmitTask:
		return SubmitTask{Task: f.str("task"), Attempt: f.int("attempt"), TaskManager: f.str("task_manager")}
	case KindBacklogAnnouncement:
		return BacklogAnnouncement{Producer: f.str("producer"), Backlog: f.int("backlog"), FreeBuffers: f.int("free_buffers"),
			BuffersInUse: f.int("buffers_in_use"), FloatingBuffers: f.int("floating_buffers")}
	case KindFailover:
		return Failover{Cause: f.str("cause"), Restart: f.get("restart").GetBool(), Restarts: f.int("restarts")}
	case KindNoResourceAvailable:
		return NoResourceAvailable{SlotsNeeded: f.int("slots_needed"), SlotsOffered: f.int("slots_offered")}
	case KindNetworkPartition:
		return NetworkPartition{HostA: f.str("host_a"), HostB: f.str("host_b"), DurationMs: f.int("duration_ms"), Action: f.str("action")}
	case KindNetworkPartitionHealed:
		return NetworkPartitionHealed{HostA: f.str("host_a"), HostB: f.str("host_b"), DroppedEnvelopes: f.int("dropped_envelopes"),
			ConnectionsLost: f.int("connections_lost"), RunEnded: f.get("run_ended").GetBool()}
	case KindTaskState:
		return TaskState{Task: f.str("task"), State: f.str("state"), Reason: f.str("reason")}
	case KindHostStalled:
		return HostStalled{Host: f.str("host"), DurationMs: f.int("duration_ms")}
	case KindRPCLost:
		return RPCLost{RPC: f.str("rpc"), From: f.str("from"), To: f.str("to")}
	case KindChannelError:
		return ChannelError{Producer: f.str("producer"), ConnectionID: f.str("connection_id"), Cause: f.str("cause")}
	case KindHeartbeatTimeout:
		return HeartbeatTimeout{TaskManager: f.str("task_manager"), JobManager: f.str("job_manager"),
			ResourceManager: f.str("resource_manager"), Cause: f.str("cause")}
	}
	return nil
}

// Kinds of the network partitions and the scheduler's other faults (logged
// by the scheduler, sim/kernel) and of their effect on a data connection
// (logged by the input channel).
const (
	KindHostStalled        Kind = "host_stalled"
	KindHostResumed        Kind = "host_resumed"
	KindNetworkJitter      Kind = "network_jitter"
	KindNetworkJitterEnded Kind = "network_jitter_ended"
	KindRPCLost            Kind = "rpc_lost"
	KindRPCLossUnused      Kind = "rpc_loss_unused"

	KindNetworkPartition       Kind = "network_partition"
	KindNetworkPartitionHealed Kind = "network_partition_healed"
	KindChannelError           Kind = "channel_error"
)

// KindAction is a live user action, logged by the scheduler when it is
// delivered (a UI session's or a replayed one's; actions of the header are
// not logged again).
const KindAction = kernel.KindAction

// JobStatus is a job status transition (JobStatus in Flink:
// org.apache.flink.api.common.JobStatus).
type JobStatus struct {
	JobID    string
	Status   string // CREATED, RUNNING, RESTARTING, FAILING, FAILED, FINISHED, CANCELED
	Previous string // "" for the first status of a job
	Cause    string // "" when there is none
}

func (JobStatus) Kind() Kind { return KindJobStatus }

func (e JobStatus) Fields() []*messages.Field {
	fs := []*messages.Field{messages.Str("job_id", e.JobID), messages.Str("status", e.Status)}
	if e.Previous != "" {
		fs = append(fs, messages.Str("previous", e.Previous))
	}
	if e.Cause != "" {
		fs = append(fs, messages.Str("cause", e.Cause))
	}
	return fs
}

// OutputView says where a job started from a savepoint begins to write: a
// consumer of its output reads the sink topic from FromOffset.
type OutputView struct {
	Topic      string
	FromOffset int64
}

func (OutputView) Kind() Kind { return KindOutputView }

func (e OutputView) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("topic", e.Topic), messages.Int("from_offset", e.FromOffset)}
}

// ActionIgnored is a user action that was not carried out, and why.
type ActionIgnored struct {
	Action string // the action's text
	Reason string
}

func (ActionIgnored) Kind() Kind { return KindActionIgnored }

func (e ActionIgnored) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("action", e.Action), messages.Str("reason", e.Reason)}
}

// Action is a live user action, delivered to To.
type Action struct {
	Action string // the action's text, with its at=
	To     string // the actor it was delivered to
}

func (Action) Kind() Kind { return KindAction }

func (e Action) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("action", e.Action), messages.Str("to", e.To)}
}

// WindowFired is one firing of a window (WindowOperator emitting a result).
type WindowFired struct {
	Key                    string
	WindowStart, WindowEnd int64 // ms
	Value                  float64
	Firing                 int64 // 1, then 2.. for late firings
	Watermark              int64 // the operator's watermark when it fired (ms)
}

func (WindowFired) Kind() Kind { return KindWindowFired }

func (e WindowFired) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("key", e.Key), messages.Int("window_start", e.WindowStart),
		messages.Int("window_end", e.WindowEnd), messages.Float("value", e.Value), messages.Int("firing", e.Firing),
		messages.Int("watermark", e.Watermark)}
}

// OutputIsolation is a change of the output consumer's isolation.level
// (sim.output.isolation-level): it changes only which sink records the
// output view shows.
type OutputIsolation struct {
	IsolationLevel string // read_uncommitted or read_committed
}

func (OutputIsolation) Kind() Kind { return KindOutputIsolation }

func (e OutputIsolation) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("isolation_level", e.IsolationLevel)}
}

// Failure is a broken invariant that ended the run.
type Failure struct {
	Invariant string
	What      string
}

func (Failure) Kind() Kind { return KindFailure }

func (e Failure) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("invariant", e.Invariant), messages.Str("what", e.What)}
}

// FinalCounters are an actor's counters when it finishes or the run ends,
// in the order its producer logged them.
type FinalCounters struct {
	List []*messages.Field
}

func (FinalCounters) Kind() Kind { return KindFinal }

func (e FinalCounters) Fields() []*messages.Field { return e.List }

// Ints calls f for every integer counter, in order.
func (e FinalCounters) Ints(f func(key string, v int64)) {
	for _, x := range e.List {
		if v, ok := x.Value.(*messages.Field_Int); ok {
			f(x.Key, v.Int)
		}
	}
}

// TaskMetrics are the per-second metrics of a subtask that observers read
// (Flink's metric names; the event carries more fields).
type TaskMetrics struct {
	BusyTimeMsPerSecond, BackPressuredTimeMsPerSecond, IdleTimeMsPerSecond int64
	NumRecordsIn, NumRecordsOut                                            int64
	// Watermark is currentInputWatermark (InputWatermark set: a subtask
	// reading an InputGate) or a source's currentOutputWatermark, when
	// HasWatermark (ms; Long.MIN_VALUE before the first).
	Watermark                    int64
	HasWatermark, InputWatermark bool
}

func (TaskMetrics) Kind() Kind { return KindTaskMetrics }

func (e TaskMetrics) Fields() []*messages.Field {
	fs := []*messages.Field{messages.Int("busyTimeMsPerSecond", e.BusyTimeMsPerSecond),
		messages.Int("backPressuredTimeMsPerSecond", e.BackPressuredTimeMsPerSecond),
		messages.Int("idleTimeMsPerSecond", e.IdleTimeMsPerSecond),
		messages.Int("numRecordsIn", e.NumRecordsIn), messages.Int("numRecordsOut", e.NumRecordsOut)}
	switch {
	case e.HasWatermark && e.InputWatermark:
		fs = append(fs, messages.Int("currentInputWatermark", e.Watermark))
	case e.HasWatermark:
		fs = append(fs, messages.Int("currentOutputWatermark", e.Watermark))
	}
	return fs
}

// LateSideOutput is a record too late for every window it falls into, sent
// to the late side output (WindowOperator.sideOutput).
type LateSideOutput struct {
	Key       string
	Timestamp int64 // ms
}

func (LateSideOutput) Kind() Kind { return KindLateSideOutput }

func (e LateSideOutput) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("key", e.Key), messages.Int("timestamp", e.Timestamp)}
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

func (CheckpointTriggered) Kind() Kind { return KindCheckpointTriggered }

func (e CheckpointTriggered) Fields() []*messages.Field {
	return []*messages.Field{messages.Int("checkpoint_id", e.CheckpointID), messages.Str("kind", e.CheckpointKind),
		messages.Int("timestamp_ms", e.TimestampMs), messages.Bool("unaligned", e.Unaligned)}
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
	SavepointPath                                    string // "" for a checkpoint
}

func (CheckpointCompleted) Kind() Kind { return KindCheckpointCompleted }

func (e CheckpointCompleted) Fields() []*messages.Field {
	fs := []*messages.Field{messages.Int("checkpoint_id", e.CheckpointID), messages.Str("kind", e.CheckpointKind),
		messages.Int("duration_ms", e.DurationMs), messages.Int("state_size", e.StateSize),
		messages.Int("checkpointed_size", e.CheckpointedSize), messages.Int("persisted_records", e.PersistedRecords),
		messages.Int("persisted_bytes", e.PersistedBytes), messages.Int("max_alignment_ms", e.MaxAlignmentMs)}
	if e.SourceOffsets != "" {
		fs = append(fs, messages.Raw("source_offsets", e.SourceOffsets))
	}
	if e.SavepointPath != "" {
		fs = append(fs, messages.Str("savepoint_path", e.SavepointPath))
	}
	return fs
}

// CheckpointFailed is a checkpoint or savepoint that failed (Reason:
// CheckpointFailureReason's name; Task: the task that declined it, if one
// did).
type CheckpointFailed struct {
	CheckpointID                    int64
	CheckpointKind, Reason, Message string
	Task                            string
}

func (CheckpointFailed) Kind() Kind { return KindCheckpointFailed }

func (e CheckpointFailed) Fields() []*messages.Field {
	fs := []*messages.Field{messages.Int("checkpoint_id", e.CheckpointID), messages.Str("kind", e.CheckpointKind),
		messages.Str("reason", e.Reason), messages.Str("message", e.Message)}
	if e.Task != "" {
		fs = append(fs, messages.Str("task", e.Task))
	}
	return fs
}

// Restore is what a new attempt of the job starts from: From "checkpoint"
// (the latest completed one, CheckpointID) or "starting offsets" (none
// completed; Reason says so).
type Restore struct {
	From         string
	CheckpointID int64
	Reason       string
}

func (Restore) Kind() Kind { return KindRestore }

func (e Restore) Fields() []*messages.Field {
	fs := []*messages.Field{messages.Str("from", e.From)}
	if e.From == "checkpoint" {
		fs = append(fs, messages.Int("checkpoint_id", e.CheckpointID))
	}
	if e.Reason != "" {
		fs = append(fs, messages.Str("reason", e.Reason))
	}
	return fs
}

// CheckpointSnapshot is a task's snapshot for a barrier (CheckpointKind:
// checkpoint, savepoint, stop-with-savepoint), logged by the subtask (the
// event's actor) when its synchronous part ends; its acknowledgement follows
// after the asynchronous upload.
type CheckpointSnapshot struct {
	CheckpointID   int64
	CheckpointKind string
	Unaligned      bool
	// StateSize is the task's full state with its persisted in-flight data
	// (bytes); CheckpointedSize what this checkpoint uploads (bytes).
	StateSize, CheckpointedSize int64
	PersistedRecords            int64 // in-flight records persisted as channel state
	AlignmentMs                 int64 // from the task's first barrier to its last
}

func (CheckpointSnapshot) Kind() Kind { return KindCheckpointSnapshot }

func (e CheckpointSnapshot) Fields() []*messages.Field {
	return []*messages.Field{messages.Int("checkpoint_id", e.CheckpointID), messages.Str("kind", e.CheckpointKind),
		messages.Bool("unaligned", e.Unaligned), messages.Int("state_size", e.StateSize),
		messages.Int("checkpointed_size", e.CheckpointedSize), messages.Int("persisted_records", e.PersistedRecords),
		messages.Int("alignment_ms", e.AlignmentMs)}
}

// SubmitTask is the JobManager deploying an execution to a TaskManager. The
// event carries more fields.
type SubmitTask struct {
	Task        string // execution id: window-0, window-0#1, ...
	Attempt     int64
	TaskManager string
}

func (SubmitTask) Kind() Kind { return KindSubmitTask }

func (e SubmitTask) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("task", e.Task), messages.Int("attempt", e.Attempt), messages.Str("task_manager", e.TaskManager)}
}

// BacklogAnnouncement is an input channel hearing a producer's backlog
// without credit, with its own buffer counts.
type BacklogAnnouncement struct {
	Producer                                            string
	Backlog, FreeBuffers, BuffersInUse, FloatingBuffers int64
}

func (BacklogAnnouncement) Kind() Kind { return KindBacklogAnnouncement }

func (e BacklogAnnouncement) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("producer", e.Producer), messages.Int("backlog", e.Backlog),
		messages.Int("free_buffers", e.FreeBuffers), messages.Int("buffers_in_use", e.BuffersInUse),
		messages.Int("floating_buffers", e.FloatingBuffers)}
}

// Failover is the JobManager failing over the job. The event carries more
// fields.
type Failover struct {
	Cause    string
	Restart  bool
	Restarts int64
}

func (Failover) Kind() Kind { return KindFailover }

func (e Failover) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("cause", e.Cause), messages.Bool("restart", e.Restart), messages.Int("restarts", e.Restarts)}
}

// NoResourceAvailable is the JobManager's slot request timing out. The
// event carries more fields.
type NoResourceAvailable struct {
	SlotsNeeded, SlotsOffered int64
}

func (NoResourceAvailable) Kind() Kind { return KindNoResourceAvailable }

func (e NoResourceAvailable) Fields() []*messages.Field {
	return []*messages.Field{messages.Int("slots_needed", e.SlotsNeeded), messages.Int("slots_offered", e.SlotsOffered)}
}

// NetworkPartition is the start of a network cut between two hosts.
type NetworkPartition struct {
	HostA, HostB string
	DurationMs   int64
	Action       string
}

func (NetworkPartition) Kind() Kind { return KindNetworkPartition }

func (e NetworkPartition) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("host_a", e.HostA), messages.Str("host_b", e.HostB),
		messages.Int("duration_ms", e.DurationMs), messages.Str("action", e.Action)}
}

// NetworkPartitionHealed is the end of a network cut: the envelopes it
// dropped and the ends it told (RunEnded: the run ended first).
type NetworkPartitionHealed struct {
	HostA, HostB                      string
	DroppedEnvelopes, ConnectionsLost int64
	RunEnded                          bool
}

func (NetworkPartitionHealed) Kind() Kind { return KindNetworkPartitionHealed }

func (e NetworkPartitionHealed) Fields() []*messages.Field {
	fs := []*messages.Field{messages.Str("host_a", e.HostA), messages.Str("host_b", e.HostB),
		messages.Int("dropped_envelopes", e.DroppedEnvelopes), messages.Int("connections_lost", e.ConnectionsLost)}
	if e.RunEnded {
		fs = append(fs, messages.Bool("run_ended", true))
	}
	return fs
}

// ChannelError is a remote input channel whose connection to its producer
// broke: it fails its task with Cause.
type ChannelError struct {
	Producer, ConnectionID, Cause string
}

func (ChannelError) Kind() Kind { return KindChannelError }

func (e ChannelError) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("producer", e.Producer), messages.Str("connection_id", e.ConnectionID),
		messages.Str("cause", e.Cause)}
}

// HeartbeatTimeout is a heartbeat monitor timing out: the JobManager's or
// ResourceManager's of a TaskManager (TaskManager set), or a TaskManager's
// of the JobManager or ResourceManager. The event carries more fields.
type HeartbeatTimeout struct {
	TaskManager, JobManager, ResourceManager, Cause string
}

func (HeartbeatTimeout) Kind() Kind { return KindHeartbeatTimeout }

func (e HeartbeatTimeout) Fields() []*messages.Field {
	var fs []*messages.Field
	for _, kv := range [][2]string{{"task_manager", e.TaskManager}, {"job_manager", e.JobManager}, {"resource_manager", e.ResourceManager}} {
		if kv[1] != "" {
			fs = append(fs, messages.Str(kv[0], kv[1]))
		}
	}
	return append(fs, messages.Str("cause", e.Cause))
}

// fields is a LogEvent's fields by key (the first of a key wins).
type fields []*messages.Field

func fieldsOf(ev *messages.LogEvent) fields { return ev.Fields }

func (fs fields) get(k string) *messages.Field {
	for _, f := range fs {
		if f.Key == k {
			return f
		}
	}
	return nil
}

func (fs fields) str(k string) string    { return fs.get(k).GetStr() }
func (fs fields) int(k string) int64     { return fs.get(k).GetInt() }
func (fs fields) float(k string) float64 { return fs.get(k).GetFloat() }

// TaskState is an execution's state as its TaskManager or the JobMaster
// logs it (the JobMaster's: what it accepted as the execution's state).
type TaskState struct {
	Task, State, Reason string
}

func (TaskState) Kind() Kind { return KindTaskState }

func (e TaskState) Fields() []*messages.Field {
	fs := []*messages.Field{messages.Str("task", e.Task), messages.Str("state", e.State)}
	if e.Reason != "" {
		fs = append(fs, messages.Str("reason", e.Reason))
	}
	return fs
}

// HostStalled is the start of a stalled host (stall-taskmanager).
type HostStalled struct {
	Host       string
	DurationMs int64
}

func (HostStalled) Kind() Kind { return KindHostStalled }

func (e HostStalled) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("host", e.Host), messages.Int("duration_ms", e.DurationMs)}
}

// RPCLost is an RPC the network lost (lose-rpc).
type RPCLost struct {
	RPC, From, To string
}

func (RPCLost) Kind() Kind { return KindRPCLost }

func (e RPCLost) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("rpc", e.RPC), messages.Str("from", e.From), messages.Str("to", e.To)}
}
