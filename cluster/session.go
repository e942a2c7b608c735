package cluster

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/flinksim/flinksim/actors"
	"github.com/flinksim/flinksim/buildinfo"
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/spawn"
	"github.com/flinksim/flinksim/sim/taskexecutor"
	"github.com/flinksim/flinksim/sim/vt"
)

// Session is one run of the simulated cluster, steerable between scheduler
// steps (ARCHITECTURE.md, "session"): run until a virtual time, take one
// step, act now (the action is logged and replays), inspect the actors'
// state and what is in flight without changing anything, and finish. A new
// session is paused at virtual time 0 with its header written.
//
// A Session is not safe for concurrent use: one goroutine steers it (the
// CLI's, or the UI server's session loop). The log, and what observers see,
// depend only on the settings, the seed and the actions with their virtual
// times: never on how fast, in what chunks or whether anyone watches the
// run.
type Session struct {
	cfg     config.Config
	opt     Options
	w       *eventlog.Writer
	tally   *eventlog.Tally
	broker  *kafka.Broker
	drv     driver
	userSeq uint64
	status  Status
	result  *sessionResult
	out     *outputCursor              // Output's consumer position (nil: none yet)
	watched bool                       // Inspect was called while the run went on
	final   map[string]json.RawMessage // the views when the run ended (taken only when watched)
}

// Status is where a session stands.
type Status struct {
	Now   vt.Time // the clock: every envelope due before it is delivered
	Steps uint64  // scheduler steps taken
	Ended bool    // the run is over (Finish gives the result)
	// InjectAt is when an action given now happens (kernel.InjectTime).
	InjectAt vt.Time
}

// driver hosts the components and moves the kernel on.
type driver interface {
	run(until vt.Time, maxSteps int) actors.Report
	inject(e *messages.Envelope) (vt.Time, error)
	interrupt()
	inspect(names []string) map[string]json.RawMessage
	inFlight() []*messages.Envelope
}

// NewSession builds the cluster with every component a Hollywood actor and
// returns it paused at virtual time 0.
func NewSession(cfg config.Config, opt Options) (*Session, error) {
	return newSession(cfg, opt, (&hollywood{}).host)
}

// NewPlainSession is NewSession with the plain driver (kernel.Loop): the
// oracle for the actor path in tests.
func NewPlainSession(cfg config.Config, opt Options) (*Session, error) {
	return newSession(cfg, opt, plainHosting)
}

// hosting builds the driver of kernel k: where the components live and how
// the kernel moves on. build is the run's factory; spawn builds a component
// from its spec and hosts it; kick loads the first actors and envelopes.
type hosting func(k *kernel.Kernel, seed uint64, build kernel.Build, opt Options) (spawn kernel.Spawner, kick func(sp []*messages.Spawned, initial []*messages.Envelope), drv driver, err error)

// plainHosting is the plain driver (kernel.Loop).
func plainHosting(k *kernel.Kernel, seed uint64, build kernel.Build, _ Options) (kernel.Spawner, func([]*messages.Spawned, []*messages.Envelope), driver, error) {
	l := kernel.NewLoop(k, seed, build)
	kick := func(sp []*messages.Spawned, initial []*messages.Envelope) {
		k.Register(sp)
		for _, e := range initial {
			k.Push(e)
		}
	}
	return l.Spawn, kick, &loopDriver{l: l}, nil
}

// hollywood is the product's hosting: the scheduler actor and every
// component on a Hollywood engine.
type hollywood struct {
	engine *actor.Engine                               // nil: a new local engine
	sender actors.StepSender                           // nil: the scheduler sends each Deliver itself
	place  func(string, kernel.Spec) *messages.Spawned // Host.Place
	hosted *actors.Host                                // set by host
}

func (h *hollywood) host(k *kernel.Kernel, seed uint64, build kernel.Build, opt Options) (kernel.Spawner, func([]*messages.Spawned, []*messages.Envelope), driver, error) {
	engine := h.engine
	if engine == nil {
		var err error
		if engine, err = actor.NewEngine(actor.NewEngineConfig()); err != nil {
			return nil, nil, nil, fmt.Errorf("starting the actor engine: %w", err)
		}
	}
	sch := actors.NewScheduler(k)
	sch.Sender = h.sender
	sch.AdaptProcs, sch.AdaptGC = opt.AdaptProcs, opt.AdaptGC
	sch.OnDeliver = opt.ObserveDelivery
	spid := sch.Spawn(engine)
	h.hosted = &actors.Host{Engine: engine, Scheduler: spid, Seed: seed, Build: build, Place: h.place}
	kick := func(sp []*messages.Spawned, initial []*messages.Envelope) {
		engine.Send(spid, &actors.Kickoff{Spawned: sp, Initial: initial})
	}
	return h.hosted.Spawn, kick, &actorDriver{engine: engine, scheduler: spid}, nil
}

