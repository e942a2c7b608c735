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
}

var _ actor.Receiver = (*node)(nil)

func (n *node) Receive(ctx *actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.Deliver:
		done := kernel.Deliver(n.c, n.out, m.Step, vt.Of(m.Now), m.Envelopes)
		ctx.Engine().SendWithSender(n.scheduler, done, ctx.PID())
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

// Host spawns actors on one Hollywood engine with fixed IDs (the actor's
// name), so that PIDs and the log never depend on chance.
type Host struct {
	Engine    *actor.Engine
	Scheduler *actor.PID
	Seed      uint64
}

// Spawn starts c as actor name and returns where its PID lives.
func (h *Host) Spawn(name string, c kernel.Component) *messages.Spawned {
	out := kernel.NewOut(name, h.Seed, h.Spawn)
	n := &node{c: c, out: out, scheduler: h.Scheduler}
	pid := h.Engine.Spawn(func() actor.Receiver { return n }, "node", actor.WithID(name),
		actor.WithMaxRestarts(0), actor.WithInboxSize(64))
	return &messages.Spawned{Name: name, Address: pid.Address, Id: pid.ID}
}
