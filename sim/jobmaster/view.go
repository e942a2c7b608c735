package jobmaster

import "github.com/flinksim/flinksim/sim/vt"

// JobMasterView is the JobMaster of the one job.
type JobMasterView struct {
	JobID    string         `json:"jid"`
	JobName  string         `json:"name"`
	Status   string         `json:"state"`
	Attempt  int            `json:"attempt"`
	Restarts int            `json:"restarts"`
	Tasks    []TaskLocation `json:"tasks"` // the current attempt's executions, in deployment order
	Slots    []SlotView     `json:"slots"` // slots offered to the job
	Graph    GraphView      `json:"graph"`
}

// TaskLocation is one execution of the current attempt.
type TaskLocation struct {
	Name        string `json:"name"`
	State       string `json:"state"`
	TaskManager string `json:"task_manager"`
}

// SlotView is a slot the job holds.
type SlotView struct {
	TaskManager  string `json:"task_manager"`
	Slot         int    `json:"slot"`
	AllocationID string `json:"allocation_id"`
}

// GraphView is the JobGraph.
type GraphView struct {
	Vertices       []VertexView `json:"vertices"`
	Edges          []EdgeView   `json:"edges"`
	MaxParallelism int          `json:"max_parallelism"`
	SlotsNeeded    int          `json:"slots_needed"`
}

// VertexView is one JobVertex.
type VertexView struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Parallelism int      `json:"parallelism"`
	Operators   []string `json:"operators"`
}

// EdgeView is one JobEdge.
type EdgeView struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Partitioner string `json:"partitioner"`
}

// Inspect implements kernel.Inspector.
func (j *JobMaster) Inspect(now vt.Time) any {
	v := &JobMasterView{JobID: j.jobID(), JobName: j.graph.JobName, Status: j.status.String(), Attempt: j.attempt, Restarts: j.restarts,
		Graph: GraphView{MaxParallelism: j.graph.MaxParallelism, SlotsNeeded: j.graph.SlotsNeeded}}
	for _, name := range j.order {
		v.Tasks = append(v.Tasks, TaskLocation{Name: name, State: j.tasks[name].String(), TaskManager: j.location[name]})
	}
	for _, s := range j.slots {
		v.Slots = append(v.Slots, SlotView{TaskManager: s.TaskManager, Slot: int(s.Index), AllocationID: s.AllocationID})
	}
	for _, x := range j.graph.Vertices {
		v.Graph.Vertices = append(v.Graph.Vertices, VertexView{ID: x.ID, Name: x.Name, Parallelism: x.Parallelism, Operators: x.Operators})
	}
	for _, e := range j.graph.Edges {
		v.Graph.Edges = append(v.Graph.Edges, EdgeView{From: e.From, To: e.To, Partitioner: e.Partitioner})
	}
	return v
}