func newSession(cfg config.Config, opt Options, host hosting) (*Session, error) {
	graph, err := jobgraph.Build(cfg)
	if err != nil {
		return nil, err
	}
	s := &Session{cfg: cfg, opt: opt, tally: eventlog.NewTally()}
	s.w = eventlog.NewWriter(opt.Log, opt.Console)
	writeHeader(s.w, cfg, opt)

	limit := vt.FromDuration(cfg.Duration)
	if opt.Bounded() {
		limit = 24 * 3600 * vt.Second // a bounded job ends by itself; this only guards against a hang
	}
	kc := kernel.Config{Limit: limit, Log: s.log, DeadLetter: taskexecutor.DeadLetter, HostOf: hostOf, ActionText: action.Text}
	if opt.Progress != nil {
		kc.Progress = func(t vt.Time) { opt.Progress(t.Micros()) }
	}
	k := kernel.New(kc)
	c := cfg // the actors share one read-only copy
	f := Factory{Config: &c}
	// the session keeps the broker it builds: it reads its topics for the
	// result
	build := func(name string, spec kernel.Spec) (kernel.Component, error) {
		comp, err := f.Build(name, spec)
		if b, ok := comp.(*kafka.Broker); ok && s.broker == nil {
			s.broker = b
		}
		return comp, err
	}
	spawnComponent, kick, drv, err := host(k, cfg.Seed, build, opt)
	if err != nil {
		return nil, err
	}
	s.drv = drv

	var spawned []*messages.Spawned
	var initial []*messages.Envelope
	var failed error
	add := func(name string, spec kernel.Spec, at vt.Time) {
		sp, err := spawnComponent(name, spec)
		if err != nil {
			failed = cmp.Or(failed, fmt.Errorf("starting %s: %w", name, err))
			return
		}
		spawned = append(spawned, sp)
		initial = append(initial, &messages.Envelope{DeliverAt: at.Micros(), To: name, From: actors.SchedulerName,
			SenderSeq: uint64(len(initial) + 1), Body: &messages.Envelope_Start{Start: &messages.Start{}}})
	}
	add(jobgraph.KafkaName, spawn.KafkaBrokerSpec{Events: opt.Events}, 0)
	add(jobgraph.ResourceManagerName, spawn.ResourceManagerSpec{}, 0)
	for i := 0; i < cfg.TaskManagers; i++ {
		add(jobgraph.TaskManagerName(i), spawn.TaskExecutorSpec{}, 0)
	}
	// the job is submitted once the cluster is up: after the task managers
	// had time to register
	add(jobgraph.JobManagerName, spawn.JobMasterSpec{Graph: graph, Bounded: opt.Bounded()}, 4*vt.FromDuration(cfg.RPCLatency())+1000)
	if failed == nil && s.broker == nil {
		failed = fmt.Errorf("the broker was not built in this process")
	}
	if failed != nil {
		return nil, failed
	}

	for _, a := range opt.Actions {
		initial = append(initial, s.actionEnvelope(a, false))
	}
	for _, a := range opt.LiveActions {
		initial = append(initial, s.actionEnvelope(a, true))
	}
	kick(spawned, initial)
	return s, nil
}

// actionEnvelope is the envelope that carries user action a to its actor.
func (s *Session) actionEnvelope(a action.Action, live bool) *messages.Envelope {
	s.userSeq++
	at := vt.FromDuration(a.At).Micros()
	return &messages.Envelope{DeliverAt: at, To: actionTarget(a), From: kernel.UserName,
		SenderSeq: s.userSeq, SentAt: at, Body: &messages.Envelope_Action{Action: a.Message(live)}}
}

// actionTarget is the actor an action is delivered to: the TaskManager a
// kill names, the broker for what happens to the source topic and the
// output consumer, the JobManager for the rest (what Flink's REST API or CLI
// asks of the JobMaster); a network cut goes to the scheduler, which drops
// what crosses it (sim/kernel/network.go).
func actionTarget(a action.Action) string {
	switch a.Verb {
	case action.KillTaskManager:
		return a.TaskManager
	case action.PartitionNetwork, action.StallTaskManager, action.NetworkJitter, action.LoseRPC,
		action.FailCheckpointStorage, action.KafkaUnavailable:
		return kernel.SchedulerName
	case action.SendEvent, action.PausePartition, action.ResumePartition:
		return jobgraph.KafkaName
	case action.Set:
		if a.Key == "sim.output.isolation-level" {
			return jobgraph.KafkaName
		}
	}
	return jobgraph.JobManagerName
}

