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
		keyedAttempt: -1}
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
