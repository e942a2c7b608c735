// Package swarm is the pure half of `flinksim swarm`, the fault swarm in the
// manner of FoundationDB's simulation and TigerBeetle's VOPR: a seed draws a
// whole scenario (Generate: settings, workload, faults at virtual times, the
// bounds of its liveness phase), and the checkers (Check) decide from two
// runs of it, the failure-free reference and the faulty one, whether every
// invariant held. Nothing here runs a simulation, reads a clock or depends
// on which worker ran a seed: cmd/flinksim runs the scenarios.
//
// A scenario runs the job on the built-in generator, unbounded, for a fixed
// virtual time in three phases:
//
//  1. safety: the faults happen, each at its virtual time;
//  2. heal: no fault after HealAt; at FlushAt a flush record with an event
//     time far ahead goes into every source partition, so the watermark
//     passes every window of the records produced before it (Horizon);
//  3. liveness: by Deadline the job must be RUNNING (or FINISHED after a
//     stop-with-savepoint), a checkpoint must have completed after the heal
//     (with checkpointing on), and the sink's watermark must have passed
//     the Horizon, so every window up to it closed.
//
// The reference run has the same settings and workload (partition pauses,
// which change what the generator produces, and the flush) and no fault.
package swarm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/keygroup"
	"github.com/flinksim/flinksim/sim/vt"
)

// FaultKind names a kind of fault, for the summary by kind.
type FaultKind string

// The fault kinds (README.md, "The fault swarm").
const (
	FaultKill           FaultKind = "kill"            // kill-taskmanager at a random time
	FaultKillRestart    FaultKind = "kill-restart"    // a kill while the job restarts after an earlier failure
	FaultKillCheckpoint FaultKind = "kill-checkpoint" // a kill right after a periodic checkpoint's trigger
	FaultKillSeveral    FaultKind = "kill-several"    // two TaskManagers killed within 200 ms
	FaultCutTaskManager FaultKind = "cut-tm-tm"       // partition-network between two TaskManagers
	FaultCutJobManager  FaultKind = "cut-tm-jm"       // partition-network between a TaskManager and the JobManager
	FaultPause          FaultKind = "pause"           // pause-partition, resume-partition later (also in the reference run)
	FaultRescale        FaultKind = "rescale"         // rescale N
	FaultSavepoint      FaultKind = "savepoint"       // trigger-savepoint
	FaultCheckpoint     FaultKind = "checkpoint"      // trigger-checkpoint
	FaultStop           FaultKind = "stop"            // stop-with-savepoint: the job ends FINISHED
	FaultStall          FaultKind = "stall-tm"        // stall-taskmanager past the heartbeat timeout: it wakes a zombie
	FaultJitter         FaultKind = "jitter"          // network-jitter between every two hosts
	FaultLoseAck        FaultKind = "lose-ack"        // lose-rpc acknowledge-checkpoint
	FaultLoseDecline    FaultKind = "lose-decline"    // lose-rpc decline-checkpoint
	FaultLoseNotify     FaultKind = "lose-notify"     // lose-rpc notify-checkpoint-complete
	FaultStorage        FaultKind = "storage-outage"  // fail-checkpoint-storage: the uploads fail, the tasks decline
	FaultKafka          FaultKind = "kafka-outage"    // kafka-unavailable: fetches, produces and transactions wait
	// FaultKafkaTxnTimeout is a kafka-unavailable longer than a short
	// transaction.timeout.ms: Flink's documented data-loss trap
	FaultKafkaTxnTimeout FaultKind = "kafka-txn-trap"
)

// FaultKinds lists every kind, in the order the summary prints them.
var FaultKinds = []FaultKind{FaultKill, FaultKillRestart, FaultKillCheckpoint, FaultKillSeveral, FaultCutTaskManager,
	FaultCutJobManager, FaultPause, FaultRescale, FaultSavepoint, FaultCheckpoint, FaultStop,
	FaultStall, FaultJitter, FaultLoseAck, FaultLoseDecline, FaultLoseNotify, FaultStorage, FaultKafka, FaultKafkaTxnTimeout}

