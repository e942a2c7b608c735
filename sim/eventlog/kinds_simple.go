package eventlog

// Typed events of the kinds that have one shape, each a flat struct of its
// fields in the log's order (README.md documents each kind).

import "github.com/flinksim/flinksim/sim/logenc"

// AbortLingering is the KindAbortLingering event (fields in the log's order): prefix, subtask, from_checkpoint, aborted, producer.
type AbortLingering struct {
	Prefix         string
	Subtask        int64
	FromCheckpoint int64
	Aborted        string // raw JSON
	Producer       string
}

// Kind is KindAbortLingering.
func (AbortLingering) Kind() Kind { return KindAbortLingering }

// AppendJSON appends the AbortLingering event's fields to b in the log's order.
func (e AbortLingering) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "prefix", e.Prefix)
	b = logenc.Int(b, "subtask", e.Subtask)
	b = logenc.Int(b, "from_checkpoint", e.FromCheckpoint)
	b = logenc.Raw(b, "aborted", e.Aborted)
	b = logenc.Str(b, "producer", e.Producer)
	return b
}

// ActorStarted is the KindActorStarted event (fields in the log's order): component.
type ActorStarted struct {
	Component string
}

// Kind is KindActorStarted.
func (ActorStarted) Kind() Kind { return KindActorStarted }

// AppendJSON appends the ActorStarted event's fields to b in the log's order.
func (e ActorStarted) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "component", e.Component)
	return b
}

// WatermarkAlignment is the KindAlignment event (fields in the log's order): group, combined_watermark, max_allowed_watermark.
type WatermarkAlignment struct {
	Group               string
	CombinedWatermark   int64
	MaxAllowedWatermark int64
}

// Kind is KindAlignment.
func (WatermarkAlignment) Kind() Kind { return KindAlignment }

// AppendJSON appends the WatermarkAlignment event's fields to b in the log's order.
func (e WatermarkAlignment) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "group", e.Group)
	b = logenc.Int(b, "combined_watermark", e.CombinedWatermark)
	b = logenc.Int(b, "max_allowed_watermark", e.MaxAllowedWatermark)
	return b
}

// Backfill is the KindBackfill event (fields in the log's order): topic, records, end_offsets.
type Backfill struct {
	Topic      string
	Records    int64
	EndOffsets string // raw JSON
}

// Kind is KindBackfill.
func (Backfill) Kind() Kind { return KindBackfill }

// AppendJSON appends the Backfill event's fields to b in the log's order.
func (e Backfill) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "topic", e.Topic)
	b = logenc.Int(b, "records", e.Records)
	b = logenc.Raw(b, "end_offsets", e.EndOffsets)
	return b
}

// BarrierTimedOut is the KindBarrierTimedOut event (fields in the log's order): checkpoint_id, persisted_records.
type BarrierTimedOut struct {
	CheckpointID     int64
	PersistedRecords int64
}

// Kind is KindBarrierTimedOut.
func (BarrierTimedOut) Kind() Kind { return KindBarrierTimedOut }

// AppendJSON appends the BarrierTimedOut event's fields to b in the log's order.
func (e BarrierTimedOut) AppendJSON(b []byte) []byte {
	b = logenc.Int(b, "checkpoint_id", e.CheckpointID)
	b = logenc.Int(b, "persisted_records", e.PersistedRecords)
	return b
}

// ChannelFinished is the KindChannelFinished event (fields in the log's order): channel, producer.
type ChannelFinished struct {
	Channel  int64
	Producer string
}

// Kind is KindChannelFinished.
func (ChannelFinished) Kind() Kind { return KindChannelFinished }

// AppendJSON appends the ChannelFinished event's fields to b in the log's order.
func (e ChannelFinished) AppendJSON(b []byte) []byte {
	b = logenc.Int(b, "channel", e.Channel)
	b = logenc.Str(b, "producer", e.Producer)
	return b
}

// CheckpointAckIgnored is the KindCheckpointAckIgnored event (fields in the log's order): checkpoint_id, task, message.
type CheckpointAckIgnored struct {
	CheckpointID int64
	Task         string
	Message      string
}

// Kind is KindCheckpointAckIgnored.
func (CheckpointAckIgnored) Kind() Kind { return KindCheckpointAckIgnored }

