package task

import (
	"math"
	"slices"
	"strings"

	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/process"
	"github.com/flinksim/flinksim/sim/status"
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
	OutputBuffersHeld  []int    `json:"output_buffers_held,omitempty"` // pool buffers each subpartition holds: queued, being written or read by a local consumer
	OutPoolUsage       float64  `json:"outPoolUsage"`
	OutPoolInUse       int      `json:"out_pool_buffers_in_use"` // buffers of the output pool holding data
	OutPoolSize        int      `json:"out_pool_size"`           // the pool: subpartitions × buffers-per-channel + floating-buffers-per-gate
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
func (t *StreamTask) Inspect(now vt.Time) any {
	st := t.status
	if st == 0 {
		st = status.Deploying // spawned, not started yet
	}
	v := &SubtaskView{Name: t.name, Task: jobgraph.BaseSubtaskName(t.name), Vertex: t.d.JobVertex, TaskName: t.d.TaskName,
		Index: t.index, Parallelism: int(t.d.Parallelism), Attempt: int(t.d.Attempt), TaskManager: t.tm, Status: st.String(),
		Chain: t.d.Chain, NumRecordsIn: t.m.recordsIn, NumRecordsOut: t.m.recordsOut,
		KeyGroupStart: int(t.d.KeyGroupStart), KeyGroupEnd: int(t.d.KeyGroupEnd),
		Watermark: math.MinInt64, Consumers: t.consumers}
	if t.running { // the mailbox keeps the busy time once the task runs
		last := t.mb.Last()
		v.BusyTimeMsPerSecond, v.BackPressuredTimeMsPerSecond, v.IdleTimeMsPerSecond = last.Busy, last.BackPressured, last.Idle
		v.Backpressured = t.mb.Blocked()
	}
	if t.rp != nil {
		v.OutputQueueLengths, v.OutputBuffersHeld = t.rp.QueueLengths(), t.rp.Held()
		v.OutPoolUsage = t.rp.Pool().OutPoolUsage()
		v.OutPoolInUse, v.OutPoolSize = t.rp.Pool().BuffersInUse(), t.rp.Pool().PoolCapacity()
	}
	t.head.inspect(v)
	return v
}

// inspect fills the view's keyed state: up to maxViewKeys keys by key, with
// their windows or their ValueState counter.
func (c *operatorChain) inspect(v *SubtaskView) {
	switch {
	case c.op != nil:
		v.Keys, v.Windows, v.LateDropped = c.op.NumKeys(), c.op.NumWindows(), c.op.NumLateRecordsDropped()
		cfg := c.op.Config()
		for i, ks := range c.op.Snapshot() {
			if i >= maxViewKeys {
				v.MoreKeys = v.Keys - maxViewKeys
				break
			}
			kv := KeyStateView{Key: ks.Key, KeyGroup: int(keyGroupOf(ks.Key, c.t.maxP))}
			for _, w := range ks.Windows {
				kv.Windows = append(kv.Windows, WindowView{Start: w.Window.Start, End: w.Window.End, Count: w.Acc.Count,
					Value: w.Acc.Result(cfg.Aggregate), Fired: w.Fired, FiresAt: w.Window.MaxTimestamp(),
					CleanupAt: w.Window.MaxTimestamp() + cfg.AllowedLateness})
			}
			v.KeyedState = append(v.KeyedState, kv)
		}
	case c.proc != nil:
		v.Keys = c.proc.NumKeys()
		entries := c.proc.Entries()
		slices.SortFunc(entries, func(a, b process.Entry) int { return strings.Compare(a.Key, b.Key) })
		for i, e := range entries {
			if i >= maxViewKeys {
				v.MoreKeys = v.Keys - maxViewKeys
				break
			}
			v.KeyedState = append(v.KeyedState, KeyStateView{Key: e.Key, KeyGroup: int(keyGroupOf(e.Key, c.t.maxP)),
				Count: e.Count, LastMs: e.LastAccessMs, TTLMs: c.t.cfg.StateTTL.Milliseconds()})
		}
	}
}
