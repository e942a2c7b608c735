package kafka

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// The built-in generator without a tick of its own.
//
// The generator's topic is a function of virtual time: a tick every
// generatorTick appends the records drawn for it (GeneratedTopic). The
// broker used to be woken by a timer at every tick, to make its records
// visible and answer the fetches parked for data (Kafka's DelayedFetch,
// completed when a produce appends to one of its partitions). Now nobody
// wakes it: every envelope it handles first makes visible the ticks that
// were visible to it under the timer (reveal), and a fetch that parks for
// data the generator brings before fetch.max.wait.ms is answered at once,
// as of that tick (answerAhead): the response is sent ahead with the
// tick's time as its send time, and the consumer positions it sets take
// effect at the tick (settle). The log is the same as with the timer, in
// one step fewer per tick: a third of the default job's steps.
//
// What could change such a response before its tick is a user's edit of
// the topic (send-event, pause-partition, resume-partition): every action
// first withdraws the responses sent ahead (Out.Cancel), as if their fetches
// were still parked, and after it the parked fetches are answered ahead
// again from the edited topic (plan).
//
// With a Kafka latency of 0 (sim.network.latency) the timer stays: its
// response was due at the tick itself, in a step after the tick's, which a
// response sent ahead (due at the tick, so in the tick's first step) cannot
// be.

// ahead is the broker's state for answering ahead.
type ahead struct {
	// crossed is the last tick whose timer the broker has passed, in the
	// order the timer would have been delivered in; crossedSeq the
	// broker's last sender_seq before it: its own envelopes with a greater
	// one were sent after that timer, which had sent the next
	crossed    vt.Time
	crossedSeq uint64
	// planning: the plan timer is set
	planning bool
	// the step of Start, at the first tick's time: the first tick's timer,
	// sent then, came after every envelope of that step
	startStep uint64
	// ticking: the generator's timer is kept (a Kafka latency of 0)
	ticking bool
}

// reveal makes visible the generator's ticks that the timer of each would
// have delivered before env: every tick before now, and a tick at now if
// env came after its timer in the step order (receiver, sender, sender_seq;
// the timer was sent by the broker at the tick before), and at each tick
// that brings records does what the timer did: serves the parked fetches in
// the order they parked (settle).
func (k *Broker) reveal(o *kernel.Out, env *messages.Envelope) {
	a := &k.ahead
	now, g := o.Now(), k.gen
	first, tick := g.c.FirstTickUs, g.c.TickUs
	visible := now
	if now >= first {
		last := first + (now-first)/tick*tick // the last tick at or before now
		if last == now && !k.afterTick(o, env) {
			visible = now - 1
			if prev := now - tick; a.crossed < prev {
				// the tick before was passed after everything sent so far
				a.crossed, a.crossedSeq = prev, o.Sent()
			}
		} else if a.crossed < last {
			a.crossed, a.crossedSeq = last, o.Sent()
		}
	}
	for {
		at, n, ok := g.AdvanceNext(visible)
		if !ok {
			break
		}
		if n > 0 {
			k.settle(at)
		}
	}
}

// afterTick reports whether env, delivered at the time of a tick, came
// after that tick's timer: it came in a later step at this time (sent now),
// from a sender ordered after the broker, or from the broker itself after
// the timer (sent once the tick before was passed).
func (k *Broker) afterTick(o *kernel.Out, env *messages.Envelope) bool {
	now := o.Now()
	switch {
	case now == k.gen.c.FirstTickUs && o.Step() == k.ahead.startStep:
		return false
	case k.ahead.crossed >= now, vt.Of(env.SentAt) == now:
		return true
	case env.From != o.Name():
		return env.From > o.Name()
	}
	return k.ahead.crossed == now-k.gen.c.TickUs && env.SenderSeq > k.ahead.crossedSeq
}