// AppendJSON appends the CheckpointAckIgnored event's fields to b in the log's order.
func (e CheckpointAckIgnored) AppendJSON(b []byte) []byte {
	b = logenc.Int(b, "checkpoint_id", e.CheckpointID)
	b = logenc.Str(b, "task", e.Task)
	b = logenc.Str(b, "message", e.Message)
	return b
}

// CheckpointDeclined is the KindCheckpointDeclined event (fields in the log's order): kind, reason, message.
type CheckpointDeclined struct {
	CheckpointKind string
	Reason         string
	Message        string
}

// Kind is KindCheckpointDeclined.
func (CheckpointDeclined) Kind() Kind { return KindCheckpointDeclined }

// AppendJSON appends the CheckpointDeclined event's fields to b in the log's order.
func (e CheckpointDeclined) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "kind", e.CheckpointKind)
	b = logenc.Str(b, "reason", e.Reason)
	b = logenc.Str(b, "message", e.Message)
	return b
}

// CheckpointDeclinedByTask is the KindCheckpointDeclinedByTask event (fields in the log's order): checkpoint_id, reason.
type CheckpointDeclinedByTask struct {
	CheckpointID int64
	Reason       string
}

// Kind is KindCheckpointDeclinedByTask.
func (CheckpointDeclinedByTask) Kind() Kind { return KindCheckpointDeclinedByTask }

// AppendJSON appends the CheckpointDeclinedByTask event's fields to b in the log's order.
func (e CheckpointDeclinedByTask) AppendJSON(b []byte) []byte {
	b = logenc.Int(b, "checkpoint_id", e.CheckpointID)
	b = logenc.Str(b, "reason", e.Reason)
	return b
}

// CheckpointSnapshot is the KindCheckpointSnapshot event (fields in the log's order): checkpoint_id, kind, unaligned, state_size, checkpointed_size, persisted_records, start_delay_ms, alignment_ms, sync_ms.
type CheckpointSnapshot struct {
	CheckpointID     int64
	CheckpointKind   string
	Unaligned        bool
	StateSize        int64
	CheckpointedSize int64
	PersistedRecords int64
	StartDelayMs     int64
	AlignmentMs      int64
	SyncMs           int64
}

// Kind is KindCheckpointSnapshot.
func (CheckpointSnapshot) Kind() Kind { return KindCheckpointSnapshot }

// AppendJSON appends the CheckpointSnapshot event's fields to b in the log's order.
func (e CheckpointSnapshot) AppendJSON(b []byte) []byte {
	b = logenc.Int(b, "checkpoint_id", e.CheckpointID)
	b = logenc.Str(b, "kind", e.CheckpointKind)
	b = logenc.Bool(b, "unaligned", e.Unaligned)
	b = logenc.Int(b, "state_size", e.StateSize)
	b = logenc.Int(b, "checkpointed_size", e.CheckpointedSize)
	b = logenc.Int(b, "persisted_records", e.PersistedRecords)
	b = logenc.Int(b, "start_delay_ms", e.StartDelayMs)
	b = logenc.Int(b, "alignment_ms", e.AlignmentMs)
	b = logenc.Int(b, "sync_ms", e.SyncMs)
	return b
}

// EventSent is the KindEventSent event (fields in the log's order): partition, offset, key, timestamp, value.
type EventSent struct {
	Partition int64
	Offset    int64
	Key       string
	Timestamp int64
	Value     string // raw JSON
}

// Kind is KindEventSent.
func (EventSent) Kind() Kind { return KindEventSent }

// AppendJSON appends the EventSent event's fields to b in the log's order.
func (e EventSent) AppendJSON(b []byte) []byte {
	b = logenc.Int(b, "partition", e.Partition)
	b = logenc.Int(b, "offset", e.Offset)
	b = logenc.Str(b, "key", e.Key)
	b = logenc.Int(b, "timestamp", e.Timestamp)
	b = logenc.Raw(b, "value", e.Value)
	return b
}

// GeneratorStarted is the KindGeneratorStarted event (fields in the log's order): rate_per_second, keys, disorder, late_fraction.
type GeneratorStarted struct {
	RatePerSecond float64
	Keys          int64
	Disorder      string
	LateFraction  float64
}

