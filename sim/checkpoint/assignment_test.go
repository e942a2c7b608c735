package checkpoint

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/status"
)

// savedOf builds a saved checkpoint of two keyed subtasks holding one key
// per given key group (key "kg<N>", key group N written as taken).
func savedOf(keyGroups [2][]int32) *Saved {
	s := &Saved{ID: 4, MaxParallelism: 128, Parallelism: map[string]int{jobgraph.VertexKeyed: 2, jobgraph.VertexSource: 2},
		SinkVertex: jobgraph.VertexKeyed, Tasks: map[string]*messages.TaskStateSnapshot{}}
	for i, kgs := range keyGroups {
		st := &messages.TaskStateSnapshot{Committables: []string{fmt.Sprintf("tx-%d-4", i)}}
		for _, kg := range kgs {
			st.Windows = append(st.Windows, &messages.KeyedWindowState{Key: fmt.Sprintf("kg%03d", kg), KeyGroup: kg})
		}
		s.Tasks[jobgraph.SubtaskName(jobgraph.VertexKeyed, i, 0)] = st
		s.Tasks[jobgraph.SubtaskName(jobgraph.VertexSource, i, 0)] = &messages.TaskStateSnapshot{
			OutputChannelState: []*messages.InFlightRecord{{Key: fmt.Sprintf("out-%d", i)}}}
	}
	return s
}

func windowKeys(st *messages.TaskStateSnapshot) []string {
	var out []string
	for _, w := range st.Windows {
		out = append(out, w.Key)
	}
	return out
}

// Rescaling 2 -> 3 with max parallelism 128: Flink gives the new subtasks
// key groups [0,42], [43,85], [86,127] (KeyGroupRangeAssignment; the ranges a
// real 2 -> 3 restore prints); state moves with its key groups, and the
// committables and source channel state of old subtask k go to k mod 3.
func TestAssignRedistributesByKeyGroup(t *testing.T) {
	saved := savedOf([2][]int32{{0, 42, 43, 63}, {64, 85, 86, 127}})
	want := map[int][]string{0: {"kg000", "kg042"}, 1: {"kg043", "kg063", "kg064", "kg085"}, 2: {"kg086", "kg127"}}
	wantTx := map[int][]string{0: {"tx-0-4"}, 1: {"tx-1-4"}, 2: nil}
	keyed := func(p int) *messages.CheckpointVertex {
		return &messages.CheckpointVertex{Id: jobgraph.VertexKeyed, Parallelism: int32(p), Sink: true}
	}
	for i := 0; i < 3; i++ {
		st := Assign(saved, keyed(3), i)
		if got := windowKeys(st); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("subtask %d of 3 restores keys %v, want %v", i, got, want[i])
		}
		if !reflect.DeepEqual(st.Committables, wantTx[i]) {
			t.Errorf("subtask %d of 3 commits %v, want %v", i, st.Committables, wantTx[i])
		}
	}
	one := Assign(saved, keyed(1), 0)
	if len(one.Windows) != 8 || !reflect.DeepEqual(one.Committables, []string{"tx-0-4", "tx-1-4"}) {
		t.Errorf("subtask 0 of 1 restores %v with committables %v, want all 8 keys and both", windowKeys(one), one.Committables)
	}
	src := Assign(saved, &messages.CheckpointVertex{Id: jobgraph.VertexSource, Parallelism: 1}, 0)
	if len(src.OutputChannelState) != 2 || len(src.Windows) != 0 || len(src.Committables) != 0 {
		t.Errorf("source 0 of 1 restores %d channel records, %d keys and %v, want 2, 0 and no committables",
			len(src.OutputChannelState), len(src.Windows), src.Committables)
	}
}

// State belongs to operators: when a rescale breaks the chain of the keyed
// operator and the sink (window 2 -> 3, the sink staying at 2: the edge
// becomes REBALANCE), the committables follow the sink into its own vertex
// (old subtask k's to k mod 2) and the keyed vertex keeps only keyed state;
// when the chain forms again (sink 3 -> window 2 with the sink at 2), they
// come back from the sink vertex.
func TestAssignFollowsTheSinkAcrossChains(t *testing.T) {
	saved := savedOf([2][]int32{{0, 63}, {64, 127}})
	for i := 0; i < 3; i++ {
		if st := Assign(saved, &messages.CheckpointVertex{Id: jobgraph.VertexKeyed, Parallelism: 3}, i); len(st.Committables) != 0 {
			t.Errorf("window-%d of 3 without the sink restores committables %v", i, st.Committables)
		}
	}
	for i, want := range [][]string{{"tx-0-4"}, {"tx-1-4"}} {
		st := Assign(saved, &messages.CheckpointVertex{Id: jobgraph.VertexSink, Parallelism: 2, Sink: true}, i)
		if !reflect.DeepEqual(st.Committables, want) || len(st.Windows) != 0 {
			t.Errorf("sink-%d of 2 restores %v and %d keys, want %v and none", i, st.Committables, len(st.Windows), want)
		}
	}
	back := &Saved{ID: 5, MaxParallelism: 128, Parallelism: map[string]int{jobgraph.VertexKeyed: 3, jobgraph.VertexSink: 3},
		SinkVertex: jobgraph.VertexSink, Tasks: map[string]*messages.TaskStateSnapshot{}}
	for k := 0; k < 3; k++ {
		back.Tasks[jobgraph.SubtaskName(jobgraph.VertexSink, k, 0)] = &messages.TaskStateSnapshot{Committables: []string{fmt.Sprintf("tx-%d-5", k)}}
	}
	// old sink subtasks 0, 1, 2 -> new 0, 1, 0 (k mod 2)
	for i, want := range [][]string{{"tx-0-5", "tx-2-5"}, {"tx-1-5"}} {
		st := Assign(back, &messages.CheckpointVertex{Id: jobgraph.VertexKeyed, Parallelism: 2, Sink: true}, i)
		if !reflect.DeepEqual(st.Committables, want) {
			t.Errorf("window-%d of 2 with the sink chained restores %v, want %v", i, st.Committables, want)
		}
	}
}

