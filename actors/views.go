package actors

import (
	"encoding/json"
	"math"
	"slices"
	"strings"

	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/process"
	"github.com/flinksim/flinksim/sim/vt"
)

// The read-only views actors give between two steps (kernel.Inspector):
// what the live diagram, the HTTP API and the scenario tests show. Building
// a view never changes the actor. Field names follow Flink's metric and
// REST names where Flink has one; times are virtual µs (vt) or event-time
// ms as the field's name says.

// maxViewKeys bounds the keys a subtask's view lists with their state.
const maxViewKeys = 200

// SubtaskView is one subtask: a StreamTask with its chain.
type SubtaskView struct {
	Name        string   `json:"name"` // the execution's actor name, e.g. window-0#1
	Task        string   `json:"task"` // the name without the attempt, e.g. window-0
	Vertex      string   `json:"vertex"`
	TaskName    string   `json:"task_name"`
	Index       int      `json:"subtask_index"`
	Parallelism int      `json:"parallelism"`
	Attempt     int      `json:"attempt"`
	TaskManager string   `json:"task_manager"`
	Status      string   `json:"status"`
	Chain       []string `json:"chain"`

	// the last metrics tick (task_metrics), ms per second
	BusyTimeMsPerSecond          int64 `json:"busyTimeMsPerSecond"`
	BackPressuredTimeMsPerSecond int64 `json:"backPressuredTimeMsPerSecond"`
	IdleTimeMsPerSecond          int64 `json:"idleTimeMsPerSecond"`
	NumRecordsIn                 int64 `json:"numRecordsIn"`
	NumRecordsOut                int64 `json:"numRecordsOut"`
	Backpressured                bool  `json:"backpressured"` // blocked on a full output now

	// Watermark is the source's currentOutputWatermark or the operator's
	// currentInputWatermark (ms; Long.MIN_VALUE before any).
	Watermark int64 `json:"watermark"`
	Idle      bool  `json:"idle"` // the watermark status sent downstream is IDLE

	Splits []SplitView `json:"splits,omitempty"` // a source reader's splits

	KeyGroupStart int           `json:"key_group_start"`
	KeyGroupEnd   int           `json:"key_group_end"`
	Keys          int           `json:"keys"`
	Windows       int           `json:"windows"`
	LateDropped   int64         `json:"numLateRecordsDropped"`
	Inputs        []GateChannel `json:"inputs,omitempty"` // the InputGate, one per channel

	// the ResultPartition: finished buffers waiting per subpartition and
	// the output pool's use
	OutputQueueLengths []int    `json:"outputQueueLengths,omitempty"`
	OutPoolUsage       float64  `json:"outPoolUsage"`
	Consumers          []string `json:"consumers,omitempty"`

	Checkpoint int64 `json:"checkpoint"` // the barrier handler's current checkpoint (0: none)

	KeyedState []KeyStateView `json:"keyed_state,omitempty"` // up to 200 keys, by key
	MoreKeys   int            `json:"more_keys,omitempty"`   // keys not listed
}

// SplitView is a Kafka split a source reader owns.
type SplitView struct {
	Partition int   `json:"partition"`
	Offset    int64 `json:"offset"`          // next offset to read
	Stop      int64 `json:"stopping_offset"` // -1: unbounded
	Watermark int64 `json:"watermark"`       // the split's watermark (ms)
	Idle      bool  `json:"idle"`
	Paused    bool  `json:"paused"` // watermark alignment paused it
	Finished  bool  `json:"finished"`
}

// GateChannel is one input channel as its InputGate sees it.
type GateChannel struct {
	Index      int    `json:"index"`
	Producer   string `json:"producer"`
	Queued     int    `json:"queued_buffers"` // data buffers waiting to be processed
	Blocked    bool   `json:"blocked"`        // blocked by checkpoint alignment
	Persisting bool   `json:"persisting"`     // its in-flight data is persisted for an unaligned checkpoint
	Watermark  int64  `json:"watermark"`      // the last watermark it brought (ms)
	Idle       bool   `json:"idle"`
	Ended      bool   `json:"ended"` // EndOfPartition reached
}

// KeyStateView is one key's state: its windows (window operator) or its
// ValueState counter (process function).
type KeyStateView struct {
	Key      string       `json:"key"`
	KeyGroup int          `json:"key_group"`
	Windows  []WindowView `json:"windows,omitempty"`
	Count    int64        `json:"count,omitempty"`          // ValueState
	LastMs   int64        `json:"last_access_ms,omitempty"` // ValueState: last write (TTL OnCreateAndWrite)
	TTLMs    int64        `json:"ttl_ms,omitempty"`
}

