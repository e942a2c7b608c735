package session

import (
	"encoding/json"
	"github.com/flinksim/flinksim/sim/checkpoint"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/jobmaster"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/resourcemanager"
	"github.com/flinksim/flinksim/sim/task"
	"github.com/flinksim/flinksim/sim/taskexecutor"
	"github.com/flinksim/flinksim/sim/vt"
	"math"
	"slices"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/keygroup"
)

// State is the whole view of the session at one virtual time: what GET
// /sim/state returns and, without keyed state, what every stream frame
// carries. Times named vt are virtual µs since the run started; *_ms and
// watermarks are event-time or virtual milliseconds as Flink has them.
type State struct {
	VT         vt.Time `json:"vt"`
	Steps      uint64  `json:"steps"`
	Speed      string  `json:"speed"`   // pause, 0.001 .. 100, max
	Ended      bool    `json:"ended"`   // the run is over (job finished, failed, or sim.duration reached)
	Lagging    bool    `json:"lagging"` // the machine cannot keep the chosen pace
	Mode       string  `json:"mode"`    // live, or replay (--replay FILE)
	Generation int     `json:"generation"`
	Seed       uint64  `json:"seed"`
	// Timeline is the slider: the furthest virtual time this timeline
	// reached (or the replayed file's end) and the actions still to come on
	// it after a jump back.
	Timeline Timeline      `json:"timeline"`
	Rerun    *Rerun        `json:"rerun,omitempty"`
	Job      JobState      `json:"job"`
	Vertices []Vertex      `json:"vertices"`
	TMs      []TMState     `json:"taskmanagers"`
	Kafka    Kafka         `json:"kafka"`
	Output   Output        `json:"output"`
	Ckpts    []*Checkpoint `json:"checkpoints"`
	Stats    Stats         `json:"stats"`
	Notices  []Notice      `json:"notices"`
	Flights  []Flight      `json:"inflight"`
	// FlightsMore is the number of envelopes in flight not listed.
	FlightsMore int `json:"inflight_more"`
	// Settings are the run's settings that the diagram needs.
	Settings ViewSettings `json:"settings"`
	// Scenario is the guided scenario this session was started from
	// (scenario.go; "" when none).
	Scenario string `json:"scenario,omitempty"`
}

// Timeline is what the slider spans.
type Timeline struct {
	Max    vt.Time `json:"max"`    // furthest virtual time reached (µs)
	Future int     `json:"future"` // live actions ahead of the clock that a new action would drop
}

// Rerun is a re-run under way (a jump back or new settings).
type Rerun struct {
	At     vt.Time `json:"at"`     // where the re-run is (µs)
	Target vt.Time `json:"target"` // where it goes
}

// ViewSettings are the settings the page draws with.
type ViewSettings struct {
	Isolation      string `json:"isolation"`
	Unaligned      bool   `json:"unaligned"`
	Idleness       string `json:"idleness"`
	Guarantee      string `json:"delivery_guarantee"`
	Backend        string `json:"state_backend"`
	Interval       string `json:"checkpoint_interval"`
	SourceTopic    string `json:"source_topic"`
	SinkTopic      string `json:"sink_topic"`
	Operator       string `json:"operator"`
	TimeChar       string `json:"time_characteristic"`
	Slots          int    `json:"slots"`
	MaxParallelism int    `json:"max_parallelism"`
	BufferRecords  int    `json:"buffer_records"`
	// MaxBuffersPerChannel is taskmanager.network.memory.max-buffers-per-channel:
	// the most buffers a subpartition holds (a local channel's gauge).
	MaxBuffersPerChannel int `json:"max_buffers_per_channel"`
}

