package resourcemanager

import (
	"slices"

	"github.com/flinksim/flinksim/sim/vt"
)

// ResourceManagerView is the ResourceManager.
type ResourceManagerView struct {
	TaskManagers []string `json:"task_managers"` // registered, in registration order
	FreeSlots    int      `json:"free_slots"`
	// Registered are the registered TaskManagers as the ResourceManager
	// knows them (what ResourceManager.requestTaskManagerInfo answers), in
	// registration order. A TaskManager that died stays here until its
	// heartbeat times out at the ResourceManager.
	Registered []TaskManagerView `json:"registered"`
}

// TaskManagerView is one registered TaskManager.
type TaskManagerView struct {
	ID       string `json:"id"`
	Address  string `json:"path"`     // its TaskExecutorGateway's RPC address, as it registered
	DataPort int32  `json:"dataPort"` // the port it registered (taskexecutor.DataPort)
	// LastHeartbeatMs is the virtual time (ms) of the last heartbeat the
	// ResourceManager received from it, 0 before the first
	// (HeartbeatManager.getLastHeartbeatFrom, DefaultHeartbeatMonitor).
	LastHeartbeatMs int64 `json:"lastHeartbeat"`
	Slots           int   `json:"slotsNumber"`
	FreeSlots       int   `json:"freeSlots"`
}

// Inspect implements kernel.Inspector.
func (r *ResourceManager) Inspect(now vt.Time) any {
	v := &ResourceManagerView{TaskManagers: slices.Clone(r.tms), FreeSlots: r.free(), Registered: []TaskManagerView{}}
	for _, tm := range r.tms {
		reg := r.regs[tm]
		t := TaskManagerView{ID: tm, Address: reg.address, DataPort: reg.dataPort, Slots: len(r.slots[tm])}
		for _, used := range r.slots[tm] {
			if !used {
				t.FreeSlots++
			}
		}
		if m := r.monitors[tm]; m != nil {
			t.LastHeartbeatMs = m.LastHeartbeat()
		}
		v.Registered = append(v.Registered, t)
	}
	return v
}
