package resourcemanager

import (
	"slices"
	"strconv"

	"github.com/flinksim/flinksim/sim/heartbeat"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/spawn"
	"github.com/flinksim/flinksim/sim/vt"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
)

// ResourceManager keeps the registered TaskManagers and their slots and
// hands free slots to the JobManager's declared requirements
// (org.apache.flink.runtime.resourcemanager.ResourceManager with the
// FineGrainedSlotManager's declarative protocol: the JobMaster declares how
// many slots it needs, the ResourceManager asks TaskExecutors to offer free
// slots to it).
type ResourceManager struct {
	cfg      *config.Config
	tms      []string          // registered, in registration order
	slots    map[string][]bool // task manager -> slot allocated?
	wanted   int               // slots the job still needs
	jobMgr   string
	nextAllo int
	monitors map[string]*heartbeat.Monitor
	nextTM   int                     // number of the next task manager to start (tm-N)
	pending  map[string]bool         // replacements started and not yet registered
	regs     map[string]registration // what each registered task manager gave (view.go; no rule reads it)
}

// registration is what a TaskExecutor registered with, beside its slots.
type registration struct {
	address  string
	dataPort int32
}

// New returns the ResourceManager component.
func New(cfg *config.Config) *ResourceManager {
	return &ResourceManager{cfg: cfg, slots: map[string][]bool{}, monitors: map[string]*heartbeat.Monitor{},
		nextTM: cfg.TaskManagers + 1, pending: map[string]bool{}, regs: map[string]registration{}}
}

// Step implements kernel.Component.
func (r *ResourceManager) Step(o *kernel.Out, env *messages.Envelope) {
	switch b := env.Body.(type) {
	case *messages.Envelope_Start:
		o.Log(eventlog.ActorStarted{Component: "ResourceManager"})
		o.Timer(vt.FromDuration(r.cfg.HeartbeatInterval), timerHeartbeat, 0)
	case *messages.Envelope_Timer:
		switch b.Timer.Kind {
		case timerHeartbeat:
			r.heartbeat(o, true)
		case heartbeat.TimerCheck:
			r.heartbeat(o, false)
		}
	case *messages.Envelope_HeartbeatResponse:
		if m := r.monitors[b.HeartbeatResponse.TaskManagerId]; m != nil {
			m.ReportHeartbeat(vt.Millis(o.Now()))
		}
	case *messages.Envelope_RegisterTaskExecutor:
		m := b.RegisterTaskExecutor
		delete(r.pending, m.TaskManagerId)
		if _, ok := r.slots[m.TaskManagerId]; !ok {
			r.tms = append(r.tms, m.TaskManagerId)
		}
		r.slots[m.TaskManagerId] = make([]bool, m.NumSlots)
		r.regs[m.TaskManagerId] = registration{address: m.Address, dataPort: m.DataPort}
		r.monitors[m.TaskManagerId] = heartbeat.NewMonitor(r.cfg.HeartbeatTimeout.Milliseconds(), vt.Millis(o.Now()))
		o.Log(eventlog.TaskExecutorRegistered{TaskManager: m.TaskManagerId, NumSlots: int64(m.NumSlots), RegisteredTaskManagers: int64(len(r.tms))})
		o.Send(env.From, vt.FromDuration(r.cfg.RPCLatency()), &messages.Envelope_RegistrationResponse{
			RegistrationResponse: &messages.RegistrationResponse{Success: true}})
		r.allocate(o)
	case *messages.Envelope_DeclareResourceRequirements:
		m := b.DeclareResourceRequirements
		r.wanted = int(m.NumSlots)
		r.jobMgr = env.From
		o.Log(eventlog.ResourceRequirements{JobID: m.JobId, Slots: int64(m.NumSlots), FreeSlots: int64(r.free())})
		r.allocate(o)
	case *messages.Envelope_WorkerTerminated:
		r.workerTerminated(o, b.WorkerTerminated.TaskManagerId)
	case *messages.Envelope_EndOfRun:
		o.Log(eventlog.FinalCounters{List: []eventlog.Value{eventlog.I("registered_task_managers", int64(len(r.tms))),
			eventlog.I("free_slots_left", int64(r.free()))}})
	}
}

func (r *ResourceManager) free() int {
	n := 0
	for _, s := range r.slots {
		for _, used := range s {
			if !used {
				n++
			}
		}
	}
	return n
}

// allocate asks TaskManagers for free slots, task managers in name order and
// slots in index order, until the requirement is met or none is left.
func (r *ResourceManager) allocate(o *kernel.Out) {
	names := slices.Clone(r.tms)
	slices.Sort(names)
	for _, tm := range names {
		for i, used := range r.slots[tm] {
			if r.wanted == 0 {
				return
			}
			if used {
				continue
			}
			r.slots[tm][i] = true
			r.wanted--
			r.nextAllo++
			alloc := "alloc-" + strconv.Itoa(r.nextAllo)
			o.Log(eventlog.RequestSlot{TaskManager: tm, Slot: int64(i), AllocationID: alloc})
			o.Send(tm, vt.FromDuration(r.cfg.RPCLatency()), &messages.Envelope_RequestSlot{RequestSlot: &messages.RequestSlot{
				SlotIndex: int32(i), AllocationId: alloc, JobId: jobgraph.JobID, JobManager: r.jobMgr}})
		}
	}
}

// heartbeat requests a heartbeat of every registered task manager and
// handles the ones that timed out: their slots are gone, and, as an active
// ResourceManager (Kubernetes, YARN) does, a replacement TaskManager is
// started to make up for the lost one.
func (r *ResourceManager) heartbeat(o *kernel.Out, send bool) {
	if send {
		o.Timer(vt.FromDuration(r.cfg.HeartbeatInterval), timerHeartbeat, 0)
	}
	heartbeat.Round(o, r.monitors, send, vt.FromDuration(r.cfg.RPCLatency()), func(tm string, _ *heartbeat.Monitor) {
		delete(r.slots, tm)
		delete(r.regs, tm)
		r.tms = slices.DeleteFunc(r.tms, func(s string) bool { return s == tm })
		replacement := r.replacement()
		o.Log(eventlog.TaskManagerLost{TaskManager: tm, Cause: "The heartbeat of TaskManager with id " + tm + " timed out.", Replacement: replacement})
		r.startWorker(o, replacement)
	})
}

// replacement is the name of the next TaskManager the ResourceManager
// starts.
func (r *ResourceManager) replacement() string {
	name := jobgraph.TaskManagerName(r.nextTM - 1)
	r.nextTM++
	return name
}

func (r *ResourceManager) startWorker(o *kernel.Out, name string) {
	r.pending[name] = true
	o.Spawn(name, spawn.TaskExecutorSpec{})
	o.Send(name, 0, start())
}

// workerTerminated is the resource provider's word that the process of tm
// ended (ActiveResourceManager.onWorkerTerminated). A worker the
// ResourceManager started that never registered is started again
// (requestWorkerIfRequired: its slots are still wanted). A registered
// TaskManager's loss is left to the heartbeat, as the simulator models a
// killed TaskManager (Flink would close the connection at once; see the
// README's Fidelity section).
func (r *ResourceManager) workerTerminated(o *kernel.Out, tm string) {
	if !r.pending[tm] {
		return
	}
	delete(r.pending, tm)
	replacement := r.replacement()
	o.Log(eventlog.WorkerTerminated{TaskManager: tm, Cause: "Worker " + tm + " terminated before it registered.", Replacement: replacement})
	r.startWorker(o, replacement)
}

func start() messages.Body { return &messages.Envelope_Start{Start: &messages.Start{}} }
