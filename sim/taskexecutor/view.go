package taskexecutor

import (
	"slices"

	"github.com/flinksim/flinksim/sim/vt"
)

// TaskExecutorView is one TaskExecutor with its slots.
type TaskExecutorView struct {
	Name     string   `json:"id"`
	NumSlots int      `json:"slotsNumber"`
	Slots    []string `json:"slots"` // allocation id per slot, "" when free
	Tasks    []string `json:"tasks"` // deployed subtasks still here and not FINISHED, in deployment order
	DataPort int32    `json:"dataPort"`
}

// Inspect implements kernel.Inspector.
func (t *TaskExecutor) Inspect(now vt.Time) any {
	v := &TaskExecutorView{Name: t.name, NumSlots: t.numSlots, Slots: slices.Clone(t.slots), DataPort: DataPort(t.name)}
	for _, task := range t.tasks {
		if _, ok := t.children[task]; ok && !t.finished[task] {
			v.Tasks = append(v.Tasks, task)
		}
	}
	return v
}
