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

// Vertex ids of the pipeline shape. A JobVertex is named by the operator
// at the head of its chain.
const (
	VertexSource = "source" // the Kafka source [-> ParseOrder [-> Filter]]
	VertexParse  = "parse"  // ParseOrder [-> Filter], when not chained to the source
	VertexFilter = "filter" // Filter, when not chained to ParseOrder
	VertexKeyed  = "window" // window or keyed process function [-> sink]
	VertexSink   = "sink"   // only when the sink is not chained
)

// Partitioner names as Flink's StreamPartitioner toString, which is the
// ship strategy a JobEdge shows: "HASH" is the KeyGroupStreamPartitioner of
// keyBy, "FORWARD" (ForwardPartitioner) keeps the subtask index,
// "REBALANCE" (RebalancePartitioner) round-robins records over every
// consumer subtask.
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

// HoldsSink reports whether the vertex's chain ends in the KafkaSink.
func (v Vertex) HoldsSink() bool {
	return len(v.Operators) > 0 && IsSinkOperator(v.Operators[len(v.Operators)-1])
}

// IsSinkOperator reports whether an operator name is the KafkaSink's.
func IsSinkOperator(name string) bool { return strings.HasPrefix(name, "Sink: ") }

// OperatorParseOrder is the name of the map that parses the Kafka record.
const OperatorParseOrder = "ParseOrder"

// IsFilterOperator reports whether an operator name is job.filter's.
func IsFilterOperator(name string) bool { return strings.HasPrefix(name, "Filter(") }

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

// SinkVertex is the id of the vertex whose chain ends in the sink: the
// keyed vertex when the sink is chained to it, else VertexSink.
func (g JobGraph) SinkVertex() string {
	for _, v := range g.Vertices {
		if v.HoldsSink() {
			return v.ID
		}
	}
	return ""
}

// Input is the edge into vertex id, or false for the source.
func (g JobGraph) Input(id string) (Edge, bool) {
	for _, e := range g.Edges {
		if e.To == id {
			return e, true
		}
	}
	return Edge{}, false
}

// operator is one operator of the pipeline before chaining: the vertex id it
// gives a chain it heads, its name, parallelism and the setting that gave it.
type operator struct {
	id, name    string
	parallelism int
	setting     string // job.*.parallelism, or parallelism.default when it follows the default
}

// operators is the job's pipeline, source first, each operator with its
// parallelism: job.source.parallelism for the source and the ParseOrder and
// Filter steps after it, job.window.parallelism for the keyed operator,
// job.sink.parallelism for the sink, each -1 taking parallelism.default.
func operators(c config.Config) []operator {
	setting := func(key string, p int) string {
		if p == config.ParallelismDefault {
			return "parallelism.default"
		}
		return key
	}
	src := setting("job.source.parallelism", c.SourceParallelism)
	ops := []operator{
		{VertexSource, "Source: " + c.SourceTopic, c.SourceSubtasks(), src},
		{VertexParse, OperatorParseOrder, c.SourceSubtasks(), src},
	}
	if c.Filter != "" {
		ops = append(ops, operator{VertexFilter, "Filter(" + c.Filter + ")", c.SourceSubtasks(), src})
	}
	return append(ops,
		operator{VertexKeyed, KeyedOperatorName(c), c.WindowSubtasks(), setting("job.window.parallelism", c.WindowParallelism)},
		operator{VertexSink, "Sink: " + c.SinkTopic, c.SinkSubtasks(), setting("job.sink.parallelism", c.SinkParallelism)})
}

// partitioner is the StreamPartitioner of the edge from up to down, as
// StreamGraph.addEdgeInternal picks it when the job sets none: keyBy's
// KeyGroupStreamPartitioner into the keyed operator, FORWARD between equal
// parallelisms, REBALANCE otherwise.
func partitioner(up, down operator) string {
	switch {
	case down.id == VertexKeyed:
		return PartitionHash
	case up.parallelism == down.parallelism:
		return PartitionForward
	}
	return PartitionRebalance
}