// Fault is one fault of a scenario: its kind, when it starts and when its
// effect ends (a cut heals, a paused partition resumes), and the actions
// that carry it out.
type Fault struct {
	Kind      FaultKind
	At, Until time.Duration
	Actions   []action.Action
}

// String is the fault in a few words: kill tm-1@12.3s, cut tm-1|jobmanager@20s+8s, ...
func (f Fault) String() string {
	a := f.Actions[0]
	at := short(f.At)
	switch f.Kind {
	case FaultKill, FaultKillRestart, FaultKillCheckpoint:
		a = f.Actions[len(f.Actions)-1] // kill-checkpoint: after its trigger-checkpoint
		return string(f.Kind) + " " + a.TaskManager + "@" + at
	case FaultKillSeveral:
		var tms []string
		for _, x := range f.Actions {
			tms = append(tms, x.TaskManager)
		}
		return "kill " + strings.Join(tms, "+") + "@" + at
	case FaultCutTaskManager, FaultCutJobManager:
		return "cut " + a.Cut.A + "|" + a.Cut.B + "@" + at + "+" + short(a.Cut.Duration)
	case FaultPause:
		return "pause p" + strconv.Itoa(a.Partition) + "@" + at + "+" + short(f.Until-f.At)
	case FaultRescale:
		return "rescale " + strconv.Itoa(a.Parallelism) + "@" + at
	case FaultStall:
		return "stall " + a.Stall.TaskManager + "@" + at + "+" + short(a.Stall.Duration)
	case FaultJitter:
		return "jitter " + short(a.Jitter.Max) + "@" + at + "+" + short(a.Jitter.Duration)
	case FaultStorage, FaultKafka, FaultKafkaTxnTimeout:
		return string(f.Kind) + "@" + at + "+" + short(a.Outage)
	case FaultLoseAck, FaultLoseDecline, FaultLoseNotify:
		if a.Lose.Task != "" {
			return string(f.Kind) + " " + a.Lose.Task + "@" + at
		}
	}
	return string(f.Kind) + "@" + at
}

// Window is the job's window operator.
type Window struct {
	Type                   string // tumbling, sliding, session
	SizeMs, SlideMs, GapMs int64
	LatenessMs             int64
	SideOutput             bool
	Aggregate              string // count, sum, max
	ExtentMs               int64  // longest event-time span a record's window covers past it (size or gap)
}

// Scenario is everything one seed runs. Generate makes it; it is a pure
// function of Seed.
type Scenario struct {
	Seed     uint64
	Settings []Setting // every setting the scenario sets, in order (sim.seed included)

	// the cluster and the job
	Parallelism, Partitions, TaskManagers, Slots int
	// SourceParallelism and SinkParallelism are job.source.parallelism and
	// job.sink.parallelism where the scenario sets them (0: they follow
	// parallelism.default, as the keyed operator always does here)
	SourceParallelism, SinkParallelism int
	Starved                            bool // too few slots on purpose: the job never runs
	Operator                           string
	Window                             Window
	Checkpointing                      bool
	IntervalMs                         int64
	CheckpointMode                     string // aligned, unaligned, aligned-timeout
	Guarantee                          string // none, at-least-once, exactly-once
	Utilization                        float64

	// the workload
	Rate                float64
	Keys                int
	DisorderMs, BoundMs int64
	LateFraction        float64
	IdlenessMs          int64
	Workload            []action.Action // in both runs: partition pauses and the flush
	FlushKey            string
	FlushAheadMs        int64 // the flush record's event time is the topic's newest plus this

	// the faults and the phases
	Faults            []Fault
	HealAt            time.Duration // no fault after it
	FlushAt           time.Duration
	Deadline          time.Duration // sim.duration: the liveness phase ends
	HeartbeatInterval time.Duration
	HeartbeatTimeout  time.Duration
	// CheckpointTimeout is execution.checkpointing.timeout (with
	// checkpointing on): how long a checkpoint whose acknowledgement was
	// lost waits before it expires
	CheckpointTimeout time.Duration
	// TransactionTimeout is properties.transaction.timeout.ms where the
	// scenario sets it (a kafka-txn-trap; 0: KafkaSinkBuilder's 1 h)
	TransactionTimeout time.Duration
}

