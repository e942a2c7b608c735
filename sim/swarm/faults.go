package swarm

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/jobgraph"
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
// time a TaskManager's heartbeat times out. The faults pick TaskManagers
// from it, and a rescale takes the slots of the TaskManagers the cluster
// surely has (taskManagers).
//
// The ResourceManager replaces only a TaskManager it knows: a registered one
// whose heartbeat times out (killed, or cut off from the JobManager), or a
// worker it started that ends before it registers (worker_terminated). A
// replacement does not exist before the loss is noticed (a kill of it
// before then is ignored); a TaskManager cut off from the JobManager before
// it registered has no heartbeat at the ResourceManager to time out, so
// nothing replaces it (as in Flink, whose ActiveResourceManager waits for
// such a worker until resourcemanager.taskmanager-registration.timeout); and
// one that dies after a cut, before it registered again, is not replaced
// (the ResourceManager dropped it at the heartbeat timeout). Where the
// generator cannot tell which happened, the replacement it pictures may not
// be there, and the names of those after it may differ from the cluster's
// (diverged): those count only where some TaskManager surely stands for
// them (extra).
type cluster struct {
	alive    []string
	tms      map[string]*tmInfo // by name, for lookups only
	next     int
	diverged bool // a replacement pictured may not exist: names from then on may be off
	extra    int  // TaskManagers the cluster surely has beyond the exact names alive
	// heartbeat.timeout and heartbeat.interval: a registered TaskManager
	// killed or cut off at t is noticed by t + timeout (its last heartbeat
	// came at t or before, after t - interval), and its own heartbeat of
	// the ResourceManager times out after t + timeout - interval
	timeout, interval time.Duration
}

// tmInfo is what the generator knows of one TaskManager it pictures.
type tmInfo struct {
	exact    bool          // named before the picture diverged: the cluster's TaskManager of that name
	survivor bool          // was cut off from the JobManager: not a worker the ResourceManager waits for
	ready    time.Duration // from then on it is registered with the ResourceManager
	// its registration attempts (from its start, or from when its heartbeat
	// of the ResourceManager timed out) began within [attemptsLo, attemptsHi]
	attemptsLo, attemptsHi time.Duration
}

// Bounds of a registration with the ResourceManager: one RPC each way
// (sim.rpc.latency, 1 ms) within registerMargin; RetryingRegistration's
// first and longest timeouts (cluster.registration.initial-timeout 100 ms
// and max-timeout 30 s, as the simulated TaskExecutor has them).
const (
	registerMargin         = 100 * time.Millisecond
	registrationFirstRetry = 100 * time.Millisecond
	registrationMaxRetry   = 30 * time.Second
)

func newCluster(s *Scenario) *cluster {
	c := &cluster{next: s.TaskManagers + 1, tms: map[string]*tmInfo{}, timeout: s.HeartbeatTimeout, interval: s.HeartbeatInterval}
	for i := 1; i <= s.TaskManagers; i++ {
		name := "tm-" + strconv.Itoa(i)
		c.alive = append(c.alive, name)
		// the first register within milliseconds of the start
		c.tms[name] = &tmInfo{exact: true, ready: registerMargin}
	}
	return c
}

func (c *cluster) pick(r *rand.Rand) string { return c.alive[r.IntN(len(c.alive))] }

// taskManagers is how many TaskManagers the cluster surely has (counting
// replacements still to register).
func (c *cluster) taskManagers() int {
	n := c.extra
	for _, tm := range c.alive {
		if c.tms[tm].exact {
			n++
		}
	}
	return n
}

// rescaleSlotsAt is how many TaskManagers a rescale at t may count on:
// those the cluster surely has (taskManagers) less any cut off from the
// JobManager that has not registered again by t. Such a one registers
// again only at its next registration attempt after the heal, and if a
// later fault kills it before that, the ResourceManager, which dropped it
// at its heartbeat timeout, does not replace it (seed 5551331: cut 4.2 s to
// 17.0 s, rescale to 6 at 19.2 s counting its 4 slots, killed at 20.9 s
// before its attempt at 21.7 s: the job waits for 6 slots with 4 forever).
func (c *cluster) rescaleSlotsAt(t time.Duration) int {
	n := c.taskManagers()
	for _, tm := range c.alive {
		if st := c.tms[tm]; st.exact && st.survivor && st.ready > t {
			n--
		}
	}
	return n
}

