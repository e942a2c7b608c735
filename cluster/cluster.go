// Package cluster builds a simulated Flink cluster from the settings: the
// JobGraph, the actors (Kafka broker, ResourceManager, JobManager, one
// TaskManager per sim.taskmanagers), the kernel and the driver that hosts
// them, and exposes the run as a Session that can be run to the end, run
// until a virtual time, stepped, acted on and inspected. Factory is the one
// place that builds a component from its spec (sim/spawn), for every
// driver and every process of a run. No Flink behaviour lives here.
//
// The packages below it are the libraries the commands wire up: remote
// (the transport between processes), session (the UI), console (the
// terminal's view), inputs (a run's inputs and a recorded log), campaign
// (the fault swarm) and explain. Those that live in wall time (remote,
// session, console, campaign) are the only code outside cmd that may read
// the clock; this package may not (tests/purity_test.go).
package cluster

import (
	"math"
	"runtime/debug"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/vt"

	"io"
)

// Options of one run besides the settings.
type Options struct {
	// Events are the user's records (--events); nil runs the built-in
	// generator. With events the source is bounded.
	Events []events.Record
	// EventsFile and EventsSHA256 name the events file in the log header.
	EventsFile, EventsSHA256 string
	// Unbounded keeps an events-file job running until sim.duration.
	Unbounded bool
	// Actions happen at their virtual times and are recorded in the header.
	Actions []action.Action
	// LiveActions were given while an earlier run of this recipe was under
	// way (a UI session): they are not in the header; each is logged as an
	// action event when it is delivered, as it was the first time. Replay
	// reads them from those events.
	LiveActions []action.Action
	// StopAt, when set, cuts the run at that virtual time as an interrupt
	// does: every envelope due before it is delivered, then every actor logs
	// its final counters and the summary says INTERRUPTED (the replay of an
	// interrupted run). Stop makes a StopAt of 0 count too (a run
	// interrupted before its first step).
	StopAt vt.Time
	Stop   bool
	// Log receives the event log; Console selects the console format.
	Log     io.Writer
	Console bool
	// Observe, when set, is called with every log event, in log order, as
	// it is written (use eventlog.Decode for its typed form). It must not
	// block for long; it never changes the run. ev is valid during the
	// call only: keep a copy of *ev.
	Observe func(ev *eventlog.LogEvent)
	// Interrupt, when closed, cuts the run short at the next whole
	// millisecond of virtual time (see Session.Interrupt).
	Interrupt <-chan struct{}
	// Progress, when set, is told the virtual time now and then (for a
	// progress line on a terminal; never part of the log).
	Progress func(vtUs int64)
	// AdaptProcs lets the scheduler set GOMAXPROCS for the run: one P while
	// the steps are narrow, every P while they are wide; AdaptGC the GC
	// percent: 200 while the live heap is small (actors.Scheduler's
	// AdaptProcs and AdaptGC). For a process that runs one simulation at a
	// time; the plain driver ignores them. Neither changes the log.
	AdaptProcs, AdaptGC bool
	// ObserveDelivery, when set, is called with every envelope as it is
	// delivered, in delivery order, with the step's virtual time, on the
	// scheduler's goroutine (actors.Scheduler.OnDeliver). It must only read
	// the envelope and must not block; it never changes the run. The plain
	// driver ignores it.
	ObserveDelivery func(now vt.Time, e *messages.Envelope)
}

// Bounded reports whether the run's source is bounded.
func (o Options) Bounded() bool { return o.Events != nil && !o.Unbounded }

