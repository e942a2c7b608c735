package cluster

import (
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
)

// Hosts of the cluster, as the kernel sees them for network cuts: the
// JobManager process (the JobMaster with the ResourceManager, as Flink's
// JobManager process runs them), the Kafka broker, and one host per
// TaskManager with its subtasks and input channels.
const (
	hostJobManager = action.JobManagerHost
	hostKafka      = kernel.KafkaHost // the host kafka-unavailable cuts off
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