// log writes one event and hands it to the observers (in the driver's
// goroutine, between or during steps, always in log order).
func (s *Session) log(ev *eventlog.LogEvent) {
	s.w.Write(ev)
	if _, raw := ev.Body.(kernel.RawJSON); raw {
		// an event that crossed the remote transport: its JSON text is
		// read into its typed form once here, not once by every observer
		typed := *ev
		typed.Body = eventlog.Decode(ev)
		ev = &typed
	}
	s.tally.Observe(ev)
	if s.opt.Observe != nil {
		s.opt.Observe(ev)
	}
}

// Status is where the session stands.
func (s *Session) Status() Status {
	return s.status
}

// Settings are the run's settings.
func (s *Session) Settings() config.Config { return s.cfg }

// chunk is how many steps a driver takes before the session looks at its
// interrupt channel again.
const chunk = 1 << 14

// RunUntil delivers every step due before t (t is clamped to the run's
// end) and returns where the session stopped: paused with the clock at t,
// or ended.
func (s *Session) RunUntil(t vt.Time) Status {
	s.advance(t)
	return s.status
}

// Step takes one scheduler step (or, when the run was cut short, the
// closing one).
func (s *Session) Step() Status {
	if !s.status.Ended {
		s.apply(s.drv.run(kernel.Forever, 1))
	}
	return s.status
}

// advance runs until t in chunks, cutting the run short when the interrupt
// channel closes.
func (s *Session) advance(t vt.Time) {
	for !s.status.Ended {
		if s.interrupted() {
			s.cut()
			return
		}
		r := s.drv.run(t, chunk)
		s.apply(r)
		if r.State == kernel.StateEnded || (r.State == kernel.StatePaused && r.Now >= t) {
			return
		}
	}
}

func (s *Session) interrupted() bool {
	if s.opt.Interrupt == nil {
		return false
	}
	select {
	case <-s.opt.Interrupt:
		return true
	default:
		return false
	}
}

// cut ends the run at the next whole millisecond of virtual time after the
// clock: every envelope due before it is delivered, then the run closes.
func (s *Session) cut() {
	t := (s.status.Now/1000 + 1) * 1000
	s.apply(s.drv.run(t, 0))
	if !s.status.Ended {
		s.closeNow()
	}
}

// closeNow closes the run at the clock: every actor logs its final
// counters and the summary will say INTERRUPTED.
func (s *Session) closeNow() {
	s.drv.interrupt()
	s.apply(s.drv.run(kernel.Forever, 0))
}

func (s *Session) apply(r actors.Report) {
	s.status = Status{Now: r.Now, Steps: r.Steps, Ended: r.State == kernel.StateEnded, InjectAt: r.InjectAt}
	if s.status.Ended && s.result == nil {
		s.result = s.finishResult(r.Result)
		if s.watched {
			// the actors' last state, after the closing step, for observers
			// that look after the end (a job that FAILED or FINISHED)
			s.final = s.drv.inspect(nil)
		}
	}
}

// Interrupt cuts the run short now, at the clock (between two steps): the
// actors log their final counters and the summary says INTERRUPTED.
func (s *Session) Interrupt() Status {
	if !s.status.Ended {
		s.closeNow()
	}
	return s.status
}

// Act parses one action in the --action syntax and has it happen: at its
// at= time when it gives one (not before the clock), otherwise now (the
// earliest time an envelope injected now is delivered). The action is
// logged as an action event when it is delivered, so a replay re-injects it
// at the same time. It returns the action as scheduled.
func (s *Session) Act(text string) (action.Action, error) {
	if s.status.Ended {
		return action.Action{}, fmt.Errorf("the run has ended")
	}
	now := s.injectTime()
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "at=") {
		text = "at=" + strings.ReplaceAll(config.FormatDuration(time.Duration(now)*time.Microsecond), " ", "") + " " + text
	}
	a, err := action.Parse(text)
	if err != nil {
		return action.Action{}, err
	}
	return s.schedule(a, text)
}

// Schedule has action a, parsed already, happen at its At, which must not
// be before the clock (a timeline's actions re-injected after a jump). It
// returns the action as scheduled.
func (s *Session) Schedule(a action.Action) (action.Action, error) {
	return s.schedule(a, a.String())
}

