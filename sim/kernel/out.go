package kernel

import (
	"fmt"
	"math/rand/v2"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/vt"
)

// Component is the behaviour of one actor: a state machine of Flink's
// rules. Step handles one envelope at the virtual time o.Now(); it must not
// block, read the wall clock or use global randomness; everything it sends
// and logs leaves through o (the Ready of the step).
type Component interface {
	Step(o *Out, env *messages.Envelope)
}

// Inspector is a Component that can show a read-only view of its state
// between two steps (InspectRequest). Inspect must not change the state:
// the same run with and without someone watching writes the same log.
type Inspector interface {
	Inspect(now vt.Time) any
}

// Spec describes a component to start: plain data naming what to build
// (sim/spawn holds Flink's), never the component itself, so that no state
// machine constructs another and no package imports what it spawns. The
// driver's Build turns a spec into its component, wherever the new actor
// lives.
type Spec interface {
	// Component names the component the spec builds ("TaskExecutor"), for
	// errors.
	Component() string
}

// Build makes the component that spec describes, to run as actor name. It
// must be a pure function of (name, spec) and what the builder was made
// with (the run's settings): every driver builds the same component from
// the same spec. An error (a spec it does not know) fails the spawn.
type Build func(name string, spec Spec) (Component, error)

// Spawner builds the component spec describes and starts it as actor name;
// it returns where the actor lives. Set by the driver hosting the actor.
type Spawner func(name string, spec Spec) (*messages.Spawned, error)

// Out collects what an actor does during one delivery (the Ready of one
// Step, in raft's terms): envelopes to send, log events, spawned and
// stopped actors, a broken invariant, the end of the run. It also carries
// the actor's identity, its virtual clock and its seeded random generator.
// The driver hands what it collected to the kernel in one Done.
type Out struct {
	name      string
	now       vt.Time
	step      uint64 // the scheduler step of the delivery being handled
	sendSeq   uint64 // sender_seq of the last envelope sent; never reset
	logSeq    uint64 // per-delivery counter of log events
	rng       *rand.Rand
	spawner   Spawner
	envs      []*messages.Envelope
	events    []Event
	spawned   []*messages.Spawned
	stopped   []string
	cancelled []uint64
	failure   string
	invariant string
	endRun    bool
	// reused between deliveries: the Done handed to the driver, which the
	// kernel has read (Finish) before this actor's next delivery begins
	d Done
}

// timerEnvelope is a timer's envelope with its body, allocated together.
type timerEnvelope struct {
	env  messages.Envelope
	body messages.Envelope_Timer
	t    messages.Timer
}

// NewOut returns the Out of actor name with its random generator seeded
// from (seed, name).
func NewOut(name string, seed uint64, spawner Spawner) *Out {
	return &Out{name: name, rng: vt.NewRand(seed, name), spawner: spawner}
}

// Name is the actor's name.
func (o *Out) Name() string { return o.name }

// Now is the virtual time of the delivery being handled (µs).
func (o *Out) Now() vt.Time { return o.now }

// Step is the number of the scheduler step being delivered: envelopes
// handled with the same Step came in one step.
func (o *Out) Step() uint64 { return o.step }

// Rand is the actor's own seeded generator.
func (o *Out) Rand() *rand.Rand { return o.rng }

// Send hands the scheduler body for actor to, delivered delay virtual µs
// from now (a negative delay counts as 0).
func (o *Out) Send(to string, delay vt.Time, body messages.Body) {
	if delay < 0 {
		delay = 0
	}
	o.SendAt(to, o.now+delay, body)
}

// SendAt hands the scheduler body for actor to, delivered at virtual time
// at (never earlier than now).
func (o *Out) SendAt(to string, at vt.Time, body messages.Body) {
	if at < o.now {
		at = o.now
	}
	// one allocation per envelope: envelopes carved from a shared slab
	// measured slower at parallelism 64 and 90 MB larger, each slab held
	// alive by its longest-waiting envelope
	o.add(&messages.Envelope{}, to, at, body)
}

// SendAhead hands the scheduler body for actor to as if this actor sent it
// at virtual time sentAt (never earlier than now) with delay: what a
// component computes ahead, sure that nothing before sentAt changes it
// unless it says so (Cancel). Observers see it in flight from sentAt on.
func (o *Out) SendAhead(to string, sentAt, delay vt.Time, body messages.Body) {
	sentAt = max(sentAt, o.now)
	o.add(&messages.Envelope{}, to, sentAt+max(delay, 0), body)
	o.envs[len(o.envs)-1].SentAt = sentAt.Micros()
}

