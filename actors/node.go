package actors

import (
	"encoding/json"

	"github.com/anthdm/hollywood/actor"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// node hosts a Component as a Hollywood actor. Its messages are Deliver
// from the scheduler, answered with exactly one Done, and InspectRequest,
// answered with one InspectReply between two steps; both are sent with an
// explicit sender (a nil sender breaks on Hollywood's remote transport).
type node struct {
	c         kernel.Component
	out       *kernel.Out
	scheduler *actor.PID
	// the Deliver a worker runs (one at a time: the next comes after Done)
	pending *messages.Deliver
	engine  *actor.Engine
	self    *actor.PID
}

var _ actor.Receiver = (*node)(nil)

func (n *node) Receive(ctx *actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.Deliver:
		n.pending, n.engine, n.self = m, ctx.Engine(), ctx.PID()
		submit(n) // on a worker's grown stack (workers.go)
	case *messages.InspectRequest:
		reply := &messages.InspectReply{Id: m.Id, Actor: n.out.Name()}
		if in, ok := n.c.(kernel.Inspector); ok {
			if v := in.Inspect(vt.Of(m.Now)); v != nil {
				reply.Json, _ = json.Marshal(v) // views are plain data
			}
		}
		ctx.Engine().SendWithSender(n.scheduler, reply, ctx.PID())
	}
	// other messages are Hollywood's lifecycle (Initialized, Started, Stopped)
}

// run implements task: the pending Deliver, answered with its Done.
func (n *node) run() {
	m := n.pending
	n.pending = nil
	done := kernel.Deliver(n.c, n.out, m.Step, vt.Of(m.Now), m.Envelopes)
	n.engine.SendWithSender(n.scheduler, done, n.self)
}

// Host spawns actors on one Hollywood engine with fixed IDs (the actor's
// name), so that PIDs and the log never depend on chance.
type Host struct {
	Engine    *actor.Engine
	Scheduler *actor.PID
	Seed      uint64
	// Place, when set, may start a component on another engine instead (the
	// remote transport starts a TaskManager in a taskmanager process); it
	// returns where the component lives, or nil to host it here. Where an
	// actor lives never reaches the log.
	Place kernel.Spawner
}

// Spawn starts c as actor name and returns where its PID lives.
func (h *Host) Spawn(name string, c kernel.Component) *messages.Spawned {
	if h.Place != nil {
		if sp := h.Place(name, c); sp != nil {
			return sp
		}
	}
	return h.Adopt(name, c, kernel.NewOut(name, h.Seed, h.Spawn))
}

// Adopt hosts c as actor name with an Out it already has, so that its
// sequence numbers and random generator go on where they were (an actor
// rebuilt from a re-run after its process was lost). Out's spawner should be
// h.Spawn.
func (h *Host) Adopt(name string, c kernel.Component, out *kernel.Out) *messages.Spawned {
	n := &node{c: c, out: out, scheduler: h.Scheduler}
	pid := h.Engine.Spawn(func() actor.Receiver { return n }, nodeKind, actor.WithID(name),
		actor.WithMaxRestarts(0), actor.WithInboxSize(64))
	return &messages.Spawned{Name: name, Address: pid.Address, Id: pid.ID}
}

// nodeKind is the Hollywood kind of every hosted component.
const nodeKind = "node"

// NodePID is the PID of actor name hosted by a Host on the engine at
// address (Hollywood's ID is kind/id).
func NodePID(address, name string) *actor.PID { return actor.NewPID(address, nodeKind+"/"+name) }
