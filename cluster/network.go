package cluster

import (
	"fmt"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// Hosts of the cluster, as the kernel sees them for network cuts: the
// JobManager process (the JobMaster with the ResourceManager, as Flink's
// JobManager process runs them), the Kafka broker, and one host per
// TaskManager with its subtasks and input channels.
const (
	hostJobManager = action.JobManagerHost
	hostKafka      = jobgraph.KafkaName
)

// hostOf places an actor on its host (kernel.Config.HostOf): a TaskManager,
// also one the ResourceManager starts as a replacement, is a process of its
// own; every other actor lives where the actor that spawned it lives (a
// subtask and its input channels on their TaskManager).
func hostOf(name, spawnerHost string) string {
	id, _ := jobgraph.ParseActorID(name) // the kernel's own names have no kind
	switch {
	case id.Kind() == jobgraph.ActorTaskManager:
		return name
	case id.Kind() == jobgraph.ActorJobManager || id.Kind() == jobgraph.ActorResourceManager:
		return hostJobManager
	case id.Kind() == jobgraph.ActorKafka:
		return hostKafka
	case spawnerHost != "":
		return spawnerHost
	}
	return name
}

// parseFault reads an action addressed to the scheduler
// (kernel.Config.ParseFault): partition-network, stall-taskmanager,
// network-jitter or lose-rpc; its host names are the kernel's.
func parseFault(text string) (kernel.Fault, error) {
	a, err := action.Parse(text)
	if err != nil {
		return kernel.Fault{}, err
	}
	switch a.Verb {
	case action.PartitionNetwork:
		p, err := action.ParsePartition(a.Arg)
		if err != nil {
			return kernel.Fault{}, err
		}
		return kernel.Fault{Cut: &kernel.Cut{A: p.A, B: p.B, Duration: vt.FromDuration(p.Duration)}}, nil
	case action.StallTaskManager:
		st, err := action.ParseStall(a.Arg)
		if err != nil {
			return kernel.Fault{}, err
		}
		return kernel.Fault{Stall: &kernel.Stall{Host: st.TaskManager, Duration: vt.FromDuration(st.Duration)}}, nil
	case action.NetworkJitter:
		j, err := action.ParseJitter(a.Arg)
		if err != nil {
			return kernel.Fault{}, err
		}
		return kernel.Fault{Jitter: &kernel.Jitter{Max: vt.FromDuration(j.Max), Duration: vt.FromDuration(j.Duration)}}, nil
	case action.LoseRPC:
		l, err := action.ParseLose(a.Arg)
		if err != nil {
			return kernel.Fault{}, err
		}
		return kernel.Fault{Lose: &kernel.Lose{RPC: l.RPC, Match: rpcMatcher(l.RPC), Within: vt.FromDuration(l.Within)}}, nil
	}
	return kernel.Fault{}, fmt.Errorf("not an action for the scheduler")
}

// rpcMatcher recognises the envelopes of one of action.LostRPCs: the
// acknowledgement and the decline a task sends the CheckpointCoordinator
// (CheckpointCoordinatorGateway), the completion the coordinator sends a
// task (TaskExecutorGateway.confirmCheckpoint, notifyCheckpointComplete).
func rpcMatcher(rpc string) func(*messages.Envelope) bool {
	switch rpc {
	case "acknowledge-checkpoint":
		return func(e *messages.Envelope) bool { _, ok := e.Body.(*messages.Envelope_AcknowledgeCheckpoint); return ok }
	case "decline-checkpoint":
		return func(e *messages.Envelope) bool { _, ok := e.Body.(*messages.Envelope_DeclineCheckpoint); return ok }
	case "notify-checkpoint-complete":
		return func(e *messages.Envelope) bool {
			_, ok := e.Body.(*messages.Envelope_NotifyCheckpointComplete)
			return ok
		}
	}
	return func(*messages.Envelope) bool { return false }
}
