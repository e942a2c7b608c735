package taskexecutor

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/spawn"
	"github.com/flinksim/flinksim/sim/status"
	"github.com/flinksim/flinksim/sim/vt"
)

// TaskExecutor is one TaskManager process's TaskExecutor: it owns a fixed number of slots, registers
// them with the ResourceManager, offers allocated slots to the JobManager and
// runs the subtasks deployed into them
// (org.apache.flink.runtime.taskexecutor.TaskExecutor,
// TaskManagerConfiguration.fromConfiguration, TaskExecutorResourceUtils).
type TaskExecutor struct {
	name     string // set at Start
	cfg      *config.Config
	numSlots int
	total    *messages.ResourceProfile
	slot     *messages.ResourceProfile
	slots    []string            // allocation id per slot, "" when free
	tasks    []string            // deployed subtask names, in deployment order
	children map[string][]string // subtask -> its input channel actors
	killed   bool
	net      tmNetwork       // heartbeat monitors and registration (network.go)
	finished map[string]bool // subtasks that reported FINISHED (view.go: no rule reads it)
}

// New returns the TaskManager component. A configured slot count
// of -1 is read as 1, as TaskManagerConfiguration.fromConfiguration does.
func New(cfg *config.Config) *TaskExecutor {
	n := cfg.NumberOfTaskSlots
	if n == -1 {
		n = 1
	}
	cpu := cfg.TaskManagerCPUCores
	if cpu <= 0 {
		cpu = float64(n) // taskmanager.cpu.cores unset: the number of slots
	}
	total := &messages.ResourceProfile{CpuCores: cpu, TaskHeapBytes: cfg.TaskHeapBytes,
		TaskOffHeapBytes: cfg.TaskOffHeapBytes, ManagedMemoryBytes: cfg.ManagedMemoryBytes,
		NetworkMemoryBytes: cfg.NetworkMemoryBytes}
	return &TaskExecutor{cfg: cfg, numSlots: n, children: map[string][]string{}, total: total, slot: DefaultSlotProfile(total, n), slots: make([]string, n),
		net: newTMNetwork(), finished: map[string]bool{}}
}

// DefaultSlotProfile divides a TaskManager's total resources into numSlots
// equal shares (TaskExecutorResourceUtils.generateDefaultSlotResourceProfile:
// CPU divided exactly, memory sizes divided and rounded down to whole bytes).
func DefaultSlotProfile(total *messages.ResourceProfile, numSlots int) *messages.ResourceProfile {
	n := int64(numSlots)
	return &messages.ResourceProfile{CpuCores: total.CpuCores / float64(numSlots),
		TaskHeapBytes: total.TaskHeapBytes / n, TaskOffHeapBytes: total.TaskOffHeapBytes / n,
		ManagedMemoryBytes: total.ManagedMemoryBytes / n, NetworkMemoryBytes: total.NetworkMemoryBytes / n}
}

// ProfileJSON renders a resource profile for the log.
func ProfileJSON(p *messages.ResourceProfile) string {
	return `{"cpu_cores":` + eventlog.Ftoa(p.CpuCores) + `,"task_heap_bytes":` + eventlog.Itoa(p.TaskHeapBytes) +
		`,"task_off_heap_bytes":` + eventlog.Itoa(p.TaskOffHeapBytes) + `,"managed_memory_bytes":` + eventlog.Itoa(p.ManagedMemoryBytes) +
		`,"network_memory_bytes":` + eventlog.Itoa(p.NetworkMemoryBytes) + `}`
}