// Sent is the sender_seq of the last envelope this actor sent (0 before
// the first): how it names an envelope to Cancel later.
func (o *Out) Sent() uint64 { return o.sendSeq }

// Cancel withdraws the envelope with sender_seq seq that this actor sent in
// an earlier delivery and that is not yet delivered: the scheduler drops it.
func (o *Out) Cancel(seq uint64) { o.cancelled = append(o.cancelled, seq) }

// add fills e (sent now, due at at) and queues it as the next envelope.
func (o *Out) add(e *messages.Envelope, to string, at vt.Time, body messages.Body) {
	o.sendSeq++
	e.DeliverAt, e.To, e.From, e.SenderSeq, e.SentAt, e.Body = at.Micros(), to, o.name, o.sendSeq, o.now.Micros(), body
	o.envs = append(o.envs, e)
}

// Timer sends a Timer of kind with arg to this actor itself after delay µs
// (a negative delay counts as 0).
func (o *Out) Timer(delay vt.Time, kind messages.TimerKind, arg int64) {
	delay = max(delay, 0)
	te := &timerEnvelope{}
	te.t.Kind, te.t.Arg = kind, arg
	te.body.Timer = &te.t
	o.add(&te.env, o.name, o.now+delay, &te.body)
}

// Log records the typed event p of this actor at the current virtual time
// (sim/eventlog holds the payloads).
func (o *Out) Log(p Payload) {
	o.logSeq++
	o.events = append(o.events, Event{Vt: o.now.Micros(), Actor: o.name, Seq: o.logSeq, Body: p})
}

// Spawn starts a new actor named name running the component spec
// describes, built by the driver (Spawner, Build). The scheduler learns of
// it before it delivers any envelope of this step's output. A spec the
// driver cannot build is a broken invariant (spawn) that ends the run.
func (o *Out) Spawn(name string, spec Spec) {
	if o.spawner == nil {
		o.Invariant("spawn", "%s cannot start %s: no driver hosts what it spawns", o.name, name)
		return
	}
	sp, err := o.spawner(name, spec)
	if err != nil {
		o.Invariant("spawn", "%s cannot start %s (%s): %v", o.name, name, spec.Component(), err)
		return
	}
	o.spawned = append(o.spawned, sp)
}

// Stop tells the scheduler that actor name is gone: envelopes to it are
// dropped from now on.
func (o *Out) Stop(name string) { o.stopped = append(o.stopped, name) }

// EndRun tells the scheduler that the run has ended (the job reached a
// terminal status): after this step every actor logs its final counters.
func (o *Out) EndRun() { o.endRun = true }

// Invariant ends the run: a Flink invariant broke (a watermark went back, a
// credit went negative, a record was lost).
func (o *Out) Invariant(name, format string, args ...any) {
	if o.invariant == "" {
		o.invariant = name
		o.failure = fmt.Sprintf(format, args...)
	}
}

func (o *Out) begin(now vt.Time) {
	o.now = now
	o.logSeq = 0
	clear(o.envs)
	clear(o.events)
	o.envs, o.events, o.spawned, o.stopped, o.cancelled = o.envs[:0], o.events[:0], nil, nil, o.cancelled[:0]
	o.failure, o.invariant, o.endRun = "", "", false
}

// done is the delivery's Done: o's own, valid until o's next delivery
// begins (the kernel reads it in Finish before that).
func (o *Out) done(step uint64) *Done {
	d := &o.d
	d.Step, d.Actor, d.Out, d.Events = step, o.name, o.envs, o.events
	d.Spawned, d.Stopped, d.Failure, d.Invariant, d.EndRun = o.spawned, o.stopped, o.failure, o.invariant, o.endRun
	d.Cancelled = o.cancelled
	return d
}

// Deliver runs one delivery of envelopes through c and returns its Done,
// which is o's own: valid until o's next Deliver (a driver hands it to
// Kernel.Finish before that, and keeps none of its slices). A
// panic in c is recovered and becomes a broken invariant (no_panic) that
// ends the run, naming the actor. Every driver uses it, and so can a test of
// a single component.
func Deliver(c Component, o *Out, step uint64, now vt.Time, envs []*messages.Envelope) (d *Done) {
	o.begin(now)
	o.step = step
	defer func() {
		if r := recover(); r != nil {
			o.failure = fmt.Sprintf("panic in %s: %v", o.name, r)
			o.invariant = "no_panic"
			d = o.done(step)
		}
	}()
	for _, e := range envs {
		c.Step(o, e)
	}
	return o.done(step)
}
