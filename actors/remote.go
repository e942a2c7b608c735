package actors

import (
	"github.com/anthdm/hollywood/actor"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/kernel"
)

// StepSender carries the scheduler's messages to actors that may live in
// other processes (package remote). The scheduler calls it on its own
// goroutine, between two steps, while no actor of the run is handling a
// delivery.
type StepSender interface {
	// SendStep sends every Deliver of step st, to pids[d.To] for each
	// delivery d; every receiver answers with one Done to self.
	SendStep(e *actor.Engine, self *actor.PID, st *kernel.Step, pids map[string]*actor.PID)
	// Send sends one inspection request to pid; the InspectReply comes back
	// to self.
	Send(e *actor.Engine, self, pid *actor.PID, req *messages.InspectRequest)
}
