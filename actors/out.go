// Package actors holds one Hollywood actor per Flink component: the
// scheduler, the JobManager (with its source coordinator), the
// CheckpointCoordinator, the ResourceManager, each TaskManager, each
// subtask, each input channel and the Kafka broker. Each component is a
// plain struct with a Receive(*Out, *Envelope) method; node.go wraps it in a
// Hollywood actor that takes its deliveries from the scheduler and answers
// with one Done. Flink's rules live in sim/; an actor decodes a message,
// calls sim/, and hands what it sends and logs to Out.
package actors

import (
	"strings"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
)

// Component is the behaviour of one actor (kernel.Component).
type Component = kernel.Component

// Out collects what an actor does during one delivery (kernel.Out).
type Out = kernel.Out

// Spawner starts a new actor for a component (kernel.Spawner).
type Spawner = kernel.Spawner

// Deliver runs one delivery of envelopes through c (kernel.Deliver).
var Deliver = kernel.Deliver

// NewOut returns the Out of actor name (kernel.NewOut).
var NewOut = kernel.NewOut

// DeadLetter is the scheduler's rule for an envelope to an actor that is
// gone: a task submitted to a dead TaskManager never starts, nor do its
// input channels, so what is later sent to them is lost too rather than
// sent to an unknown actor.
func DeadLetter(e *messages.Envelope) []string {
	st, ok := e.Body.(*messages.Envelope_SubmitTask)
	if !ok {
		return nil
	}
	gone := []string{st.SubmitTask.ExecutionId}
	if g := st.SubmitTask.InputGate; g != nil {
		for i := range g.Producers {
			gone = append(gone, jobgraph.ChannelName(st.SubmitTask.ExecutionId, i))
		}
	}
	return gone
}

// ActionTarget is the actor a user action is delivered to: the TaskManager
// a kill names, the broker for what happens to the source topic, the
// JobManager for the rest (what Flink's REST API or CLI asks of the
// JobMaster); a network cut goes to the scheduler, which drops what crosses
// it.
func ActionTarget(a action.Action) string {
	switch a.Verb {
	case action.KillTaskManager:
		return a.Arg
	case action.PartitionNetwork:
		return kernel.SchedulerName // a scheduler decision (sim/kernel/network.go)
	case action.SendEvent, action.PausePartition, action.ResumePartition:
		return KafkaName
	case action.Set:
		if strings.HasPrefix(a.Arg, "sim.output.isolation-level=") {
			return KafkaName
		}
	}
	return JobManagerName
}