// Build makes the JobGraph of the configured job, chaining operators as
// StreamingJobGraphGenerator does: an operator joins its predecessor's
// chain when pipeline.operator-chaining.enabled is true and the edge
// between them is FORWARD (equal parallelism, no keyBy; isChainable), so
// the source chains ParseOrder and Filter, and the keyed operator chains the
// sink of the same parallelism. Every other edge starts a JobVertex of its
// own behind a network exchange. Errors: the parallelism/max parallelism
// preconditions of KeyGroupRangeAssignment for the keyed operator, and a
// parallelism above a configured pipeline.max-parallelism for any vertex,
// with Flink's messages.
func Build(c config.Config) (JobGraph, error) { return buildGraph(c, c.MaxParallelism) }

// BuildRestored is Build for a job started from a savepoint whose keyed
// state has keyGroups key groups: the keyed vertex keeps them (the other
// vertices hold no keyed state and are bounded only by a configured
// pipeline.max-parallelism).
func BuildRestored(c config.Config, keyGroups int) (JobGraph, error) { return buildGraph(c, keyGroups) }

func buildGraph(c config.Config, keyGroups int) (JobGraph, error) {
	ops := operators(c)
	for _, op := range ops {
		if err := keygroup.CheckParallelismBounds(op.parallelism); err != nil {
			return JobGraph{}, err
		}
	}
	g := JobGraph{JobName: "orders-per-minute"}
	for k, op := range ops {
		if k > 0 && c.OperatorChaining && partitioner(ops[k-1], op) == PartitionForward {
			v := &g.Vertices[len(g.Vertices)-1]
			v.Operators = append(v.Operators, op.name)
			continue
		}
		if k > 0 {
			g.Edges = append(g.Edges, Edge{From: g.Vertices[len(g.Vertices)-1].ID, To: op.id, Partitioner: partitioner(ops[k-1], op)})
		}
		g.Vertices = append(g.Vertices, Vertex{ID: op.id, Operators: []string{op.name}, Parallelism: op.parallelism})
		g.SlotsNeeded = max(g.SlotsNeeded, op.parallelism)
	}
	for i := range g.Vertices {
		g.Vertices[i].Name = strings.Join(g.Vertices[i].Operators, " -> ")
	}
	// a configured max parallelism is every vertex's, and the scheduler
	// refuses a vertex above it (ExecutionJobVertex); an operator that
	// follows parallelism.default is checked after the keyed operator's
	// preconditions, which refuse parallelism.default above it first
	aboveMax := func(explicit bool) error {
		if c.MaxParallelism == -1 {
			return nil
		}
		for _, op := range ops {
			if (op.setting != "parallelism.default") == explicit && op.parallelism > c.MaxParallelism {
				return fmt.Errorf("%s %d > pipeline.max-parallelism %d: Vertex %s's parallelism (%d) is higher than the max parallelism (%d). Please lower the parallelism or increase the max parallelism.",
					op.setting, op.parallelism, c.MaxParallelism, g.vertexOf(op.name).Name, op.parallelism, c.MaxParallelism)
			}
		}
		return nil
	}
	if err := aboveMax(true); err != nil {
		return JobGraph{}, err
	}
	wp := c.WindowSubtasks()
	maxP := keyGroups
	if maxP <= 0 {
		var err error
		if maxP, err = keygroup.DefaultMaxParallelism(wp); err != nil {
			return JobGraph{}, err
		}
	}
	if err := keygroup.CheckParallelismPreconditions(wp, maxP); err != nil {
		return JobGraph{}, err
	}
	if err := aboveMax(false); err != nil {
		return JobGraph{}, err
	}
	g.MaxParallelism = maxP
	return g, nil
}

// vertexOf is the vertex whose chain holds the operator named name.
func (g JobGraph) vertexOf(name string) Vertex {
	for _, v := range g.Vertices {
		for _, op := range v.Operators {
			if op == name {
				return v
			}
		}
	}
	return Vertex{}
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
