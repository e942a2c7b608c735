package kernel

import (
	"strings"
	"time"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/vt"
)

// Faults the scheduler decides besides network cuts (STYLE.md: "drops,
// delays, partitions and kills are its decisions, each logged"): a host
// that stalls (a TaskManager process frozen by a long garbage collection
// or a suspended VM: nothing is delivered to its actors until it wakes,
// then everything held at once, in one step at its end, in the step's
// order: receiver, sender, sequence), jitter on the
// links between hosts (each envelope between two hosts later by a seeded
// amount, the order of one sender's envelopes to one receiver kept, as one
// TCP connection keeps it; across connections it is not), and the loss of
// one RPC of a kind (Pekko delivers at most once: an envelope that is gone
// is gone, the actors' timeouts and retries are Flink's answer).
//
// Kinds the kernel logs for them (README.md, "The fault swarm").
const (
	KindHostStalled   Kind = "host_stalled"   // a host froze: host, duration_ms
	KindHostResumed   Kind = "host_resumed"   // it woke: host, held_envelopes
	KindNetworkJitter Kind = "network_jitter" // jitter began: duration_ms, max_jitter_us
	KindJitterEnded   Kind = "network_jitter_ended"
	KindRPCLost       Kind = "rpc_lost" // an RPC the network lost: rpc, from, to
	KindRPCLossUnused Kind = "rpc_loss_unused"
)

// Fault is what a user action addressed to the scheduler asks for: exactly
// one of its fields is set (faultOf reads it from the action).
type Fault struct {
	Cut    *Cut
	Stall  *Stall
	Jitter *Jitter
	Lose   *Lose
	Outage *Outage // outages.go
}

// Stall freezes a host for a while.
type Stall struct {
	Host     string
	Duration vt.Time // > 0
}

// Jitter delays every envelope between two hosts by up to Max for a while.
type Jitter struct {
	Duration vt.Time // > 0
	Max      vt.Time // > 0
}

// Lose drops the first envelope Match accepts within Within of the action.
type Lose struct {
	RPC    string // the RPC's name, for the log
	Match  func(*messages.Envelope) bool
	Within vt.Time
}

// faultOf is the fault a user action to the scheduler asks for; false if it
// asks for none.
func faultOf(a *messages.Action) (Fault, bool) {
	d := func(ns int64) vt.Time { return vt.FromDuration(time.Duration(ns)) }
	switch a.GetVerb() {
	case messages.ActionVerb_ACTION_PARTITION_NETWORK:
		if c := a.GetCut(); c != nil {
			return Fault{Cut: &Cut{A: c.HostA, B: c.HostB, Duration: d(c.DurationNanos)}}, true
		}
	case messages.ActionVerb_ACTION_STALL_TASKMANAGER:
		if st := a.GetStall(); st != nil {
			return Fault{Stall: &Stall{Host: st.Host, Duration: d(st.DurationNanos)}}, true
		}
	case messages.ActionVerb_ACTION_NETWORK_JITTER:
		if j := a.GetJitter(); j != nil {
			return Fault{Jitter: &Jitter{Max: d(j.MaxNanos), Duration: d(j.DurationNanos)}}, true
		}
	case messages.ActionVerb_ACTION_FAIL_CHECKPOINT_STORAGE, messages.ActionVerb_ACTION_KAFKA_UNAVAILABLE:
		if n := a.GetDurationNanos(); n > 0 {
			return Fault{Outage: &Outage{Storage: a.GetVerb() == messages.ActionVerb_ACTION_FAIL_CHECKPOINT_STORAGE, Duration: d(n)}}, true
		}
	case messages.ActionVerb_ACTION_LOSE_RPC:
		if l := a.GetLose(); l != nil {
			if rk, ok := l.Rpc.Kind(); ok {
				m := rk.Is
				if task := l.Task; task != "" {
					m = func(e *messages.Envelope) bool {
						return rk.Is(e) && (baseName(e.To) == task || baseName(e.From) == task)
					}
				}
				return Fault{Lose: &Lose{RPC: rk.Word, Match: m, Within: d(l.WithinNanos)}}, true
			}
		}
	}
	return Fault{}, false
}

// baseName is a subtask's name without its attempt (window-1#2: window-1).
func baseName(actor string) string {
	if i := strings.IndexByte(actor, '#'); i >= 0 {
		return actor[:i]
	}
	return actor
}

type activeStall struct {
	Stall
	end  vt.Time
	held int64
	// starts are the subtasks whose submission (SubmitTask) it holds: the
	// actors the host starts when it wakes
	starts map[string]bool
}