// Kind is KindGeneratorStarted.
func (GeneratorStarted) Kind() Kind { return KindGeneratorStarted }

// AppendJSON appends the GeneratorStarted event's fields to b in the log's order.
func (e GeneratorStarted) AppendJSON(b []byte) []byte {
	b = logenc.Float(b, "rate_per_second", e.RatePerSecond)
	b = logenc.Int(b, "keys", e.Keys)
	b = logenc.Str(b, "disorder", e.Disorder)
	b = logenc.Float(b, "late_fraction", e.LateFraction)
	return b
}

// JobGraph is the KindJobGraph event (fields in the log's order): job_name, vertices, edges, max_parallelism, slots_needed, bounded.
type JobGraph struct {
	JobName        string
	Vertices       string // raw JSON
	Edges          string // raw JSON
	MaxParallelism int64
	SlotsNeeded    int64
	Bounded        bool
}

// Kind is KindJobGraph.
func (JobGraph) Kind() Kind { return KindJobGraph }

// AppendJSON appends the JobGraph event's fields to b in the log's order.
func (e JobGraph) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "job_name", e.JobName)
	b = logenc.Raw(b, "vertices", e.Vertices)
	b = logenc.Raw(b, "edges", e.Edges)
	b = logenc.Int(b, "max_parallelism", e.MaxParallelism)
	b = logenc.Int(b, "slots_needed", e.SlotsNeeded)
	b = logenc.Bool(b, "bounded", e.Bounded)
	return b
}

// NettyFrame is the KindNettyFrame event (fields in the log's order): peer, message, frame_length, hex.
type NettyFrame struct {
	Peer        string
	Message     string
	FrameLength int64
	Hex         string
}

// Kind is KindNettyFrame.
func (NettyFrame) Kind() Kind { return KindNettyFrame }

// AppendJSON appends the NettyFrame event's fields to b in the log's order.
func (e NettyFrame) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "peer", e.Peer)
	b = logenc.Str(b, "message", e.Message)
	b = logenc.Int(b, "frame_length", e.FrameLength)
	b = logenc.Str(b, "hex", e.Hex)
	return b
}

// NoResourceAvailable is the KindNoResourceAvailable event (fields in the log's order): slots_needed, slots_offered, slot_request_timeout, exception.
type NoResourceAvailable struct {
	SlotsNeeded        int64
	SlotsOffered       int64
	SlotRequestTimeout string
	Exception          string
}

// Kind is KindNoResourceAvailable.
func (NoResourceAvailable) Kind() Kind { return KindNoResourceAvailable }

// AppendJSON appends the NoResourceAvailable event's fields to b in the log's order.
func (e NoResourceAvailable) AppendJSON(b []byte) []byte {
	b = logenc.Int(b, "slots_needed", e.SlotsNeeded)
	b = logenc.Int(b, "slots_offered", e.SlotsOffered)
	b = logenc.Str(b, "slot_request_timeout", e.SlotRequestTimeout)
	b = logenc.Str(b, "exception", e.Exception)
	return b
}

// OfferSlots is the KindOfferSlots event (fields in the log's order): job_manager, slot, allocation_id.
type OfferSlots struct {
	JobManager   string
	Slot         int64
	AllocationID string
}

// Kind is KindOfferSlots.
func (OfferSlots) Kind() Kind { return KindOfferSlots }

// AppendJSON appends the OfferSlots event's fields to b in the log's order.
func (e OfferSlots) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "job_manager", e.JobManager)
	b = logenc.Int(b, "slot", e.Slot)
	b = logenc.Str(b, "allocation_id", e.AllocationID)
	return b
}

// OffsetsCommitted is the KindOffsetsCommitted event (fields in the log's order): group, reader, checkpoint_id, offsets.
type OffsetsCommitted struct {
	Group        string
	Reader       string
	CheckpointID int64
	Offsets      string // raw JSON
}

// Kind is KindOffsetsCommitted.
func (OffsetsCommitted) Kind() Kind { return KindOffsetsCommitted }

