package jobmaster

import (
	"reflect"
	"testing"

	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/jobgraph"
)

// Slots sort by TaskManager number, then slot index.
func TestSortSlots(t *testing.T) {
	s := []Slot{{"tm-10", 0, "a"}, {"tm-2", 1, "b"}, {"tm-2", 0, "c"}, {"tm-1", 0, "d"}}
	SortSlots(s)
	var got []string
	for _, x := range s {
		got = append(got, x.AllocationID)
	}
	if want := []string{"d", "c", "b", "a"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// The default job (source 2 -> HASH -> window+sink 2, max parallelism 128)
// in two slots of tm-1 and tm-2, by hand: slot i holds subtask i of both
// vertices; each source subtask writes one subpartition per window
// subtask, each window subtask reads one channel per source subtask
// (local to its own slot's source, remote to the other); key groups
// [0,63] and [64,127].
func TestDeployDefaultJob(t *testing.T) {
	g, err := jobgraph.Build(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	deps, err := Deploy(g, []Slot{{"tm-1", 0, "alloc-1"}, {"tm-2", 0, "alloc-2"}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range deps {
		got = append(got, d.Task.ExecutionId+"@"+d.Slot.TaskManager)
	}
	if want := []string{"source-0#1@tm-1", "source-1#1@tm-2", "window-0#1@tm-1", "window-1#1@tm-2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("deployments %v, want %v", got, want)
	}
	src := deps[0].Task
	if rp := src.ResultPartition; rp.Partitioner != jobgraph.PartitionHash || !reflect.DeepEqual(rp.Consumers, []string{"window-0#1", "window-1#1"}) ||
		!reflect.DeepEqual(rp.ConsumerLocations, []string{"tm-1", "tm-2"}) || rp.NumSubpartitions != 2 || src.InputGate != nil {
		t.Fatalf("source-0's partition %v", rp)
	}
	w := deps[3].Task
	if gate := w.InputGate; !reflect.DeepEqual(gate.Producers, []string{"source-0#1", "source-1#1"}) ||
		!reflect.DeepEqual(gate.ProducerLocations, []string{"tm-1", "tm-2"}) || w.ResultPartition != nil {
		t.Fatalf("window-1's gate %v", gate)
	}
	if deps[2].Task.KeyGroupStart != 0 || deps[2].Task.KeyGroupEnd != 63 || w.KeyGroupStart != 64 || w.KeyGroupEnd != 127 {
		t.Fatalf("key groups %d-%d and %d-%d", deps[2].Task.KeyGroupStart, deps[2].Task.KeyGroupEnd, w.KeyGroupStart, w.KeyGroupEnd)
	}
	if w.AllocationId != "alloc-2" || w.Attempt != 1 || w.MaxParallelism != 128 {
		t.Fatalf("window-1 %v", w)
	}
	if _, err := Deploy(g, []Slot{{"tm-1", 0, "alloc-1"}}, 0); err == nil {
		t.Fatal("deployed into fewer slots than the job needs")
	}
}

// A FORWARD edge connects subtask i to subtask i only.
func TestDeployForwardEdge(t *testing.T) {
	g := jobgraph.JobGraph{MaxParallelism: 128, SlotsNeeded: 2,
		Vertices: []jobgraph.Vertex{{ID: jobgraph.VertexKeyed, Parallelism: 2}, {ID: jobgraph.VertexSink, Parallelism: 2}},
		Edges:    []jobgraph.Edge{{From: jobgraph.VertexKeyed, To: jobgraph.VertexSink, Partitioner: jobgraph.PartitionForward}}}
	deps, err := Deploy(g, []Slot{{"tm-1", 0, "a"}, {"tm-1", 1, "b"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rp := deps[1].Task.ResultPartition; !reflect.DeepEqual(rp.Consumers, []string{"sink-1"}) {
		t.Fatalf("window-1 writes to %v, want sink-1 only", rp.Consumers)
	}
	if gate := deps[2].Task.InputGate; !reflect.DeepEqual(gate.Producers, []string{"window-0"}) {
		t.Fatalf("sink-0 reads %v, want window-0 only", gate.Producers)
	}
}
