package taskexecutor

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/spawn"
	"github.com/flinksim/flinksim/sim/vt"
)

// spawnRecorder is a driver's spawner that records what a component asks
// for instead of building it.
type spawnRecorder struct {
	names []string
	specs []kernel.Spec
}

func (r *spawnRecorder) spawn(name string, s kernel.Spec) (*messages.Spawned, error) {
	r.names = append(r.names, name)
	r.specs = append(r.specs, s)
	return &messages.Spawned{Name: name}, nil
}

// teRun steps one TaskExecutor named tm-1 with the envelopes a test hands
// it, recording its spawns.
type teRun struct {
	t    *testing.T
	cfg  *config.Config
	te   *TaskExecutor
	o    *kernel.Out
	rec  *spawnRecorder
	step uint64
}

func newTERun(t *testing.T, cfg config.Config) *teRun {
	r := &teRun{t: t, cfg: &cfg, rec: &spawnRecorder{}}
	r.te = New(r.cfg)
	r.o = kernel.NewOut("tm-1", 1, r.rec.spawn)
	return r
}

func (r *teRun) deliver(at vt.Time, from string, body messages.Body) *kernel.Done {
	r.t.Helper()
	r.step++
	return kernel.Deliver(r.te, r.o, r.step, at, []*messages.Envelope{{DeliverAt: at.Micros(), To: "tm-1", From: from, Body: body}})
}

// submit is a SubmitTask of window subtask 1 (attempt 0) reading from two
// source subtasks, the first on this TaskManager, the second on tm-2.
func submit(settings ...*messages.Setting) *messages.SubmitTask {
	return &messages.SubmitTask{ExecutionId: jobgraph.SubtaskName("window", 1, 0), JobVertex: "window", SubtaskIndex: 1,
		Parallelism: 2, AllocationId: "alloc-2", JobConfiguration: settings,
		InputGate: &messages.InputGateDeployment{Producers: []string{"source-0", "source-1"},
			ProducerLocations: []string{"tm-1", "tm-2"}, ConsumedSubpartition: 1}}
}

// A TaskExecutor asks for what it deploys by spec, builds nothing itself:
// the subtask with the deployment and the run's configuration, then one
// input channel per producer, local for the producer on its own
// TaskManager, remote for the other; the subtask starts after
// sim.task.deploy-time, its channels once it is initialized too.
func TestDeploySpawnsTheSubtaskAndItsChannelsBySpec(t *testing.T) {
	cfg := config.Default()
	cfg.TaskDeployTime = 7 * time.Millisecond
	cfg.TaskInitTime = 3 * time.Millisecond
	r := newTERun(t, cfg)
	r.deliver(0, kernel.SchedulerName, &messages.Envelope_Start{Start: &messages.Start{}})
	m := submit()
	d := r.deliver(vt.Second, jobgraph.JobManagerName, &messages.Envelope_SubmitTask{SubmitTask: m})
	if d.Failure != "" {
		t.Fatalf("deploy failed: %s", d.Failure)
	}
	wantNames := []string{"window-1", "window-1/ch-0", "window-1/ch-1"}
	if strings.Join(r.rec.names, " ") != strings.Join(wantNames, " ") {
		t.Fatalf("spawned %v, want %v", r.rec.names, wantNames)
	}
	sub, ok := r.rec.specs[0].(spawn.SubtaskSpec)
	if !ok || sub.Task != m || sub.TaskManager != "tm-1" || sub.Config != r.cfg {
		t.Errorf("subtask spec %#v: want the submitted task on tm-1 with the run's configuration", r.rec.specs[0])
	}
	wantChannels := []spawn.InputChannelSpec{
		{Config: r.cfg, Consumer: "window-1", Index: 0, Producer: "source-0", ProducerTaskManager: "tm-1", Subpartition: 1, Local: true},
		{Config: r.cfg, Consumer: "window-1", Index: 1, Producer: "source-1", ProducerTaskManager: "tm-2", Subpartition: 1, Local: false},
	}
	for i, want := range wantChannels {
		if got := r.rec.specs[1+i]; got != want {
			t.Errorf("channel %d spec %#v, want %#v", i, got, want)
		}
	}
	// the starts: the subtask at 1 s + 7 ms, each channel at 1 s + 10 ms
	starts := map[string]int64{}
	for _, e := range d.Out {
		if e.GetStart() != nil {
			starts[e.To] = e.DeliverAt
		}
	}
	want := map[string]int64{"window-1": 1_007_000, "window-1/ch-0": 1_010_000, "window-1/ch-1": 1_010_000}
	if fmt.Sprint(starts) != fmt.Sprint(want) {
		t.Errorf("starts at %v, want %v", starts, want)
	}
}