// AppendJSON appends the OffsetsCommitted event's fields to b in the log's order.
func (e OffsetsCommitted) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "group", e.Group)
	b = logenc.Str(b, "reader", e.Reader)
	b = logenc.Int(b, "checkpoint_id", e.CheckpointID)
	b = logenc.Raw(b, "offsets", e.Offsets)
	return b
}

// PartitionPaused is the KindPartitionPaused event (fields in the log's order): partition.
type PartitionPaused struct {
	Partition int64
}

// Kind is KindPartitionPaused.
func (PartitionPaused) Kind() Kind { return KindPartitionPaused }

// AppendJSON appends the PartitionPaused event's fields to b in the log's order.
func (e PartitionPaused) AppendJSON(b []byte) []byte {
	b = logenc.Int(b, "partition", e.Partition)
	return b
}

// PartitionResumed is the KindPartitionResumed event (fields in the log's order): partition, held_records.
type PartitionResumed struct {
	Partition   int64
	HeldRecords int64
}

// Kind is KindPartitionResumed.
func (PartitionResumed) Kind() Kind { return KindPartitionResumed }

// AppendJSON appends the PartitionResumed event's fields to b in the log's order.
func (e PartitionResumed) AppendJSON(b []byte) []byte {
	b = logenc.Int(b, "partition", e.Partition)
	b = logenc.Int(b, "held_records", e.HeldRecords)
	return b
}

// ReaderNoSplits is the KindReaderNoSplits event (fields in the log's order): reader, note.
type ReaderNoSplits struct {
	Reader string
	Note   string
}

// Kind is KindReaderNoSplits.
func (ReaderNoSplits) Kind() Kind { return KindReaderNoSplits }

// AppendJSON appends the ReaderNoSplits event's fields to b in the log's order.
func (e ReaderNoSplits) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "reader", e.Reader)
	b = logenc.Str(b, "note", e.Note)
	return b
}

// RegisterTaskExecutor is the KindRegisterTaskExecutor event (fields in the log's order): resource_manager, num_slots, default_slot_resource_profile, total_resource_profile.
type RegisterTaskExecutor struct {
	ResourceManager            string
	NumSlots                   int64
	DefaultSlotResourceProfile string // raw JSON
	TotalResourceProfile       string // raw JSON
}

// Kind is KindRegisterTaskExecutor.
func (RegisterTaskExecutor) Kind() Kind { return KindRegisterTaskExecutor }

// AppendJSON appends the RegisterTaskExecutor event's fields to b in the log's order.
func (e RegisterTaskExecutor) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "resource_manager", e.ResourceManager)
	b = logenc.Int(b, "num_slots", e.NumSlots)
	b = logenc.Raw(b, "default_slot_resource_profile", e.DefaultSlotResourceProfile)
	b = logenc.Raw(b, "total_resource_profile", e.TotalResourceProfile)
	return b
}

// RegistrationResponse is the KindRegistrationResponse event (fields in the log's order): success.
type RegistrationResponse struct {
	Success bool
}

// Kind is KindRegistrationResponse.
func (RegistrationResponse) Kind() Kind { return KindRegistrationResponse }

// AppendJSON appends the RegistrationResponse event's fields to b in the log's order.
func (e RegistrationResponse) AppendJSON(b []byte) []byte {
	b = logenc.Bool(b, "success", e.Success)
	return b
}

// RequestSlot is the KindRequestSlot event (fields in the log's order): task_manager, slot, allocation_id.
type RequestSlot struct {
	TaskManager  string
	Slot         int64
	AllocationID string
}

// Kind is KindRequestSlot.
func (RequestSlot) Kind() Kind { return KindRequestSlot }

// AppendJSON appends the RequestSlot event's fields to b in the log's order.
func (e RequestSlot) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "task_manager", e.TaskManager)
	b = logenc.Int(b, "slot", e.Slot)
	b = logenc.Str(b, "allocation_id", e.AllocationID)
	return b
}

// ResourceRequirements is the KindResourceRequirements event (fields in the log's order): job_id, slots, free_slots.
type ResourceRequirements struct {
	JobID     string
	Slots     int64
	FreeSlots int64
}

// Kind is KindResourceRequirements.
func (ResourceRequirements) Kind() Kind { return KindResourceRequirements }