type activeJitter struct {
	Jitter
	id       uint64
	end      vt.Time
	jittered int64
	logged   bool // its end is logged
}

type activeLose struct {
	Lose
	end vt.Time
}

// jitterReach is how far ahead an envelope may be due for jitter to apply:
// messages on the wire, not envelopes a sender scheduled for later.
const jitterReach = 100 * vt.Millisecond

// applyFault starts the fault an action asked for at t.
func (n *network) applyFault(t vt.Time, f Fault, text string) {
	switch {
	case f.Cut != nil:
		cut := *f.Cut
		n.cutID++
		c := &activeCut{Cut: cut, id: n.cutID, start: t, end: t + cut.Duration, notified: map[[2]string]bool{}}
		n.cuts = append(n.cuts, c)
		n.k.log(t, SchedulerName, NetworkPartition{HostA: cut.A, HostB: cut.B, DurationMs: vt.Millis(cut.Duration), Action: text})
	case f.Stall != nil:
		n.stalls = append(n.stalls, &activeStall{Stall: *f.Stall, end: t + f.Stall.Duration})
		n.k.log(t, SchedulerName, HostStalled{Host: f.Stall.Host, DurationMs: vt.Millis(f.Stall.Duration), Action: text})
	case f.Jitter != nil:
		n.jitterID++
		if n.jitter != nil && !n.jitter.logged {
			n.endJitter(t)
		}
		n.jitter = &activeJitter{Jitter: *f.Jitter, id: n.jitterID, end: t + f.Jitter.Duration}
		if n.linkLast == nil {
			n.linkLast = map[[2]string]vt.Time{}
		}
		n.k.log(t, SchedulerName, NetworkJitter{DurationMs: vt.Millis(f.Jitter.Duration), MaxJitterUs: f.Jitter.Max.Micros(), Action: text})
	case f.Lose != nil:
		n.loses = append(n.loses, &activeLose{Lose: *f.Lose, end: t + f.Lose.Within})
	case f.Outage != nil:
		n.startOutage(t, *f.Outage, text)
	}
}

// expireFaults logs the end of stalls, jitter and unused losses over by t.
// A stall's held envelopes are due at its end, so its end is a step of its
// own and logged in order.
func (n *network) expireFaults(t vt.Time, runEnded bool) {
	n.expireOutages(t, runEnded)
	if len(n.stalls) > 0 {
		kept := n.stalls[:0]
		for _, s := range n.stalls {
			if s.end <= t || runEnded {
				n.k.log(min(s.end, t), SchedulerName, HostResumed{Host: s.Host, HeldEnvelopes: s.held, RunEnded: s.end > t})
				continue
			}
			kept = append(kept, s)
		}
		n.stalls = kept
	}
	if j := n.jitter; j != nil && !j.logged && (j.end <= t || runEnded) {
		n.endJitter(min(j.end, t))
	}
	if n.jitter != nil && (t > n.jitter.end+jitterReach+n.jitter.Max || runEnded) {
		n.jitter, n.linkLast = nil, nil // nothing jittered can be overtaken any more
	}
	if len(n.loses) > 0 {
		kept := n.loses[:0]
		for _, l := range n.loses {
			if l.end <= t || runEnded {
				n.k.log(min(l.end, t), SchedulerName, RPCLossUnused{RPC: l.RPC, RunEnded: l.end > t})
				continue
			}
			kept = append(kept, l)
		}
		n.loses = kept
	}
}

func (n *network) endJitter(t vt.Time) {
	j := n.jitter
	n.k.log(t, SchedulerName, NetworkJitterEnded{JitteredEnvelopes: j.jittered, RunEnded: j.end > t})
	j.logged = true
	j.end = min(j.end, t)
}

// stalledUntil is the stall holding the host of actor at t (its end is
// when the host wakes), and false when that host is not stalled at t.
func (n *network) stalledUntil(t vt.Time, actor string) (*activeStall, bool) {
	h := n.hosts[actor]
	if h == "" {
		return nil, false
	}
	for _, s := range n.stalls {
		if s.Host == h && t < s.end {
			return s, true
		}
	}
	return nil, false
}