// lose is a kill (killed) or a cut from the JobManager until until of tm at
// t. The picture drops a killed TaskManager and adds the replacement the
// ResourceManager starts by t + timeout; a TaskManager cut off lives on and
// registers again with the first attempt after the heal.
func (c *cluster) lose(tm string, killed bool, t, until time.Duration) {
	st := c.tms[tm]
	registered := st.exact && t >= st.ready
	real := registered // the replacement surely exists
	switch {
	case registered:
	case st.exact && killed && !st.survivor:
		// not started yet (the kill is ignored, it comes later), a worker
		// the ResourceManager waits for (replaced) or registered
		// (replaced): one TaskManager stands for it, whichever
		c.extra++
	case !st.exact && killed:
		// maybe none of the cluster's, maybe one that is not replaced
		c.extra = max(0, c.extra-1)
	}
	if killed {
		c.alive = slices.DeleteFunc(c.alive, func(x string) bool { return x == tm })
		delete(c.tms, tm)
	} else {
		// its heartbeat of the ResourceManager times out by t + timeout
		// (it starts its attempts over then, if it was registered)
		if registered {
			st.attemptsLo = t + c.timeout - c.interval - registerMargin
		}
		st.attemptsHi = max(st.attemptsHi, t+c.timeout)
		st.survivor, st.ready = true, max(st.ready, firstAttemptAfter(st.attemptsLo, st.attemptsHi, until)+registerMargin)
	}
	// the replacement starts when the loss is noticed: heartbeat.timeout
	// after the last heartbeat of a registered TaskManager, at once for a
	// worker that ended before it registered
	started := t
	if registered {
		started = t + c.timeout - c.interval - registerMargin
	}
	info := &tmInfo{exact: real && !c.diverged, ready: t + c.timeout + registerMargin, attemptsLo: started, attemptsHi: t + c.timeout}
	if real && c.diverged {
		c.extra++
	}
	if !real {
		c.diverged = true
	}
	name := "tm-" + strconv.Itoa(c.next)
	c.alive = append(c.alive, name)
	c.tms[name] = info
	c.next++
}

// stall is a TaskManager that stalls from t until wake: as cut off from
// the JobManager's host for that while (both its monitors time out and the
// ResourceManager replaces it), and it registers again heartbeat.timeout
// after it wakes, when its monitor of the ResourceManager, fed by the
// heartbeat requests held for it, times out.
func (c *cluster) stall(tm string, t, wake time.Duration) {
	c.lose(tm, false, t, wake)
	if st := c.tms[tm]; st != nil {
		st.attemptsHi = max(st.attemptsHi, wake+c.timeout)
		st.ready = max(st.ready, wake+c.timeout+registerMargin)
	}
}

// firstAttemptAfter is the latest time the first registration attempt at
// or after heal can come, for attempts that began at some time in [lo, hi]:
// RetryingRegistration sends them at begin + offset(k), offset(k) = 100 ms *
// (2^k - 1) while the timeout is below its longest, then every 30 s. Attempt
// k is the first after the heal for the begins in [heal - offset(k), heal -
// offset(k-1)); the latest such begin within [lo, hi] gives that attempt's
// latest time. Cost: one step per attempt before the heal.
func firstAttemptAfter(lo, hi, heal time.Duration) time.Duration {
	worst := hi // a begin after the heal: its first attempt
	prev, step := time.Duration(0), registrationFirstRetry
	for k := 1; heal-prev > lo; k++ {
		off := prev + step
		// begins in [heal - off, heal - prev): attempt k comes first after it
		if top := min(hi, heal-prev); top >= max(lo, heal-off) {
			worst = max(worst, top+off)
		}
		prev, step = off, min(2*step, registrationMaxRetry)
	}
	return worst
}

func at(d time.Duration, verb action.Verb) action.Action { return action.Action{At: d, Verb: verb} }

func kill(d time.Duration, tm string) action.Action {
	return action.Action{At: d, Verb: action.KillTaskManager, TaskManager: tm}
}