// AppendJSON appends the ResourceRequirements event's fields to b in the log's order.
func (e ResourceRequirements) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "job_id", e.JobID)
	b = logenc.Int(b, "slots", e.Slots)
	b = logenc.Int(b, "free_slots", e.FreeSlots)
	return b
}

// RestartStrategy is the KindRestartStrategy event (fields in the log's order): strategy, description.
type RestartStrategy struct {
	Strategy    string
	Description string
}

// Kind is KindRestartStrategy.
func (RestartStrategy) Kind() Kind { return KindRestartStrategy }

// AppendJSON appends the RestartStrategy event's fields to b in the log's order.
func (e RestartStrategy) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "strategy", e.Strategy)
	b = logenc.Str(b, "description", e.Description)
	return b
}

// SplitFinished is the KindSplitFinished event (fields in the log's order): partition, offset.
type SplitFinished struct {
	Partition int64
	Offset    int64
}

// Kind is KindSplitFinished.
func (SplitFinished) Kind() Kind { return KindSplitFinished }

// AppendJSON appends the SplitFinished event's fields to b in the log's order.
func (e SplitFinished) AppendJSON(b []byte) []byte {
	b = logenc.Int(b, "partition", e.Partition)
	b = logenc.Int(b, "offset", e.Offset)
	return b
}

// SplitPaused is the KindSplitPaused event (fields in the log's order): split, split_watermark, max_allowed_watermark.
type SplitPaused struct {
	Split               string
	SplitWatermark      int64
	MaxAllowedWatermark int64
}

// Kind is KindSplitPaused.
func (SplitPaused) Kind() Kind { return KindSplitPaused }

// AppendJSON appends the SplitPaused event's fields to b in the log's order.
func (e SplitPaused) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "split", e.Split)
	b = logenc.Int(b, "split_watermark", e.SplitWatermark)
	b = logenc.Int(b, "max_allowed_watermark", e.MaxAllowedWatermark)
	return b
}

// SplitResumed is the KindSplitResumed event (fields in the log's order): split, split_watermark, max_allowed_watermark.
type SplitResumed struct {
	Split               string
	SplitWatermark      int64
	MaxAllowedWatermark int64
}

// Kind is KindSplitResumed.
func (SplitResumed) Kind() Kind { return KindSplitResumed }

// AppendJSON appends the SplitResumed event's fields to b in the log's order.
func (e SplitResumed) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "split", e.Split)
	b = logenc.Int(b, "split_watermark", e.SplitWatermark)
	b = logenc.Int(b, "max_allowed_watermark", e.MaxAllowedWatermark)
	return b
}

// SplitsAssigned is the KindSplitsAssigned event (fields in the log's order): reader, partitions.
type SplitsAssigned struct {
	Reader     string
	Partitions string // raw JSON
}

// Kind is KindSplitsAssigned.
func (SplitsAssigned) Kind() Kind { return KindSplitsAssigned }

// AppendJSON appends the SplitsAssigned event's fields to b in the log's order.
func (e SplitsAssigned) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "reader", e.Reader)
	b = logenc.Raw(b, "partitions", e.Partitions)
	return b
}

// StateRestored is the KindStateRestored event (fields in the log's order): checkpoint_id, window_keys, value_keys, input_channel_records, output_channel_records, committables.
type StateRestored struct {
	CheckpointID         int64
	WindowKeys           int64
	ValueKeys            int64
	InputChannelRecords  int64
	OutputChannelRecords int64
	Committables         string // raw JSON
}

// Kind is KindStateRestored.
func (StateRestored) Kind() Kind { return KindStateRestored }

// AppendJSON appends the StateRestored event's fields to b in the log's order.
func (e StateRestored) AppendJSON(b []byte) []byte {
	b = logenc.Int(b, "checkpoint_id", e.CheckpointID)
	b = logenc.Int(b, "window_keys", e.WindowKeys)
	b = logenc.Int(b, "value_keys", e.ValueKeys)
	b = logenc.Int(b, "input_channel_records", e.InputChannelRecords)
	b = logenc.Int(b, "output_channel_records", e.OutputChannelRecords)
	b = logenc.Raw(b, "committables", e.Committables)
	return b
}

