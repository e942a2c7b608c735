package jobmaster

import (
	"slices"

	"github.com/flinksim/flinksim/sim/vt"
)

// JobMasterView is the JobMaster of the one job: what its ExecutionGraph
// holds, which is what Flink's web UI and REST API show (the JobMaster's
// belief, not the TaskManagers' truth: a task on a TaskManager that died
// stays RUNNING here until the heartbeat times out).
type JobMasterView struct {
	JobID    string `json:"jid"`
	JobName  string `json:"name"`
	Status   string `json:"state"`
	Attempt  int    `json:"attempt"`
	Restarts int    `json:"restarts"`
	// Tasks are the executions of the current attempt in deployment order,
	// each in the state the JobMaster last heard of. Between a failover's
	// cancellation and the next attempt's start (the restart backoff, or a
	// job that failed) they are the canceled attempt's executions, CANCELED
	// (FINISHED for one that had finished), as the ExecutionGraph keeps an
	// ExecutionVertex's last execution until resetForNewExecution. Empty
	// while a new attempt waits for slots (its executions are SCHEDULED).
	Tasks []TaskLocation `json:"tasks"`
	Slots []SlotView     `json:"slots"` // slots offered to the job
	Graph GraphView      `json:"graph"`
	// LostTaskManagers are the TaskManagers whose heartbeat timed out at the
	// JobMaster (JobMaster's TaskManagerHeartbeatListener), sorted; one that
	// registers again leaves the list.
	LostTaskManagers []string `json:"lost_task_managers,omitempty"`
}

// TaskLocation is one execution of the current attempt.
type TaskLocation struct {
	Name        string `json:"name"`   // execution id, e.g. window-0#1
	Vertex      string `json:"vertex"` // its JobVertex
	Index       int    `json:"subtask_index"`
	State       string `json:"state"` // Flink's ExecutionState
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
	v.Tasks = j.exec.view()
	if len(j.exec.order) == 0 && j.exec.canceled != nil {
		v.Tasks = slices.Clone(j.exec.canceled)
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
	for tm := range j.lost {
		v.LostTaskManagers = append(v.LostTaskManagers, tm)
	}
	slices.Sort(v.LostTaskManagers)
	return v
}