// genFaults draws the faults (r) and the partition pauses' partitions
// (rp), then the phases: the heal after the last fault, the flush, the
// deadline. A fault of the kinds added later (a stall, jitter, a lost RPC)
// is drawn from rn, which decides for each fault first: a scenario that
// draws none of them is the one it was before they came. An outage (of the
// checkpoint storage, of the Kafka broker) is drawn from ro, which decides
// before rn the same way.
func (s *Scenario) genFaults(r, rp, rn, ro *rand.Rand) {
	c := newCluster(s)
	n := pickInt(r, []int{0, 1, 2, 3, 4}, 5, 35, 30, 20, 10)
	if s.Starved {
		n = 0
	}
	p := s.Parallelism
	t := between(r, firstFaultMin, firstFaultMax)
	lastKill := time.Duration(-1)
	var maxCut time.Duration
	for i := 0; i < n; i++ {
		if ro.IntN(8) == 0 {
			f := s.outageFault(ro, t)
			s.Faults = append(s.Faults, f)
			maxCut = max(maxCut, f.Until-f.At)
			t = f.Until + between(ro, 500*time.Millisecond, 8*time.Second)
			continue
		}
		if rn.IntN(4) == 0 {
			f := s.moreFault(rn, c, t, p)
			s.Faults = append(s.Faults, f)
			if f.Kind == FaultStall {
				lastKill = f.At
				maxCut = max(maxCut, f.Until-f.At)
			}
			t = f.Until + between(rn, 500*time.Millisecond, 8*time.Second)
			continue
		}
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
			f.Actions = []action.Action{kill(t, tm)}
			c.lose(tm, true, t, t)
			lastKill = t
		case FaultKillRestart:
			// while the job restarts: after the last kill's heartbeat
			// timeout, within the backoff and the redeployment
			f.At = max(t, lastKill+s.HeartbeatTimeout+between(r, 0, 2*time.Second))
			tm := c.pick(r)
			f.Actions = []action.Action{kill(f.At, tm)}
			c.lose(tm, true, f.At, f.At)
			lastKill = f.At
		case FaultKillCheckpoint:
			tm := c.pick(r)
			kt := t + between(r, 0, 100*time.Millisecond)
			f.Actions = []action.Action{at(t, action.TriggerCheckpoint), kill(kt, tm)}
			c.lose(tm, true, kt, kt)
			lastKill = t
		case FaultKillSeveral:
			a := c.pick(r)
			b := a
			for b == a {
				b = c.pick(r)
			}
			kb := t + between(r, 0, 200*time.Millisecond)
			f.Actions = []action.Action{kill(t, a), kill(kb, b)}
			c.lose(a, true, t, t)
			c.lose(b, true, kb, kb)
			lastKill = t
		case FaultCutTaskManager:
			a := c.pick(r)
			b := a
			for b == a {
				b = c.pick(r)
			}
			d := between(r, 200*time.Millisecond, cutTMMax)
			f.Actions = []action.Action{action.Action{At: t, Verb: action.PartitionNetwork, Cut: action.Partition{A: a, B: b, Duration: d}}}
			f.Until = t + d
			maxCut = max(maxCut, d)
		case FaultCutJobManager:
			// long enough that every heartbeat monitor on both sides times
			// out (a shorter cut loses RPCs that Flink recovers from with
			// timeouts and retries the simulator does not model)
			tm := c.pick(r)
			d := s.HeartbeatTimeout + 2*s.HeartbeatInterval + between(r, 0, cutJMExtra)
			f.Actions = []action.Action{action.Action{At: t, Verb: action.PartitionNetwork, Cut: action.Partition{A: tm, B: action.JobManagerHost, Duration: d}}}
			f.Until = t + d
			maxCut = max(maxCut, d)
			c.lose(tm, false, t, t+d)
			lastKill = t
		case FaultPause:
			part := rp.IntN(s.Partitions)
			d := between(r, time.Second, 8*time.Second)
			f.Actions = []action.Action{{At: t, Verb: action.PausePartition, Partition: part}, {At: t + d, Verb: action.ResumePartition, Partition: part}}
			f.Until = t + d
			s.Workload = append(s.Workload, f.Actions...)
		case FaultRescale:
			to := s.rescaleTarget(r, p, c.rescaleSlotsAt(t))
			if to == 0 {
				f = Fault{Kind: FaultSavepoint, At: t, Actions: []action.Action{at(t, action.TriggerSavepoint)}}
				break
			}
			f.Actions = []action.Action{{At: t, Verb: action.Rescale, Parallelism: to}}
			p = to
		case FaultSavepoint:
			f.Actions = []action.Action{at(t, action.TriggerSavepoint)}
		case FaultCheckpoint:
			f.Actions = []action.Action{at(t, action.TriggerCheckpoint)}
		case FaultStop:
			f.Actions = []action.Action{at(t, action.StopWithSavepoint)}
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
		s.Workload = append(s.Workload, action.Action{At: s.FlushAt, Verb: action.SendEvent, Event: action.NewEvent(s.FlushKey, flushTs, part)})
	}
	action.Sort(s.Workload)
	s.Deadline = s.FlushAt + s.livenessBound(maxCut)
}

