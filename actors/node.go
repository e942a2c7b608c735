package actors

import (
	"encoding/json"

	"github.com/anthdm/hollywood/actor"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// node hosts a Component as a Hollywood process (a mailbox, proc.go). Its
// messages are Deliver from the scheduler, answered with exactly one Done,
// and InspectRequest, answered with one InspectReply between two steps;
// both are sent with an explicit sender (a nil sender breaks on
// Hollywood's remote transport).
type node struct {
	c         kernel.Component
	out       *kernel.Out
	scheduler *actor.PID
	engine    *actor.Engine
	self      *actor.PID
}

// handle is the node's mailbox handler, on a worker.
func (n *node) handle(msg any) {
	switch m := msg.(type) {
	case *messages.Deliver:
		done := kernel.Deliver(n.c, n.out, m.Step, vt.Of(m.Now), m.Envelopes)
		n.engine.SendWithSender(n.scheduler, done, n.self)
	case *messages.InspectRequest:
		n.inspect(m)
	}
}

// inspect answers m with the component's view (none if it has no view or
// making one failed: a view is for observers and never ends a run).
func (n *node) inspect(m *messages.InspectRequest) {
	reply := &messages.InspectReply{Id: m.Id, Actor: n.out.Name()}
	defer func() {
		if recover() != nil {
			reply.Json = nil
		}
		n.engine.SendWithSender(n.scheduler, reply, n.self)
	}()
	if in, ok := n.c.(kernel.Inspector); ok {
		if v := in.Inspect(vt.Of(m.Now)); v != nil {
			reply.Json, _ = json.Marshal(v) // views are plain data
		}
	}
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
	n := &node{c: c, out: out, scheduler: h.Scheduler, engine: h.Engine}
	n.self = spawnMailbox(h.Engine, nodeKind, name, n.handle, nil)
	return &messages.Spawned{Name: name, Address: n.self.Address, Id: n.self.ID}
}

// nodeKind is the Hollywood kind of every hosted component.
const nodeKind = "node"

// NodePID is the PID of actor name hosted by a Host on the engine at
// address (Hollywood's ID is kind/id).
func NodePID(address, name string) *actor.PID { return actor.NewPID(address, nodeKind+"/"+name) }