// settle is the timer's serving of the parked fetches at the tick at, one
// that brought records: in the order they parked, a fetch answered ahead as
// of this tick sets its consumer positions and is parked no more; every
// other one was looked at and found nothing, which sets its partitions'
// positions to its offsets (a fetch left parked by a reader that is gone
// sets them back, as Broker.fetch does).
func (k *Broker) settle(at vt.Time) {
	kept := k.parked[:0]
	for _, p := range k.parked {
		if p.sent != 0 && p.due == at {
			for i, fp := range p.req.Partitions {
				k.position[fp.Partition] = p.pos[i]
			}
			continue
		}
		for _, fp := range p.req.Partitions {
			k.position[fp.Partition] = fp.Offset
		}
		kept = append(kept, p)
	}
	clear(k.parked[len(kept):])
	k.parked = kept
}

// generate is the generator's timer (ticking only): it makes the tick at
// now visible and, when it brought records, serves the parked fetches.
func (k *Broker) generate(o *kernel.Out) {
	if k.gen.AdvanceTo(o.Now()) > 0 {
		k.serveParked(o)
	}
}

// firstData is the time of the first tick after the visible ones, strictly
// before before, that brings one of req's partitions a record beyond the
// fetch offset: when the parked fetch is answered.
func (k *Broker) firstData(req *messages.Fetch, before vt.Time) (vt.Time, bool) {
	if req.MaxRecords <= 0 {
		return 0, false
	}
	found := false
	for _, fp := range req.Partitions {
		p := int(fp.Partition)
		off := Clamp(k.source, p, fp.Offset)
		var at vt.Time
		var ok bool
		if k.edit != nil {
			at, ok = k.edit.FirstData(p, off, before)
		} else {
			at, ok = k.gen.FirstData(p, off, before)
		}
		if ok {
			before, found = at, true // a later partition can only bring it sooner
		}
	}
	return before, found
}

// answerAhead sends parked fetch p's response as of the tick at due.
func (k *Broker) answerAhead(o *kernel.Out, p *parkedFetch, due vt.Time) {
	peek := k.gen.PeekAt(due)
	body := k.read(p.req)
	peek.Back()
	if body == nil {
		panic("kafka: no record at the tick that brings one")
	}
	o.SendAhead(p.from, due, vt.FromDuration(k.cfg.KafkaLatency()), body)
	p.sent, p.due, p.pos = o.Sent(), due, append(p.pos[:0], k.pos...)
}

// withdraw takes back every response sent ahead and not yet due: their
// fetches are parked again, as they were.
func (k *Broker) withdraw(o *kernel.Out) {
	for i := range k.parked {
		if p := &k.parked[i]; p.sent != 0 {
			o.Cancel(p.sent)
			p.sent, p.pos = 0, nil
		}
	}
}

// plan answers ahead the parked fetches that the generator will answer:
// before fetch.max.wait.ms for those with its timer; for those without (data
// was due for them when they parked, and a user's edit took it away), they
// wait until data comes, looked at again every fetch.max.wait.ms.
func (k *Broker) plan(o *kernel.Out) {
	if k.gen == nil || k.ahead.ticking {
		return
	}
	// one whose records are visible already (a tick revealed with this
	// envelope brought them) is answered now, as that tick's timer did;
	// the others' positions stay as they are
	kept := k.parked[:0]
	for _, p := range k.parked {
		if p.sent == 0 {
			if body := k.read(p.req); body != nil {
				k.leave(p.req)
				o.Send(p.from, vt.FromDuration(k.cfg.KafkaLatency()), body)
				continue
			}
		}
		kept = append(kept, p)
	}
	clear(k.parked[len(kept):])
	k.parked = kept
	again := false
	for i := range k.parked {
		p := &k.parked[i]
		if p.sent != 0 {
			continue
		}
		before := p.deadline
		if !p.timer {
			before = o.Now() + fetchMaxWait
		}
		if due, ok := k.firstData(p.req, before); ok {
			k.answerAhead(o, p, due)
		} else if !p.timer {
			again = true
		}
	}
	if again && !k.ahead.planning {
		k.ahead.planning = true
		o.Timer(fetchMaxWait, timerPlan, 0)
	}
}
