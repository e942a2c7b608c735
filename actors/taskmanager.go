package actors

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/jobgraph"
)

// TaskManager is one TaskExecutor: it owns a fixed number of slots, registers
// them with the ResourceManager, offers allocated slots to the JobManager and
// runs the subtasks deployed into them
// (org.apache.flink.runtime.taskexecutor.TaskExecutor,
// TaskManagerConfiguration.fromConfiguration, TaskExecutorResourceUtils).
type TaskManager struct {
	name     string // set at Start
	cfg      *config.Config
	numSlots int
	total    *messages.ResourceProfile
	slot     *messages.ResourceProfile
	slots    []string            // allocation id per slot, "" when free
	tasks    []string            // deployed subtask names, in deployment order
	children map[string][]string // subtask -> its input channel actors
	killed   bool
	net      tmNetwork // heartbeat monitors and registration (network.go)
}

// NewTaskManager returns the TaskManager component. A configured slot count
// of -1 is read as 1, as TaskManagerConfiguration.fromConfiguration does.
func NewTaskManager(cfg *config.Config) *TaskManager {
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
	return &TaskManager{cfg: cfg, numSlots: n, children: map[string][]string{}, total: total, slot: DefaultSlotProfile(total, n), slots: make([]string, n),
		net: newTMNetwork()}
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
	return `{"cpu_cores":` + ftoa(p.CpuCores) + `,"task_heap_bytes":` + itoa(p.TaskHeapBytes) +
		`,"task_off_heap_bytes":` + itoa(p.TaskOffHeapBytes) + `,"managed_memory_bytes":` + itoa(p.ManagedMemoryBytes) +
		`,"network_memory_bytes":` + itoa(p.NetworkMemoryBytes) + `}`
}

// Receive implements Component.
func (t *TaskManager) Receive(o *Out, env *messages.Envelope) {
	switch b := env.Body.(type) {
	case *messages.Envelope_Start:
		t.name = o.Name()
		o.Log(eventlog.KindTaskManagerStarted, messages.Int("num_slots", int64(t.numSlots)),
			messages.Raw("total_resource_profile", ProfileJSON(t.total)),
			messages.Raw("default_slot_resource_profile", ProfileJSON(t.slot)))
		t.sendRegister(o)
	case *messages.Envelope_RegistrationResponse:
		t.net.registered, t.net.retrying = true, false
		o.Log(eventlog.KindRegistrationResponse, messages.Bool("success", b.RegistrationResponse.Success))
	case *messages.Envelope_RequestSlot:
		m := b.RequestSlot
		t.slots[m.SlotIndex] = m.AllocationId
		t.net.job = m.JobId
		o.Log(eventlog.KindOfferSlots, messages.Str("job_manager", m.JobManager), messages.Int("slot", int64(m.SlotIndex)),
			messages.Str("allocation_id", m.AllocationId))
		o.Send(m.JobManager, rpcLatency(t.cfg), &messages.Envelope_OfferSlots{OfferSlots: &messages.OfferSlots{
			TaskManagerId: o.Name(), Offers: []*messages.SlotOffer{{AllocationId: m.AllocationId, SlotIndex: m.SlotIndex}}}})
	case *messages.Envelope_SlotOfferResponse:
	case *messages.Envelope_Action:
		// kill-taskmanager: the process dies with every task in it;
		// messages to it are lost from now on (the scheduler drops them)
		t.killed = true
		o.Log(eventlog.KindTaskManagerKilled, messages.Str("action", b.Action.Text), messages.Int("tasks", int64(len(t.tasks))))
		for _, task := range t.tasks {
			t.stopTask(o, task)
		}
		o.Stop(o.Name())
		return
	case *messages.Envelope_HeartbeatRequest:
		t.heard(o, env.From)
		o.Send(env.From, rpcLatency(t.cfg), &messages.Envelope_HeartbeatResponse{HeartbeatResponse: &messages.HeartbeatResponse{
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
		if m := b.TaskExecutionState; m.State == "CANCELED" || m.State == "FAILED" {
			// a task in a final state leaves its slot (unregisterTaskAndNotifyFinalState)
			o.Log(eventlog.KindTaskState, messages.Str("task", m.ExecutionId), messages.Str("state", m.State))
			t.stopTask(o, m.ExecutionId)
		}
		o.Send(JobManagerName, rpcLatency(t.cfg), b)
	case *messages.Envelope_ConnectionLost:
		t.connectionLost(o, b.ConnectionLost.Peer)
	case *messages.Envelope_Timer:
		t.networkTimer(o, b.Timer)
	case *messages.Envelope_EndOfRun:
		o.Log(eventlog.KindFinal, messages.Int("tasks_deployed", int64(len(t.tasks))))
	}
}

// sendRegister registers the TaskManager's slots with the ResourceManager.
func (t *TaskManager) sendRegister(o *Out) {
	reg := &messages.RegisterTaskExecutor{TaskManagerId: o.Name(), Address: "akka://flink@" + o.Name() + ":6122",
		DataPort: 0, NumSlots: int32(t.numSlots), DefaultSlotResourceProfile: t.slot, TotalResourceProfile: t.total}
	o.Log(eventlog.KindRegisterTaskExecutor, messages.Str("resource_manager", ResourceManagerName),
		messages.Int("num_slots", int64(t.numSlots)),
		messages.Raw("default_slot_resource_profile", ProfileJSON(t.slot)),
		messages.Raw("total_resource_profile", ProfileJSON(t.total)))
	o.Send(ResourceManagerName, rpcLatency(t.cfg), &messages.Envelope_RegisterTaskExecutor{RegisterTaskExecutor: reg})
}

// deploy starts a subtask and, when it reads from an InputGate, one
// InputChannel actor per producer subtask.
func (t *TaskManager) deploy(o *Out, m *messages.SubmitTask) {
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
	o.Spawn(m.ExecutionId, NewSubtask(cfg, m, o.Name()))
	o.Send(m.ExecutionId, 0, start())
	if g := m.InputGate; g != nil {
		// the subpartition this subtask reads of each producer: its own
		// index on a keyBy (one subpartition per consumer); the only one
		// on a forward edge
		sub := int(m.SubtaskIndex)
		if len(g.Producers) == 1 {
			sub = 0
		}
		for i, producer := range g.Producers {
			name := jobgraph.ChannelName(m.ExecutionId, i)
			local := g.ProducerLocations[i] == o.Name()
			t.children[m.ExecutionId] = append(t.children[m.ExecutionId], name)
			o.Spawn(name, NewInputChannel(cfg, m.ExecutionId, i, producer, g.ProducerLocations[i], sub, local))
			o.Send(name, 0, start())
		}
	}
	o.Log(eventlog.KindTaskState, messages.Str("task", m.ExecutionId), messages.Str("state", "DEPLOYING"),
		messages.Str("allocation_id", m.AllocationId))
}

// stopTask stops a subtask and its input channels.
func (t *TaskManager) stopTask(o *Out, name string) {
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