// JobState is the JobManager's box.
type JobState struct {
	ID       string `json:"jid"`
	Name     string `json:"name"`
	Status   string `json:"state"`
	Attempt  int    `json:"attempt"`
	Restarts int    `json:"restarts"`
	// Checkpoint is the CheckpointCoordinator's current (in progress) or
	// last checkpoint; nil before the first.
	Checkpoint  *Checkpoint `json:"checkpoint,omitempty"`
	SlotsNeeded int         `json:"slots_needed"`
}

// Vertex is one JobVertex with its subtasks, column by column.
type Vertex struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Parallelism int       `json:"parallelism"`
	Operators   []string  `json:"operators"`
	Partitioner string    `json:"input_partitioner,omitempty"` // of the edge into it
	Subtasks    []Subtask `json:"subtasks"`
}

// Subtask is one subtask's box.
type Subtask struct {
	Name        string `json:"name"` // execution (actor) name, e.g. window-0#1
	Index       int    `json:"index"`
	Attempt     int    `json:"attempt"`
	TaskManager string `json:"task_manager"`
	Status      string `json:"status"`
	// ms per second of the last metrics tick, and Flink's backpressure level
	// of it (JobVertexBackPressureHandler: ratio <= 0.10 ok, <= 0.5 low).
	Busy              int64  `json:"busy"`
	BackPressured     int64  `json:"backpressured"`
	Idle              int64  `json:"idle"`
	BackPressureLevel string `json:"backpressure_level"`
	BlockedNow        bool   `json:"blocked_now"` // waiting on a full output now
	RecordsIn         int64  `json:"records_in"`
	RecordsOut        int64  `json:"records_out"`
	Watermark         int64  `json:"watermark"` // ms; math.MinInt64 before any
	WatermarkIdle     bool   `json:"watermark_idle"`
	// a source reader's splits
	Splits []task.SplitView `json:"splits,omitempty"`
	// a keyed subtask's key groups and state
	KeyGroups   [2]int `json:"key_groups"`
	Keys        int    `json:"keys"`
	Windows     int    `json:"windows"`
	LateDropped int64  `json:"late_dropped"`
	// the InputGate, one gauge per channel
	Inputs       []Channel `json:"inputs,omitempty"`
	OutPoolUsage float64   `json:"out_pool_usage"`
	OutputQueues []int     `json:"output_queues,omitempty"`
	Checkpoint   int64     `json:"checkpoint"`
	// The accumulated busy, backpressured and idle time of this execution
	// since its mailbox started (ms, as of its last metrics tick; Flink's
	// accumulateBusyTimeMs, accumulateBackPressuredTimeMs,
	// accumulateIdleTimeMs of TaskIOMetricGroup, summed over the current
	// attempts into IOMetricsInfo's accumulated-*-time).
	AccBusyMs          float64 `json:"accumulated_busy_ms"`
	AccBackPressuredMs int64   `json:"accumulated_backpressured_ms"`
	AccIdleMs          int64   `json:"accumulated_idle_ms"`
	// KeyedState is only in GET /sim/state (not in stream frames).
	KeyedState []task.KeyStateView `json:"keyed_state,omitempty"`
	MoreKeys   int                 `json:"more_keys,omitempty"`
	// Planned: the JobGraph has this subtask but the JobManager has no
	// execution of it now (before the deployment of an attempt: SCHEDULED
	// while the job is RUNNING and waits for slots).
	Planned bool `json:"planned,omitempty"`
	// Lost: the execution's TaskManager is gone but the JobManager does not
	// know yet (its heartbeat has not timed out): Status is what the
	// JobManager believes (RUNNING), the figures are the last the execution
	// reported, as Flink's web UI keeps the metrics it last fetched.
	Lost bool `json:"lost,omitempty"`
}

