package actors

import (
	"encoding/json"
	"fmt"

	"github.com/anthdm/hollywood/actor"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// SchedulerName is the sender name of envelopes the scheduler injects.
const SchedulerName = kernel.SchedulerName

// The scheduler actor's control messages. They are local Go values: the
// scheduler and whoever steers it (the CLI, the UI server, a test) share a
// process; only Deliver, Done and the inspection messages cross to actors
// that may live elsewhere.
type (
	// Kickoff loads a run: the actors already spawned and the first
	// envelopes. The run stays paused at virtual time 0 until a Run.
	Kickoff struct {
		Spawned []*messages.Spawned
		Initial []*messages.Envelope
	}
	// Run delivers steps until the next is due at or after Until, or
	// MaxSteps steps were taken (0: no bound), or the run ends; then the
	// scheduler sends a Report on Reply.
	Run struct {
		Until    vt.Time
		MaxSteps int
		Reply    chan<- Report
	}
	// Inject queues an envelope between two steps (see kernel.Inject).
	Inject struct {
		Env   *messages.Envelope
		Reply chan<- InjectResult
	}
	// Interrupt cuts the run short between two steps; the next Run
	// delivers the closing step (kernel.Interrupt).
	Interrupt struct{ Done chan<- struct{} }
	// Query asks actors for their views between two steps (InspectRequest),
	// outside the virtual-time queue and the log. Actors nil: every live one.
	Query struct {
		Actors []string
		Reply  chan<- map[string]json.RawMessage
	}
	// InFlight asks for the envelopes in the queue (kernel.Queued).
	InFlight struct {
		Reply chan<- []*messages.Envelope
	}
)

// Report is where a Run stopped.
type Report struct {
	State kernel.State // StatePaused or StateEnded
	Now   vt.Time
	Steps uint64
	// InjectAt is when an envelope injected now would be due
	// (kernel.InjectTime).
	InjectAt vt.Time
	Result   kernel.Result // how the run ended, once StateEnded
}

// InjectResult is when an injected envelope is due, or why it was refused.
type InjectResult struct {
	At  vt.Time
	Err error
}

// Scheduler is the Hollywood driver of the kernel (ARCHITECTURE.md): for
// each step it sends every receiver one Deliver with its envelopes, waits
// for every receiver's single Done, and hands them to the kernel, which
// writes the step's log events in their total order and queues what was
// sent. Receivers of one step run in parallel on their own goroutines; the
// result does not depend on it. It is the only writer of the event log.
type Scheduler struct {
	k       *kernel.Kernel
	pids    map[string]*actor.PID
	self    *actor.PID
	step    uint64 // the step in flight (0: none)
	waiting int
	dones   []*kernel.Done
	// delivers are the Delivers of the step in flight (next)
	delivers []messages.Deliver
	run      *Run
	steps    int // steps taken in this Run
	query    *pendingQuery
	queryID  uint64
	engine   *actor.Engine
	// Sender, when set, carries each step's Delivers and the inspection
	// requests instead of one engine send each (the remote transport: one
	// batch per process per step). Set it before the scheduler is spawned.
	Sender StepSender
	// AdaptProcs has the scheduler set GOMAXPROCS to one P while the steps
	// are narrow and to every P while they are wide, AdaptGC the GC percent
	// to 200 while the live heap is small (workers.go, tuning); both go
	// back to the process's own when the run ends. They are the process's,
	// so only for a process that runs one simulation at a time. Set them
	// before the scheduler is spawned.
	AdaptProcs, AdaptGC bool
	tuning              tuning
	// OnDeliver, when set, is shown every envelope of each step before the
	// step is delivered, in the step's order, at the step's virtual time
	// (an observer such as the UI's traffic: it must only read the
	// envelope, not keep or change it, and return quickly; it runs on the
	// scheduler's goroutine and never reaches the queue or the log). Set it
	// before the scheduler is spawned.
	OnDeliver func(now vt.Time, e *messages.Envelope)
}

type pendingQuery struct {
	id      uint64
	waiting int
	views   map[string]json.RawMessage
	reply   chan<- map[string]json.RawMessage
}

// NewScheduler returns the driver of k.
func NewScheduler(k *kernel.Kernel) *Scheduler {
	return &Scheduler{k: k, pids: map[string]*actor.PID{}}
}

// Spawn registers s on e as the process scheduler/SchedulerName (a
// mailbox, proc.go) and returns its PID. A Done that is not its step's
// last is counted on its sender's goroutine (countDone); every other
// message is handled on a worker's grown stack (workers.go).
func (s *Scheduler) Spawn(e *actor.Engine) *actor.PID {
	s.engine = e
	s.self = spawnMailbox(e, "scheduler", SchedulerName, s.handle, s.countDone)
	return s.self
}

// countDone handles a Done that is not its step's last (or is stale) and
// reports whether it did; the last Done of a step, which merges the step
// and sends the next, goes to the workers. Called only while no other
// message of the scheduler is queued or being handled (serial.pushUnless).
func (s *Scheduler) countDone(msg any) bool {
	m, ok := msg.(*kernel.Done)
	if !ok {
		return false
	}
	if s.step == 0 || m.Step != s.step {
		return true // stale: handle ignores it too
	}
	if s.waiting <= 1 {
		return false
	}
	s.dones = append(s.dones, m)
	s.waiting--
	return true
}

// handle is the scheduler's work for one message, on a worker, one message
// at a time in the order they came. A panic here ends the run.
func (s *Scheduler) handle(msg any) {
	defer func() {
		if r := recover(); r != nil {
			s.k.Fail(SchedulerName, "no_panic", fmt.Sprintf("panic in the scheduler: %v", r))
			s.report()
		}
	}()
	switch m := msg.(type) {
	case *Kickoff:
		if s.AdaptProcs || s.AdaptGC {
			s.tuning.begin(s.AdaptProcs, s.AdaptGC)
		}
		s.register(m.Spawned)
		for _, e := range m.Initial {
			s.k.Push(e)
		}
	case *Run:
		s.run, s.steps = m, 0
		s.next()
	case *kernel.Done:
		if s.step == 0 || m.Step != s.step {
			return
		}
		s.dones = append(s.dones, m)
		s.waiting--
		if s.waiting == 0 {
			s.finishStep()
		}
	case *Inject:
		at, err := s.k.Inject(m.Env)
		m.Reply <- InjectResult{At: at, Err: err}
	case *Interrupt:
		s.k.Interrupt()
		close(m.Done)
	case *InFlight:
		m.Reply <- s.k.Queued(nil)
	case *Query:
		s.startQuery(m)
	case *messages.InspectReply:
		s.inspected(m)
	}
}

func (s *Scheduler) register(sp []*messages.Spawned) {
	for _, x := range sp {
		s.pids[x.Name] = actor.NewPID(x.Address, x.Id)
	}
	s.k.Register(sp)
}

// next delivers the next step, or reports where the run stopped.
func (s *Scheduler) next() {
	if s.run == nil {
		return
	}
	if s.run.MaxSteps > 0 && s.steps >= s.run.MaxSteps {
		s.report()
		return
	}
	st, state := s.k.Next(s.run.Until)
	if state != kernel.StateStep {
		s.report()
		return
	}
	s.step = st.N
	s.waiting = len(st.Deliveries)
	if s.OnDeliver != nil {
		for i := range st.Deliveries {
			for _, e := range st.Deliveries[i].Envelopes {
				s.OnDeliver(st.Now, e)
			}
		}
	}
	if s.tuning.begun {
		s.tuning.step(len(st.Deliveries))
	}
	if s.Sender != nil {
		s.Sender.SendStep(s.engine, s.self, st, s.pids)
		return
	}
	// A wide step (a keyBy edge of many channels) is sent by the workers in
	// chunks, so that its receivers start while the rest are being sent;
	// each receiver gets its one Deliver whoever sends it, and the kernel
	// orders the Dones.
	ds := st.Deliveries
	// one Deliver per receiver of the step, reused by the next step: a
	// receiver is done with its Deliver when its Done is in
	if cap(s.delivers) < len(ds) {
		s.delivers = make([]messages.Deliver, len(ds))
	}
	s.delivers = s.delivers[:len(ds)]
	for i := range ds {
		m := &s.delivers[i]
		m.Step, m.Now, m.Envelopes = st.N, st.Now.Micros(), ds[i].Envelopes
	}
	ms := s.delivers
	for len(ds) > sendChunk {
		submit(&deliverChunk{s: s, engine: s.engine, ds: ds[len(ds)-sendChunk:], ms: ms[len(ms)-sendChunk:]})
		ds, ms = ds[:len(ds)-sendChunk], ms[:len(ms)-sendChunk]
	}
	(&deliverChunk{s: s, engine: s.engine, ds: ds, ms: ms}).run()
}

// sendChunk is how many Delivers one worker sends of a wide step.
const sendChunk = 128

// deliverChunk sends Delivers of one step (a task for the workers). The
// pids it reads are not written until the step's Dones are all in.
type deliverChunk struct {
	s      *Scheduler
	engine *actor.Engine
	ds     []kernel.Delivery
	ms     []messages.Deliver // ms[i] is ds[i]'s
}

func (c *deliverChunk) run() {
	for i := range c.ds {
		c.engine.SendWithSender(c.s.pids[c.ds[i].To], &c.ms[i], c.s.self)
	}
}

func (s *Scheduler) finishStep() {
	events := 0
	for _, d := range s.dones {
		events += len(d.Events)
		for _, x := range d.Spawned {
			s.pids[x.Name] = actor.NewPID(x.Address, x.Id)
		}
	}
	if s.tuning.begun {
		s.tuning.logged(events)
	}
	s.k.Finish(s.dones)
	for _, d := range s.dones {
		for _, name := range d.Stopped {
			delete(s.pids, name)
		}
	}
	clear(s.dones)
	s.dones = s.dones[:0]
	s.step = 0
	s.steps++
	s.next()
}

func (s *Scheduler) report() {
	if s.run == nil {
		return
	}
	state := kernel.StatePaused
	if s.k.Ended() {
		state = kernel.StateEnded
		s.tuning.restore()
	}
	r := s.run
	s.run = nil
	r.Reply <- Report{State: state, Now: s.k.Now(), Steps: s.k.Steps(), InjectAt: s.k.InjectTime(), Result: s.k.Result()}
}

// startQuery sends an InspectRequest to each wanted live actor; the views
// come back as InspectReply messages. Queries are answered between steps
// only: the driver never asks during a Run.
func (s *Scheduler) startQuery(m *Query) {
	s.queryID++
	q := &pendingQuery{id: s.queryID, views: map[string]json.RawMessage{}, reply: m.Reply}
	names := m.Actors
	if names == nil {
		for n := range s.pids {
			names = append(names, n)
		}
	}
	for _, n := range names {
		pid := s.pids[n]
		if pid == nil || !s.k.Live(n) {
			continue
		}
		q.waiting++
		req := &messages.InspectRequest{Id: q.id, Now: s.k.Now().Micros()}
		if s.Sender != nil {
			s.Sender.Send(s.engine, s.self, pid, req)
			continue
		}
		s.engine.SendWithSender(pid, req, s.self)
	}
	if q.waiting == 0 {
		m.Reply <- q.views
		return
	}
	s.query = q
}

func (s *Scheduler) inspected(m *messages.InspectReply) {
	q := s.query
	if q == nil || m.Id != q.id {
		return
	}
	if len(m.Json) > 0 {
		q.views[m.Actor] = m.Json
	}
	q.waiting--
	if q.waiting == 0 {
		s.query = nil
		q.reply <- q.views
	}
}
