package cluster

import (
	"fmt"

	"github.com/flinksim/flinksim/sim/checkpoint"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/jobmaster"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/resourcemanager"
	"github.com/flinksim/flinksim/sim/spawn"
	"github.com/flinksim/flinksim/sim/task"
	"github.com/flinksim/flinksim/sim/taskexecutor"
)

// Factory builds every component of a run from its spec (sim/spawn): the
// one place that constructs a component. The session builds the first
// actors with it (the broker, the ResourceManager, the TaskExecutors, the
// JobMaster), and every driver builds through it what a component spawns:
// the plain driver (kernel.Loop), the Hollywood hosts (actors.Host) of the
// one-process cluster and of the remote jobmanager and taskmanager
// processes, and the re-run that rebuilds a lost process (Rebuild). The
// same spec gives the same component in every one of them, so where an
// actor lives never changes what it does.
//
// Config is the run's settings, read-only and shared by every component
// built (a spec with a Config of its own, the job's, uses that instead).
type Factory struct {
	Config *config.Config
}

// Build implements kernel.Build: the component spec names, as actor name.
// A spec of a kind the factory does not know is an error naming it.
func (f Factory) Build(name string, s kernel.Spec) (kernel.Component, error) {
	if f.Config == nil {
		return nil, fmt.Errorf("the factory has no settings to build %s with", name)
	}
	switch s := s.(type) {
	case spawn.KafkaBrokerSpec:
		return kafka.NewBroker(f.Config, s.Events), nil
	case spawn.ResourceManagerSpec:
		return resourcemanager.New(f.Config), nil
	case spawn.JobMasterSpec:
		return jobmaster.New(f.Config, s.Graph, s.Bounded), nil
	case spawn.CoordinatorSpec:
		return checkpoint.NewService(f.Config), nil
	case spawn.TaskExecutorSpec:
		return taskexecutor.New(f.Config), nil
	case spawn.SubtaskSpec:
		if s.Task == nil {
			return nil, fmt.Errorf("subtask %s: the spec has no deployment descriptor", name)
		}
		return task.NewSubtask(f.config(s.Config), s.Task, s.TaskManager), nil
	case spawn.InputChannelSpec:
		return exchange.NewInputChannel(f.config(s.Config), s.Consumer, s.Index, s.Producer, s.ProducerTaskManager,
			s.Subpartition, s.Local), nil
	case nil:
		return nil, fmt.Errorf("%s: no spec", name)
	}
	return nil, fmt.Errorf("%s: no component is built from a %T", name, s)
}

// config is a spec's own configuration, or the run's when it has none.
func (f Factory) config(c *config.Config) *config.Config {
	if c != nil {
		return c
	}
	return f.Config
}
