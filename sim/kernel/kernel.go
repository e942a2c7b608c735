// Package kernel is the scheduler's pure core (ARCHITECTURE.md, "a
// steerable kernel"): the envelope queue in its total order, the step, the
// merge of a step's replies and log events, injection of an envelope between
// steps, and run-until a virtual time. It knows nothing of Flink, of actors
// or of goroutines, the way raft's RawNode wraps raft: a driver asks Next for
// a step, delivers its envelopes to the receivers however it hosts them
// (Hollywood actors, or a plain loop in tests), and hands every receiver's
// Done back to Finish.
//
// Determinism: Next and Finish are pure functions of the envelopes pushed,
// the Dones handed back and the calls made; nothing depends on when a Done
// physically arrived (Finish sorts them) or on who watches (Log is called in
// one order).
package kernel

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/vt"
)

// SchedulerName is the sender name of envelopes the kernel injects and the
// actor of the events it logs itself.
const SchedulerName = "scheduler"

// UserName is the sender of user actions.
const UserName = "user"

// Kind names what a log event is; every line of the log carries one
// (sim/eventlog lists them all).
type Kind string

// Event kinds the kernel logs itself (README.md, "The event log").
const (
	KindActionIgnored Kind = "action_ignored" // a user action that could not be carried out
	KindAction        Kind = "action"         // a live user action, logged when it is delivered
	KindFailure       Kind = "failure"        // a broken invariant ended the run
)

// Forever is a pause time no envelope reaches: run to the end.
const Forever vt.Time = math.MaxInt64

// State says what Next returned.
type State uint8

const (
	// StateStep: a step to deliver; call Finish with its Dones.
	StateStep State = 1 + iota
	// StatePaused: the next envelope is due at or after the pause time;
	// the clock reads the pause time.
	StatePaused
	// StateEnded: the run is over; Result tells how.
	StateEnded
)