// SubmitTask is the KindSubmitTask event (fields in the log's order): task, task_name, attempt, task_manager, slot, allocation_id.
type SubmitTask struct {
	Task         string
	TaskName     string
	Attempt      int64
	TaskManager  string
	Slot         int64
	AllocationID string
}

// Kind is KindSubmitTask.
func (SubmitTask) Kind() Kind { return KindSubmitTask }

// AppendJSON appends the SubmitTask event's fields to b in the log's order.
func (e SubmitTask) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "task", e.Task)
	b = logenc.Str(b, "task_name", e.TaskName)
	b = logenc.Int(b, "attempt", e.Attempt)
	b = logenc.Str(b, "task_manager", e.TaskManager)
	b = logenc.Int(b, "slot", e.Slot)
	b = logenc.Str(b, "allocation_id", e.AllocationID)
	return b
}

// TaskExecutorRegistered is the KindTaskExecutorRegistered event (fields in the log's order): task_manager, num_slots, registered_task_managers.
type TaskExecutorRegistered struct {
	TaskManager            string
	NumSlots               int64
	RegisteredTaskManagers int64
}

// Kind is KindTaskExecutorRegistered.
func (TaskExecutorRegistered) Kind() Kind { return KindTaskExecutorRegistered }

// AppendJSON appends the TaskExecutorRegistered event's fields to b in the log's order.
func (e TaskExecutorRegistered) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "task_manager", e.TaskManager)
	b = logenc.Int(b, "num_slots", e.NumSlots)
	b = logenc.Int(b, "registered_task_managers", e.RegisteredTaskManagers)
	return b
}

// TaskManagerKilled is the KindTaskManagerKilled event (fields in the log's order): action, tasks.
type TaskManagerKilled struct {
	Action string
	Tasks  int64
}

// Kind is KindTaskManagerKilled.
func (TaskManagerKilled) Kind() Kind { return KindTaskManagerKilled }

// AppendJSON appends the TaskManagerKilled event's fields to b in the log's order.
func (e TaskManagerKilled) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "action", e.Action)
	b = logenc.Int(b, "tasks", e.Tasks)
	return b
}

// TaskManagerLost is the KindTaskManagerLost event (fields in the log's order): task_manager, cause, replacement.
type TaskManagerLost struct {
	TaskManager string
	Cause       string
	Replacement string
}

// Kind is KindTaskManagerLost.
func (TaskManagerLost) Kind() Kind { return KindTaskManagerLost }

// AppendJSON appends the TaskManagerLost event's fields to b in the log's order.
func (e TaskManagerLost) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "task_manager", e.TaskManager)
	b = logenc.Str(b, "cause", e.Cause)
	b = logenc.Str(b, "replacement", e.Replacement)
	return b
}

// TaskManagerStarted is the KindTaskManagerStarted event (fields in the log's order): num_slots, total_resource_profile, default_slot_resource_profile.
type TaskManagerStarted struct {
	NumSlots                   int64
	TotalResourceProfile       string // raw JSON
	DefaultSlotResourceProfile string // raw JSON
}

// Kind is KindTaskManagerStarted.
func (TaskManagerStarted) Kind() Kind { return KindTaskManagerStarted }

// AppendJSON appends the TaskManagerStarted event's fields to b in the log's order.
func (e TaskManagerStarted) AppendJSON(b []byte) []byte {
	b = logenc.Int(b, "num_slots", e.NumSlots)
	b = logenc.Raw(b, "total_resource_profile", e.TotalResourceProfile)
	b = logenc.Raw(b, "default_slot_resource_profile", e.DefaultSlotResourceProfile)
	return b
}

// TopicCreated is the KindTopicCreated event (fields in the log's order): topic, partitions.
type TopicCreated struct {
	Topic      string
	Partitions int64
}

// Kind is KindTopicCreated.
func (TopicCreated) Kind() Kind { return KindTopicCreated }

// AppendJSON appends the TopicCreated event's fields to b in the log's order.
func (e TopicCreated) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "topic", e.Topic)
	b = logenc.Int(b, "partitions", e.Partitions)
	return b
}

// WatermarkStatus is the KindWatermarkStatus event (fields in the log's order): status.
type WatermarkStatus struct {
	Status string
}