// Step implements kernel.Component.
func (t *TaskExecutor) Step(o *kernel.Out, env *messages.Envelope) {
	switch b := env.Body.(type) {
	case *messages.Envelope_Start:
		t.name = o.Name()
		o.Log(eventlog.TaskManagerStarted{NumSlots: int64(t.numSlots), TotalResourceProfile: ProfileJSON(t.total), DefaultSlotResourceProfile: ProfileJSON(t.slot)})
		t.sendRegister(o)
	case *messages.Envelope_RegistrationResponse:
		t.net.registered, t.net.retrying = true, false
		t.monitorResourceManager(o)
		o.Log(eventlog.RegistrationResponse{Success: b.RegistrationResponse.Success})
	case *messages.Envelope_RequestSlot:
		m := b.RequestSlot
		t.slots[m.SlotIndex] = m.AllocationId
		t.net.job = m.JobId
		t.monitorJobManager(o)
		o.Log(eventlog.OfferSlots{JobManager: m.JobManager, Slot: int64(m.SlotIndex), AllocationID: m.AllocationId})
		o.Send(m.JobManager, vt.FromDuration(t.cfg.RPCLatency()), &messages.Envelope_OfferSlots{OfferSlots: &messages.OfferSlots{
			TaskManagerId: o.Name(), Offers: []*messages.SlotOffer{{AllocationId: m.AllocationId, SlotIndex: m.SlotIndex}}}})
	case *messages.Envelope_SlotOfferResponse:
	case *messages.Envelope_Action:
		if b.Action.Verb != messages.ActionVerb_ACTION_KILL_TASKMANAGER {
			o.Log(eventlog.ActionIgnored{Action: action.Text(b.Action), Reason: "not an action for the TaskManager"})
			break
		}
		// kill-taskmanager: the process dies with every task in it;
		// messages to it are lost from now on (the scheduler drops them)
		t.killed = true
		o.Log(eventlog.TaskManagerKilled{Action: action.Text(b.Action), Tasks: int64(len(t.tasks))})
		// the resource provider (a Kubernetes pod watch) sees the process
		// end and tells the ResourceManager (onWorkerTerminated), in the
		// TaskManager's name. Only a worker that never heard back from
		// the ResourceManager is told of: the loss of a registered one is
		// the heartbeat's to find (resourcemanager.workerTerminated)
		if !t.net.registered {
			o.Send(jobgraph.ResourceManagerName, vt.FromDuration(t.cfg.RPCLatency()), &messages.Envelope_WorkerTerminated{
				WorkerTerminated: &messages.WorkerTerminated{TaskManagerId: o.Name()}})
		}
		for _, task := range t.tasks {
			t.stopTask(o, task)
		}
		o.Stop(o.Name())
		return
	case *messages.Envelope_HeartbeatRequest:
		t.heard(o, env.From)
		o.Send(env.From, vt.FromDuration(t.cfg.RPCLatency()), &messages.Envelope_HeartbeatResponse{HeartbeatResponse: &messages.HeartbeatResponse{
			TaskManagerId: o.Name()}})
	case *messages.Envelope_CancelTask:
		// the task closes its operators first and reports CANCELED; the
		// TaskManager then stops it (Task.cancelExecution)
		if _, ok := t.children[b.CancelTask.ExecutionId]; ok {
			o.Send(b.CancelTask.ExecutionId, 0, b)
		}
	case *messages.Envelope_SubmitTask:
		t.deploy(o, b.SubmitTask)
	case *messages.Envelope_TaskExecutionState:
		// a task of ours changed state: tell the JobManager (Task ->
		// TaskManagerActions.updateTaskExecutionState -> JobMasterGateway)
		if m, st := b.TaskExecutionState, status.Execution(b.TaskExecutionState.State); st == status.Finished {
			t.finished[m.ExecutionId] = true
		} else if st == status.Canceled || st == status.Failed {
			// a task in a final state leaves its slot (unregisterTaskAndNotifyFinalState)
			o.Log(eventlog.TaskState{Task: m.ExecutionId, State: st.String()})
			t.stopTask(o, m.ExecutionId)
		}
		o.Send(jobgraph.JobManagerName, vt.FromDuration(t.cfg.RPCLatency()), b)
	case *messages.Envelope_ConnectionLost:
		t.connectionLost(o, b.ConnectionLost.Peer)
	case *messages.Envelope_Timer:
		t.networkTimer(o, b.Timer)
	case *messages.Envelope_DisconnectJobManager:
		t.jobManagerDisconnected(o, b.DisconnectJobManager)
	case *messages.Envelope_EndOfRun:
		o.Log(eventlog.FinalCounters{List: []eventlog.Value{eventlog.I("tasks_deployed", int64(len(t.tasks)))}})
	}
}

// RPCAddress is the TaskExecutor's RPC endpoint as Flink 1.20's Pekko RPC
// service names it (pekko.tcp://flink@HOST:PORT/user/rpc/taskmanager_0,
// taskmanager.rpc.port 6122), the TaskManager's name standing for its host.
func RPCAddress(name string) string {
	return "pekko.tcp://flink@" + name + ":6122/user/rpc/taskmanager_0"
}

