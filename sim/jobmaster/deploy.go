package jobmaster

import (
	"fmt"
	"slices"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/keygroup"
)

// Slot is a slot the job's slot pool holds.
type Slot struct {
	TaskManager  string
	Index        int32
	AllocationID string
}

// SortSlots orders slots by TaskManager (tm-2 before tm-10) and slot
// index: the order in which the deployment fills them.
func SortSlots(slots []Slot) {
	slices.SortFunc(slots, func(a, b Slot) int {
		if a.TaskManager != b.TaskManager {
			if len(a.TaskManager) != len(b.TaskManager) {
				return len(a.TaskManager) - len(b.TaskManager)
			}
			if a.TaskManager < b.TaskManager {
				return -1
			}
			return 1
		}
		return int(a.Index - b.Index)
	})
}

// Deployment is one execution to submit and the slot it goes to.
type Deployment struct {
	Task *messages.SubmitTask
	Slot Slot
}

// Deploy builds the TaskDeploymentDescriptor of every subtask of g for an
// attempt (DefaultScheduler with one slot-sharing group,
// TaskDeploymentDescriptorFactory): subtask i of every vertex goes into
// slots[i] (slots sorted with SortSlots, at least g.SlotsNeeded of them);
// an InputGate has one channel per producer subtask (one, the same index,
// on a FORWARD edge) and a ResultPartition one subpartition per consumer
// (one on a FORWARD edge), each naming where its peer runs; a subtask of the
// keyed vertex owns the key-group range of KeyGroupRangeAssignment for that
// vertex's parallelism. A vertex of lower parallelism leaves the slots
// above it without a subtask of its own. Deployments come in vertex
// order, then subtask index.
func Deploy(g jobgraph.JobGraph, slots []Slot, attempt int) ([]Deployment, error) {
	if len(slots) < g.SlotsNeeded {
		return nil, fmt.Errorf("%d slots for a job that needs %d", len(slots), g.SlotsNeeded)
	}
	name := func(v string, i int) string { return jobgraph.SubtaskName(v, i, attempt) }
	location := map[string]string{} // subtask -> task manager
	for _, v := range g.Vertices {
		for i := 0; i < v.Parallelism; i++ {
			location[name(v.ID, i)] = slots[i].TaskManager
		}
	}
	var out []Deployment
	for _, v := range g.Vertices {
		var in, outEdge *jobgraph.Edge
		for k := range g.Edges {
			if g.Edges[k].To == v.ID {
				in = &g.Edges[k]
			}
			if g.Edges[k].From == v.ID {
				outEdge = &g.Edges[k]
			}
		}
		for i := 0; i < v.Parallelism; i++ {
			st := &messages.SubmitTask{ExecutionId: name(v.ID, i), JobVertex: v.ID, TaskName: v.Name, SubtaskIndex: int32(i),
				Parallelism: int32(v.Parallelism), MaxParallelism: int32(g.MaxParallelism), AllocationId: slots[i].AllocationID,
				Chain: v.Operators, Attempt: int32(attempt)}
			if in != nil {
				pv, _ := g.Vertex(in.From)
				gate := &messages.InputGateDeployment{ConsumedSubpartition: int32(i)}
				if in.Partitioner == jobgraph.PartitionForward {
					gate.ConsumedSubpartition = 0 // the producer's only one
				}
				for p := 0; p < pv.Parallelism; p++ {
					if in.Partitioner == jobgraph.PartitionForward && p != i {
						continue
					}
					pn := name(pv.ID, p)
					gate.Producers = append(gate.Producers, pn)
					gate.ProducerLocations = append(gate.ProducerLocations, location[pn])
				}
				st.InputGate = gate
			}
			if outEdge != nil {
				cv, _ := g.Vertex(outEdge.To)
				rp := &messages.ResultPartitionDeployment{Partitioner: outEdge.Partitioner}
				for c := 0; c < cv.Parallelism; c++ {
					if outEdge.Partitioner == jobgraph.PartitionForward && c != i {
						continue
					}
					rp.Consumers = append(rp.Consumers, name(cv.ID, c))
				}
				for _, c := range rp.Consumers {
					rp.ConsumerLocations = append(rp.ConsumerLocations, location[c])
				}
				rp.NumSubpartitions = int32(len(rp.Consumers))
				st.ResultPartition = rp
			}
			if v.ID == jobgraph.VertexKeyed {
				r, err := keygroup.RangeForOperatorIndex(g.MaxParallelism, v.Parallelism, i)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", st.ExecutionId, err)
				}
				st.KeyGroupStart, st.KeyGroupEnd = int32(r.Start), int32(r.End)
			}
			out = append(out, Deployment{Task: st, Slot: slots[i]})
		}
	}
	return out, nil
}
