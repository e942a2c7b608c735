package checkpoint

import (
	"slices"
	"strconv"
	"strings"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/keygroup"
	"github.com/flinksim/flinksim/sim/status"
)

// Saved is a completed checkpoint or savepoint as the CheckpointCoordinator
// keeps it for restores (CompletedCheckpoint with its OperatorStates): every
// task's TaskStateSnapshot with the parallelism and max parallelism it was
// taken with.
type Saved struct {
	ID             int64
	Kind           Kind
	MaxParallelism int
	Parallelism    map[string]int                         // JobVertex id -> parallelism
	SinkVertex     string                                 // the JobVertex whose chain ended in the sink
	Tasks          map[string]*messages.TaskStateSnapshot // base task name (jobgraph.SubtaskName with attempt 0) -> state
}

// SavepointPath is where the simulator says a savepoint is stored.
func SavepointPath(id int64) string {
	return "file:/flinksim/savepoints/savepoint-" + strconv.FormatInt(id, 10)
}

// Assign builds the state subtask index of vertex v restores from saved
// when the vertex now runs with v.Parallelism subtasks
// (StateAssignmentOperation). State belongs to operators, not to the chains
// they ran in, so it follows its operator into whichever vertex holds it
// now:
//   - keyed state (the keyed vertex, always the head of its chain) goes by
//     key group, in the contiguous ranges of KeyGroupRangeAssignment for
//     the new parallelism;
//   - the sink's committables of old subtask k go to k mod p of the vertex
//     that holds the sink now (v.Sink), from the vertex that held it then;
//   - channel state stays with its vertex: into the keyed vertex (the keyBy
//     edge) by key group, elsewhere old subtask k's goes to k mod p.
//
// A source's split offsets are not assigned here: they go through the
// split enumerator (RestoredOffsets). The keyed state comes out sorted by
// key.
func Assign(saved *Saved, v *messages.CheckpointVertex, index int) *messages.TaskStateSnapshot {
	out := &messages.TaskStateSnapshot{}
	p := int(v.Parallelism)
	if v.Sink && saved.SinkVertex != "" {
		for k := 0; k < saved.Parallelism[saved.SinkVertex]; k++ {
			if st := saved.Tasks[jobgraph.SubtaskName(saved.SinkVertex, k, 0)]; st != nil && k%p == index {
				out.Committables = append(out.Committables, st.Committables...)
			}
		}
	}
	keyed := v.Id == jobgraph.VertexKeyed
	var r keygroup.KeyGroupRange
	if keyed {
		var err error
		if r, err = keygroup.RangeForOperatorIndex(saved.MaxParallelism, p, index); err != nil {
			return out
		}
	}
	in := func(key string) bool {
		kg := keygroup.AssignToKeyGroup(keygroup.StringHashCode(key), saved.MaxParallelism)
		return kg >= r.Start && kg <= r.End
	}
	for k := 0; k < saved.Parallelism[v.Id]; k++ {
		st := saved.Tasks[jobgraph.SubtaskName(v.Id, k, 0)]
		if st == nil {
			continue
		}
		if !keyed {
			if k%p == index {
				out.InputChannelState = append(out.InputChannelState, st.InputChannelState...)
				out.OutputChannelState = append(out.OutputChannelState, st.OutputChannelState...)
			}
			continue
		}
		for _, w := range st.Windows {
			if int(w.KeyGroup) >= r.Start && int(w.KeyGroup) <= r.End {
				out.Windows = append(out.Windows, w)
			}
		}
		for _, e := range st.Values {
			if int(e.KeyGroup) >= r.Start && int(e.KeyGroup) <= r.End {
				out.Values = append(out.Values, e)
			}
		}
		for _, rec := range st.InputChannelState {
			if in(rec.Key) {
				out.InputChannelState = append(out.InputChannelState, rec)
			}
		}
		for _, rec := range st.OutputChannelState {
			if in(rec.Key) {
				out.OutputChannelState = append(out.OutputChannelState, rec)
			}
		}
	}
	slices.SortStableFunc(out.Windows, func(a, b *messages.KeyedWindowState) int { return strings.Compare(a.Key, b.Key) })
	slices.SortStableFunc(out.Values, func(a, b *messages.ValueStateEntry) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// RestoredOffsets are the source split offsets stored in saved, by
// partition, in partition order.
func RestoredOffsets(saved *Saved) []*messages.PartitionOffset {
	offs := map[int32]int64{}
	for _, st := range saved.Tasks {
		for _, sp := range st.Splits {
			offs[sp.Partition] = sp.Offset
		}
	}
	out := make([]*messages.PartitionOffset, 0, len(offs))
	for p, o := range offs {
		out = append(out, &messages.PartitionOffset{Partition: p, Offset: o})
	}
	slices.SortFunc(out, func(a, b *messages.PartitionOffset) int { return int(a.Partition - b.Partition) })
	return out
}

// CheckRestore applies Flink's checks before a job is started from saved
// with parallelism p of its keyed vertex and, when configuredMaxP > 0, that
// max parallelism (Checkpoints.loadAndValidateCheckpoint,
// StateAssignmentOperation.checkParallelismPreconditions). It returns the
// new job's max parallelism, or Flink's message when it refuses.
func CheckRestore(saved *Saved, p, configuredMaxP int) (maxP int, refusal string) {
	maxP = saved.MaxParallelism
	if configuredMaxP > 0 {
		maxP = configuredMaxP
	}
	keyed := jobgraph.VertexKeyed
	switch {
	case maxP != saved.MaxParallelism:
		return maxP, "java.lang.IllegalStateException: Failed to rollback to checkpoint/savepoint " + SavepointPath(saved.ID) +
			". Max parallelism mismatch between checkpoint/savepoint state and new program. Cannot map operator " + keyed +
			" with max parallelism " + strconv.Itoa(saved.MaxParallelism) + " to new program with max parallelism " + strconv.Itoa(maxP) +
			". This indicates that the program has been changed in a non-compatible way after the checkpoint/savepoint."
	case p > saved.MaxParallelism:
		return maxP, "java.lang.IllegalStateException: The state for task " + keyed +
			" can not be restored. The maximum parallelism (" + strconv.Itoa(saved.MaxParallelism) +
			") of the restored state is lower than the configured parallelism (" + strconv.Itoa(p) +
			"). Please reduce the parallelism of the task to be lower or equal to the maximum parallelism."
	}
	return maxP, ""
}

// Execution is one execution of the current attempt as the plan sees it.
type Execution struct {
	Name   string // execution id
	Vertex string
	Index  int
	State  status.Execution
}

// Plan decides, for a checkpoint triggered now, which running tasks get
// TriggerCheckpoint and which finished tasks count as acknowledged with the
// state of their last snapshot, as Flink 1.20 plans checkpoints after tasks
// finished (DefaultCheckpointPlanCalculator, FLIP-147): a running task is
// triggered when it is a source or every upstream task it reads has
// finished. Both lists follow the vertices' order, then subtask index.
func Plan(vertices []*messages.CheckpointVertex, execs []Execution) (trigger, finished []Execution) {
	at := map[string]map[int]Execution{}
	for _, e := range execs {
		if at[e.Vertex] == nil {
			at[e.Vertex] = map[int]Execution{}
		}
		at[e.Vertex][e.Index] = e
	}
	done := func(v string, i int) bool { return at[v][i].State == status.Finished }
	up := map[string]*messages.CheckpointVertex{}
	for _, v := range vertices {
		up[v.Id] = v
	}
	for _, v := range vertices {
		for i := 0; i < int(v.Parallelism); i++ {
			e, ok := at[v.Id][i]
			if !ok {
				continue
			}
			if done(v.Id, i) {
				finished = append(finished, e)
				continue
			}
			ok = true
			if v.Upstream != "" {
				pv := up[v.Upstream]
				for p := 0; p < int(pv.GetParallelism()); p++ {
					if (!v.Forward || p == i) && !done(pv.Id, p) {
						ok = false
					}
				}
			}
			if ok {
				trigger = append(trigger, e)
			}
		}
	}
	return trigger, finished
}