// Channel is one input channel's gauge.
type Channel struct {
	Index      int    `json:"index"`
	Producer   string `json:"producer"`
	Local      bool   `json:"local"`
	Queued     int    `json:"queued"` // data buffers waiting in the gate
	InUse      int    `json:"in_use"` // buffers holding data handed to the task
	Credit     int    `json:"credit"` // free buffers announced to the producer
	Capacity   int    `json:"capacity"`
	Backlog    int    `json:"backlog"`
	Blocked    bool   `json:"blocked"`    // ⏸ checkpoint alignment
	Persisting bool   `json:"persisting"` // ↯ in-flight data persisted (unaligned)
	Watermark  int64  `json:"watermark"`
	WmIdle     bool   `json:"watermark_idle"`
	Ended      bool   `json:"ended"`
	RecordsIn  int64  `json:"records_in"`
	// Subpartition is the producer's subpartition the channel reads (a
	// LocalInputChannel reads its view in place: the gauge shows its backlog).
	Subpartition int `json:"subpartition"`
}

// TMState is one TaskManager with its slots.
type TMState struct {
	Name  string `json:"name"`
	Alive bool   `json:"alive"` // its process runs (false once killed)
	// LossDetected: a TaskManager that is not alive and whose loss the
	// cluster noticed: the JobManager's heartbeat to it timed out (or, for
	// one that held none of the job's tasks, the ResourceManager's). Before
	// that it is lost but not yet detected, and the JobManager still
	// believes its tasks run.
	LossDetected bool     `json:"loss_detected,omitempty"`
	Slots        []string `json:"slots"` // allocation id, "" when free
	// Tasks are the current attempt's executions there: the TaskManager's
	// own while it lives, then those the JobManager believes are there
	// (until it notices the loss and cancels them).
	Tasks    []string `json:"tasks"`
	DataPort int32    `json:"data_port,omitempty"`
}

// Kafka is the broker: the source topic's partitions and the sink topic.
type Kafka struct {
	SourceTopic string      `json:"source_topic"`
	Partitions  []Partition `json:"partitions"`
	SinkTopic   string      `json:"sink_topic"`
	SinkRecords int64       `json:"sink_records"`
}

// Partition is one source partition.
type Partition struct {
	kafka.PartitionView
	Reader    string `json:"reader,omitempty"` // the source subtask that owns the split
	Paused    bool   `json:"paused"`           // watermark alignment paused the split
	UserPause bool   `json:"user_paused"`      // pause-partition: the producer stopped
	Watermark int64  `json:"watermark"`
	Idle      bool   `json:"idle"`
}

// Output is what the sink's consumers see.
type Output struct {
	cluster.OutputSummary
	Open             int                    `json:"open"`
	PreCommitted     int                    `json:"pre_committed"`
	Committed        int                    `json:"committed"`
	Aborted          int                    `json:"aborted"`
	Plain            int                    `json:"plain"`
	LastStableOffset int64                  `json:"last_stable_offset"`
	Recent           []kafka.SinkRecordView `json:"recent"`
	Late             []LateRecord           `json:"late"`
	LateCount        int64                  `json:"late_count"`
}

// Stats is the Stats panel.
type Stats struct {
	JobStatus         string      `json:"job_status"`
	RecordsRead       int64       `json:"records_read"`
	WindowsFired      int64       `json:"windows_fired"`
	ResultsVisible    int64       `json:"results_visible"`
	ResultsUncommited int64       `json:"results_uncommitted"`
	Duplicates        int64       `json:"duplicates"`
	LateDropped       int64       `json:"late_dropped"`
	LateSideOutput    int64       `json:"late_side_output"`
	ExpiredState      int64       `json:"expired_state_reads"`
	Checkpoints       int64       `json:"checkpoints_completed"`
	CheckpointsFailed int64       `json:"checkpoints_failed"`
	LastCheckpoint    *Checkpoint `json:"last_checkpoint,omitempty"`
	Restarts          int         `json:"restarts"`
	MaxBackPressure   int64       `json:"max_backpressure"` // ms/s over the run
	MaxBPTask         string      `json:"max_backpressure_task,omitempty"`
	BackPressureNow   int64       `json:"backpressure_now"` // highest of the last tick
	BPNowTask         string      `json:"backpressure_now_task,omitempty"`
}