// WindowView is one window of a key with its aggregate.
type WindowView struct {
	Start     int64   `json:"start"`
	End       int64   `json:"end"`
	Count     int64   `json:"count"`
	Value     float64 `json:"value"`      // the aggregate's result so far
	Fired     int     `json:"fired"`      // times fired (0: not yet)
	FiresAt   int64   `json:"fires_at"`   // event time (or processing time) it fires: end - 1
	CleanupAt int64   `json:"cleanup_at"` // end - 1 + allowed lateness
}

// Inspect implements kernel.Inspector.
func (s *Subtask) Inspect(now vt.Time) any {
	v := &SubtaskView{Name: s.name, Task: jobgraph.BaseSubtaskName(s.name), Vertex: s.d.JobVertex, TaskName: s.d.TaskName,
		Index: s.index, Parallelism: int(s.d.Parallelism), Attempt: int(s.d.Attempt), TaskManager: s.tm, Status: s.status,
		Chain: s.d.Chain, BusyTimeMsPerSecond: s.m.lastBusy, BackPressuredTimeMsPerSecond: s.m.lastBP,
		IdleTimeMsPerSecond: s.m.lastIdle, NumRecordsIn: s.m.recordsIn, NumRecordsOut: s.m.recordsOut,
		Backpressured: s.blocked, KeyGroupStart: int(s.d.KeyGroupStart), KeyGroupEnd: int(s.d.KeyGroupEnd),
		Watermark: math.MinInt64, Consumers: s.consumers}
	if s.rp != nil {
		v.OutputQueueLengths = s.rp.Backlogs()
		v.OutPoolUsage = float64(s.rp.BuffersInUse()) / float64(max(1, s.rp.PoolCapacity()))
	}
	if s.isSource {
		v.Watermark, v.Idle = s.sentWm, s.sentIdle
		for _, sp := range s.splits {
			sv := SplitView{Partition: int(sp.partition), Offset: sp.offset, Stop: sp.stop, Paused: sp.paused,
				Finished: sp.finished, Watermark: math.MinInt64}
			if s.mux != nil {
				if wm, idle, ok := s.mux.SplitWatermark(sp.id); ok {
					sv.Watermark, sv.Idle = wm, idle
				}
			}
			v.Splits = append(v.Splits, sv)
		}
		return v
	}
	if s.valve != nil {
		v.Watermark, v.Idle = s.valve.LastOutputWatermark(), s.valve.IsIdle()
	}
	for i, ch := range s.channels {
		g := GateChannel{Index: i, Producer: s.d.InputGate.Producers[i], Ended: ch.ended, Watermark: math.MinInt64}
		for _, b := range ch.buffers {
			if !b.IsEvent {
				g.Queued++
			}
		}
		if s.ck.handler != nil {
			g.Blocked = s.ck.blocked[i]
			g.Persisting = s.ck.pending != nil && s.ck.handler.Persisting(i)
		}
		if s.valve != nil {
			if wm, idle, _, ok := s.valve.ChannelStatus(i); ok {
				g.Watermark, g.Idle = wm, idle
			}
		}
		v.Inputs = append(v.Inputs, g)
	}
	if s.ck.handler != nil {
		v.Checkpoint = s.ck.handler.CurrentCheckpoint()
	}
	switch {
	case s.op != nil:
		v.Keys, v.Windows, v.LateDropped = s.op.NumKeys(), s.op.NumWindows(), s.op.NumLateRecordsDropped()
		cfg := s.op.Config()
		for i, ks := range s.op.Snapshot() {
			if i >= maxViewKeys {
				v.MoreKeys = v.Keys - maxViewKeys
				break
			}
			kv := KeyStateView{Key: ks.Key, KeyGroup: int(keyGroupOf(ks.Key, s.maxP))}
			for _, w := range ks.Windows {
				kv.Windows = append(kv.Windows, WindowView{Start: w.Window.Start, End: w.Window.End, Count: w.Acc.Count,
					Value: w.Acc.Result(cfg.Aggregate), Fired: w.Fired, FiresAt: w.Window.MaxTimestamp(),
					CleanupAt: w.Window.MaxTimestamp() + cfg.AllowedLateness})
			}
			v.KeyedState = append(v.KeyedState, kv)
		}
	case s.proc != nil:
		v.Keys = s.proc.NumKeys()
		entries := s.proc.Entries()
		slices.SortFunc(entries, func(a, b process.Entry) int { return strings.Compare(a.Key, b.Key) })
		for i, e := range entries {
			if i >= maxViewKeys {
				v.MoreKeys = v.Keys - maxViewKeys
				break
			}
			v.KeyedState = append(v.KeyedState, KeyStateView{Key: e.Key, KeyGroup: int(keyGroupOf(e.Key, s.maxP)),
				Count: e.Count, LastMs: e.LastAccessMs, TTLMs: s.cfg.StateTTL.Milliseconds()})
		}
	}
	return v
}

