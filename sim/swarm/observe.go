package swarm

import (
	"fmt"
	"math"
	"slices"

	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/vt"
)

// Observer reads the typed events of one run, in log order, and keeps what
// the checks need. The invariants that can be judged event by event
// (watermarks never go back, credits never negative) are judged here: the
// first breach of each is kept with its virtual time and actor.
type Observer struct {
	healAt  vt.Time
	horizon int64              // event time the sink's watermark must pass (ms)
	reached map[string]vt.Time // per keyed subtask: when its watermark first passed the horizon

	wm         map[string]int64 // per subtask: the last watermark it reported
	violations []Violation
	seen       map[string]bool // invariants already reported

	// what the checks read
	LateSide          []KeyTs               // late_side_output events, any attempt
	LateFirings       []WindowID            // firings after the first (firing >= 2), and sessions a late record merged after they fired, any attempt
	fired             map[string][][2]int64 // per key: the session windows that fired
	sessions          bool
	CheckpointsAfter  int              // checkpoints completed after the heal
	Failovers         int              // failover events
	NoResource        bool             // the slot request timed out at least once
	keyedAttempt      int64            // the last attempt submitted of the keyed vertex
	keyedTasks        map[string]bool  // its subtasks
	snapshotWM        map[string]int64 // per keyed subtask: its watermark (a lower bound) at its last snapshot
	JobStatus         string           // the last job status
	StopSavepointDone bool             // a stop-with-savepoint completed
	Partitions        []eventlog.NetworkPartitionHealed

	// fencing, checkpoint ids and restores (no_fenced_attempt,
	// checkpoint_ids_increase, restore_latest_checkpoint)
	attempt         int64          // the last attempt submitted (-1: none yet)
	lastTriggered   int64          // the last checkpoint id triggered
	lastCompleted   int64          // the last checkpoint id completed
	completed       map[int64]bool // every checkpoint or savepoint completed
	restorable      int64          // the newest a restore must use: the latest checkpoint, or the savepoint a new job started from (0: none)
	lastStop        int64          // the last stop-with-savepoint completed
	job             string         // the current job's id
	Stalls, RPCLost int            // stalled hosts and lost RPCs, for the report

	// Kafka outages and the transactions the broker aborted for
	// transaction.timeout.ms while one lasted (expected_transaction_timeout_loss)
	kafkaOutages     [][2]vt.Time
	TimedOutInOutage []string
}

// KeyTs is a record's key and event time (ms).
type KeyTs struct {
	Key string
	Ts  int64
}

// WindowID names one window of one key.
type WindowID struct {
	Key        string
	Start, End int64
}

// Violation is a broken invariant: its name, where and when, and what.
type Violation struct {
	Invariant string
	Actor     string
	VT        vt.Time
	What      string
}

func (v Violation) String() string {
	s := v.Invariant + ": " + v.What
	if v.Actor != "" {
		s += " (" + v.Actor + " at " + v.VT.String() + ")"
	}
	return s
}

// NewObserver observes a run of scenario s.
func NewObserver(s *Scenario) *Observer {
	return &Observer{healAt: vt.FromDuration(s.HealAt), horizon: s.Horizon(), sessions: s.Window.Type == "session", reached: map[string]vt.Time{}, wm: map[string]int64{},
		seen: map[string]bool{}, fired: map[string][][2]int64{}, keyedTasks: map[string]bool{}, snapshotWM: map[string]int64{},
		keyedAttempt: -1, attempt: -1, completed: map[int64]bool{}}
}

// Violations are the breaches found while observing, in log order.
func (ob *Observer) Violations() []Violation { return ob.violations }

func (ob *Observer) violate(inv, actor string, t vt.Time, what string) {
	if ob.seen[inv] {
		return
	}
	ob.seen[inv] = true
	ob.violations = append(ob.violations, Violation{Invariant: inv, Actor: actor, VT: t, What: what})
}

// keyedSubtask reports whether actor is a subtask of the keyed vertex
// (window-N or window-N#A, not one of its input channels) and its attempt.
func keyedSubtask(actor string) (attempt int64, ok bool) {
	id, err := jobgraph.ParseActorID(actor)
	if err != nil || id.Kind() != jobgraph.ActorSubtask || id.Vertex() != jobgraph.VertexKeyed {
		return 0, false
	}
	return int64(id.Attempt()), true
}

// watermark records a watermark a subtask reported and checks that it did
// not go back.
func (ob *Observer) watermark(actor string, t vt.Time, w int64) {
	if last, ok := ob.wm[actor]; ok && w < last {
		ob.violate("watermark_monotonic", actor, t, fmt.Sprintf("the watermark went back from %d to %d", last, w))
	}
	if last, ok := ob.wm[actor]; !ok || w > last {
		ob.wm[actor] = w
	}
	if _, done := ob.reached[actor]; !done && w >= ob.horizon {
		ob.reached[actor] = t
	}
}