// views are one Inspect of every actor, decoded.
type views struct {
	jm         *jobmaster.JobMasterView
	kafka      *kafka.KafkaView
	rm         *resourcemanager.ResourceManagerView
	tms        map[string]*taskexecutor.TaskExecutorView
	subtasks   map[string]*task.SubtaskView
	channels   map[string]*exchange.InputChannelView
	partPaused map[int]bool // user-paused partitions (from the broker's view when it says so)
	coord      *checkpoint.CheckpointCoordinatorView
	// last are the subtask views last seen of the current attempt's
	// executions, for those whose actor is gone (a killed TaskManager's):
	// the loop keeps them (loop.rememberSubtasks).
	last map[string]*task.SubtaskView
}

// decodeViews sorts Inspect's answer by actor kind.
func decodeViews(raw map[string]json.RawMessage) *views {
	v := &views{tms: map[string]*taskexecutor.TaskExecutorView{}, subtasks: map[string]*task.SubtaskView{},
		channels: map[string]*exchange.InputChannelView{}, partPaused: map[int]bool{}}
	for name, b := range raw {
		id, _ := jobgraph.ParseActorID(name)
		switch id.Kind() {
		case jobgraph.ActorJobManager:
			v.jm = &jobmaster.JobMasterView{}
			_ = json.Unmarshal(b, v.jm)
		case jobgraph.ActorKafka:
			v.kafka = &kafka.KafkaView{}
			_ = json.Unmarshal(b, v.kafka)
			for _, p := range v.kafka.Partitions {
				if p.Paused {
					v.partPaused[p.Partition] = true
				}
			}
		case jobgraph.ActorCheckpointCoordinator:
			v.coord = &checkpoint.CheckpointCoordinatorView{}
			_ = json.Unmarshal(b, v.coord)
		case jobgraph.ActorResourceManager:
			v.rm = &resourcemanager.ResourceManagerView{}
			_ = json.Unmarshal(b, v.rm)
		case jobgraph.ActorTaskManager:
			t := &taskexecutor.TaskExecutorView{}
			_ = json.Unmarshal(b, t)
			v.tms[name] = t
		case jobgraph.ActorInputChannel:
			c := &exchange.InputChannelView{}
			_ = json.Unmarshal(b, c)
			v.channels[name] = c
		case jobgraph.ActorSubtask:
			s := &task.SubtaskView{}
			_ = json.Unmarshal(b, s)
			v.subtasks[name] = s
		}
	}
	return v
}

// backPressureLevel is JobVertexBackPressureHandler.getBackPressureLevel
// of a back-pressured ratio (ms per second / 1000).
func backPressureLevel(bpMsPerSecond int64) string {
	r := float64(bpMsPerSecond) / 1000
	switch {
	case r <= 0.10:
		return "ok"
	case r <= 0.5:
		return "low"
	}
	return "high"
}