// The job's own configuration (set actions) overlays the cluster's for the
// subtask and its channels alike, in one copy; the TaskExecutor's own
// settings stay as they were.
func TestDeployGivesTheJobConfigurationToWhatItSpawns(t *testing.T) {
	r := newTERun(t, config.Default())
	r.deliver(0, kernel.SchedulerName, &messages.Envelope_Start{Start: &messages.Start{}})
	d := r.deliver(vt.Second, jobgraph.JobManagerName, &messages.Envelope_SubmitTask{SubmitTask: submit(
		&messages.Setting{Key: "execution.checkpointing.unaligned.enabled", Value: "true"})})
	if d.Failure != "" {
		t.Fatalf("deploy failed: %s", d.Failure)
	}
	sub := r.rec.specs[0].(spawn.SubtaskSpec)
	if sub.Config == r.cfg || !sub.Config.UnalignedCheckpoints {
		t.Fatalf("the subtask's configuration is the cluster's (%v) or not the job's (unaligned %v)", sub.Config == r.cfg, sub.Config.UnalignedCheckpoints)
	}
	for _, s := range r.rec.specs[1:] {
		if c := s.(spawn.InputChannelSpec).Config; c != sub.Config {
			t.Errorf("a channel's configuration is not the subtask's")
		}
	}
	if r.cfg.UnalignedCheckpoints {
		t.Error("the job's setting leaked into the TaskExecutor's configuration")
	}
}

// A job configuration the settings refuse ends the run with the
// job_configuration invariant, naming the task and the setting, and
// nothing is spawned.
func TestDeployRefusesABadJobConfiguration(t *testing.T) {
	r := newTERun(t, config.Default())
	r.deliver(0, kernel.SchedulerName, &messages.Envelope_Start{Start: &messages.Start{}})
	d := r.deliver(vt.Second, jobgraph.JobManagerName, &messages.Envelope_SubmitTask{SubmitTask: submit(
		&messages.Setting{Key: "parallelism.default", Value: "many"})})
	if d.Invariant != "job_configuration" || !strings.Contains(d.Failure, "window-1: parallelism.default=many") {
		t.Fatalf("invariant %q (%s), want job_configuration naming the task and the setting", d.Invariant, d.Failure)
	}
	if len(r.rec.names) != 0 {
		t.Errorf("spawned %v after a refused configuration", r.rec.names)
	}
}

// kill-taskmanager stops the TaskExecutor, every subtask deployed to it and
// their input channels; a worker that never registered tells the
// ResourceManager it is gone (onWorkerTerminated).
func TestKillStopsEveryTaskAndItsChannels(t *testing.T) {
	r := newTERun(t, config.Default())
	r.deliver(0, kernel.SchedulerName, &messages.Envelope_Start{Start: &messages.Start{}})
	r.deliver(vt.Second, jobgraph.JobManagerName, &messages.Envelope_SubmitTask{SubmitTask: submit()})
	d := r.deliver(2*vt.Second, kernel.UserName, &messages.Envelope_Action{Action: &messages.Action{Verb: messages.ActionVerb_ACTION_KILL_TASKMANAGER, TaskManager: "tm-1"}})
	want := "window-1 window-1/ch-0 window-1/ch-1 tm-1"
	if got := strings.Join(d.Stopped, " "); got != want {
		t.Errorf("stopped %q, want %q", got, want)
	}
	told := false
	for _, e := range d.Out {
		if w := e.GetWorkerTerminated(); w != nil && e.To == jobgraph.ResourceManagerName && w.TaskManagerId == "tm-1" {
			told = true
		}
	}
	if !told {
		t.Error("the ResourceManager was not told that the unregistered worker terminated")
	}
}