// schedule injects a at its At, refusing a time before the clock; text is
// the action as an error names it.
func (s *Session) schedule(a action.Action, text string) (action.Action, error) {
	if s.status.Ended {
		return action.Action{}, fmt.Errorf("the run has ended")
	}
	if at, now := vt.FromDuration(a.At), s.injectTime(); at < now {
		return action.Action{}, fmt.Errorf("action %q: at=%s is in the past (the run is at %s)", text, at, now)
	}
	return a, s.inject(a)
}

// ActNow has action a happen now, whatever its At (a process the remote
// runtime lost: a kill-taskmanager). It returns the action as scheduled.
func (s *Session) ActNow(a action.Action) (action.Action, error) {
	if s.status.Ended {
		return action.Action{}, fmt.Errorf("the run has ended")
	}
	a.At = time.Duration(s.injectTime()) * time.Microsecond
	return a, s.inject(a)
}

// inject hands live action a to the driver.
func (s *Session) inject(a action.Action) error {
	_, err := s.drv.inject(s.actionEnvelope(a, true))
	return err
}

// injectTime is when an envelope injected now is due (kernel.InjectTime:
// the clock, or 1 µs after a step just taken at the clock's time).
func (s *Session) injectTime() vt.Time { return s.status.InjectAt }

// Inspect asks actors (none named: every live one) for their views
// between two steps; views are JSON. It changes nothing. After the end it
// answers the views the actors had when the run ended (after the closing
// step), which the session takes once if Inspect was called while the run
// went on, and nil otherwise.
func (s *Session) Inspect(names ...string) map[string]json.RawMessage {
	if s.status.Ended {
		if len(names) == 0 || s.final == nil {
			return s.final
		}
		out := map[string]json.RawMessage{}
		for _, n := range names {
			if v, ok := s.final[n]; ok {
				out[n] = v
			}
		}
		return out
	}
	s.watched = true
	return s.drv.inspect(names)
}

// InFlight is every envelope in the queue: what travels between the actors
// now (sent_at, deliver_at, from, to, body). Read them, never change them.
func (s *Session) InFlight() []*messages.Envelope {
	if s.status.Ended {
		return nil
	}
	return s.drv.inFlight()
}

// Finish runs the session to its end (or to Options.StopAt, as an
// interrupt), writes the summary line, and returns the result. Calling it
// again returns the same result.
func (s *Session) Finish() *Result {
	if s.result != nil && s.result.summaryWritten {
		return &s.result.Result
	}
	if s.opt.Stop || s.opt.StopAt > 0 {
		s.advance(s.opt.StopAt)
		if !s.status.Ended {
			s.closeNow()
		}
	}
	s.advance(kernel.Forever)
	r := s.result
	status := r.JobStatus
	if r.Interrupted && r.Invariant == "" {
		status = "INTERRUPTED"
		r.JobStatus = status
	}
	if r.Invariant != "" {
		status = "FAIL"
	}
	s.w.Summary(eventlog.SummaryData{JobStatus: status, EndVT: r.EndVT.Micros(), Steps: r.Steps, Deliveries: r.Deliveries,
		Counters: r.Counters, Invariant: r.Invariant, MaxBackPressure: r.MaxBackPressure, MaxBackPressureTask: r.MaxBackPressureTask,
		ResultsVisible: int64(len(r.Sink)), ResultsUncommitted: r.Uncommitted, Duplicates: r.Duplicates})
	r.summaryWritten = true
	return &r.Result
}

type sessionResult struct {
	Result
	summaryWritten bool
}

