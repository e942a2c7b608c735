package resourcemanager

import (
	"slices"

	"github.com/flinksim/flinksim/sim/vt"
)

// ResourceManagerView is the ResourceManager.
type ResourceManagerView struct {
	TaskManagers []string `json:"task_managers"` // registered, in registration order
	FreeSlots    int      `json:"free_slots"`
}

// Inspect implements kernel.Inspector.
func (r *ResourceManager) Inspect(now vt.Time) any {
	return &ResourceManagerView{TaskManagers: slices.Clone(r.tms), FreeSlots: r.free()}
}