// Setting is one key=value of the scenario.
type Setting struct{ Key, Value string }

// Config builds the run's settings: the defaults with the scenario's
// settings applied, validated.
func (s *Scenario) Config() (config.Config, error) {
	cfg := config.Default()
	for _, kv := range s.Settings {
		if err := cfg.Set(kv.Key, kv.Value); err != nil {
			return cfg, fmt.Errorf("seed %d: %s=%s: %w", s.Seed, kv.Key, kv.Value, err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("seed %d: %w", s.Seed, err)
	}
	return cfg, nil
}

// FaultActions are the actions of the faulty run besides the workload,
// in time order.
func (s *Scenario) FaultActions() []action.Action {
	var out []action.Action
	for _, f := range s.Faults {
		if f.Kind == FaultPause {
			continue // in the workload
		}
		out = append(out, f.Actions...)
	}
	action.Sort(out)
	return out
}

// Actions are the actions of a run: the workload, and the faults unless
// reference.
func (s *Scenario) Actions(reference bool) []action.Action {
	out := slices.Clone(s.Workload)
	if !reference {
		out = append(out, s.FaultActions()...)
	}
	action.Sort(out)
	return out
}

// Kinds are the distinct fault kinds of the scenario, in FaultKinds order.
func (s *Scenario) Kinds() []FaultKind {
	var out []FaultKind
	for _, k := range FaultKinds {
		for _, f := range s.Faults {
			if f.Kind == k {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// Stopped reports whether the scenario ends the job with stop-with-savepoint.
func (s *Scenario) Stopped() bool {
	for _, f := range s.Faults {
		if f.Kind == FaultStop {
			return true
		}
	}
	return false
}

// Summary is the scenario in one line: shape, job, checkpointing, faults.
func (s *Scenario) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "p=%d", s.Parallelism)
	if s.SourceParallelism > 0 {
		fmt.Fprintf(&b, " source=%d", s.SourceParallelism)
	}
	if s.SinkParallelism > 0 {
		fmt.Fprintf(&b, " sink=%d", s.SinkParallelism)
	}
	fmt.Fprintf(&b, " tm=%dx%d part=%d keys=%d rate=%g/s", s.TaskManagers, s.Slots, s.Partitions, s.Keys, s.Rate)
	if s.Starved {
		b.WriteString(" starved")
	}
	if s.Operator == "process" {
		b.WriteString(" process")
	} else {
		w := s.Window
		switch w.Type {
		case "sliding":
			fmt.Fprintf(&b, " sliding(%s,%s)", shortMs(w.SizeMs), shortMs(w.SlideMs))
		case "session":
			fmt.Fprintf(&b, " session(%s)", shortMs(w.GapMs))
		default:
			fmt.Fprintf(&b, " tumbling(%s)", shortMs(w.SizeMs))
		}
		b.WriteString(" " + w.Aggregate)
	}
	fmt.Fprintf(&b, " u=%g", s.Utilization)
	if s.Checkpointing {
		fmt.Fprintf(&b, " ck=%s/%s", shortMs(s.IntervalMs), s.CheckpointMode)
	} else {
		b.WriteString(" ck=off")
	}
	b.WriteString(" " + map[string]string{"none": "none", "at-least-once": "alo", "exactly-once": "eo"}[s.Guarantee])
	var fs []string
	for _, f := range s.Faults {
		fs = append(fs, f.String())
	}
	if len(fs) == 0 {
		fs = []string{"no faults"}
	}
	b.WriteString(" | " + strings.Join(fs, ", "))
	return b.String()
}

// Describe is the scenario in full, one fact per line, as `flinksim swarm
// --seed S` prints it before running it.
func (s *Scenario) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d\n", s.Seed)
	fmt.Fprintf(&b, "  summary   %s\n", s.Summary())
	for _, kv := range s.Settings {
		fmt.Fprintf(&b, "  setting   %s=%s\n", kv.Key, kv.Value)
	}
	for _, a := range s.Workload {
		fmt.Fprintf(&b, "  workload  %s\n", a)
	}
	for _, f := range s.Faults {
		for _, a := range f.Actions {
			fmt.Fprintf(&b, "  fault     %-15s %s\n", f.Kind, a)
		}
	}
	fmt.Fprintf(&b, "  phases    faults until %s, flush at %s, liveness until %s\n", short(s.HealAt), short(s.FlushAt), short(s.Deadline))
	return b.String()
}

// short renders a duration compactly: 1.5s, 250ms, 2m.
func short(d time.Duration) string { return strings.ReplaceAll(config.FormatDuration(d), " ", "") }

func shortMs(ms int64) string { return short(time.Duration(ms) * time.Millisecond) }

// generator is the tree of seeded generators of one scenario: one per
// subsystem, so that drawing more of one never shifts another.
type generator struct{ seed uint64 }

func (g generator) sub(name string) *rand.Rand { return vt.NewRand(g.seed, "swarm/"+name) }

// weighted picks an index with the given weights.
func weighted(r *rand.Rand, w ...int) int {
	total := 0
	for _, x := range w {
		total += x
	}
	n := r.IntN(total)
	for i, x := range w {
		if n < x {
			return i
		}
		n -= x
	}
	return len(w) - 1
}

func pickInt(r *rand.Rand, vals []int, w ...int) int { return vals[weighted(r, w...)] }

func pickMs(r *rand.Rand, vals []int64, w ...int) int64 { return vals[weighted(r, w...)] }

// between is a duration in [lo, hi], in whole milliseconds.
func between(r *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.Int64N(int64((hi-lo)/time.Millisecond)+1))*time.Millisecond
}

// Generate draws the scenario of a seed.
func Generate(seed uint64) Scenario {
	g := generator{seed}
	s := Scenario{Seed: seed, FlushKey: "flush"}
	set := func(k, v string) { s.Settings = append(s.Settings, Setting{k, v}) }
	setMs := func(k string, ms int64) { set(k, shortMs(ms)) }
	set("sim.seed", strconv.FormatUint(seed, 10))

	// the cluster: parallelism, partitions, TaskManagers and slots
	rc := g.sub("cluster")
	s.Parallelism = pickInt(rc, []int{1, 2, 3, 4, 5, 6, 7, 8}, 10, 30, 20, 18, 8, 6, 4, 4)
	s.Partitions = pickInt(rc, []int{1, 2, 3, 4, 5, 6, 7, 8}, 8, 18, 14, 20, 8, 10, 6, 16)
	rw := g.sub("workload")
	if s.Partitions < s.Parallelism {
		// a reader without a split holds every watermark back until
		// withIdleness marks it idle (a trap the swarm does not set)
		if rw.IntN(2) == 0 {
			s.Partitions = s.Parallelism
		} else {
			s.IdlenessMs = pickMs(rw, []int64{1000, 2000, 3000}, 1, 1, 1)
		}
	}
	// the parallelism of the source and the sink of their own, in a fifth
	// of the seeds each (a sub-seed of its own: the other draws stay as
	// they were); the source keeps a split per reader
	ro := g.sub("operators")
	if ro.IntN(5) == 0 {
		s.SourceParallelism = 1 + ro.IntN(min(s.Partitions, 4))
		set("job.source.parallelism", strconv.Itoa(s.SourceParallelism))
	}
	if ro.IntN(5) == 0 {
		s.SinkParallelism = pickInt(ro, []int{1, 2, 3}, 50, 30, 20)
		set("job.sink.parallelism", strconv.Itoa(s.SinkParallelism))
	}
	s.Slots = pickInt(rc, []int{1, 2, 4}, 50, 35, 15)
	need := (s.slotsNeeded(s.Parallelism) + s.Slots - 1) / s.Slots
	s.TaskManagers = need + pickInt(rc, []int{0, 1, 2}, 55, 35, 10)
	if need >= 2 && rc.IntN(100) < 3 {
		s.TaskManagers, s.Starved = need-1, true
	}
	set("parallelism.default", strconv.Itoa(s.Parallelism))
	set("job.source.partitions", strconv.Itoa(s.Partitions))
	set("taskmanager.numberOfTaskSlots", strconv.Itoa(s.Slots))
	set("sim.taskmanagers", strconv.Itoa(s.TaskManagers))
	s.HeartbeatInterval, s.HeartbeatTimeout = time.Second, 5*time.Second
	if rc.IntN(5) == 0 {
		s.HeartbeatInterval, s.HeartbeatTimeout = 500*time.Millisecond, 3*time.Second
		set("heartbeat.interval", short(s.HeartbeatInterval))
		set("heartbeat.timeout", short(s.HeartbeatTimeout))
	}

	// the workload: rate, keys, disorder within the watermark bound, late
	// records, idleness
	s.Rate = float64(pickInt(rw, []int{50, 100, 200, 500, 1000}, 15, 25, 25, 25, 10))
	s.Keys = pickInt(rw, []int{1, 3, 10, 50, 200}, 5, 15, 30, 30, 20)
	s.BoundMs = pickMs(rw, []int64{500, 1000, 2000, 5000}, 15, 30, 35, 20)
	s.DisorderMs = rw.Int64N(s.BoundMs/200+1) * 100 // below half the bound
	s.LateFraction = []float64{0, 0.002, 0.02}[weighted(rw, 65, 20, 15)]
	if s.IdlenessMs == 0 && rw.IntN(10) == 0 {
		s.IdlenessMs = pickMs(rw, []int64{500, 2000}, 1, 1)
	}
	set("sim.source.keys", strconv.Itoa(s.Keys))
	setMs("job.watermark.out-of-orderness", s.BoundMs)
	setMs("sim.source.disorder", s.DisorderMs)
	set("sim.source.late-fraction", strconv.FormatFloat(s.LateFraction, 'f', -1, 64))
	if s.IdlenessMs > 0 {
		setMs("job.watermark.idleness", s.IdlenessMs)
	}
	if rw.IntN(10) == 0 {
		set("job.watermark.alignment.group", "swarm")
		setMs("job.watermark.alignment.max-drift", pickMs(rw, []int64{1000, 3000}, 1, 1)+s.DisorderMs)
	}

	// the job: operator, window, state backend, chaining, costs, buffers
	rj := g.sub("job")
	if rj.IntN(5) == 0 {
		s.Operator = "process"
		set("job.operator", "process")
	} else {
		s.Operator = "window"
		w := &s.Window
		switch weighted(rj, 60, 20, 20) {
		case 0:
			w.Type, w.SizeMs = "tumbling", pickMs(rj, []int64{1000, 2000, 5000, 10000}, 25, 30, 30, 15)
			w.ExtentMs = w.SizeMs
		case 1:
			w.Type, w.SizeMs = "sliding", pickMs(rj, []int64{2000, 4000, 6000}, 1, 1, 1)
			w.SlideMs, w.ExtentMs = w.SizeMs/2, w.SizeMs
		default:
			w.Type, w.GapMs = "session", pickMs(rj, []int64{300, 1000, 3000}, 1, 1, 1)
			w.ExtentMs = w.GapMs
		}
		w.LatenessMs = pickMs(rj, []int64{0, 1000, 3000}, 70, 15, 15)
		w.SideOutput = rj.IntN(10) < 3 || s.IdlenessMs > 0 // idleness makes lateness a matter of timing: see it
		w.Aggregate = []string{"count", "sum", "max"}[weighted(rj, 70, 15, 15)]
		set("job.window.type", w.Type)
		if w.SizeMs > 0 {
			setMs("job.window.size", w.SizeMs)
		}
		if w.SlideMs > 0 {
			setMs("job.window.slide", w.SlideMs)
		}
		if w.GapMs > 0 {
			setMs("job.window.gap", w.GapMs)
		}
		if w.LatenessMs > 0 {
			setMs("job.window.allowed-lateness", w.LatenessMs)
		}
		if w.SideOutput {
			set("job.window.side-output-late-data", "true")
		}
		if w.Aggregate != "count" {
			set("job.window.aggregate", w.Aggregate)
		}
	}
	rocksdb := rj.IntN(10) < 4
	if rocksdb {
		set("state.backend.type", "rocksdb")
		if rj.IntN(2) == 0 {
			set("state.backend.incremental", "true")
		}
	}
	if rj.IntN(5) == 0 {
		set("pipeline.operator-chaining.enabled", "false")
	}
	// per-record cost of the keyed operator: the hottest subtask (by the
	// keys it owns) busy for a share u of its time, from idle to heavy
	// backpressure in bursts
	s.Utilization = []float64{0.01, 0.2, 0.4, 0.7}[weighted(rj, 25, 30, 25, 20)]
	bufferRecords := pickInt(rj, []int{1, 4, 16, 64}, 5, 20, 35, 40)
	set("sim.buffer.records", strconv.Itoa(bufferRecords))
	perChannel, floating := 2, 8 // Flink's defaults
	if rj.IntN(4) == 0 {
		perChannel, floating = pickInt(rj, []int{0, 1}, 1, 1), pickInt(rj, []int{1, 2, 8}, 1, 1, 2)
		set("taskmanager.network.memory.buffers-per-channel", strconv.Itoa(perChannel))
		set("taskmanager.network.memory.floating-buffers-per-gate", strconv.Itoa(floating))
	}

	// checkpointing and the sink
	rk := g.sub("checkpoint")
	s.Checkpointing = rk.IntN(100) >= 15
	if s.Checkpointing {
		s.IntervalMs = pickMs(rk, []int64{500, 1000, 2000, 5000}, 20, 30, 30, 20)
		setMs("execution.checkpointing.interval", s.IntervalMs)
		mode := []string{"aligned", "unaligned", "aligned-timeout"}[weighted(rk, 40, 40, 20)]
		s.CheckpointMode = mode
		if mode != "aligned" {
			set("execution.checkpointing.unaligned.enabled", "true")
		}
		if mode == "aligned-timeout" {
			setMs("execution.checkpointing.aligned-checkpoint-timeout", pickMs(rk, []int64{10, 100, 1000}, 1, 1, 1))
		}
		timeoutMs := pickMs(rk, []int64{10000, 30000}, 1, 1)
		s.CheckpointTimeout = msDuration(timeoutMs)
		setMs("execution.checkpointing.timeout", timeoutMs)
		if rk.IntN(4) == 0 {
			set("execution.checkpointing.tolerable-failed-checkpoints", "3")
		}
		s.Guarantee = []string{"exactly-once", "at-least-once", "none"}[weighted(rk, 55, 30, 15)]
	} else {
		// Flink's default without checkpointing is no restart: the job would
		// fail at the first fault
		set("restart-strategy.type", "fixed-delay")
		set("restart-strategy.fixed-delay.attempts", "1000000")
		s.Guarantee = []string{"at-least-once", "none"}[weighted(rk, 60, 40)]
	}
	set("sink.delivery-guarantee", s.Guarantee)
	if s.Guarantee == "exactly-once" && rk.IntN(10) < 6 {
		set("sim.output.isolation-level", "read_committed")
	}

	s.genFaults(g.sub("faults"), g.sub("workload-faults"), g.sub("faults-more"), g.sub("faults-outages"))

	// a bound on the work of a run: at most maxRecords records produced
	s.Rate = min(s.Rate, float64(int(maxRecords/s.Deadline.Seconds()/10)*10))
	s.Rate = max(s.Rate, 10)
	set("sim.source.rate", strconv.FormatFloat(s.Rate, 'f', -1, 64))
	share := hottestShare(s.Keys, s.Parallelism)
	costUs := int64(s.Utilization * 1e6 / (s.Rate * share))
	if s.CheckpointMode == "aligned" {
		// an aligned barrier waits behind what fills a gate and its
		// producers' output pools; when catching up that drains at the
		// per-record cost, and a checkpoint that cannot drain it within its
		// timeout never completes (a real restart loop of Flink's, with
		// tolerable failures 0, that unaligned checkpoints exist to break):
		// keep the drain within a few seconds. Ahead of the barrier of the
		// busiest keyed subtask: its gate's buffers (exclusive per channel
		// and floating), and in each reader's output pool what its
		// subpartition for that subtask holds, up to
		// max-buffers-per-channel (10) of the pool (never below
		// numSubpartitions + 1 buffers, so with no exclusive buffers the
		// readers' pools, not the gate, hold the most: seed 1000078)
		readers := s.readers(s.Parallelism)
		gate := readers*perChannel + floating
		pool := exchange.PoolSize(s.Parallelism, perChannel, floating)
		queued := int64((gate + readers*min(maxBuffersPerChannel, pool)) * bufferRecords)
		if lim := alignedDrainMax.Microseconds() / queued; costUs > lim {
			costUs = lim
			s.Utilization = float64(int(float64(costUs)*s.Rate*share/1e4)) / 100 // what the cost now gives
		}
	}
	if rocksdb {
		costUs -= 15 // sim.cost.state.rocksdb comes on top
	}
	set("sim.cost.window", strconv.FormatInt(max(1, costUs), 10)+"µs")
	set("sim.duration", short(s.Deadline))
	return s
}

// slotsNeeded is the slots the job needs at parallelism p: the widest of
// its vertices (one slot-sharing group).
func (s *Scenario) slotsNeeded(p int) int {
	return max(p, s.SourceParallelism, s.SinkParallelism)
}

// readers is the source's parallelism when parallelism.default is p.
func (s *Scenario) readers(p int) int {
	if s.SourceParallelism > 0 {
		return s.SourceParallelism
	}
	return p
}

// maxRecords bounds the records the generator produces in one run.
const maxRecords = 30_000

// maxBuffersPerChannel is taskmanager.network.memory.max-buffers-per-channel
// as the scenarios leave it (Flink's default).
const maxBuffersPerChannel = 10

// alignedDrainMax bounds how long an aligned barrier waits behind the
// buffers queued ahead of it at the scenario's per-record cost.
const alignedDrainMax = 3 * time.Second

// hottestShare is the largest share of the generator's keys (user-0 ...
// user-(keys-1), drawn uniformly) that one keyed subtask owns at
// parallelism p (KeyGroupRangeAssignment with the default max parallelism).
func hottestShare(keys, p int) float64 {
	maxP, err := keygroup.DefaultMaxParallelism(p)
	if err != nil {
		return 1
	}
	owned := make([]int, p)
	for k := 0; k < keys; k++ {
		kg := keygroup.AssignToKeyGroup(keygroup.StringHashCode("user-"+strconv.Itoa(k)), maxP)
		owned[keygroup.OperatorIndexForKeyGroup(maxP, p, kg)]++
	}
	return float64(slices.Max(owned)) / float64(keys)
}

// MarshalText writes a setting as key=value (a scenario's JSON, which
// regression tests keep, reads like the command line).
func (kv Setting) MarshalText() ([]byte, error) { return []byte(kv.Key + "=" + kv.Value), nil }

// UnmarshalText reads key=value.
func (kv *Setting) UnmarshalText(b []byte) error {
	k, v, ok := strings.Cut(string(b), "=")
	if !ok {
		return fmt.Errorf("setting %q: want key=value", b)
	}
	kv.Key, kv.Value = k, v
	return nil
}
