package actors

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/window"
)

// savedOf builds a saved checkpoint of two keyed subtasks holding one key
// per given key group (key "kg<N>", key group N written as taken).
func savedOf(keyGroups [2][]int32) *savedState {
	s := &savedState{id: 4, maxP: 128, parallelism: map[string]int{jobgraph.VertexKeyed: 2, jobgraph.VertexSource: 2},
		tasks: map[string]*messages.TaskStateSnapshot{}}
	for i, kgs := range keyGroups {
		st := &messages.TaskStateSnapshot{Committables: []string{fmt.Sprintf("tx-%d-4", i)}}
		for _, kg := range kgs {
			st.Windows = append(st.Windows, &messages.KeyedWindowState{Key: fmt.Sprintf("kg%03d", kg), KeyGroup: kg})
		}
		s.tasks[jobgraph.SubtaskName(jobgraph.VertexKeyed, i, 0)] = st
		s.tasks[jobgraph.SubtaskName(jobgraph.VertexSource, i, 0)] = &messages.TaskStateSnapshot{
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
func TestRestoreForRedistributesByKeyGroup(t *testing.T) {
	saved := savedOf([2][]int32{{0, 42, 43, 63}, {64, 85, 86, 127}})
	want := map[int][]string{0: {"kg000", "kg042"}, 1: {"kg043", "kg063", "kg064", "kg085"}, 2: {"kg086", "kg127"}}
	wantTx := map[int][]string{0: {"tx-0-4"}, 1: {"tx-1-4"}, 2: nil}
	for i := 0; i < 3; i++ {
		st := restoreFor(saved, jobgraph.VertexKeyed, i, 3)
		if got := windowKeys(st); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("subtask %d of 3 restores keys %v, want %v", i, got, want[i])
		}
		if !reflect.DeepEqual(st.Committables, wantTx[i]) {
			t.Errorf("subtask %d of 3 commits %v, want %v", i, st.Committables, wantTx[i])
		}
	}
	one := restoreFor(saved, jobgraph.VertexKeyed, 0, 1)
	if len(one.Windows) != 8 || !reflect.DeepEqual(one.Committables, []string{"tx-0-4", "tx-1-4"}) {
		t.Errorf("subtask 0 of 1 restores %v with committables %v, want all 8 keys and both", windowKeys(one), one.Committables)
	}
	src := restoreFor(saved, jobgraph.VertexSource, 0, 1)
	if len(src.OutputChannelState) != 2 || len(src.Windows) != 0 {
		t.Errorf("source 0 of 1 restores %d channel records and %d keys, want 2 and 0", len(src.OutputChannelState), len(src.Windows))
	}
}

// A window operator's snapshot survives the trip through the protobuf
// TaskStateSnapshot unchanged, and each key carries its key group.
func TestWindowStateRoundTrip(t *testing.T) {
	states := []window.KeyState{{
		Key: "user-7",
		Windows: []window.WindowState{{Window: window.TimeWindow{Start: 0, End: 60000}, StateWindow: window.TimeWindow{Start: 0, End: 60000},
			Acc: window.Accumulator{Count: 3, Sum: 7.5, Min: 1, Max: 4}, Fired: 1}},
		EventTimeTimers: []window.Timer{{Timestamp: 59999, Key: "user-7", Window: window.TimeWindow{Start: 0, End: 60000}}},
	}}
	p, sizes := windowStateToProto(states, 128)
	if p[0].KeyGroup != keyGroupOf("user-7", 128) || sizes["user-7"] != int64(len("user-7")+windowEntryBytes+timerBytes) {
		t.Fatalf("key group %d, size %d", p[0].KeyGroup, sizes["user-7"])
	}
	if back := windowStateFromProto(p); !reflect.DeepEqual(back, states) {
		t.Fatalf("round trip gave %+v, want %+v", back, states)
	}
}