func (s State) String() string {
	switch s {
	case StateStep:
		return "step"
	case StatePaused:
		return "paused"
	case StateEnded:
		return "ended"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Delivery is what one receiver gets in a step, in the queue's order.
type Delivery struct {
	To        string
	Envelopes []*messages.Envelope
}

// Step is one scheduler step: every envelope with the smallest deliver_at,
// grouped by receiver in receiver order.
type Step struct {
	N          uint64  // 1 for the first step
	Now        vt.Time // the step's virtual time
	Deliveries []Delivery
}

// Config of a kernel.
type Config struct {
	// Limit is the virtual time after which the run ends: nothing due
	// later is delivered and the run closes at Limit. 0: no limit (the run
	// ends when an actor ends it, or when nothing is left to deliver).
	Limit vt.Time
	// Log receives every log event, in log order. Required. ev is valid
	// during the call only (the kernel and the actors reuse it): an
	// observer that keeps an event keeps a copy of *ev (its payload is a
	// value nothing writes again).
	Log func(ev *Event)
	// DeadLetter is asked about an envelope to an actor that is gone; it
	// returns more actor names that are gone with it (a task submitted to a
	// dead host never starts, nor do its input channels). Nil: none.
	DeadLetter func(env *messages.Envelope) (gone []string)
	// Progress, when set, is called every 65,536 steps with the virtual
	// time; it only reports to a person and never reaches the log.
	Progress func(vt.Time)
	// HostOf names the host of an actor when it starts, given the host of
	// the actor that spawned it ("" for the first actors of a run). Nil:
	// every actor is on one host, which nothing can cut (network.go).
	HostOf func(actor, spawnerHost string) string
	// ActionText renders a user action as the log shows it
	// (sim/action.Text: the kernel sits below the package that spells
	// actions). Nil: the verb's wire name.
	ActionText func(*messages.Action) string
}

// Result is how a run ended.
type Result struct {
	EndVT       vt.Time // virtual time of the last step (µs)
	Steps       uint64  // steps taken, the closing step included
	Deliveries  uint64  // envelopes delivered
	Invariant   string  // non-empty: a broken invariant ended the run
	Failure     string  // its description
	FailureVT   vt.Time
	FailedActor string
	// Interrupted: the run was cut short by Interrupt (every envelope due
	// before EndVT was delivered, none due at or after it).
	Interrupted bool
}

// Kernel is the deterministic scheduler core. Not safe for concurrent use:
// one driver owns it.
//
// Invariant between calls: every envelope in the queue is due at or after
// the clock (now), and no step due before now is left undelivered.
type Kernel struct {
	cfg     Config
	q       vt.Queue
	live    map[string]bool // actors that receive envelopes
	dead    map[string]bool // actors that were, or never will be: envelopes to them are lost
	now     vt.Time
	last    vt.Time // virtual time of the last delivered step (-1 before the first)
	step    uint64
	inStep  bool
	closing bool
	ended   bool
	res     Result
	buf     []*messages.Envelope
	// the step Next hands out, reused: a driver holds it only until Finish
	st   Step
	envs []*messages.Envelope // the step's envelopes to live receivers, in order
	// the step's log events, sorted (Finish), reused
	events []*Event
	// the network between the hosts and the faults on it (network.go)
	net network
	// envelopes their senders withdrew (Done.cancelled), still queued
	cancelled map[sentKey]struct{}
}

// sentKey names an envelope: its sender and sender_seq.
type sentKey struct {
	from string
	seq  uint64
}

// New returns a kernel at virtual time 0 with an empty queue.
func New(cfg Config) *Kernel {
	if cfg.Log == nil {
		cfg.Log = func(*Event) {}
	}
	k := &Kernel{cfg: cfg, live: map[string]bool{}, dead: map[string]bool{}, last: -1}
	k.net = network{k: k, hosts: map[string]string{}}
	return k
}

// Register makes actors known: envelopes to them are delivered.
func (k *Kernel) Register(sp []*messages.Spawned) {
	k.register(sp, "")
}

func (k *Kernel) register(sp []*messages.Spawned, spawner string) {
	for _, x := range sp {
		k.live[x.Name] = true
		delete(k.dead, x.Name)
		k.net.place(x.Name, spawner)
	}
}

// Push queues an envelope (the first envelopes of a run).
func (k *Kernel) Push(e *messages.Envelope) { k.q.Push(e) }

// Now is the virtual time of the clock: the last step's, or the pause time.
func (k *Kernel) Now() vt.Time { return k.now }

// Steps is the number of steps taken so far.
func (k *Kernel) Steps() uint64 { return k.step }

// Ended reports whether the run is over.
func (k *Kernel) Ended() bool { return k.ended }

// Result is how the run ended (meaningful once Ended).
func (k *Kernel) Result() Result { return k.res }

// Live reports whether actor name receives envelopes.
func (k *Kernel) Live(name string) bool { return k.live[name] }

// InjectTime is the earliest virtual time an envelope injected now can be
// delivered at: the clock, or just after the last step delivered at that
// time, so that an injected envelope never joins a step already taken (a
// replay that has it queued from the start delivers it in the same step).
func (k *Kernel) InjectTime() vt.Time { return max(k.now, k.last+1) }

// Inject queues e between two steps; it is delivered no earlier than
// InjectTime (its deliver_at is moved there if it asks for earlier). It
// returns the virtual time e is due. Injecting into an ended run does
// nothing.
func (k *Kernel) Inject(e *messages.Envelope) (vt.Time, error) {
	if k.inStep {
		return 0, fmt.Errorf("kernel: inject during a step")
	}
	if k.ended || k.closing {
		return 0, fmt.Errorf("kernel: the run has ended")
	}
	e.DeliverAt = max(e.DeliverAt, k.InjectTime().Micros())
	k.q.Push(e)
	return vt.Of(e.DeliverAt), nil
}

// Queued appends every envelope in flight between the actors (in no
// particular order) to dst: what is queued, less what its sender withdrew
// and what it sent ahead of a time still to come (Out.SendAhead). Read
// them, never change them.
func (k *Kernel) Queued(dst []*messages.Envelope) []*messages.Envelope {
	from := len(dst)
	dst = k.q.AppendAll(dst)
	kept := dst[:from]
	for _, e := range dst[from:] {
		if vt.Of(e.SentAt) <= k.now && !k.isCancelled(e) {
			kept = append(kept, e)
		}
	}
	clear(dst[len(kept):])
	return kept
}

func (k *Kernel) isCancelled(e *messages.Envelope) bool {
	if len(k.cancelled) == 0 {
		return false
	}
	_, ok := k.cancelled[sentKey{e.From, e.SenderSeq}]
	return ok
}

// dropCancelled removes from a step's envelopes those their senders
// withdrew, forgetting them.
func (k *Kernel) dropCancelled(envs []*messages.Envelope) []*messages.Envelope {
	if len(k.cancelled) == 0 {
		return envs
	}
	kept := envs[:0]
	for _, e := range envs {
		key := sentKey{e.From, e.SenderSeq}
		if _, ok := k.cancelled[key]; ok {
			delete(k.cancelled, key)
			continue
		}
		kept = append(kept, e)
	}
	clear(envs[len(kept):])
	return kept
}

// Next returns the next step to deliver if one is due before until, or
// pauses with the clock at until, or reports that the run has ended. A step
// must be finished (Finish) before Next is called again. The Step, its
// Deliveries and their Envelopes slices are the kernel's and are reused by the
// next call: a driver reads them until it calls Finish and keeps none of them
// (the envelopes themselves it may keep).
func (k *Kernel) Next(until vt.Time) (*Step, State) {
	if k.inStep {
		panic("kernel: Next before the last step was finished")
	}
	for !k.ended {
		t, ok := k.q.PeekTime()
		if !ok {
			if k.closing {
				k.end()
				break
			}
			k.beginClosing(k.now)
			continue
		}
		if !k.closing && k.cfg.Limit > 0 && t > k.cfg.Limit {
			k.beginClosing(k.cfg.Limit)
			continue
		}
		if !k.closing && t >= until {
			k.now = max(k.now, until)
			return nil, StatePaused
		}
		k.now, k.last = t, t
		k.step++
		if k.cfg.Progress != nil && k.step&(1<<16-1) == 0 {
			k.cfg.Progress(t)
		}
		k.buf = k.net.route(t, k.dropCancelled(k.q.PopStep(k.buf[:0])))
		st := &k.st
		st.N, st.Now, st.Deliveries = k.step, t, st.Deliveries[:0]
		clear(k.envs)
		k.envs = k.envs[:0]
		for i := 0; i < len(k.buf); {
			j := i + 1
			for j < len(k.buf) && k.buf[j].To == k.buf[i].To {
				j++
			}
			to := k.buf[i].To
			switch {
			case k.live[to]:
				at := len(k.envs)
				k.envs = append(k.envs, k.buf[i:j]...)
				k.res.Deliveries += uint64(j - i)
				st.Deliveries = append(st.Deliveries, Delivery{To: to, Envelopes: k.envs[at:len(k.envs):len(k.envs)]})
				for _, e := range k.buf[i:j] {
					if a, ok := e.Body.(*messages.Envelope_Action); ok && a.Action.Live {
						k.log(t, UserName, Action{Action: k.actionText(a.Action), To: to})
					}
				}
			case isAction(k.buf[i]):
				// a user action for an actor that is gone or never was
				text := k.actionText(k.buf[i].Body.(*messages.Envelope_Action).Action)
				k.log(t, to, ActionIgnored{Action: text, Reason: "no such actor: " + to})
			case k.dead[to]:
				// lost, as on a dead host
				if k.cfg.DeadLetter != nil {
					for _, e := range k.buf[i:j] {
						for _, n := range k.cfg.DeadLetter(e) {
							k.dead[n] = true
						}
					}
				}
			default:
				k.fail(to, t, "unknown_receiver", fmt.Sprintf("envelope from %s to unknown actor %q", k.buf[i].From, to))
				clear(k.buf)
				return nil, StateEnded
			}
			i = j
		}
		clear(k.buf)
		if len(st.Deliveries) > 0 {
			k.inStep = true
			return st, StateStep
		}
		if k.closing {
			k.end()
		}
	}
	return nil, StateEnded
}

func isAction(e *messages.Envelope) bool {
	_, ok := e.Body.(*messages.Envelope_Action)
	return ok
}

// Finish merges the Dones of the step Next returned, one per delivery in
// any order: it writes the step's log events in the order (vt, actor, seq),
// ends the run on a broken invariant, forgets stopped actors, queues what
// the receivers sent, and starts closing the run when an actor ended it.
func (k *Kernel) Finish(dones []*Done) {
	if !k.inStep {
		panic("kernel: Finish without a step")
	}
	k.inStep = false
	slices.SortFunc(dones, func(a, b *Done) int { return cmp.Compare(a.Actor, b.Actor) })
	events := k.events[:0]
	for _, d := range dones {
		k.register(d.Spawned, d.Actor)
		for i := range d.Events {
			events = append(events, &d.Events[i])
		}
	}
	slices.SortStableFunc(events, func(a, b *Event) int {
		if c := cmp.Compare(a.Vt, b.Vt); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Actor, b.Actor); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	for _, ev := range events {
		k.cfg.Log(ev)
	}
	clear(events)
	k.events = events[:0]
	for _, d := range dones {
		if d.Failure != "" {
			inv := d.Invariant
			if inv == "" {
				inv = "actor_failure"
			}
			k.fail(d.Actor, k.now, inv, d.Failure)
			return
		}
	}
	endRun := false
	for _, d := range dones {
		for _, name := range d.Stopped {
			delete(k.live, name)
			k.dead[name] = true
		}
		if !k.closing {
			for _, e := range d.Out {
				if k.net.jitter != nil {
					k.net.jitterOut(e)
				}
				k.q.Push(e)
			}
			for _, seq := range d.Cancelled {
				if k.cancelled == nil {
					k.cancelled = map[sentKey]struct{}{}
				}
				k.cancelled[sentKey{d.Actor, seq}] = struct{}{}
			}
		}
		endRun = endRun || d.EndRun
	}
	if k.closing {
		k.end()
		return
	}
	if endRun {
		k.beginClosing(k.now)
	}
}

// Interrupt cuts the run short between two steps: what is queued is
// dropped and every actor logs its final counters at the clock's time. The
// next call to Next delivers that closing step.
func (k *Kernel) Interrupt() {
	if k.inStep || k.ended || k.closing {
		return
	}
	k.res.Interrupted = true
	k.beginClosing(k.now)
}

// Fail ends the run with a broken invariant found outside any actor (by the
// driver: a reply that cannot be decoded, a host that is gone).
func (k *Kernel) Fail(actor, invariant, what string) {
	if k.ended {
		return
	}
	k.inStep = false
	k.fail(actor, k.now, invariant, what)
}

// beginClosing drops what is still queued and asks every live actor for its
// final counters at virtual time t.
func (k *Kernel) beginClosing(t vt.Time) {
	k.closing = true
	// user actions still waiting: the run ended before their time
	var later []*messages.Envelope
	for k.q.Len() > 0 {
		later = k.q.PopStep(later)
	}
	for _, e := range later {
		if a, ok := e.Body.(*messages.Envelope_Action); ok && e.From == UserName {
			k.log(t, SchedulerName, ActionIgnored{Action: k.actionText(a.Action), Reason: "the run ended before its time"})
		}
	}
	k.q = vt.Queue{}
	k.cancelled = nil
	if t > k.now {
		k.now = t
	}
	k.net.heal(k.now, true)
	k.net.expireFaults(k.now, true)
	names := make([]string, 0, len(k.live))
	for n := range k.live {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, n := range names {
		k.q.Push(&messages.Envelope{DeliverAt: k.now.Micros(), To: n, From: SchedulerName, SenderSeq: uint64(1<<40 + i), SentAt: k.now.Micros(),
			Body: &messages.Envelope_EndOfRun{EndOfRun: &messages.EndOfRun{}}})
	}
}

func (k *Kernel) log(t vt.Time, actor string, p Payload) {
	k.cfg.Log(&Event{Vt: t.Micros(), Actor: actor, Body: p})
}

func (k *Kernel) fail(actor string, t vt.Time, invariant, what string) {
	k.res.Invariant = invariant
	k.res.Failure = what
	k.res.FailureVT = t
	k.res.FailedActor = actor
	k.log(t, actor, Failure{Invariant: invariant, What: what})
	k.end()
}

func (k *Kernel) end() {
	if k.ended {
		return
	}
	k.ended = true
	k.closing = false
	k.res.EndVT = k.now
	k.res.Steps = k.step
}