// InputChannelView is one InputChannel with its BufferManager.
type InputChannelView struct {
	Name         string `json:"name"`
	Consumer     string `json:"consumer"`
	Index        int    `json:"index"`
	Producer     string `json:"producer"`
	Subpartition int    `json:"subpartition"`
	Kind         string `json:"channel"` // LocalInputChannel or RemoteInputChannel
	Exclusive    int    `json:"exclusive_buffers"`
	Floating     int    `json:"floating_buffers"`
	Credit       int    `json:"credit"`         // free buffers, each announced to the producer
	InUse        int    `json:"buffers_in_use"` // holding data handed to the task
	Required     int    `json:"required_buffers"`
	Backlog      int    `json:"backlog"` // the producer's last announced backlog
	NextSequence int32  `json:"next_sequence_number"`
	BuffersIn    int64  `json:"buffers_in"`
	RecordsIn    int64  `json:"records_in"`
}

// Inspect implements kernel.Inspector.
func (c *InputChannel) Inspect(now vt.Time) any {
	kind := "RemoteInputChannel"
	if c.local {
		kind = "LocalInputChannel"
	}
	return &InputChannelView{Name: jobgraph.ChannelName(c.consumer, c.index), Consumer: c.consumer, Index: c.index,
		Producer: c.producer, Subpartition: c.subpartition, Kind: kind, Exclusive: c.exclusive, Floating: c.floating,
		Credit: c.available, InUse: c.inUse, Required: c.required, Backlog: max(0, c.required-c.exclusive),
		NextSequence: c.nextSeq, BuffersIn: c.buffersIn, RecordsIn: c.recordsIn}
}

// maxViewRecords bounds the sink records the broker's view lists.
const maxViewRecords = 200

// KafkaView is the broker: the source topic's partitions and the sink
// topic with its transactions.
type KafkaView struct {
	SourceTopic string          `json:"source_topic"`
	Partitions  []PartitionView `json:"partitions"`
	SinkTopic   string          `json:"sink_topic"`
	SinkRecords int64           `json:"sink_records"`
	// the sink's records by transaction state, and partition 0's last
	// stable offset (where a read_committed consumer stops)
	SinkOpen         int   `json:"sink_open"`
	SinkPreCommitted int   `json:"sink_pre_committed"`
	SinkCommitted    int   `json:"sink_committed"`
	SinkAborted      int   `json:"sink_aborted"`
	SinkPlain        int   `json:"sink_plain"`
	LastStableOffset int64 `json:"last_stable_offset"`
	// Recent are the sink topic's last records, oldest first, with their
	// transaction state
	Recent []SinkRecordView `json:"recent"`
}

// PartitionView is one source partition.
type PartitionView struct {
	Partition       int   `json:"partition"`
	EndOffset       int64 `json:"end_offset"`
	ReadOffset      int64 `json:"read_offset"` // the consumer position after its last fetch
	Lag             int64 `json:"lag"`
	CommittedOffset int64 `json:"committed_offset"` // -1: none committed
}

// SinkRecordView is one record of the sink topic.
type SinkRecordView struct {
	Offset          int64  `json:"offset"`
	Key             string `json:"key"`
	Value           string `json:"value"` // the record's JSON
	State           string `json:"state"` // Open, PreCommitted, Committed, Aborted, or "" outside a transaction
	TransactionalID string `json:"transactional_id,omitempty"`
}