// Kind is KindWatermarkStatus.
func (WatermarkStatus) Kind() Kind { return KindWatermarkStatus }

// AppendJSON appends the WatermarkStatus event's fields to b in the log's order.
func (e WatermarkStatus) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "status", e.Status)
	return b
}

// WorkerTerminated is the KindWorkerTerminated event (fields in the log's order): task_manager, cause, replacement.
type WorkerTerminated struct {
	TaskManager string
	Cause       string
	Replacement string
}

// Kind is KindWorkerTerminated.
func (WorkerTerminated) Kind() Kind { return KindWorkerTerminated }

// AppendJSON appends the WorkerTerminated event's fields to b in the log's order.
func (e WorkerTerminated) AppendJSON(b []byte) []byte {
	b = logenc.Str(b, "task_manager", e.TaskManager)
	b = logenc.Str(b, "cause", e.Cause)
	b = logenc.Str(b, "replacement", e.Replacement)
	return b
}

// decodeSimple reads the typed event of kind from its fields, for the
// kinds above; nil for another kind.
func decodeSimple(kind Kind, f fields) Event {
	switch kind {
	case KindAbortLingering:
		return AbortLingering{Prefix: f.str("prefix"), Subtask: f.int("subtask"), FromCheckpoint: f.int("from_checkpoint"), Aborted: f.get("aborted").GetRawJson(), Producer: f.str("producer")}
	case KindActorStarted:
		return ActorStarted{Component: f.str("component")}
	case KindAlignment:
		return WatermarkAlignment{Group: f.str("group"), CombinedWatermark: f.int("combined_watermark"), MaxAllowedWatermark: f.int("max_allowed_watermark")}
	case KindBackfill:
		return Backfill{Topic: f.str("topic"), Records: f.int("records"), EndOffsets: f.get("end_offsets").GetRawJson()}
	case KindBarrierTimedOut:
		return BarrierTimedOut{CheckpointID: f.int("checkpoint_id"), PersistedRecords: f.int("persisted_records")}
	case KindChannelFinished:
		return ChannelFinished{Channel: f.int("channel"), Producer: f.str("producer")}
	case KindCheckpointAckIgnored:
		return CheckpointAckIgnored{CheckpointID: f.int("checkpoint_id"), Task: f.str("task"), Message: f.str("message")}
	case KindCheckpointDeclined:
		return CheckpointDeclined{CheckpointKind: f.str("kind"), Reason: f.str("reason"), Message: f.str("message")}
	case KindCheckpointDeclinedByTask:
		return CheckpointDeclinedByTask{CheckpointID: f.int("checkpoint_id"), Reason: f.str("reason")}
	case KindCheckpointSnapshot:
		return CheckpointSnapshot{CheckpointID: f.int("checkpoint_id"), CheckpointKind: f.str("kind"), Unaligned: f.get("unaligned").GetBool(), StateSize: f.int("state_size"), CheckpointedSize: f.int("checkpointed_size"), PersistedRecords: f.int("persisted_records"), StartDelayMs: f.int("start_delay_ms"), AlignmentMs: f.int("alignment_ms"), SyncMs: f.int("sync_ms")}
	case KindEventSent:
		return EventSent{Partition: f.int("partition"), Offset: f.int("offset"), Key: f.str("key"), Timestamp: f.int("timestamp"), Value: f.get("value").GetRawJson()}
	case KindGeneratorStarted:
		return GeneratorStarted{RatePerSecond: f.float("rate_per_second"), Keys: f.int("keys"), Disorder: f.str("disorder"), LateFraction: f.float("late_fraction")}
	case KindJobGraph:
		return JobGraph{JobName: f.str("job_name"), Vertices: f.get("vertices").GetRawJson(), Edges: f.get("edges").GetRawJson(), MaxParallelism: f.int("max_parallelism"), SlotsNeeded: f.int("slots_needed"), Bounded: f.get("bounded").GetBool()}
	case KindNettyFrame:
		return NettyFrame{Peer: f.str("peer"), Message: f.str("message"), FrameLength: f.int("frame_length"), Hex: f.str("hex")}
	case KindNoResourceAvailable:
		return NoResourceAvailable{SlotsNeeded: f.int("slots_needed"), SlotsOffered: f.int("slots_offered"), SlotRequestTimeout: f.str("slot_request_timeout"), Exception: f.str("exception")}
	case KindOfferSlots:
		return OfferSlots{JobManager: f.str("job_manager"), Slot: f.int("slot"), AllocationID: f.str("allocation_id")}
	case KindOffsetsCommitted:
		return OffsetsCommitted{Group: f.str("group"), Reader: f.str("reader"), CheckpointID: f.int("checkpoint_id"), Offsets: f.get("offsets").GetRawJson()}
	case KindPartitionPaused:
		return PartitionPaused{Partition: f.int("partition")}
	case KindPartitionResumed:
		return PartitionResumed{Partition: f.int("partition"), HeldRecords: f.int("held_records")}
	case KindReaderNoSplits:
		return ReaderNoSplits{Reader: f.str("reader"), Note: f.str("note")}
	case KindRegisterTaskExecutor:
		return RegisterTaskExecutor{ResourceManager: f.str("resource_manager"), NumSlots: f.int("num_slots"), DefaultSlotResourceProfile: f.get("default_slot_resource_profile").GetRawJson(), TotalResourceProfile: f.get("total_resource_profile").GetRawJson()}
	case KindRegistrationResponse:
		return RegistrationResponse{Success: f.get("success").GetBool()}
	case KindRequestSlot:
		return RequestSlot{TaskManager: f.str("task_manager"), Slot: f.int("slot"), AllocationID: f.str("allocation_id")}
	case KindResourceRequirements:
		return ResourceRequirements{JobID: f.str("job_id"), Slots: f.int("slots"), FreeSlots: f.int("free_slots")}
	case KindRestartStrategy:
		return RestartStrategy{Strategy: f.str("strategy"), Description: f.str("description")}
	case KindSplitFinished:
		return SplitFinished{Partition: f.int("partition"), Offset: f.int("offset")}
	case KindSplitPaused:
		return SplitPaused{Split: f.str("split"), SplitWatermark: f.int("split_watermark"), MaxAllowedWatermark: f.int("max_allowed_watermark")}
	case KindSplitResumed:
		return SplitResumed{Split: f.str("split"), SplitWatermark: f.int("split_watermark"), MaxAllowedWatermark: f.int("max_allowed_watermark")}
	case KindSplitsAssigned:
		return SplitsAssigned{Reader: f.str("reader"), Partitions: f.get("partitions").GetRawJson()}
	case KindStateRestored:
		return StateRestored{CheckpointID: f.int("checkpoint_id"), WindowKeys: f.int("window_keys"), ValueKeys: f.int("value_keys"), InputChannelRecords: f.int("input_channel_records"), OutputChannelRecords: f.int("output_channel_records"), Committables: f.get("committables").GetRawJson()}
	case KindSubmitTask:
		return SubmitTask{Task: f.str("task"), TaskName: f.str("task_name"), Attempt: f.int("attempt"), TaskManager: f.str("task_manager"), Slot: f.int("slot"), AllocationID: f.str("allocation_id")}
	case KindTaskExecutorRegistered:
		return TaskExecutorRegistered{TaskManager: f.str("task_manager"), NumSlots: f.int("num_slots"), RegisteredTaskManagers: f.int("registered_task_managers")}
	case KindTaskManagerKilled:
		return TaskManagerKilled{Action: f.str("action"), Tasks: f.int("tasks")}
	case KindTaskManagerLost:
		return TaskManagerLost{TaskManager: f.str("task_manager"), Cause: f.str("cause"), Replacement: f.str("replacement")}
	case KindTaskManagerStarted:
		return TaskManagerStarted{NumSlots: f.int("num_slots"), TotalResourceProfile: f.get("total_resource_profile").GetRawJson(), DefaultSlotResourceProfile: f.get("default_slot_resource_profile").GetRawJson()}
	case KindTopicCreated:
		return TopicCreated{Topic: f.str("topic"), Partitions: f.int("partitions")}
	case KindWatermarkStatus:
		return WatermarkStatus{Status: f.str("status")}
	case KindWorkerTerminated:
		return WorkerTerminated{TaskManager: f.str("task_manager"), Cause: f.str("cause"), Replacement: f.str("replacement")}
	}
	return nil
}
