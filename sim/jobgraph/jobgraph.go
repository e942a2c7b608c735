// Package jobgraph turns the job's settings into Flink's JobGraph: the
// operators of the one pipeline shape flinksim runs, chained into JobVertices
// as StreamingJobGraphGenerator chains them, with the partitioner of each
// edge and the slots the single slot-sharing group needs.
package jobgraph

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/keygroup"
)

// Vertex ids of the pipeline shape.
const (
	VertexSource = "source" // Kafka source -> ParseOrder [-> Filter]
	VertexKeyed  = "window" // window or keyed process function [-> sink]
	VertexSink   = "sink"   // only when the sink is not chained
)

// Partitioner names as Flink's StreamPartitioner toString: "HASH" is the
// KeyGroupStreamPartitioner of keyBy, "FORWARD" keeps the subtask index,
// "REBALANCE" round-robins.
const (
	PartitionHash      = "HASH"
	PartitionForward   = "FORWARD"
	PartitionRebalance = "REBALANCE"
)

// Vertex is one JobVertex: a chain of operators run by Parallelism
// subtasks, each in one slot of the slot-sharing group.
type Vertex struct {
	ID          string
	Name        string   // Flink's task name: operator names joined by " -> "
	Operators   []string // head first
	Parallelism int
}

// Edge is a JobEdge between two vertices.
type Edge struct {
	From, To    string
	Partitioner string
}

// JobGraph is the job as the JobManager schedules it.
type JobGraph struct {
	JobName        string
	Vertices       []Vertex // topological order
	Edges          []Edge
	MaxParallelism int // number of key groups of the keyed vertex
	// SlotsNeeded is the number of slots of the single slot-sharing group:
	// the highest parallelism of its vertices (SlotSharingGroup semantics).
	SlotsNeeded int
}

// Vertex returns the vertex with id, or false.
func (g JobGraph) Vertex(id string) (Vertex, bool) {
	for _, v := range g.Vertices {
		if v.ID == id {
			return v, true
		}
	}
	return Vertex{}, false
}

// Build makes the JobGraph of the configured job. All operators run at
// parallelism.default; the keyed operator and the sink chain when
// pipeline.operator-chaining.enabled is true (same parallelism and a forward
// edge, as StreamingJobGraphGenerator.isChainable requires). The source and
// its parse/filter steps always chain. Errors: the parallelism/max
// parallelism preconditions of KeyGroupRangeAssignment, with Flink's message.
func Build(c config.Config) (JobGraph, error) {
	p := c.Parallelism
	maxP := c.MaxParallelism
	if maxP <= 0 {
		var err error
		if maxP, err = keygroup.DefaultMaxParallelism(p); err != nil {
			return JobGraph{}, err
		}
	}
	if err := keygroup.CheckParallelismPreconditions(p, maxP); err != nil {
		return JobGraph{}, err
	}
	src := []string{"Source: " + c.SourceTopic, "ParseOrder"}
	if c.Filter != "" {
		src = append(src, "Filter("+c.Filter+")")
	}
	keyed := []string{KeyedOperatorName(c)}
	sink := "Sink: " + c.SinkTopic
	g := JobGraph{JobName: "orders-per-minute", MaxParallelism: maxP, SlotsNeeded: p}
	g.Vertices = append(g.Vertices, Vertex{ID: VertexSource, Operators: src, Parallelism: p})
	if c.OperatorChaining {
		g.Vertices = append(g.Vertices, Vertex{ID: VertexKeyed, Operators: append(keyed, sink), Parallelism: p})
		g.Edges = []Edge{{VertexSource, VertexKeyed, PartitionHash}}
	} else {
		g.Vertices = append(g.Vertices,
			Vertex{ID: VertexKeyed, Operators: keyed, Parallelism: p},
			Vertex{ID: VertexSink, Operators: []string{sink}, Parallelism: p})
		g.Edges = []Edge{{VertexSource, VertexKeyed, PartitionHash}, {VertexKeyed, VertexSink, PartitionForward}}
	}
	for i := range g.Vertices {
		g.Vertices[i].Name = strings.Join(g.Vertices[i].Operators, " -> ")
	}
	return g, nil
}

// KeyedOperatorName names the keyed operator as Flink's web UI does, e.g.
// "Window(TumblingEventTimeWindows(60000), EventTimeTrigger, CountAggregate)".
func KeyedOperatorName(c config.Config) string {
	if c.Operator == config.OperatorProcess {
		return "KeyedProcess"
	}
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	timeKind, trigger := "EventTime", "EventTimeTrigger"
	if c.TimeCharacteristic == config.ProcessingTime {
		timeKind, trigger = "ProcessingTime", "ProcessingTimeTrigger"
	}
	var assigner string
	switch c.WindowType {
	case "sliding":
		assigner = fmt.Sprintf("Sliding%sWindows(%s, %s)", timeKind, ms(c.WindowSize), ms(c.WindowSlide))
	case "session":
		assigner = fmt.Sprintf("%sSessionWindows(%s)", timeKind, ms(c.WindowGap))
	default:
		assigner = fmt.Sprintf("Tumbling%sWindows(%s)", timeKind, ms(c.WindowSize))
	}
	agg := "CountAggregate"
	if a := string(c.Aggregate); a != "" {
		agg = strings.ToUpper(a[:1]) + a[1:] + "Aggregate"
	}
	return fmt.Sprintf("Window(%s, %s, %s)", assigner, trigger, agg)
}

// SubtaskName is the actor name of subtask index of a vertex, e.g.
// "window-1" (attempt 0) or "window-1#2" (attempt 2).
func SubtaskName(vertexID string, index, attempt int) string {
	s := vertexID + "-" + strconv.Itoa(index)
	if attempt > 0 {
		s += "#" + strconv.Itoa(attempt)
	}
	return s
}

// BaseSubtaskName is SubtaskName without the attempt: "window-1#2" ->
// "window-1", the task as the CheckpointCoordinator knows it across attempts.
func BaseSubtaskName(name string) string {
	if i := strings.IndexByte(name, '#'); i >= 0 {
		return name[:i]
	}
	return name
}

// ChannelName is the actor name of the InputChannel of consumer subtask
// consumer that reads from producer subtask index producerIndex.
func ChannelName(consumer string, producerIndex int) string {
	return consumer + "/ch-" + strconv.Itoa(producerIndex)
}

// TaskManagerName is the name of the i-th task manager (0-based): tm-1, tm-2, ...
func TaskManagerName(i int) string { return "tm-" + strconv.Itoa(i+1) }
