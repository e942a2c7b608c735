package jobmaster

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/status"
)

// executions are the current attempt's executions as the JobMaster tracks
// them: each one's last reported state (the ExecutionGraph's Executions),
// its vertex and subtask index, and the TaskManager it was deployed to
// (DefaultExecutionDeploymentTracker). A report of an execution that is not
// here is a zombie's.
type executions struct {
	tasks    map[string]status.Execution // execution id -> last state
	order    []string                    // execution ids in deployment order
	vertexOf map[string]vertexIndex      // execution id -> its vertex and subtask index
	location map[string]string           // execution id -> task manager
	// canceled is the view of the attempt cancelTasks ended, kept until the
	// next attempt starts (view.go); no rule reads it.
	canceled []TaskLocation
}

func newExecutions() executions {
	return executions{tasks: map[string]status.Execution{}, vertexOf: map[string]vertexIndex{}, location: map[string]string{}}
}

// states is the ExecutionStates message of the current attempt's
// executions, in deployment order.
func (e *executions) states() *messages.ExecutionStates {
	m := &messages.ExecutionStates{}
	for _, name := range e.order {
		v, i := e.vertexOf[name].vertex, e.vertexOf[name].index
		m.Executions = append(m.Executions, &messages.Execution{Name: name, Vertex: v, Index: int32(i), State: e.tasks[name].Proto()})
	}
	return m
}

// view is the current attempt's executions as the JobMaster believes them.
func (e *executions) view() []TaskLocation {
	out := make([]TaskLocation, 0, len(e.order))
	for _, name := range e.order {
		vi := e.vertexOf[name]
		out = append(out, TaskLocation{Name: name, Vertex: vi.vertex, Index: vi.index, State: e.tasks[name].String(),
			TaskManager: e.location[name]})
	}
	return out
}

// canceledView is the current attempt as cancelTasks leaves it: every
// execution CANCELED, except one that had finished.
func (e *executions) canceledView() []TaskLocation {
	out := e.view()
	for i := range out {
		if e.tasks[out[i].Name] != status.Finished {
			out[i].State = status.Canceled.String()
		}
	}
	return out
}
