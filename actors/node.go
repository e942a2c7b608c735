package actors

import (
	"github.com/anthdm/hollywood/actor"

	"github.com/flinksim/flinksim/messages"
)

// node hosts a Component as a Hollywood actor. Its only message is Deliver
// from the scheduler; it answers with exactly one Done, sent with an explicit
// sender (a nil sender breaks on Hollywood's remote transport).
type node struct {
	c         Component
	out       *Out
	scheduler *actor.PID
}

var _ actor.Receiver = (*node)(nil)

func (n *node) Receive(ctx *actor.Context) {
	d, ok := ctx.Message().(*messages.Deliver)
	if !ok {
		return // Hollywood lifecycle messages (Initialized, Started, Stopped)
	}
	done := Deliver(n.c, n.out, d.Step, d.Now, d.Envelopes)
	ctx.Engine().SendWithSender(n.scheduler, done, ctx.PID())
}

// Host spawns actors on one Hollywood engine with fixed IDs (the actor's
// name), so that PIDs and the log never depend on chance.
type Host struct {
	Engine    *actor.Engine
	Scheduler *actor.PID
	Seed      uint64
}

// Spawn starts c as actor name and returns where its PID lives.
func (h *Host) Spawn(name string, c Component) *messages.Spawned {
	out := NewOut(name, h.Seed, h.Spawn)
	n := &node{c: c, out: out, scheduler: h.Scheduler}
	pid := h.Engine.Spawn(func() actor.Receiver { return n }, "node", actor.WithID(name),
		actor.WithMaxRestarts(0), actor.WithInboxSize(64))
	return &messages.Spawned{Name: name, Address: pid.Address, Id: pid.ID}
}
