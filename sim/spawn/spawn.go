// Package spawn holds the specs of flinksim's components: plain data that
// names a component to start and what it is started with, never the
// component itself. A component that starts another (the ResourceManager a
// replacement TaskExecutor, a TaskExecutor a subtask and its input channels,
// the JobMaster the CheckpointCoordinator) hands its Out a spec
// (kernel.Out.Spawn), and one factory, cluster.Factory, builds every
// component from its spec, in whichever process the new actor lives: so no
// state machine constructs another, and no package of sim/ imports a
// component package it spawns.
//
// A spec holds what differs from one component of its kind to the next.
// What every component of a run shares, the run's settings, is the
// factory's: a spec's Config, where it has one, is the job's configuration
// the spawner resolved (the run's settings overlaid with the job's own,
// SubmitTask.job_configuration), and nil means the run's. Only a
// TaskExecutorSpec crosses the remote transport, as HostTaskManager
// (messages/remote.proto), which carries the actor's name alone: its
// process builds it from the settings it was given at join.
package spawn

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/jobgraph"
)

// KafkaBrokerSpec is the Kafka broker with the source and sink topics
// (sim/kafka.Broker). Events are the user's records (--events); nil: the
// built-in generator.
type KafkaBrokerSpec struct {
	Events []events.Record
}

// ResourceManagerSpec is the ResourceManager (sim/resourcemanager).
type ResourceManagerSpec struct{}

// JobMasterSpec is the JobMaster of the one job (sim/jobmaster): its
// JobGraph, and whether the source is bounded (KafkaSource.setBounded).
type JobMasterSpec struct {
	Graph   jobgraph.JobGraph
	Bounded bool
}

// CoordinatorSpec is the job's CheckpointCoordinator
// (sim/checkpoint.Service), which the JobMaster starts when the job first
// needs it, with the run's settings.
type CoordinatorSpec struct{}

// TaskExecutorSpec is one TaskManager's TaskExecutor (sim/taskexecutor),
// with the run's settings: the first sim.taskmanagers at the start, a
// replacement when the ResourceManager starts one.
type TaskExecutorSpec struct{}

// SubtaskSpec is one subtask (sim/task.Subtask), started by the
// TaskExecutor it was deployed to.
type SubtaskSpec struct {
	// Config is the job's configuration (nil: the run's settings).
	Config *config.Config
	// Task is the deployment descriptor the JobMaster submitted.
	Task *messages.SubmitTask
	// TaskManager is the TaskExecutor's actor name (tm-N).
	TaskManager string
}

// InputChannelSpec is one InputChannel of a subtask's InputGate
// (sim/exchange.InputChannel): the channel from producer subtask Index.
type InputChannelSpec struct {
	// Config is the job's configuration (nil: the run's settings).
	Config *config.Config
	// Consumer is the subtask whose gate holds the channel.
	Consumer string
	// Index is the channel's index in the gate: the producer subtask's.
	Index int
	// Producer is the producing subtask and ProducerTaskManager the
	// TaskManager it runs on.
	Producer, ProducerTaskManager string
	// Subpartition is the producer's subpartition the channel consumes.
	Subpartition int
	// Local: producer and consumer are on one TaskManager
	// (LocalInputChannel; otherwise RemoteInputChannel).
	Local bool
}

// Component names implement kernel.Spec.
func (KafkaBrokerSpec) Component() string     { return "KafkaBroker" }
func (ResourceManagerSpec) Component() string { return "ResourceManager" }
func (JobMasterSpec) Component() string       { return "JobMaster" }
func (CoordinatorSpec) Component() string     { return "CheckpointCoordinator" }
func (TaskExecutorSpec) Component() string    { return "TaskExecutor" }
func (SubtaskSpec) Component() string         { return "Subtask" }
func (InputChannelSpec) Component() string    { return "InputChannel" }
