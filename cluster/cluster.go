// Package cluster builds a simulated Flink cluster from the settings: the
// JobGraph, the actors (Kafka broker, ResourceManager, JobManager, one
// TaskManager per sim.taskmanagers) and the scheduler that drives them, then
// runs it to the end. No Flink behaviour lives here.
package cluster

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/anthdm/hollywood/actor"

	"github.com/flinksim/flinksim/actors"
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/vt"
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
	// Log receives the event log; Console selects the console format.
	Log     io.Writer
	Console bool
	// Progress, when set, is told the virtual time now and then (for a
	// progress line on a terminal; never part of the log).
	Progress func(vtUs int64)
}

// Result is the outcome of a run.
type Result struct {
	actors.RunResult
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
	// earlier in Sink (kafka.CountDuplicates).
	Duplicates int64
	Source     int64 // records in the source topic
}

// Bounded reports whether the run's source is bounded.
func (o Options) Bounded() bool { return o.Events != nil && !o.Unbounded }

// Run runs the configured job to its end and writes the event log.
// It returns an error only for settings the JobGraph refuses.
func Run(cfg config.Config, opt Options) (*Result, error) {
	graph, err := jobgraph.Build(cfg)
	if err != nil {
		return nil, err
	}
	w := eventlog.NewWriter(opt.Log, opt.Console)
	writeHeader(w, cfg, opt)

	engine, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		return nil, fmt.Errorf("starting the actor engine: %w", err)
	}
	limit := vt.FromDuration(cfg.Duration)
	if opt.Bounded() {
		limit = 24 * 3600 * 1_000_000 // a bounded job ends by itself; this only guards against a hang
	}
	results := make(chan actors.RunResult, 1)
	sched := actors.NewScheduler(w, limit, results)
	sched.Progress = opt.Progress
	spid := engine.Spawn(func() actor.Receiver { return sched }, "scheduler", actor.WithID("scheduler"), actor.WithMaxRestarts(0))

	c := cfg // the actors share one read-only copy
	host := &actors.Host{Engine: engine, Scheduler: spid, Seed: cfg.Seed}
	broker := actors.NewKafka(&c, opt.Events)
	var spawned []*messages.Spawned
	var initial []*messages.Envelope
	add := func(name string, comp actors.Component, at vt.Time) {
		spawned = append(spawned, host.Spawn(name, comp))
		initial = append(initial, &messages.Envelope{DeliverAt: at, To: name, From: actors.SchedulerName,
			SenderSeq: uint64(len(initial) + 1), Body: &messages.Envelope_Start{Start: &messages.Start{}}})
	}
	add(actors.KafkaName, broker, 0)
	add(actors.ResourceManagerName, actors.NewResourceManager(&c), 0)
	for i := 0; i < cfg.TaskManagers; i++ {
		add(jobgraph.TaskManagerName(i), actors.NewTaskManager(&c), 0)
	}
	// the job is submitted once the cluster is up: after the task managers
	// had time to register
	add(actors.JobManagerName, actors.NewJobManager(&c, graph, opt.Bounded()), 4*vt.FromDuration(cfg.NetworkLatency)+1000)

	for i, a := range opt.Actions {
		to := actors.JobManagerName
		if a.Verb == action.KillTaskManager {
			to = a.Arg
		}
		initial = append(initial, &messages.Envelope{DeliverAt: vt.FromDuration(a.At), To: to, From: "user",
			SenderSeq: uint64(i + 1), Body: &messages.Envelope_Action{Action: &messages.Action{Text: a.String()}}})
	}
	engine.Send(spid, &actors.Kickoff{Spawned: spawned, Initial: initial})
	res := <-results
	out := &Result{RunResult: res, Source: broker.SourceTopic().Total()}
	sink := broker.SinkLog()
	if cfg.OutputIsolation == "read_committed" {
		out.Sink = sink.ReadCommitted(0)
	} else {
		out.Sink = sink.ReadUncommitted(0)
	}
	open, preCommitted, _, _, _ := sink.Counts()
	// a job started from a savepoint (rescale) writes to a fresh view:
	// records from where it started
	from := res.OutputViewFrom
	view := out.Sink[:0]
	for _, r := range out.Sink {
		if r.Offset >= from {
			view = append(view, r)
		}
	}
	out.Sink = view
	out.Uncommitted = int64(open + preCommitted)
	out.Duplicates = kafka.CountDuplicates(out.Sink)
	status := res.JobStatus
	if res.Invariant != "" {
		status = "FAIL"
	}
	w.Summary(eventlog.SummaryData{JobStatus: status, EndVT: res.EndVT, Steps: res.Steps, Deliveries: res.Deliveries,
		Counters: res.Counters, Invariant: res.Invariant, MaxBackPressure: res.MaxBackPressure, MaxBackPressureTask: res.MaxBackPressureTask,
		ResultsVisible: int64(len(out.Sink)), ResultsUncommitted: out.Uncommitted, Duplicates: out.Duplicates})
	return out, nil
}

func writeHeader(w *eventlog.Writer, cfg config.Config, opt Options) {
	var settings, defaults [][2]string
	for _, kv := range cfg.Values() {
		settings = append(settings, [2]string{kv.Key, kv.Value})
		if kv.FlinkDefault != "" && kv.FlinkDefault != kv.Value {
			defaults = append(defaults, [2]string{kv.Key, kv.FlinkDefault})
		}
	}
	var extra []*messages.Field
	if opt.Events != nil {
		extra = append(extra, messages.Str("events_file", opt.EventsFile), messages.Str("events_sha256", opt.EventsSHA256),
			messages.Int("events", int64(len(opt.Events))))
	}
	extra = append(extra, messages.Bool("bounded", opt.Bounded()))
	var as []string
	for _, a := range opt.Actions {
		as = append(as, a.String())
	}
	extra = append(extra, messages.Raw("actions", jsonStrings(as)))
	w.Header(cfg.Seed, settings, defaults, extra...)
}

func jsonStrings(ss []string) string {
	b, _ := json.Marshal(append([]string{}, ss...))
	return string(b)
}
