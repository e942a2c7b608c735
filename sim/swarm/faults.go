package swarm

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/flinksim/flinksim/sim/action"
)

// GeneratorEpochMillis is the event time of virtual time 0 for the built-in
// generator (actors.GeneratorEpochMillis; a test holds the two equal).
const GeneratorEpochMillis int64 = 1_700_000_000_000

// Bounds of the phases.
const (
	firstFaultMin = 3 * time.Second // the job runs by then
	firstFaultMax = 8 * time.Second
	flushMin      = 10 * time.Second // some windows close before the flush
	flushAfter    = 5 * time.Second  // from the heal to the flush
	livenessMin   = 15 * time.Second // the liveness phase lasts at least this long
	livenessMax   = 120 * time.Second
	cutTMMax      = 8 * time.Second  // longest cut between two TaskManagers
	cutJMExtra    = 10 * time.Second // a cut from the JobManager lasts heartbeat.timeout + 2 intervals + up to this
)

// cluster is the generator's picture of the TaskManagers alive: the first
// ones, and the replacement the ResourceManager starts (tm-N+1, ...) each
// time a TaskManager's heartbeat times out.
type cluster struct {
	alive []string
	next  int
}

func (c *cluster) pick(r *rand.Rand) string { return c.alive[r.IntN(len(c.alive))] }

func (c *cluster) lose(tm string, killed bool) {
	if killed {
		for i, x := range c.alive {
			if x == tm {
				c.alive = append(c.alive[:i], c.alive[i+1:]...)
				break
			}
		}
	}
	c.alive = append(c.alive, "tm-"+strconv.Itoa(c.next))
	c.next++
}

func at(d time.Duration, verb action.Verb, arg string) action.Action {
	return action.Action{At: d, Verb: verb, Arg: arg}
}