// buildVertices lays out the current attempt's executions by JobVertex,
// each in the state the JobManager believes (the ExecutionGraph's, as
// Flink's web UI shows it) with the figures of its own view, or of the last
// view seen when its actor is gone; the subtasks the JobManager has no
// execution of are drawn from the JobGraph (plannedSubtask).
func buildVertices(v *views, keyed bool) []Vertex {
	if v.jm == nil {
		return nil
	}
	var out []Vertex
	into := map[string]string{}
	from := map[string]string{}
	par := map[string]int{}
	for _, e := range v.jm.Graph.Edges {
		into[e.To] = e.Partitioner
		from[e.To] = e.From
	}
	for _, gv := range v.jm.Graph.Vertices {
		par[gv.ID] = gv.Parallelism
	}
	waiting := "CREATED"
	if v.jm.Status == "RUNNING" {
		waiting = "SCHEDULED" // DefaultScheduler: the job runs while its executions wait for slots
	}
	for _, gv := range v.jm.Graph.Vertices {
		vx := Vertex{ID: gv.ID, Name: gv.Name, Parallelism: gv.Parallelism, Operators: gv.Operators, Partitioner: into[gv.ID]}
		subs := make([]Subtask, 0, gv.Parallelism)
		have := map[int]bool{}
		for _, t := range v.jm.Tasks {
			if t.Vertex != gv.ID || have[t.Index] {
				continue
			}
			have[t.Index] = true
			var st Subtask
			if sv, ok := v.subtasks[t.Name]; ok {
				st = buildSubtask(v, sv, keyed)
			} else if sv, ok := v.last[t.Name]; ok {
				st = buildSubtask(v, sv, keyed)
				st.Lost = !terminal(t.State)
			} else {
				st = plannedSubtask(gv.ID, t.Index, from[gv.ID], par[from[gv.ID]], into[gv.ID], v.jm.Graph.MaxParallelism, gv.Parallelism)
				st.Name, st.Planned = t.Name, false
				st.Lost = !terminal(t.State) && v.tms[t.TaskManager] == nil
			}
			st.Status, st.TaskManager, st.Index = t.State, t.TaskManager, t.Index
			subs = append(subs, st)
		}
		for i := 0; i < gv.Parallelism; i++ {
			if !have[i] {
				st := plannedSubtask(gv.ID, i, from[gv.ID], par[from[gv.ID]], into[gv.ID], v.jm.Graph.MaxParallelism, gv.Parallelism)
				st.Status = waiting
				subs = append(subs, st)
			}
		}
		slices.SortFunc(subs, func(a, b Subtask) int { return a.Index - b.Index })
		vx.Subtasks = subs
		out = append(out, vx)
	}
	return out
}

// plannedSubtask is a subtask of the JobGraph that has no execution now.
func plannedSubtask(vertex string, i int, upstream string, upstreamP int, partitioner string, maxP, p int) Subtask {
	st := Subtask{Name: jobgraph.SubtaskName(vertex, i, 0), Index: i, Status: "CREATED", Watermark: math.MinInt64,
		BackPressureLevel: "ok", Planned: true}
	if upstream == "" {
		return st
	}
	if rng, err := keygroup.RangeForOperatorIndex(maxP, p, i); err == nil && vertex == jobgraph.VertexKeyed {
		st.KeyGroups = [2]int{rng.Start, rng.End}
	}
	producers := []int{i}
	if partitioner != jobgraph.PartitionForward {
		producers = producers[:0]
		for j := 0; j < upstreamP; j++ {
			producers = append(producers, j)
		}
	}
	for k, j := range producers {
		st.Inputs = append(st.Inputs, Channel{Index: k, Producer: jobgraph.SubtaskName(upstream, j, 0), Watermark: math.MinInt64})
	}
	return st
}

func buildSubtask(v *views, s *task.SubtaskView, keyed bool) Subtask {
	st := Subtask{Name: s.Name, Index: s.Index, Attempt: s.Attempt, TaskManager: s.TaskManager, Status: s.Status,
		Busy: s.BusyTimeMsPerSecond, BackPressured: s.BackPressuredTimeMsPerSecond, Idle: s.IdleTimeMsPerSecond,
		BackPressureLevel: backPressureLevel(s.BackPressuredTimeMsPerSecond), BlockedNow: s.Backpressured,
		RecordsIn: s.NumRecordsIn, RecordsOut: s.NumRecordsOut, Watermark: s.Watermark, WatermarkIdle: s.Idle,
		Splits: s.Splits, KeyGroups: [2]int{s.KeyGroupStart, s.KeyGroupEnd}, Keys: s.Keys, Windows: s.Windows,
		LateDropped: s.LateDropped, OutPoolUsage: s.OutPoolUsage, OutputQueues: s.OutputQueueLengths,
		Checkpoint: s.Checkpoint}
	if keyed {
		st.KeyedState, st.MoreKeys = s.KeyedState, s.MoreKeys
	}
	for _, g := range s.Inputs {
		ch := Channel{Index: g.Index, Producer: g.Producer, Queued: g.Queued, Blocked: g.Blocked, Persisting: g.Persisting,
			Watermark: g.Watermark, WmIdle: g.Idle, Ended: g.Ended}
		if c, ok := v.channels[jobgraph.ChannelName(s.Name, g.Index)]; ok {
			ch.Local = c.Kind == "LocalInputChannel"
			ch.InUse, ch.Credit, ch.Capacity, ch.Backlog = c.InUse, c.Credit, c.Exclusive+c.Floating, c.Backlog
			ch.RecordsIn, ch.Subpartition = c.RecordsIn, c.Subpartition
		}
		st.Inputs = append(st.Inputs, ch)
	}
	return st
}