// moreFault draws a fault of the kinds added later at t: a TaskManager
// that stalls past its heartbeat timeout (it wakes a zombie: the JobMaster
// has failed over without it and fences what its old attempts still say;
// the ResourceManager has replaced it, and it registers again), jitter on
// every link, or a lost checkpoint RPC (with checkpointing: an
// acknowledgement, whose checkpoint then expires after
// execution.checkpointing.timeout; a decline, the same; a completion
// notification, after which the exactly-once sink commits on the next one).
func (s *Scenario) moreFault(r *rand.Rand, c *cluster, t time.Duration, p int) Fault {
	w := []int{30, 30, 0, 0, 0}
	if s.Checkpointing {
		w[2], w[3], w[4] = 15, 5, 15
	}
	f := Fault{Kind: []FaultKind{FaultStall, FaultJitter, FaultLoseAck, FaultLoseDecline, FaultLoseNotify}[weighted(r, w...)], At: t}
	interval := time.Duration(s.IntervalMs) * time.Millisecond
	lose := func(rpc messages.LostRPC, task string, within, effect time.Duration) {
		a := at(t, action.LoseRPC)
		a.Lose = action.Lose{RPC: rpc, Task: task, Within: within}
		f.Actions = []action.Action{a}
		f.Until = t + effect
	}
	switch f.Kind {
	case FaultStall:
		// as long as a cut from the JobManager: every heartbeat monitor
		// of the JobManager and the ResourceManager times it out
		tm := c.pick(r)
		d := s.HeartbeatTimeout + 2*s.HeartbeatInterval + between(r, 0, cutJMExtra)
		a := at(t, action.StallTaskManager)
		a.Stall = action.Stall{TaskManager: tm, Duration: d}
		f.Actions = []action.Action{a}
		f.Until = t + d
		c.stall(tm, t, t+d)
	case FaultJitter:
		j := action.Jitter{Max: []time.Duration{500 * time.Microsecond, 2 * time.Millisecond, 5 * time.Millisecond}[r.IntN(3)],
			Duration: between(r, time.Second, 10*time.Second)}
		a := at(t, action.NetworkJitter)
		a.Jitter = j
		f.Actions = []action.Action{a}
		f.Until = t + j.Duration
	case FaultLoseAck:
		// the next checkpoint's acknowledgement; its checkpoint expires
		// after the timeout (a failover without tolerable failures)
		lose(messages.LostRPC_LOST_RPC_ACKNOWLEDGE_CHECKPOINT, "", interval+time.Second, interval+time.Second+s.CheckpointTimeout)
	case FaultLoseDecline:
		lose(messages.LostRPC_LOST_RPC_DECLINE_CHECKPOINT, "", interval+time.Second, interval+time.Second+s.CheckpointTimeout)
	case FaultLoseNotify:
		// to a subtask of the sink's chain: its writer's transaction
		// waits for the next notification
		lose(messages.LostRPC_LOST_RPC_NOTIFY_CHECKPOINT_COMPLETE, s.sinkSubtask(r, p), interval+time.Second, 2*interval+time.Second)
	}
	return f
}

// sinkSubtask is a subtask of the vertex whose chain ends in the sink when
// parallelism.default is p ("" if the job cannot be built).
func (s *Scenario) sinkSubtask(r *rand.Rand, p int) string {
	cfg, err := s.Config()
	if err == nil {
		err = cfg.Set("parallelism.default", strconv.Itoa(p))
	}
	if err != nil {
		return ""
	}
	g, err := jobgraph.Build(cfg)
	if err != nil {
		return ""
	}
	v, ok := g.Vertex(g.SinkVertex())
	if !ok || v.Parallelism < 1 {
		return ""
	}
	return jobgraph.SubtaskName(v.ID, r.IntN(v.Parallelism), 0)
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