// Flink's refusals when a job starts from a savepoint: another max
// parallelism, or a parallelism above the state's max parallelism
// (Checkpoints.loadAndValidateCheckpoint,
// StateAssignmentOperation.checkParallelismPreconditions).
func TestCheckRestore(t *testing.T) {
	saved := &Saved{ID: 7, MaxParallelism: 128}
	tests := []struct {
		p, maxP  int
		wantMaxP int
		refusal  string
	}{
		{p: 3, wantMaxP: 128},
		{p: 128, wantMaxP: 128},
		{p: 129, wantMaxP: 128, refusal: "The maximum parallelism (128) of the restored state is lower than the configured parallelism (129)"},
		{p: 3, maxP: 256, wantMaxP: 256, refusal: "Max parallelism mismatch between checkpoint/savepoint state and new program. Cannot map operator"},
		{p: 3, maxP: 128, wantMaxP: 128},
	}
	for _, tt := range tests {
		maxP, refusal := CheckRestore(saved, tt.p, tt.maxP)
		if maxP != tt.wantMaxP || (tt.refusal == "") != (refusal == "") || !strings.Contains(refusal, tt.refusal) {
			t.Errorf("CheckRestore(p=%d, maxP=%d) = %d, %q; want %d, %q", tt.p, tt.maxP, maxP, refusal, tt.wantMaxP, tt.refusal)
		}
	}
	if _, r := CheckRestore(saved, 3, 256); !strings.Contains(r, "savepoint-7") {
		t.Errorf("the refusal names no savepoint path: %q", r)
	}
}

// The checkpoint plan after tasks finished (FLIP-147): sources are
// triggered while they run; a keyed task is triggered only when every
// upstream task it reads finished; finished tasks are acknowledged for.
func TestPlan(t *testing.T) {
	vs := []*messages.CheckpointVertex{{Id: "source", Parallelism: 2}, {Id: "window", Parallelism: 2, Upstream: "source"},
		{Id: "sink", Parallelism: 2, Upstream: "window", Forward: true}}
	ex := func(v string, i int, name string) Execution {
		e := Execution{Name: fmt.Sprintf("%s-%d", v, i), Vertex: v, Index: i}
		for st := status.Scheduled; st <= status.Failed; st++ {
			if st.String() == name {
				e.State = st
			}
		}
		if e.State == 0 {
			t.Fatalf("no execution state %q", name)
		}
		return e
	}
	names := func(es []Execution) string {
		var s []string
		for _, e := range es {
			s = append(s, e.Name)
		}
		return strings.Join(s, " ")
	}
	tests := []struct {
		give              []Execution
		trigger, finished string
	}{
		{[]Execution{ex("source", 0, "RUNNING"), ex("source", 1, "RUNNING"), ex("window", 0, "RUNNING"), ex("window", 1, "RUNNING"),
			ex("sink", 0, "RUNNING"), ex("sink", 1, "RUNNING")}, "source-0 source-1", ""},
		// one source finished: the window tasks still read the other
		{[]Execution{ex("source", 0, "FINISHED"), ex("source", 1, "RUNNING"), ex("window", 0, "RUNNING"), ex("window", 1, "RUNNING"),
			ex("sink", 0, "RUNNING"), ex("sink", 1, "RUNNING")}, "source-1", "source-0"},
		// both sources and window-0 finished: the window tasks of a keyBy
		// read every source, so window-1 is triggered; sink-0 reads only
		// window-0 (forward) and is triggered too
		{[]Execution{ex("source", 0, "FINISHED"), ex("source", 1, "FINISHED"), ex("window", 0, "FINISHED"), ex("window", 1, "RUNNING"),
			ex("sink", 0, "RUNNING"), ex("sink", 1, "RUNNING")}, "window-1 sink-0", "source-0 source-1 window-0"},
	}
	for i, tt := range tests {
		trig, fin := Plan(vs, tt.give)
		if names(trig) != tt.trigger || names(fin) != tt.finished {
			t.Errorf("case %d: trigger %q finished %q, want %q and %q", i, names(trig), names(fin), tt.trigger, tt.finished)
		}
	}
}
