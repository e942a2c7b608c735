package kernel

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/vt"
)

// Network partitions are a scheduler decision (STYLE.md: "drops, delays,
// partitions and kills are its decisions, each logged"). Every actor lives
// on a host: the first actors on the host Config.HostOf names, a spawned
// actor on the host HostOf gives it (its spawner's, unless the driver's rule
// says otherwise). A cut between two hosts drops every envelope due between
// them while it lasts; what the actors make of a lost envelope is theirs
// (Flink's rules live in the actors): each end of a pair of actors that lost
// an envelope hears it once per cut, as a ConnectionLost naming the other.
//
// Kinds the kernel logs for cuts (README.md, "Network partitions").
const (
	KindNetworkPartition       Kind = "network_partition"        // a cut began: host_a, host_b, duration_ms
	KindNetworkPartitionHealed Kind = "network_partition_healed" // it ended: host_a, host_b, dropped_envelopes, connections_lost
)

// Cut is a network partition between two hosts for a while.
type Cut struct {
	A, B     string  // the two hosts; A != B
	Duration vt.Time // µs, > 0
}

type activeCut struct {
	Cut
	id         int64
	start, end vt.Time
	dropped    int64
	notified   map[[2]string]bool // (actor, peer) told of the loss
	notices    int64
}

func (c *activeCut) between(h1, h2 string) bool {
	return (h1 == c.A && h2 == c.B) || (h1 == c.B && h2 == c.A)
}

// Host is the host of actor name ("" for the scheduler, the user, and an
// actor never registered).
func (k *Kernel) Host(name string) string { return k.hosts[name] }

// place records the host of an actor that starts, spawned by spawner (""
// for the first actors of a run).
func (k *Kernel) place(name, spawner string) {
	if k.cfg.HostOf == nil {
		return // one host: nothing can be cut
	}
	k.hosts[name] = k.cfg.HostOf(name, k.hosts[spawner])
}

// seqNext is the sender_seq of the next envelope the kernel sends itself.
func (k *Kernel) seqNext() uint64 {
	k.seq++
	return 1<<41 + k.seq
}

// control handles an envelope addressed to the scheduler itself: a user
// action that cuts the network, stalls a host, jitters the links or loses
// an RPC (faults.go).
func (k *Kernel) control(t vt.Time, e *messages.Envelope) {
	switch b := e.Body.(type) {
	case *messages.Envelope_Action:
		text := k.actionText(b.Action)
		if b.Action.Live {
			k.log(t, UserName, Action{Action: text, To: SchedulerName})
		}
		f, ok := faultOf(b.Action)
		if !ok {
			k.log(t, SchedulerName, ActionIgnored{Action: text, Reason: "not an action for the scheduler"})
			return
		}
		k.applyFault(t, f, text)
	}
}

// actionText is a user action as the log shows it (Config.ActionText).
func (k *Kernel) actionText(a *messages.Action) string {
	if k.cfg.ActionText != nil {
		return k.cfg.ActionText(a)
	}
	return a.GetVerb().String()
}

// heal ends the cuts that are over by t, each logged at its own end (no
// step lies between that end and t, so the log stays in order): a cut is
// no envelope of its own and never keeps a run alive. With runEnded (the
// run closes at t) the cuts still in progress are logged as ended with it.
func (k *Kernel) heal(t vt.Time, runEnded bool) {
	kept := k.cuts[:0]
	for _, c := range k.cuts {
		switch {
		case c.end <= t:
			k.logHealed(c.end, c, false)
		case runEnded:
			k.logHealed(t, c, true)
		default:
			kept = append(kept, c)
		}
	}
	k.cuts = kept
}

func (k *Kernel) logHealed(t vt.Time, c *activeCut, runEnded bool) {
	k.log(t, SchedulerName, NetworkPartitionHealed{HostA: c.A, HostB: c.B, DroppedEnvelopes: c.dropped, ConnectionsLost: c.notices, RunEnded: runEnded})
}

// network takes the envelopes of a step due at t, in the queue's order:
// it ends the cuts that are over, handles the envelopes addressed to the
// scheduler, drops those a cut loses
// (the dead-letter rule applies to them: a task submitted across a cut never
// starts) and tells both ends of each newly broken pair, and returns the
// rest, still in order. Cost: O(len(envs) × active cuts).
func (k *Kernel) network(t vt.Time, envs []*messages.Envelope) []*messages.Envelope {
	if len(k.cuts) > 0 {
		k.heal(t, false)
	}
	if len(k.stalls) > 0 || k.jitter != nil || len(k.loses) > 0 || k.outages.open > 0 {
		k.expireFaults(t, false)
	}
	kept := envs[:0]
	for _, e := range envs {
		if e.To == SchedulerName {
			k.control(t, e)
			continue
		}
		kept = append(kept, e)
	}
	kept = k.faults(t, kept)
	if len(k.cuts) == 0 {
		return kept
	}
	out := kept[:0]
	for _, e := range kept {
		c := k.cutOf(t, e)
		if c == nil {
			out = append(out, e)
			continue
		}
		c.dropped++
		if k.cfg.DeadLetter != nil {
			for _, n := range k.cfg.DeadLetter(e) {
				k.dead[n] = true
			}
		}
		k.notify(t, c, e.From, e.To)
		k.notify(t, c, e.To, e.From)
	}
	return out
}

// cutOf is the first active cut that loses e, or nil.
func (k *Kernel) cutOf(t vt.Time, e *messages.Envelope) *activeCut {
	hf, ht := k.hosts[e.From], k.hosts[e.To]
	if hf == "" || ht == "" || hf == ht {
		return nil
	}
	for _, c := range k.cuts {
		if c.between(hf, ht) {
			return c
		}
	}
	return nil
}

// notify tells actor that its connection to peer lost an envelope, once
// per cut, if actor still receives envelopes.
func (k *Kernel) notify(t vt.Time, c *activeCut, actor, peer string) {
	key := [2]string{actor, peer}
	if c.notified[key] || !k.live[actor] {
		return
	}
	c.notified[key] = true
	c.notices++
	k.q.Push(&messages.Envelope{DeliverAt: t.Micros(), To: actor, From: SchedulerName, SenderSeq: k.seqNext(), SentAt: t.Micros(),
		Body: &messages.Envelope_ConnectionLost{ConnectionLost: &messages.ConnectionLost{Peer: peer}}})
}