// genFaults draws the faults (r) and the partition pauses' partitions
// (rp), then the phases: the heal after the last fault, the flush, the
// deadline.
func (s *Scenario) genFaults(r, rp *rand.Rand) {
	c := &cluster{next: s.TaskManagers + 1}
	for i := 1; i <= s.TaskManagers; i++ {
		c.alive = append(c.alive, "tm-"+strconv.Itoa(i))
	}
	n := pickInt(r, []int{0, 1, 2, 3, 4}, 5, 35, 30, 20, 10)
	if s.Starved {
		n = 0
	}
	p := s.Parallelism
	t := between(r, firstFaultMin, firstFaultMax)
	lastKill := time.Duration(-1)
	var maxCut time.Duration
	for i := 0; i < n; i++ {
		w := []int{22, 0, 0, 0, 0, 12, 10, 7, 6, 0, 3}
		if lastKill >= 0 {
			w[1] = 8 // kill-restart
		}
		if s.Checkpointing {
			w[2], w[9] = 8, 3 // kill-checkpoint, checkpoint
		}
		if len(c.alive) >= 2 {
			w[3], w[4] = 6, 15 // kill-several, cut-tm-tm
		}
		f := Fault{Kind: FaultKinds[weighted(r, w...)], At: t}
		switch f.Kind {
		case FaultKill:
			tm := c.pick(r)
			f.Actions = []action.Action{at(t, action.KillTaskManager, tm)}
			c.lose(tm, true)
			lastKill = t
		case FaultKillRestart:
			// while the job restarts: after the last kill's heartbeat
			// timeout, within the backoff and the redeployment
			f.At = max(t, lastKill+s.HeartbeatTimeout+between(r, 0, 2*time.Second))
			tm := c.pick(r)
			f.Actions = []action.Action{at(f.At, action.KillTaskManager, tm)}
			c.lose(tm, true)
			lastKill = f.At
		case FaultKillCheckpoint:
			tm := c.pick(r)
			f.Actions = []action.Action{at(t, action.TriggerCheckpoint, ""),
				at(t+between(r, 0, 100*time.Millisecond), action.KillTaskManager, tm)}
			c.lose(tm, true)
			lastKill = t
		case FaultKillSeveral:
			a := c.pick(r)
			b := a
			for b == a {
				b = c.pick(r)
			}
			f.Actions = []action.Action{at(t, action.KillTaskManager, a), at(t+between(r, 0, 200*time.Millisecond), action.KillTaskManager, b)}
			c.lose(a, true)
			c.lose(b, true)
			lastKill = t
		case FaultCutTaskManager:
			a := c.pick(r)
			b := a
			for b == a {
				b = c.pick(r)
			}
			d := between(r, 200*time.Millisecond, cutTMMax)
			f.Actions = []action.Action{at(t, action.PartitionNetwork, action.Partition{A: a, B: b, Duration: d}.String())}
			f.Until = t + d
			maxCut = max(maxCut, d)
		case FaultCutJobManager:
			// long enough that every heartbeat monitor on both sides times
			// out (a shorter cut loses RPCs that Flink recovers from with
			// timeouts and retries the simulator does not model)
			tm := c.pick(r)
			d := s.HeartbeatTimeout + 2*s.HeartbeatInterval + between(r, 0, cutJMExtra)
			f.Actions = []action.Action{at(t, action.PartitionNetwork, action.Partition{A: tm, B: action.JobManagerHost, Duration: d}.String())}
			f.Until = t + d
			maxCut = max(maxCut, d)
			c.lose(tm, false)
			lastKill = t
		case FaultPause:
			part := strconv.Itoa(rp.IntN(s.Partitions))
			d := between(r, time.Second, 8*time.Second)
			f.Actions = []action.Action{at(t, action.PausePartition, part), at(t+d, action.ResumePartition, part)}
			f.Until = t + d
			s.Workload = append(s.Workload, f.Actions...)
		case FaultRescale:
			to := s.rescaleTarget(r, p, len(c.alive))
			if to == 0 {
				f = Fault{Kind: FaultSavepoint, At: t, Actions: []action.Action{at(t, action.TriggerSavepoint, "")}}
				break
			}
			f.Actions = []action.Action{at(t, action.Rescale, strconv.Itoa(to))}
			p = to
		case FaultSavepoint:
			f.Actions = []action.Action{at(t, action.TriggerSavepoint, "")}
		case FaultCheckpoint:
			f.Actions = []action.Action{at(t, action.TriggerCheckpoint, "")}
		case FaultStop:
			f.Actions = []action.Action{at(t, action.StopWithSavepoint, "")}
		}
		if f.Until < f.At {
			f.Until = f.At
		}
		for _, a := range f.Actions {
			f.Until = max(f.Until, a.At)
		}
		s.Faults = append(s.Faults, f)
		if f.Kind == FaultStop {
			break
		}
		t = f.Until + between(r, 500*time.Millisecond, 8*time.Second)
	}
	for _, f := range s.Faults {
		s.HealAt = max(s.HealAt, f.Until)
	}
	s.FlushAt = max(flushMin, s.HealAt+flushAfter)
	s.FlushAheadMs = s.Window.ExtentMs + s.Window.LatenessMs + s.BoundMs + 2000
	flushTs := GeneratorEpochMillis + s.FlushAt.Milliseconds() + s.FlushAheadMs
	for part := 0; part < s.Partitions; part++ {
		s.Workload = append(s.Workload, at(s.FlushAt, action.SendEvent,
			"key="+s.FlushKey+" ts="+strconv.FormatInt(flushTs, 10)+" partition="+strconv.Itoa(part)))
	}
	action.Sort(s.Workload)
	s.Deadline = s.FlushAt + s.livenessBound(maxCut)
}

// livenessBound is how long after the flush the job has to converge: time
// to notice a lost TaskManager, to back off, and to catch up with what the
// faults held back at the scenario's utilization.
func (s *Scenario) livenessBound(maxCut time.Duration) time.Duration {
	if len(s.Faults) == 0 {
		return livenessMin
	}
	lost := s.FlushAt - s.Faults[0].At + 2*s.HeartbeatTimeout + time.Duration(s.IntervalMs)*time.Millisecond
	catchUp := time.Duration(float64(lost) * s.Utilization / (1 - s.Utilization))
	d := livenessMin + s.HeartbeatTimeout + maxCut + catchUp
	return min(max(d, livenessMin), livenessMax).Truncate(time.Second)
}

// rescaleTarget is a new parallelism.default the cluster has slots for,
// that leaves no source reader without a split (unless idleness is on) and
// overloads no keyed subtask; 0 when there is none. A source or sink with a
// parallelism of its own keeps it.
func (s *Scenario) rescaleTarget(r *rand.Rand, p, tms int) int {
	var ok []int
	for to := 1; to <= 8; to++ {
		if to == p || s.slotsNeeded(to) > tms*s.Slots || (s.readers(to) > s.Partitions && s.IdlenessMs == 0) {
			continue
		}
		if s.Utilization*hottestShare(s.Keys, to)/hottestShare(s.Keys, s.Parallelism) > 0.85 {
			continue
		}
		ok = append(ok, to)
	}
	if len(ok) == 0 {
		return 0
	}
	return ok[r.IntN(len(ok))]
}