// An action other than kill-taskmanager is not the TaskManager's: it is
// ignored with its text and reason, and the TaskManager and its tasks go
// on; the kill logs the action as the log spells it.
func TestOnlyAKillStopsTheTaskManager(t *testing.T) {
	r := newTERun(t, config.Default())
	r.deliver(0, kernel.SchedulerName, &messages.Envelope_Start{Start: &messages.Start{}})
	r.deliver(vt.Second, jobgraph.JobManagerName, &messages.Envelope_SubmitTask{SubmitTask: submit()})
	ck := action.Action{At: 2 * time.Second, Verb: action.TriggerCheckpoint}
	d := r.deliver(2*vt.Second, kernel.UserName, &messages.Envelope_Action{Action: ck.Message(true)})
	if len(d.Stopped) != 0 || r.te.killed {
		t.Fatalf("a trigger-checkpoint stopped %v (killed %v)", d.Stopped, r.te.killed)
	}
	if len(d.Events) != 1 || d.Events[0].Body != (eventlog.ActionIgnored{Action: "at=2s trigger-checkpoint", Reason: "not an action for the TaskManager"}) {
		t.Fatalf("events %v, want one action_ignored naming at=2s trigger-checkpoint", d.Events)
	}
	kill := action.Action{At: 3 * time.Second, Verb: action.KillTaskManager, TaskManager: "tm-1"}
	d = r.deliver(3*vt.Second, kernel.UserName, &messages.Envelope_Action{Action: kill.Message(true)})
	if !r.te.killed || len(d.Events) == 0 || d.Events[0].Body != (eventlog.TaskManagerKilled{Action: "at=3s kill-taskmanager tm-1", Tasks: 1}) {
		t.Fatalf("after the kill: killed %v, events %v", r.te.killed, d.Events)
	}
}

// The default slot profile is the total divided into equal shares: CPU
// exactly, memory rounded down to whole bytes
// (TaskExecutorResourceUtils.generateDefaultSlotResourceProfile), and a
// slot count of -1 is read as 1.
func TestSlotsAndTheirProfile(t *testing.T) {
	total := &messages.ResourceProfile{CpuCores: 3, TaskHeapBytes: 1000, TaskOffHeapBytes: 7, ManagedMemoryBytes: 301, NetworkMemoryBytes: 2}
	got := DefaultSlotProfile(total, 3)
	if got.CpuCores != 1 || got.TaskHeapBytes != 333 || got.TaskOffHeapBytes != 2 || got.ManagedMemoryBytes != 100 || got.NetworkMemoryBytes != 0 {
		t.Errorf("DefaultSlotProfile = %v", got)
	}
	cfg := config.Default()
	cfg.NumberOfTaskSlots = -1
	if te := New(&cfg); te.numSlots != 1 || len(te.slots) != 1 {
		t.Errorf("-1 slots read as %d", te.numSlots)
	}
	cfg.NumberOfTaskSlots, cfg.TaskManagerCPUCores = 4, 0
	if te := New(&cfg); te.total.CpuCores != 4 || te.slot.CpuCores != 1 {
		t.Errorf("unset cpu cores: total %v, slot %v, want the number of slots and 1", te.total.CpuCores, te.slot.CpuCores)
	}
}

// DataPort stands for the port the operating system would pick: in Linux's
// default ephemeral range, fixed by the TaskManager's name.
func TestDataPortIsInTheEphemeralRangeAndFixed(t *testing.T) {
	seen := map[int32]bool{}
	for i := 0; i < 200; i++ {
		name := jobgraph.TaskManagerName(i)
		p := DataPort(name)
		if p < 32768 || p > 60999 || p != DataPort(name) {
			t.Fatalf("DataPort(%s) = %d", name, p)
		}
		seen[p] = true
	}
	if len(seen) < 190 {
		t.Errorf("200 names share %d ports", len(seen))
	}
}
