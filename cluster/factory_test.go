package cluster

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/checkpoint"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/jobmaster"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/resourcemanager"
	"github.com/flinksim/flinksim/sim/spawn"
	simtask "github.com/flinksim/flinksim/sim/task"
	"github.com/flinksim/flinksim/sim/taskexecutor"
)

// otherSpec is a spec no factory knows.
type otherSpec struct{}

func (otherSpec) Component() string { return "Other" }

// Every spec of sim/spawn builds the component it names, with the
// factory's settings where the spec has none; a spec of no known kind, no
// spec, a subtask without its deployment and a factory without settings
// are errors that name the actor.
func TestFactoryBuildsTheComponentEachSpecNames(t *testing.T) {
	cfg := config.Default()
	cfg.NumberOfTaskSlots = 3
	graph, err := jobgraph.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := Factory{Config: &cfg}
	task := &messages.SubmitTask{ExecutionId: "window-0", JobVertex: jobgraph.VertexKeyed, Parallelism: 2, MaxParallelism: 128}
	// each row's want is what the component's own constructor gives
	tests := []struct {
		give kernel.Spec
		want kernel.Component
	}{
		{spawn.KafkaBrokerSpec{}, kafka.NewBroker(&cfg, nil)},
		{spawn.ResourceManagerSpec{}, resourcemanager.New(&cfg)},
		{spawn.JobMasterSpec{Graph: graph}, jobmaster.New(&cfg, graph, false)},
		{spawn.CoordinatorSpec{}, checkpoint.NewService(&cfg)},
		{spawn.TaskExecutorSpec{}, taskexecutor.New(&cfg)},
		{spawn.SubtaskSpec{Task: task, TaskManager: "tm-1"}, simtask.NewSubtask(&cfg, task, "tm-1")},
		{spawn.InputChannelSpec{Consumer: "window-0", Index: 1, Producer: "source-1", ProducerTaskManager: "tm-2"},
			exchange.NewInputChannel(&cfg, "window-0", 1, "source-1", "tm-2", 0, false)},
	}
	var covered []string
	for _, tt := range tests {
		c, err := f.Build("x", tt.give)
		if err != nil {
			t.Errorf("%T: %v", tt.give, err)
			continue
		}
		if got, want := fmt.Sprintf("%T", c), fmt.Sprintf("%T", tt.want); got != want {
			t.Errorf("%T built a %s, want a %s", tt.give, got, want)
		}
		covered = append(covered, strings.TrimPrefix(fmt.Sprintf("%T", tt.give), "spawn."))
	}
	// every spec type sim/spawn declares is in the table
	for _, name := range specTypes(t) {
		if !slices.Contains(covered, name) {
			t.Errorf("spawn.%s has no row here: does the factory build it?", name)
		}
	}
	// the factory's settings reach what it builds: 3 slots
	te, _ := f.Build("tm-1", spawn.TaskExecutorSpec{})
	if v := te.(*taskexecutor.TaskExecutor).Inspect(0).(*taskexecutor.TaskExecutorView); v.NumSlots != 3 {
		t.Errorf("the TaskExecutor has %d slots, want the factory's 3", v.NumSlots)
	}
	for _, bad := range []struct {
		f    Factory
		spec kernel.Spec
		want string
	}{
		{f, otherSpec{}, "tm-9: no component is built from a cluster.otherSpec"},
		{f, nil, "tm-9: no spec"},
		{f, spawn.SubtaskSpec{TaskManager: "tm-1"}, "subtask tm-9: the spec has no deployment descriptor"},
		{Factory{}, spawn.TaskExecutorSpec{}, "the factory has no settings to build tm-9 with"},
	} {
		if _, err := bad.f.Build("tm-9", bad.spec); err == nil || err.Error() != bad.want {
			t.Errorf("Build(%T) = %v, want %q", bad.spec, err, bad.want)
		}
	}
}

// specTypes are the exported type names of sim/spawn, read from its source.
func specTypes(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir("../sim/spawn")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, filepath.Join("../sim/spawn", e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				if ts := s.(*ast.TypeSpec); ts.Name.IsExported() {
					names = append(names, ts.Name.Name)
				}
			}
		}
	}
	if len(names) < 7 {
		t.Fatalf("sim/spawn declares %v: wrong directory?", names)
	}
	return names
}

// The drivers agree on a run that spawns through every path of the
// factory: the first actors, the CheckpointCoordinator (checkpointing on),
// the subtasks and input channels of two deployments, and a replacement
// TaskManager after a kill. The plain loop and the Hollywood actors write
// the same log, byte for byte.
func TestDriversAgreeOnWhatTheFactoryBuilds(t *testing.T) {
	cfg := config.Default()
	cfg.Duration = 30 * time.Second
	cfg.CheckpointInterval = 5 * time.Second
	cfg.HeartbeatTimeout = 4 * time.Second
	kill, err := action.Parse("at=8s kill-taskmanager tm-1")
	if err != nil {
		t.Fatal(err)
	}
	logOf := func(run func(config.Config, Options) (*Result, error)) []byte {
		var b bytes.Buffer
		res, err := run(cfg, Options{Actions: []action.Action{kill}, Log: &b})
		if err != nil {
			t.Fatal(err)
		}
		if res.Invariant != "" {
			t.Fatalf("invariant %s: %s", res.Invariant, res.Failure)
		}
		return b.Bytes()
	}
	plain, actors := logOf(RunPlain), logOf(Run)
	if !bytes.Equal(plain, actors) {
		t.Fatalf("the drivers' logs differ (%d and %d bytes)", len(plain), len(actors))
	}
	for _, want := range []string{`"actor":"checkpoint-coordinator"`, `"actor":"tm-3"`, `"actor":"window-0#1/ch-1"`} {
		if !bytes.Contains(plain, []byte(want)) {
			t.Errorf("the log has no %s: nothing spawned there", want)
		}
	}
}

// An action goes to the actor that carries it out: a kill to its
// TaskManager, a network cut to the scheduler, records and the output
// consumer to the broker, the rest to the JobManager.
func TestActionTargets(t *testing.T) {
	for _, tt := range []struct{ give, want string }{
		{"at=1s kill-taskmanager tm-2", "tm-2"},
		{"at=1s partition-network tm-1 jobmanager for 2s", kernel.SchedulerName},
		{"at=1s send-event key=k ts=now", jobgraph.KafkaName},
		{"at=1s pause-partition 0", jobgraph.KafkaName},
		{"at=1s resume-partition 0", jobgraph.KafkaName},
		{"at=1s set sim.output.isolation-level=read_uncommitted", jobgraph.KafkaName},
		{"at=1s set execution.checkpointing.unaligned.enabled=true", jobgraph.JobManagerName},
		{"at=1s trigger-checkpoint", jobgraph.JobManagerName},
		{"at=1s rescale 3", jobgraph.JobManagerName},
	} {
		a, err := action.Parse(tt.give)
		if err != nil {
			t.Fatalf("%s: %v", tt.give, err)
		}
		if got := actionTarget(a); got != tt.want {
			t.Errorf("%s goes to %s, want %s", tt.give, got, tt.want)
		}
	}
}