// Inspect implements kernel.Inspector.
func (k *Kafka) Inspect(now vt.Time) any {
	v := &KafkaView{SourceTopic: k.source.Name, SinkTopic: k.sink.Topic().Name, SinkRecords: k.sink.Topic().Total(),
		LastStableOffset: k.sink.LastStableOffset(0)}
	v.SinkOpen, v.SinkPreCommitted, v.SinkCommitted, v.SinkAborted, v.SinkPlain = k.sink.Counts()
	for p := range k.source.Partitions {
		end := k.source.EndOffset(p)
		pos := k.position[int32(p)]
		c, ok := k.committed[int32(p)]
		if !ok {
			c = -1
		}
		v.Partitions = append(v.Partitions, PartitionView{Partition: p, EndOffset: end, ReadOffset: pos, Lag: end - pos, CommittedOffset: c})
	}
	end := k.sink.Topic().EndOffset(0)
	from := max(0, end-maxViewRecords)
	for _, r := range k.sink.Topic().Read(0, from, maxViewRecords) {
		st, id := k.sink.StateOf(0, r.Offset)
		rv := SinkRecordView{Offset: r.Offset, Key: r.Key, Value: string(r.Value), TransactionalID: id}
		if id != "" {
			rv.State = st.String()
		}
		v.Recent = append(v.Recent, rv)
	}
	return v
}

// JobManagerView is the JobMaster of the one job.
type JobManagerView struct {
	JobID    string         `json:"jid"`
	JobName  string         `json:"name"`
	Status   string         `json:"state"`
	Attempt  int            `json:"attempt"`
	Restarts int            `json:"restarts"`
	Tasks    []TaskLocation `json:"tasks"` // the current attempt's executions, in deployment order
	Slots    []SlotView     `json:"slots"` // slots offered to the job
	Graph    GraphView      `json:"graph"`
}

// TaskLocation is one execution of the current attempt.
type TaskLocation struct {
	Name        string `json:"name"`
	State       string `json:"state"`
	TaskManager string `json:"task_manager"`
}

// SlotView is a slot the job holds.
type SlotView struct {
	TaskManager  string `json:"task_manager"`
	Slot         int    `json:"slot"`
	AllocationID string `json:"allocation_id"`
}

// GraphView is the JobGraph.
type GraphView struct {
	Vertices       []VertexView `json:"vertices"`
	Edges          []EdgeView   `json:"edges"`
	MaxParallelism int          `json:"max_parallelism"`
	SlotsNeeded    int          `json:"slots_needed"`
}

// VertexView is one JobVertex.
type VertexView struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Parallelism int      `json:"parallelism"`
	Operators   []string `json:"operators"`
}

// EdgeView is one JobEdge.
type EdgeView struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Partitioner string `json:"partitioner"`
}

// Inspect implements kernel.Inspector.
func (j *JobManager) Inspect(now vt.Time) any {
	v := &JobManagerView{JobID: j.jobID(), JobName: j.graph.JobName, Status: j.status, Attempt: j.attempt, Restarts: j.restarts,
		Graph: GraphView{MaxParallelism: j.graph.MaxParallelism, SlotsNeeded: j.graph.SlotsNeeded}}
	for _, name := range j.order {
		v.Tasks = append(v.Tasks, TaskLocation{Name: name, State: j.tasks[name], TaskManager: j.location[name]})
	}
	for _, s := range j.slots {
		v.Slots = append(v.Slots, SlotView{TaskManager: s.tm, Slot: int(s.index), AllocationID: s.alloc})
	}
	for _, x := range j.graph.Vertices {
		v.Graph.Vertices = append(v.Graph.Vertices, VertexView{ID: x.ID, Name: x.Name, Parallelism: x.Parallelism, Operators: x.Operators})
	}
	for _, e := range j.graph.Edges {
		v.Graph.Edges = append(v.Graph.Edges, EdgeView{From: e.From, To: e.To, Partitioner: e.Partitioner})
	}
	return v
}

// TaskManagerView is one TaskExecutor with its slots.
type TaskManagerView struct {
	Name     string   `json:"id"`
	NumSlots int      `json:"slotsNumber"`
	Slots    []string `json:"slots"` // allocation id per slot, "" when free
	Tasks    []string `json:"tasks"` // deployed subtasks still running here
}

// Inspect implements kernel.Inspector.
func (t *TaskManager) Inspect(now vt.Time) any {
	v := &TaskManagerView{Name: t.name, NumSlots: t.numSlots, Slots: slices.Clone(t.slots)}
	for _, task := range t.tasks {
		if _, ok := t.children[task]; ok {
			v.Tasks = append(v.Tasks, task)
		}
	}
	return v
}

// ResourceManagerView is the ResourceManager.
type ResourceManagerView struct {
	TaskManagers []string `json:"task_managers"` // registered, in registration order
	FreeSlots    int      `json:"free_slots"`
}

// Inspect implements kernel.Inspector.
func (r *ResourceManager) Inspect(now vt.Time) any {
	return &ResourceManagerView{TaskManagers: slices.Clone(r.tms), FreeSlots: r.free()}
}

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
func (c *CheckpointCoordinator) Inspect(now vt.Time) any {
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