// buildTMs lists every TaskManager seen in this session, the dead ones too.
func buildTMs(v *views, seen []string) []TMState {
	registered := map[string]bool{}
	if v.rm != nil {
		for _, tm := range v.rm.TaskManagers {
			registered[tm] = true
		}
	}
	var out []TMState
	for _, name := range seen {
		t, ok := v.tms[name]
		st := TMState{Name: name, Alive: ok}
		if ok {
			st.Slots, st.DataPort = t.Slots, t.DataPort
			for _, x := range t.Tasks {
				// of the current attempt, not ended as the JobManager sees it
				// (a task it canceled that the TaskManager has not stopped yet
				// is gone from the job)
				if v.jm == nil || slices.ContainsFunc(v.jm.Tasks, func(c jobmaster.TaskLocation) bool { return c.Name == x && !terminal(c.State) }) {
					st.Tasks = append(st.Tasks, x)
				}
			}
		} else {
			if v.jm != nil {
				for _, x := range v.jm.Tasks {
					if x.TaskManager == name && !terminal(x.State) {
						st.Tasks = append(st.Tasks, x.Name)
					}
				}
			}
			// noticed by the JobManager's heartbeat; one that ran none of the
			// job's tasks, by the ResourceManager's
			st.LossDetected = v.jm != nil && slices.Contains(v.jm.LostTaskManagers, name) ||
				len(st.Tasks) == 0 && v.rm != nil && !registered[name]
		}
		out = append(out, st)
	}
	return out
}

// buildKafka joins the broker's partitions with the readers' splits.
func buildKafka(v *views, vertices []Vertex) Kafka {
	k := Kafka{}
	if v.kafka == nil {
		return k
	}
	k.SourceTopic, k.SinkTopic, k.SinkRecords = v.kafka.SourceTopic, v.kafka.SinkTopic, v.kafka.SinkRecords
	type split struct {
		reader string
		sv     task.SplitView
	}
	owner := map[int]split{}
	for _, vx := range vertices {
		for _, s := range vx.Subtasks {
			for _, sp := range s.Splits {
				owner[sp.Partition] = split{s.Name, sp}
			}
		}
	}
	for _, p := range v.kafka.Partitions {
		pt := Partition{PartitionView: p, Watermark: math.MinInt64, UserPause: v.partPaused[p.Partition]}
		if o, ok := owner[p.Partition]; ok {
			pt.Reader, pt.Paused, pt.Watermark, pt.Idle = o.reader, o.sv.Paused, o.sv.Watermark, o.sv.Idle
		}
		k.Partitions = append(k.Partitions, pt)
	}
	return k
}

// isFlightDrawn says whether an envelope is traffic worth drawing: not a
// timer to oneself, not the scheduler's own bookkeeping.
func isFlightDrawn(e *messages.Envelope) bool {
	return e.From != e.To && e.From != "scheduler"
}

func terminal(status string) bool {
	return status == "FINISHED" || status == "FAILED" || status == "CANCELED"
}
