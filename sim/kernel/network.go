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

// network is the kernel's network between hosts and the faults the
// scheduler puts on it: the hosts of the actors, the cuts, stalls, jitter
// and RPC losses in progress. It stands for no Flink class: in Flink this
// is the real network and the operating system under Pekko's at-most-once
// delivery, the way Jepsen's nemesis stands outside the system it tests.
// It reads and writes the kernel's queue, clock and actors through k.
type network struct {
	k     *Kernel
	hosts map[string]string // actor -> host
	cuts  []*activeCut      // network cuts in progress, in start order
	cutID int64
	seq   uint64 // sender_seq of the kernel's own envelopes
	// the other faults in progress (faults.go)
	stalls   []*activeStall
	jitter   *activeJitter
	linkLast map[[2]string]vt.Time // while jitter lasts: per (sender, receiver), the latest deliver_at handed out
	loses    []*activeLose
	jitterID uint64  // the jitters so far: each one's id, hashed into its delays
	outages  outages // checkpoint storage and Kafka outages (outages.go)
}

// Host is the host of actor name ("" for the scheduler, the user, and an
// actor never registered).
func (k *Kernel) Host(name string) string { return k.net.hosts[name] }

// place records the host of an actor that starts, spawned by spawner (""
// for the first actors of a run).
func (n *network) place(name, spawner string) {
	if n.k.cfg.HostOf == nil {
		return // one host: nothing can be cut
	}
	n.hosts[name] = n.k.cfg.HostOf(name, n.hosts[spawner])
}

// seqNext is the sender_seq of the next envelope the kernel sends itself.
func (n *network) seqNext() uint64 {
	n.seq++
	return 1<<41 + n.seq
}

// control handles an envelope addressed to the scheduler itself: a user
// action that cuts the network, stalls a host, jitters the links or loses
// an RPC (faults.go).
func (n *network) control(t vt.Time, e *messages.Envelope) {
	switch b := e.Body.(type) {
	case *messages.Envelope_Action:
		text := n.k.actionText(b.Action)
		if b.Action.Live {
			n.k.log(t, UserName, Action{Action: text, To: SchedulerName})
		}
		f, ok := faultOf(b.Action)
		if !ok {
			n.k.log(t, SchedulerName, ActionIgnored{Action: text, Reason: "not an action for the scheduler"})
			return
		}
		n.applyFault(t, f, text)
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
func (n *network) heal(t vt.Time, runEnded bool) {
	kept := n.cuts[:0]
	for _, c := range n.cuts {
		switch {
		case c.end <= t:
			n.logHealed(c.end, c, false)
		case runEnded:
			n.logHealed(t, c, true)
		default:
			kept = append(kept, c)
		}
	}
	n.cuts = kept
}

func (n *network) logHealed(t vt.Time, c *activeCut, runEnded bool) {
	n.k.log(t, SchedulerName, NetworkPartitionHealed{HostA: c.A, HostB: c.B, DroppedEnvelopes: c.dropped, ConnectionsLost: c.notices, RunEnded: runEnded})
}

// route takes the envelopes of a step due at t, in the queue's order:
// it ends the cuts that are over, handles the envelopes addressed to the
// scheduler, drops those a cut loses
// (the dead-letter rule applies to them: a task submitted across a cut never
// starts) and tells both ends of each newly broken pair, and returns the
// rest, still in order. Cost: O(len(envs) × active cuts).
func (n *network) route(t vt.Time, envs []*messages.Envelope) []*messages.Envelope {
	if len(n.cuts) > 0 {
		n.heal(t, false)
	}
	if len(n.stalls) > 0 || n.jitter != nil || len(n.loses) > 0 || n.outages.open > 0 {
		n.expireFaults(t, false)
	}
	kept := envs[:0]
	for _, e := range envs {
		if e.To == SchedulerName {
			n.control(t, e)
			continue
		}
		kept = append(kept, e)
	}
	kept = n.faults(t, kept)
	if len(n.cuts) == 0 {
		return kept
	}
	out := kept[:0]
	for _, e := range kept {
		c := n.cutOf(t, e)
		if c == nil {
			out = append(out, e)
			continue
		}
		c.dropped++
		if n.k.cfg.DeadLetter != nil {
			for _, name := range n.k.cfg.DeadLetter(e) {
				n.k.dead[name] = true
			}
		}
		n.notify(t, c, e.From, e.To)
		n.notify(t, c, e.To, e.From)
	}
	return out
}

// cutOf is the first active cut that loses e, or nil.
func (n *network) cutOf(t vt.Time, e *messages.Envelope) *activeCut {
	hf, ht := n.hosts[e.From], n.hosts[e.To]
	if hf == "" || ht == "" || hf == ht {
		return nil
	}
	for _, c := range n.cuts {
		if c.between(hf, ht) {
			return c
		}
	}
	return nil
}

// notify tells actor that its connection to peer lost an envelope, once
// per cut, if actor still receives envelopes.
func (n *network) notify(t vt.Time, c *activeCut, actor, peer string) {
	key := [2]string{actor, peer}
	if c.notified[key] || !n.k.live[actor] {
		return
	}
	c.notified[key] = true
	c.notices++
	n.k.q.Push(&messages.Envelope{DeliverAt: t.Micros(), To: actor, From: SchedulerName, SenderSeq: n.seqNext(), SentAt: t.Micros(),
		Body: &messages.Envelope_ConnectionLost{ConnectionLost: &messages.ConnectionLost{Peer: peer}}})
}