// ConvergedAt is when the sink's watermark passed the horizon: the latest
// time a subtask of the keyed vertex's last deployment got there; false if
// one did not.
func (ob *Observer) ConvergedAt() (vt.Time, bool) {
	var at vt.Time
	for t := range ob.keyedTasks {
		x, ok := ob.reached[t]
		if !ok {
			return 0, false
		}
		at = max(at, x)
	}
	return at, len(ob.keyedTasks) > 0
}

// Observe takes the next event of the log.
func (ob *Observer) Observe(ev *eventlog.LogEvent) {
	t := vt.Of(ev.Vt)
	switch e := eventlog.Decode(ev).(type) {
	case eventlog.JobStatus:
		ob.JobStatus = e.Status
		if e.JobID != ob.job {
			if ob.job != "" && ob.lastStop > 0 {
				// a rescale or a reconfiguration: the new job starts from
				// the stop-with-savepoint, its first restore point
				ob.restorable = max(ob.restorable, ob.lastStop)
			}
			ob.job = e.JobID
		}
	case eventlog.TaskState:
		ob.taskState(ev.Actor, t, e)
	case eventlog.CheckpointTriggered:
		if e.CheckpointID <= ob.lastTriggered {
			ob.violate(InvCheckpointIDs, ev.Actor, t, fmt.Sprintf("checkpoint %d triggered after checkpoint %d", e.CheckpointID, ob.lastTriggered))
		}
		ob.lastTriggered = max(ob.lastTriggered, e.CheckpointID)
	case eventlog.Restore:
		ob.restore(ev.Actor, t, e)
	case eventlog.HostStalled:
		ob.Stalls++
	case eventlog.RPCLost:
		ob.RPCLost++
	case eventlog.KafkaUnavailable:
		ob.kafkaOutages = append(ob.kafkaOutages, [2]vt.Time{t, t + vt.FromMillis(e.DurationMs)})
	case eventlog.Transaction:
		ob.transaction(t, e)
	case eventlog.WindowFired:
		ob.watermark(ev.Actor, t, e.Watermark)
		w := WindowID{e.Key, e.WindowStart, e.WindowEnd}
		if e.Firing > 1 {
			ob.LateFirings = append(ob.LateFirings, w)
		}
		// a late record that merges a session that already fired into a
		// bigger one fires the merged window too: both count as late
		if !ob.sessions {
			break
		}
		for _, p := range ob.fired[e.Key] {
			if p != [2]int64{w.Start, w.End} && p[0] < w.End && w.Start < p[1] {
				ob.LateFirings = append(ob.LateFirings, w, WindowID{e.Key, p[0], p[1]})
			}
		}
		if !slices.Contains(ob.fired[e.Key], [2]int64{w.Start, w.End}) {
			ob.fired[e.Key] = append(ob.fired[e.Key], [2]int64{w.Start, w.End})
		}
	case eventlog.TaskMetrics:
		if e.HasWatermark {
			ob.watermark(ev.Actor, t, e.Watermark)
		}
	case eventlog.LateSideOutput:
		ob.LateSide = append(ob.LateSide, KeyTs{e.Key, e.Timestamp})
	case eventlog.BacklogAnnouncement:
		if e.FreeBuffers < 0 || e.BuffersInUse < 0 || e.FloatingBuffers < 0 || e.Backlog < 0 {
			ob.violate("credit_non_negative", ev.Actor, t, fmt.Sprintf("backlog %d, free buffers %d, in use %d, floating %d",
				e.Backlog, e.FreeBuffers, e.BuffersInUse, e.FloatingBuffers))
		}
	case eventlog.CheckpointCompleted:
		if t > ob.healAt {
			ob.CheckpointsAfter++
		}
		if e.CheckpointID <= ob.lastCompleted {
			ob.violate(InvCheckpointIDs, ev.Actor, t, fmt.Sprintf("checkpoint %d completed after checkpoint %d", e.CheckpointID, ob.lastCompleted))
		}
		ob.lastCompleted = max(ob.lastCompleted, e.CheckpointID)
		ob.completed[e.CheckpointID] = true
		switch e.CheckpointKind {
		case "periodic", "manual":
			ob.restorable = max(ob.restorable, e.CheckpointID)
		case "stop-with-savepoint":
			ob.lastStop = e.CheckpointID
		}
		if e.CheckpointKind == "stop-with-savepoint" {
			ob.StopSavepointDone = true
		}
	case eventlog.CheckpointSnapshot:
		if _, ok := keyedSubtask(ev.Actor); ok {
			if w, seen := ob.wm[ev.Actor]; seen {
				ob.snapshotWM[ev.Actor] = w
			}
		}
	case eventlog.SubmitTask:
		ob.attempt = max(ob.attempt, e.Attempt)
		if a, ok := keyedSubtask(e.Task); ok {
			if a > ob.keyedAttempt {
				ob.keyedAttempt = a
				clear(ob.keyedTasks)
			}
			if a == ob.keyedAttempt {
				ob.keyedTasks[e.Task] = true
			}
		}
	case eventlog.Failover:
		ob.Failovers++
	case eventlog.NoResourceAvailable:
		ob.NoResource = true
	case eventlog.NetworkPartitionHealed:
		ob.Partitions = append(ob.Partitions, e)
	}
}