// DataPort is the port a TaskManager's Netty server listens on and
// registers with the ResourceManager (TaskManagerLocation's dataPort).
// Flink's taskmanager.data.port defaults to 0, so the operating system picks
// a free ephemeral port; the simulator's pick is a fixed function of the
// TaskManager's name in Linux's default ephemeral range (32768..60999), so
// that it is the same in every run. No simulated data crosses it: the
// exchange is modelled in the input channels and result partitions.
func DataPort(name string) int32 {
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(name); i++ {
		h = (h ^ uint32(name[i])) * 16777619
	}
	return int32(32768 + h%(60999-32768+1))
}

// sendRegister registers the TaskManager's slots with the ResourceManager.
func (t *TaskExecutor) sendRegister(o *kernel.Out) {
	reg := &messages.RegisterTaskExecutor{TaskManagerId: o.Name(), Address: RPCAddress(o.Name()),
		DataPort: DataPort(o.Name()), NumSlots: int32(t.numSlots), DefaultSlotResourceProfile: t.slot, TotalResourceProfile: t.total}
	o.Log(eventlog.RegisterTaskExecutor{ResourceManager: jobgraph.ResourceManagerName, NumSlots: int64(t.numSlots), DefaultSlotResourceProfile: ProfileJSON(t.slot), TotalResourceProfile: ProfileJSON(t.total)})
	o.Send(jobgraph.ResourceManagerName, vt.FromDuration(t.cfg.RPCLatency()), &messages.Envelope_RegisterTaskExecutor{RegisterTaskExecutor: reg})
}

// deploy starts a subtask and, when it reads from an InputGate, one
// InputChannel actor per producer subtask (TaskExecutor.submitTask): it
// asks for each by its spec (sim/spawn), which the factory builds.
func (t *TaskExecutor) deploy(o *kernel.Out, m *messages.SubmitTask) {
	t.tasks = append(t.tasks, m.ExecutionId)
	t.children[m.ExecutionId] = nil
	cfg := t.cfg
	if len(m.JobConfiguration) > 0 {
		// the job's own configuration over the cluster's
		c := *t.cfg
		for _, kv := range m.JobConfiguration {
			if err := c.Set(kv.Key, kv.Value); err != nil {
				o.Invariant("job_configuration", "%s: %s=%s: %v", m.ExecutionId, kv.Key, kv.Value, err)
				return
			}
		}
		cfg = &c
	}
	o.Spawn(m.ExecutionId, spawn.SubtaskSpec{Config: cfg, Task: m, TaskManager: o.Name()})
	// the task leaves DEPLOYING after sim.task.deploy-time; its input
	// channels request their partitions at the end of INITIALIZING
	// (StreamTask.restoreStateAndGates: requestPartitions once the
	// operators are open)
	deploy := vt.FromDuration(cfg.TaskDeployTime)
	o.Send(m.ExecutionId, deploy, start())
	if g := m.InputGate; g != nil {
		sub := int(g.ConsumedSubpartition)
		for i, producer := range g.Producers {
			name := jobgraph.ChannelName(m.ExecutionId, i)
			local := g.ProducerLocations[i] == o.Name()
			t.children[m.ExecutionId] = append(t.children[m.ExecutionId], name)
			o.Spawn(name, spawn.InputChannelSpec{Config: cfg, Consumer: m.ExecutionId, Index: i, Producer: producer,
				ProducerTaskManager: g.ProducerLocations[i], Subpartition: sub, Local: local})
			o.Send(name, deploy+vt.FromDuration(cfg.TaskInitTime), start())
		}
	}
	o.Log(eventlog.TaskState{Task: m.ExecutionId, State: "DEPLOYING", AllocationID: m.AllocationId})
}

// stopTask stops a subtask and its input channels.
func (t *TaskExecutor) stopTask(o *kernel.Out, name string) {
	ch, ok := t.children[name]
	if !ok {
		return
	}
	delete(t.children, name)
	o.Stop(name)
	for _, c := range ch {
		o.Stop(c)
	}
}

func start() messages.Body { return &messages.Envelope_Start{Start: &messages.Start{}} }

// DeadLetter is the scheduler's rule for an envelope to an actor that is
// gone (kernel.Config.DeadLetter): a task submitted to a dead TaskManager
// never starts, nor do its input channels, so what is later sent to them is
// lost too rather than sent to an unknown actor.
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
