package actors

import (
	"encoding/json"
	"fmt"

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
	// Build makes a component from its spec: the run's factory
	// (cluster.Factory), the same in every process.
	Build kernel.Build
	// Place, when set, may start a component on another engine instead (the
	// remote transport starts a TaskManager in a taskmanager process, which
	// builds it there from the same spec); it returns where the component
	// lives, or nil to build and host it here. Where an actor lives never
	// reaches the log.
	Place func(name string, spec kernel.Spec) *messages.Spawned
}

// Spawn builds the component spec describes and starts it as actor name
// (kernel.Spawner); it returns where its PID lives.
func (h *Host) Spawn(name string, spec kernel.Spec) (*messages.Spawned, error) {
	if h.Place != nil {
		if sp := h.Place(name, spec); sp != nil {
			return sp, nil
		}
	}
	if h.Build == nil {
		return nil, fmt.Errorf("the host was given no Build")
	}
	c, err := h.Build(name, spec)
	if err != nil {
		return nil, err
	}
	return h.Adopt(name, c, kernel.NewOut(name, h.Seed, h.Spawn)), nil
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