// taskState checks that the JobMaster took no state from an execution of
// an attempt older than the last one submitted: a zombie's report (a
// TaskManager that stalled or was cut off while the job restarted) must be
// fenced by its ExecutionAttemptID.
func (ob *Observer) taskState(actor string, t vt.Time, e eventlog.TaskState) {
	if actor != jobgraph.JobManagerName {
		return // a TaskManager's own account of its task
	}
	id, err := jobgraph.ParseActorID(e.Task)
	if err != nil || id.Kind() != jobgraph.ActorSubtask {
		return
	}
	if a := int64(id.Attempt()); a < ob.attempt {
		ob.violate(InvNoFenced, actor, t, fmt.Sprintf("the JobMaster took state %s from %s (attempt %d) while attempt %d is current",
			e.State, e.Task, a, ob.attempt))
	}
}

// restore checks that a restore uses the latest completed checkpoint: the
// newest periodic or manual checkpoint completed, or the savepoint a
// rescaled or reconfigured job started from if that is newer (a savepoint
// that only was taken is no restore point: CheckpointCoordinator restores
// from its CompletedCheckpointStore, which keeps checkpoints), and a
// checkpoint that did complete; from the starting offsets only when there is
// none.
func (ob *Observer) restore(actor string, t vt.Time, e eventlog.Restore) {
	switch {
	case e.From == "checkpoint" && !ob.completed[e.CheckpointID]:
		ob.violate(InvRestoreLatest, actor, t, fmt.Sprintf("restored checkpoint %d, which never completed", e.CheckpointID))
	case e.From == "checkpoint" && e.CheckpointID < ob.restorable:
		ob.violate(InvRestoreLatest, actor, t, fmt.Sprintf("restored checkpoint %d while checkpoint %d is the latest completed", e.CheckpointID, ob.restorable))
	case e.From != "checkpoint" && ob.restorable > 0:
		ob.violate(InvRestoreLatest, actor, t, fmt.Sprintf("restored from the %s while checkpoint %d is the latest completed", e.From, ob.restorable))
	}
}

// SinkWatermark is the watermark of the keyed operator (the sink's input, or
// the operator chained with it): the minimum over the subtasks of its last
// deployment of the last watermark each reported; Long.MIN_VALUE when one
// reported none, or nothing was deployed.
func (ob *Observer) SinkWatermark() int64 {
	if len(ob.keyedTasks) == 0 {
		return math.MinInt64
	}
	w := int64(math.MaxInt64)
	for t := range ob.keyedTasks {
		x, ok := ob.wm[t]
		if !ok {
			return math.MinInt64
		}
		w = min(w, x)
	}
	return w
}

// SnapshotWatermark is the same minimum at each subtask's last snapshot (a
// lower bound: the last watermark it reported before it): every window of
// its keys ending at or before it had fired before that snapshot.
func (ob *Observer) SnapshotWatermark() int64 {
	if len(ob.keyedTasks) == 0 {
		return math.MinInt64
	}
	w := int64(math.MaxInt64)
	for t := range ob.keyedTasks {
		x, ok := ob.snapshotWM[t]
		if !ok {
			return math.MinInt64
		}
		w = min(w, x)
	}
	return w
}

// transaction notes a transaction the broker aborted for
// transaction.timeout.ms during a Kafka outage, with records: Flink's
// documented data-loss trap, not a bug of the job.
func (ob *Observer) transaction(t vt.Time, e eventlog.Transaction) {
	if e.Note != eventlog.NoteTransactionTimedOut || e.Records == 0 {
		return
	}
	for _, o := range ob.kafkaOutages {
		if o[0] <= t && t < o[1] {
			ob.TimedOutInOutage = append(ob.TimedOutInOutage, e.TransactionalID)
			return
		}
	}
}