// faults applies the losses and stalls to a step's envelopes due at t: a
// lost RPC is dropped and logged, an envelope to a stalled host is queued
// again for the moment it wakes (all of them in one step then, in the step's
// order). It returns the
// rest, in order.
func (n *network) faults(t vt.Time, envs []*messages.Envelope) []*messages.Envelope {
	if len(n.loses) == 0 && (len(n.stalls) == 0 || n.k.closing) && len(n.outages.list) == 0 {
		return envs
	}
	if len(n.stalls) > 0 && !n.k.closing {
		// first the submissions held: a request to a subtask a stalled
		// host starts may come before its submission in the step's order
		for _, e := range envs {
			if sub, ok := e.Body.(*messages.Envelope_SubmitTask); ok && e.From != UserName {
				if s, ok := n.stalledUntil(t, e.To); ok {
					if s.starts == nil {
						s.starts = map[string]bool{}
					}
					s.starts[sub.SubmitTask.ExecutionId] = true
				}
			}
		}
	}
	out := envs[:0]
	for _, e := range envs {
		if n.lost(t, e) {
			continue
		}
		if len(n.outages.list) > 0 && !n.k.closing && n.outage(t, e) {
			continue
		}
		if !n.k.closing && e.From != UserName {
			// a user action (kill-taskmanager) reaches a frozen process:
			// a kill needs nothing of it
			if s, ok := n.stalledUntil(t, e.To); ok {
				s.held++
				e.DeliverAt = s.end.Micros()
				n.k.q.Push(e)
				continue
			}
			if end, ok := n.unborn(t, e.To); ok {
				e.DeliverAt = end.Micros()
				n.k.q.Push(e)
				continue
			}
		}
		out = append(out, e)
	}
	clear(envs[len(out):])
	return out
}

// unborn reports whether actor is not started yet and a stalled host
// starts it when it wakes (a subtask whose submission the stall holds, or
// one of its input channels), and when an envelope to it is due again:
// just after that host wakes. In Flink such an envelope (a consumer's
// partition request) waits in the frozen process's socket; an envelope to
// any other actor not started goes to an unknown receiver as always.
func (n *network) unborn(t vt.Time, actor string) (vt.Time, bool) {
	if len(n.stalls) == 0 || n.k.live[actor] || n.k.dead[actor] || actor == SchedulerName {
		return 0, false
	}
	task, _, _ := strings.Cut(actor, "/") // an input channel: consumer/ch-N
	for _, s := range n.stalls {
		if t < s.end && s.starts[task] {
			return s.end + 1, true
		}
	}
	return 0, false
}

// lost drops e if an armed loss matches it (between two actors on
// different hosts: an RPC that goes over the network).
func (n *network) lost(t vt.Time, e *messages.Envelope) bool {
	if len(n.loses) == 0 || e.From == SchedulerName || e.From == UserName {
		return false
	}
	if hf, ht := n.hosts[e.From], n.hosts[e.To]; hf == "" || ht == "" || hf == ht {
		return false
	}
	for i, l := range n.loses {
		if t < l.end && l.Match(e) {
			n.k.log(t, SchedulerName, RPCLost{RPC: l.RPC, From: e.From, To: e.To})
			n.loses = append(n.loses[:i], n.loses[i+1:]...)
			return true
		}
	}
	return false
}

// jitterOut delays e, just sent at now, by its link's jitter: the latency
// between two hosts varies by the millisecond, a seeded amount (a hash of
// the jitter, the two hosts and the millisecond it is sent in, so the same
// run jitters the same way whatever the driver), and e is never due before
// an envelope the same sender sent the same receiver earlier (one
// connection's order).
func (n *network) jitterOut(e *messages.Envelope) {
	j := n.jitter
	if j == nil {
		return
	}
	if _, timer := e.Body.(*messages.Envelope_Timer); timer {
		return
	}
	hf, ht := n.hosts[e.From], n.hosts[e.To]
	if hf == "" || ht == "" || hf == ht {
		return
	}
	at := vt.Of(e.DeliverAt)
	if vt.Of(e.SentAt) > n.k.now || at-n.k.now > jitterReach {
		return
	}
	link := [2]string{e.From, e.To}
	if n.k.now < j.end {
		at += vt.Time(linkHash(j.id, hf, ht, uint64(n.k.now/vt.Millisecond)) % uint64(j.Max+1))
		j.jittered++
	}
	if last, ok := n.linkLast[link]; ok && at < last {
		at = last
	}
	n.linkLast[link] = at
	e.DeliverAt = at.Micros()
}

// linkHash is FNV-1a over the jitter's id, the link and the millisecond.
func linkHash(id uint64, from, to string, ms uint64) uint64 {
	h := uint64(14695981039346656037)
	mix := func(b byte) { h ^= uint64(b); h *= 1099511628211 }
	for i := 0; i < 8; i++ {
		mix(byte(id >> (8 * i)))
	}
	for i := 0; i < len(from); i++ {
		mix(from[i])
	}
	mix(0)
	for i := 0; i < len(to); i++ {
		mix(to[i])
	}
	mix(0)
	for i := 0; i < 8; i++ {
		mix(byte(ms >> (8 * i)))
	}
	return h
}