// Result is the outcome of a run.
type Result struct {
	JobStatus   string  // the last status of the job, or INTERRUPTED
	EndVT       vt.Time // virtual time of the last step (µs)
	Steps       uint64  // scheduler steps taken
	Deliveries  uint64  // envelopes delivered
	Invariant   string  // non-empty: a broken invariant ended the run
	Failure     string  // its description
	FailureVT   vt.Time
	FailedActor string
	Interrupted bool             // cut short by an interrupt (or StopAt)
	Counters    map[string]int64 // sums of the final_counters fields over all actors
	// AttemptsLost is whether some task attempt ended without reporting its
	// final counters (a TaskManager killed, a failover): Counters then are
	// those of the attempts that ran to the end (eventlog.Tally).
	AttemptsLost bool
	// MaxBackPressure is the highest backPressuredTimeMsPerSecond any
	// subtask reported, and MaxBackPressureTask the first subtask that did.
	MaxBackPressure     int64
	MaxBackPressureTask string
	// FailureCause is the cause of the job's last FAILED status.
	FailureCause string
	// OutputViewFrom is the sink offset where the output view starts: 0, or
	// where the last job started from a savepoint began (output_view).
	OutputViewFrom int64
	// IgnoredActions are the user actions that were not carried out, each
	// "action: reason", in log order.
	IgnoredActions []string
	// Sink is partition 0 of the sink topic as a consumer with
	// sim.output.isolation-level sees it at the end of the run, in offset
	// order: read_uncommitted every record appended; read_committed the
	// non-transactional and committed records below the last stable offset
	// (kafka.TxnLog.ReadCommitted).
	Sink []*messages.KafkaRecord
	// Uncommitted is the number of sink records in transactions still in
	// progress (open or pre-committed) at the end of the run.
	Uncommitted int64
	// Duplicates is the number of records of Sink whose identity appeared
	// earlier in Sink (resultSet.countDuplicates).
	Duplicates int64
	Source     int64 // records in the source topic
	// SinkCommitted is partition 0 of the sink topic as a read_committed
	// consumer reads it from offset 0 at the end of the run, whatever
	// sim.output.isolation-level and the output view (the swarm's
	// exactly-once check reads the whole topic).
	SinkCommitted []*messages.KafkaRecord
	// SourceTopic is the source topic as the run left it, to be read with
	// kafka.Read (the swarm's record accounting does). Its records are not
	// materialised unless read: a generated topic recomputes them.
	SourceTopic kafka.Log
	// OutputIsolation is the isolation.level of the output view: the
	// setting's, or the last a set action gave.
	OutputIsolation string
}

// Run runs the configured job to its end and writes the event log; every
// component is a Hollywood actor. It returns an error only for settings the
// JobGraph refuses.
func Run(cfg config.Config, opt Options) (*Result, error) {
	if opt.AdaptGC {
		defer softMemoryLimit()()
	}
	s, err := NewSession(cfg, opt)
	if err != nil {
		return nil, err
	}
	return s.Finish(), nil
}

// RunMemoryLimit is the soft memory limit (runtime/debug.SetMemoryLimit) of
// a Run whose GC percent the scheduler chooses (Options.AdaptGC), unless
// the process has one of its own (GOMEMLIMIT): near it the collector works
// harder instead of letting the heap grow to twice what is live. 1M keys at
// 20,000 records/s has ~450 MB live at its burst and while its result is
// read, and peaked at 830-850 MiB RSS without it (README, "Memory over
// virtual time"); a run whose live heap is larger still runs, the collector
// then capped at half the CPU. The default job's heap (~50 MB) never nears
// it.
const RunMemoryLimit = 600 << 20

// softMemoryLimit sets RunMemoryLimit unless the process has a limit, and
// returns what gives the process its own back.
func softMemoryLimit() (restore func()) {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return func() {}
	}
	before := debug.SetMemoryLimit(RunMemoryLimit)
	return func() { debug.SetMemoryLimit(before) }
}

// RunPlain is Run with the plain driver: the same components and kernel
// without Hollywood, one receiver after the other. It is the oracle the
// tests hold the actor path to.
func RunPlain(cfg config.Config, opt Options) (*Result, error) {
	s, err := NewPlainSession(cfg, opt)
	if err != nil {
		return nil, err
	}
	return s.Finish(), nil
}