// finishResult collects the result once the kernel ended: the kernel's
// figures, the tally of the log, and the sink as the output consumer sees
// it.
func (s *Session) finishResult(kr kernel.Result) *sessionResult {
	t := s.tally
	out := &sessionResult{Result: Result{JobStatus: t.JobStatus, EndVT: kr.EndVT, Steps: kr.Steps, Deliveries: kr.Deliveries,
		Invariant: kr.Invariant, Failure: kr.Failure, FailureVT: kr.FailureVT, FailedActor: kr.FailedActor,
		Interrupted: kr.Interrupted, Counters: t.Counters, MaxBackPressure: t.MaxBackPressure,
		MaxBackPressureTask: t.MaxBackPressureTask, FailureCause: t.FailureCause, OutputViewFrom: t.OutputViewFrom,
		IgnoredActions: t.IgnoredActions, AttemptsLost: t.AttemptsLost, Source: s.broker.SourceTopic().Total()}}
	sink := s.broker.SinkLog()
	var recs []*messages.KafkaRecord
	isolation := s.cfg.OutputIsolation
	if t.OutputIsolation != "" {
		isolation = config.IsolationLevel(t.OutputIsolation) // changed during the run by a set action
	}
	out.OutputIsolation = string(isolation)
	if isolation == config.ReadCommitted {
		recs = sink.ReadCommitted(0)
	} else {
		recs = sink.ReadUncommitted(0)
	}
	open, preCommitted, _, aborted, _ := sink.Counts()
	// a job started from a savepoint (rescale) writes to a fresh view:
	// records from where it started
	view := recs[:0]
	for _, r := range recs {
		if r.Offset >= t.OutputViewFrom {
			view = append(view, r)
		}
	}
	out.Sink = view
	out.Uncommitted = int64(open + preCommitted)
	out.Duplicates = newResultSet().countDuplicates(view)
	// the read above is the committed view when it read from offset 0 and
	// is what a read_committed consumer reads: read_committed itself, or a
	// topic with no record in an open, pre-committed or aborted
	// transaction; one read instead of two (at a million keys each read is
	// ~100 MB of records)
	if t.OutputViewFrom == 0 && (isolation == config.ReadCommitted || open+preCommitted+aborted == 0) {
		out.SinkCommitted = view
	} else {
		out.SinkCommitted = sink.ReadCommitted(0)
	}
	out.SourceTopic = s.broker.SourceTopic()
	return out
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
	as := []string{}
	for _, a := range opt.Actions {
		as = append(as, a.String())
	}
	b, _ := json.Marshal(as)
	extra = append(extra, messages.Raw("actions", string(b)))
	w.Header(cfg.Seed, BuildFingerprint(), settings, defaults, extra...)
}

// actorDriver is the product's driver: the scheduler actor on a Hollywood
// engine, steered with its control messages.
type actorDriver struct {
	engine    *actor.Engine
	scheduler *actor.PID
}

func (d *actorDriver) run(until vt.Time, maxSteps int) actors.Report {
	ch := make(chan actors.Report, 1)
	d.engine.Send(d.scheduler, &actors.Run{Until: until, MaxSteps: maxSteps, Reply: ch})
	return <-ch
}

func (d *actorDriver) inject(e *messages.Envelope) (vt.Time, error) {
	ch := make(chan actors.InjectResult, 1)
	d.engine.Send(d.scheduler, &actors.Inject{Env: e, Reply: ch})
	r := <-ch
	return r.At, r.Err
}

func (d *actorDriver) interrupt() {
	ch := make(chan struct{})
	d.engine.Send(d.scheduler, &actors.Interrupt{Done: ch})
	<-ch
}

func (d *actorDriver) inspect(names []string) map[string]json.RawMessage {
	ch := make(chan map[string]json.RawMessage, 1)
	d.engine.Send(d.scheduler, &actors.Query{Actors: names, Reply: ch})
	return <-ch
}

func (d *actorDriver) inFlight() []*messages.Envelope {
	ch := make(chan []*messages.Envelope, 1)
	d.engine.Send(d.scheduler, &actors.InFlight{Reply: ch})
	return <-ch
}

// loopDriver is the plain driver (kernel.Loop).
type loopDriver struct{ l *kernel.Loop }

func (d *loopDriver) run(until vt.Time, maxSteps int) actors.Report {
	st := d.l.Run(until, maxSteps)
	return actors.Report{State: st, Now: d.l.K.Now(), Steps: d.l.K.Steps(), InjectAt: d.l.K.InjectTime(), Result: d.l.K.Result()}
}

func (d *loopDriver) inject(e *messages.Envelope) (vt.Time, error) { return d.l.K.Inject(e) }

func (d *loopDriver) interrupt() { d.l.K.Interrupt() }

func (d *loopDriver) inspect(names []string) map[string]json.RawMessage {
	if names == nil {
		names = d.l.Names()
	}
	out := map[string]json.RawMessage{}
	for _, n := range names {
		if !d.l.K.Live(n) {
			continue
		}
		if v := d.l.Inspect(n); v != nil {
			b, _ := json.Marshal(v)
			out[n] = b
		}
	}
	return out
}

func (d *loopDriver) inFlight() []*messages.Envelope { return d.l.K.Queued(nil) }

// BuildFingerprint is the build of this binary as the log header's "build"
// field records it (buildinfo.Fingerprint, whose doc gives its form).
func BuildFingerprint() string { return buildinfo.Fingerprint() }
