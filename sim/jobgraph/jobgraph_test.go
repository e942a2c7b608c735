package jobgraph

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/keygroup"
)

// configWith returns the default configuration with settings applied by key,
// as a user would write them.
func configWith(t *testing.T, kv ...string) config.Config {
	t.Helper()
	c := config.Default()
	for i := 0; i+1 < len(kv); i += 2 {
		if err := c.Set(kv[i], kv[i+1]); err != nil {
			t.Fatalf("Set(%q, %q): %v", kv[i], kv[i+1], err)
		}
	}
	return c
}

func build(t *testing.T, c config.Config) JobGraph {
	t.Helper()
	g, err := Build(c)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return g
}

const defaultWindow = "Window(TumblingEventTimeWindows(60000), EventTimeTrigger, CountAggregate)"

func TestBuildDefaults(t *testing.T) {
	g := build(t, config.Default())
	want := JobGraph{
		JobName: "orders-per-minute",
		Vertices: []Vertex{
			{ID: VertexSource, Name: "Source: orders -> ParseOrder", Operators: []string{"Source: orders", "ParseOrder"}, Parallelism: 2},
			{ID: VertexKeyed, Name: defaultWindow + " -> Sink: orders-per-minute",
				Operators: []string{defaultWindow, "Sink: orders-per-minute"}, Parallelism: 2},
		},
		Edges: []Edge{{From: VertexSource, To: VertexKeyed, Partitioner: PartitionHash}},
		// p=2: min(max(roundUpToPowerOfTwo(2 + 1), 128), 32768) = min(max(4, 128), 32768)
		MaxParallelism: 128,
		SlotsNeeded:    2,
	}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("Build(Default()) =\n%+v\nwant\n%+v", g, want)
	}
	if v, ok := g.Vertex(VertexKeyed); !ok || v.Name != want.Vertices[1].Name {
		t.Errorf("Vertex(%q) = %+v, %v", VertexKeyed, v, ok)
	}
	if v, ok := g.Vertex(VertexSink); ok {
		t.Errorf("Vertex(%q) = %+v in a chained graph", VertexSink, v)
	}
	if _, ok := g.Vertex("nope"); ok {
		t.Errorf("Vertex(\"nope\") found a vertex")
	}
}

// pipeline.operator-chaining.enabled=false: every operator is a JobVertex
// of its own (StreamingJobGraphGenerator.isChainable needs chaining on), the
// edges between equal parallelisms FORWARD, keyBy's HASH.
func TestBuildWithoutChaining(t *testing.T) {
	g := build(t, configWith(t, "pipeline.operator-chaining.enabled", "false"))
	want := []Vertex{
		{ID: VertexSource, Name: "Source: orders", Operators: []string{"Source: orders"}, Parallelism: 2},
		{ID: VertexParse, Name: "ParseOrder", Operators: []string{"ParseOrder"}, Parallelism: 2},
		{ID: VertexKeyed, Name: defaultWindow, Operators: []string{defaultWindow}, Parallelism: 2},
		{ID: VertexSink, Name: "Sink: orders-per-minute", Operators: []string{"Sink: orders-per-minute"}, Parallelism: 2},
	}
	if !reflect.DeepEqual(g.Vertices, want) {
		t.Errorf("Vertices =\n%+v\nwant\n%+v", g.Vertices, want)
	}
	wantEdges := []Edge{
		{From: VertexSource, To: VertexParse, Partitioner: PartitionForward},
		{From: VertexParse, To: VertexKeyed, Partitioner: PartitionHash},
		{From: VertexKeyed, To: VertexSink, Partitioner: PartitionForward},
	}
	if !reflect.DeepEqual(g.Edges, wantEdges) {
		t.Errorf("Edges = %+v, want %+v", g.Edges, wantEdges)
	}
	if g.SlotsNeeded != 2 || g.MaxParallelism != 128 {
		t.Errorf("SlotsNeeded %d MaxParallelism %d, want 2 128", g.SlotsNeeded, g.MaxParallelism)
	}
	if v, ok := g.Vertex(VertexSink); !ok || v.Parallelism != 2 || !v.HoldsSink() || g.SinkVertex() != VertexSink {
		t.Errorf("Vertex(%q) = %+v, %v; SinkVertex %q", VertexSink, v, ok, g.SinkVertex())
	}
	// with a filter, Filter is a vertex of its own too, FORWARD from ParseOrder
	g = build(t, configWith(t, "pipeline.operator-chaining.enabled", "false", "job.filter", "amount > 100"))
	var ids []string
	for _, v := range g.Vertices {
		ids = append(ids, v.ID+"="+v.Name)
	}
	if want := []string{"source=Source: orders", "parse=ParseOrder", "filter=Filter(amount > 100)", "window=" + defaultWindow,
		"sink=Sink: orders-per-minute"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("vertices %q, want %q", ids, want)
	}
	if e, _ := g.Input(VertexFilter); e != (Edge{VertexParse, VertexFilter, PartitionForward}) {
		t.Errorf("edge into filter %+v", e)
	}
	if e, _ := g.Input(VertexKeyed); e != (Edge{VertexFilter, VertexKeyed, PartitionHash}) {
		t.Errorf("edge into window %+v", e)
	}
}

// The parallelism of each operator (source 2, window 3, sink 1), worked out
// as Flink's StreamGraph and StreamingJobGraphGenerator do: the source and
// ParseOrder share parallelism 2 and a FORWARD edge, so they chain; keyBy is
// HASH whatever the parallelisms; the window (3) and the sink (1) differ,
// so StreamGraph.addEdgeInternal gives their edge a RebalancePartitioner
// and isChainable refuses to chain them: the sink is a JobVertex of its own.
// The key groups come from the window's parallelism: min(max(
// roundUpToPowerOfTwo(3 + 3/2), 128), 32768) = min(max(4, 128), 32768) =
// 128. One slot-sharing group needs max(2, 3, 1) = 3 slots.
func TestBuildOperatorParallelism(t *testing.T) {
	g := build(t, configWith(t, "job.source.parallelism", "2", "job.window.parallelism", "3", "job.sink.parallelism", "1"))
	want := JobGraph{
		JobName: "orders-per-minute",
		Vertices: []Vertex{
			{ID: VertexSource, Name: "Source: orders -> ParseOrder", Operators: []string{"Source: orders", "ParseOrder"}, Parallelism: 2},
			{ID: VertexKeyed, Name: defaultWindow, Operators: []string{defaultWindow}, Parallelism: 3},
			{ID: VertexSink, Name: "Sink: orders-per-minute", Operators: []string{"Sink: orders-per-minute"}, Parallelism: 1},
		},
		Edges: []Edge{
			{From: VertexSource, To: VertexKeyed, Partitioner: PartitionHash},
			{From: VertexKeyed, To: VertexSink, Partitioner: PartitionRebalance},
		},
		MaxParallelism: 128,
		SlotsNeeded:    3,
	}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("Build =\n%+v\nwant\n%+v", g, want)
	}
	tests := []struct {
		name   string
		kv     []string
		shape  string // vertex(parallelism) joined by their edges
		slots  int
		maxPar int
	}{
		// the sink follows parallelism.default, not the window
		{"a wider window", []string{"job.window.parallelism", "3"},
			"source(2) HASH window(3) REBALANCE sink(2)", 3, 128},
		{"a wider source", []string{"job.source.parallelism", "4"},
			"source(4) HASH window(2)", 4, 128},
		{"the sink set equal to the window chains", []string{"parallelism.default", "1", "job.window.parallelism", "2", "job.sink.parallelism", "2"},
			"source(1) HASH window(2)", 2, 128},
		{"a wider sink", []string{"job.sink.parallelism", "5"},
			"source(2) HASH window(2) REBALANCE sink(5)", 5, 128},
		// 200 + 100 = 300 -> roundUpToPowerOfTwo 512
		{"key groups from the window's parallelism", []string{"job.window.parallelism", "200", "job.sink.parallelism", "-1"},
			"source(2) HASH window(200) REBALANCE sink(2)", 200, 512},
		{"without chaining, different parallelisms", []string{"pipeline.operator-chaining.enabled", "false", "job.sink.parallelism", "1"},
			"source(2) FORWARD parse(2) HASH window(2) REBALANCE sink(1)", 2, 128},
	}
	for _, tt := range tests {
		g := build(t, configWith(t, tt.kv...))
		shape := ""
		for i, v := range g.Vertices {
			if i > 0 {
				shape += " " + g.Edges[i-1].Partitioner + " "
			}
			shape += v.ID + "(" + strconv.Itoa(v.Parallelism) + ")"
		}
		if shape != tt.shape || g.SlotsNeeded != tt.slots || g.MaxParallelism != tt.maxPar {
			t.Errorf("%s: %s, %d slots, max parallelism %d; want %s, %d, %d", tt.name, shape, g.SlotsNeeded, g.MaxParallelism, tt.shape, tt.slots, tt.maxPar)
		}
	}
}

// A configured max parallelism bounds every JobVertex: the scheduler
// refuses a vertex above it with ExecutionJobVertex's JobException text,
// here after the setting that gave the parallelism. A job started from a
// savepoint keeps the savepoint's key groups (BuildRestored).
func TestBuildRefusesOperatorAboveMaxParallelism(t *testing.T) {
	tests := []struct {
		kv   []string
		want string
	}{
		{[]string{"pipeline.max-parallelism", "4", "job.sink.parallelism", "5"},
			"job.sink.parallelism 5 > pipeline.max-parallelism 4: Vertex Sink: orders-per-minute's parallelism (5) is higher than the max parallelism (4). Please lower the parallelism or increase the max parallelism."},
		{[]string{"pipeline.max-parallelism", "4", "job.source.parallelism", "8"},
			"job.source.parallelism 8 > pipeline.max-parallelism 4: Vertex Source: orders -> ParseOrder's parallelism (8) is higher than the max parallelism (4). Please lower the parallelism or increase the max parallelism."},
		{[]string{"pipeline.max-parallelism", "4", "job.window.parallelism", "6"},
			"job.window.parallelism 6 > pipeline.max-parallelism 4: Vertex " + defaultWindow + "'s parallelism (6)"},
		// the keyed operator following parallelism.default: KeyGroupRangeAssignment's message, as before
		{[]string{"pipeline.max-parallelism", "4", "parallelism.default", "8", "job.source.parallelism", "2"},
			"Maximum parallelism must not be smaller than parallelism."},
		// a source following parallelism.default above it
		{[]string{"pipeline.max-parallelism", "4", "parallelism.default", "8", "job.window.parallelism", "2"},
			"parallelism.default 8 > pipeline.max-parallelism 4: Vertex Source: orders -> ParseOrder's parallelism (8) is higher"},
	}
	for _, tt := range tests {
		c := configWith(t, tt.kv...)
		if g, err := Build(c); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: Build = %+v, %v; want %q", tt.kv, g, err, tt.want)
		}
	}
	// without a configured max parallelism each vertex has its own default,
	// never below its parallelism: a source of 300 next to a window of 2
	if _, err := Build(configWith(t, "job.source.parallelism", "300")); err != nil {
		t.Errorf("source 300, window 2: %v", err)
	}
	g, err := BuildRestored(configWith(t, "parallelism.default", "3"), 256)
	if err != nil || g.MaxParallelism != 256 {
		t.Errorf("BuildRestored(p 3, 256 key groups) = %d key groups, %v", g.MaxParallelism, err)
	}
	if _, err := BuildRestored(configWith(t, "parallelism.default", "3"), 2); err == nil {
		t.Errorf("BuildRestored(p 3, 2 key groups) accepted")
	}
}

func TestBuildFilterAndTopics(t *testing.T) {
	g := build(t, configWith(t,
		"job.filter", "amount > 100",
		"job.source.topic", "clicks",
		"job.sink.topic", "out"))
	src, _ := g.Vertex(VertexSource)
	wantOps := []string{"Source: clicks", "ParseOrder", "Filter(amount > 100)"}
	if !reflect.DeepEqual(src.Operators, wantOps) || src.Name != "Source: clicks -> ParseOrder -> Filter(amount > 100)" {
		t.Errorf("source vertex = %+v, want operators %q", src, wantOps)
	}
	keyed, _ := g.Vertex(VertexKeyed)
	if got := keyed.Operators[len(keyed.Operators)-1]; got != "Sink: out" {
		t.Errorf("last keyed operator = %q, want %q", got, "Sink: out")
	}
}

func TestBuildParallelism(t *testing.T) {
	tests := []struct {
		parallelism, maxParallelism int
		wantMax                     int
	}{
		// default max parallelism: min(max(roundUpToPowerOfTwo(p + p/2), 128), 32768)
		{parallelism: 1, maxParallelism: -1, wantMax: 128},
		{parallelism: 85, maxParallelism: -1, wantMax: 128}, // 127 -> 128
		{parallelism: 86, maxParallelism: -1, wantMax: 256}, // 129 -> 256
		{parallelism: 100, maxParallelism: -1, wantMax: 256},
		{parallelism: 1000, maxParallelism: -1, wantMax: 2048},
		{parallelism: 21846, maxParallelism: -1, wantMax: 32768}, // 32769 -> 65536, capped
		{parallelism: 32768, maxParallelism: -1, wantMax: 32768},
		// configured max parallelism is kept
		{parallelism: 4, maxParallelism: 4, wantMax: 4},
		{parallelism: 3, maxParallelism: 7, wantMax: 7},
		{parallelism: 2, maxParallelism: 32768, wantMax: 32768},
	}
	for _, tt := range tests {
		c := config.Default()
		c.Parallelism, c.MaxParallelism = tt.parallelism, tt.maxParallelism
		g := build(t, c)
		if g.MaxParallelism != tt.wantMax || g.SlotsNeeded != tt.parallelism {
			t.Errorf("p=%d max=%d: MaxParallelism %d SlotsNeeded %d, want %d %d",
				tt.parallelism, tt.maxParallelism, g.MaxParallelism, g.SlotsNeeded, tt.wantMax, tt.parallelism)
		}
		for _, v := range g.Vertices {
			if v.Parallelism != tt.parallelism {
				t.Errorf("p=%d: vertex %s has parallelism %d", tt.parallelism, v.ID, v.Parallelism)
			}
		}
	}
}

func TestBuildRefusesParallelism(t *testing.T) {
	tests := []struct {
		parallelism, maxParallelism int
		want                        string
	}{
		{parallelism: 8, maxParallelism: 4, want: "Maximum parallelism must not be smaller than parallelism."},
		{parallelism: 129, maxParallelism: 128, want: "Maximum parallelism must not be smaller than parallelism."},
		{parallelism: 0, maxParallelism: -1, want: "Operator parallelism not within bounds: 0"},
		{parallelism: -3, maxParallelism: 128, want: "Operator parallelism not within bounds: -3"},
		{parallelism: 32769, maxParallelism: -1, want: "Operator parallelism not within bounds: 32769"},
		{parallelism: 2, maxParallelism: 32769, want: "Operator parallelism not within bounds: 32769"},
	}
	for _, tt := range tests {
		c := config.Default()
		c.Parallelism, c.MaxParallelism = tt.parallelism, tt.maxParallelism
		g, err := Build(c)
		if err == nil {
			t.Errorf("p=%d max=%d: Build = %+v, want error %q", tt.parallelism, tt.maxParallelism, g, tt.want)
			continue
		}
		var iae *keygroup.IllegalArgumentError
		if !errors.As(err, &iae) {
			t.Errorf("p=%d max=%d: error %T, want *keygroup.IllegalArgumentError", tt.parallelism, tt.maxParallelism, err)
		}
		if err.Error() != tt.want {
			t.Errorf("p=%d max=%d: error %q, want %q", tt.parallelism, tt.maxParallelism, err.Error(), tt.want)
		}
		if !reflect.DeepEqual(g, JobGraph{}) {
			t.Errorf("p=%d max=%d: Build returned %+v with its error", tt.parallelism, tt.maxParallelism, g)
		}
	}
	// The same pair set through the configuration keys.
	_, err := Build(configWith(t, "parallelism.default", "8", "pipeline.max-parallelism", "4"))
	if err == nil || err.Error() != "Maximum parallelism must not be smaller than parallelism." {
		t.Errorf("parallelism.default=8 pipeline.max-parallelism=4: error %v", err)
	}
}

func TestKeyedOperatorName(t *testing.T) {
	tests := []struct {
		operator, timeKind, window, aggregate string
		size, slide, gap                      time.Duration
		want                                  string
	}{
		{"window", "event-time", "tumbling", "count", time.Minute, 0, 0,
			"Window(TumblingEventTimeWindows(60000), EventTimeTrigger, CountAggregate)"},
		{"window", "processing-time", "tumbling", "sum", 5 * time.Second, 0, 0,
			"Window(TumblingProcessingTimeWindows(5000), ProcessingTimeTrigger, SumAggregate)"},
		{"window", "event-time", "sliding", "min", time.Minute, 10 * time.Second, 0,
			"Window(SlidingEventTimeWindows(60000, 10000), EventTimeTrigger, MinAggregate)"},
		{"window", "processing-time", "sliding", "max", 30 * time.Second, 1500 * time.Millisecond, 0,
			"Window(SlidingProcessingTimeWindows(30000, 1500), ProcessingTimeTrigger, MaxAggregate)"},
		{"window", "event-time", "session", "avg", time.Minute, 0, 30 * time.Second,
			"Window(EventTimeSessionWindows(30000), EventTimeTrigger, AvgAggregate)"},
		{"window", "processing-time", "session", "count", 0, 0, 2 * time.Minute,
			"Window(ProcessingTimeSessionWindows(120000), ProcessingTimeTrigger, CountAggregate)"},
		{"window", "event-time", "tumbling", "avg", 1500 * time.Microsecond, 0, 0,
			"Window(TumblingEventTimeWindows(1), EventTimeTrigger, AvgAggregate)"}, // whole milliseconds
		{"process", "event-time", "tumbling", "count", time.Minute, 0, 0, "KeyedProcess"},
		{"process", "processing-time", "session", "sum", 0, 0, time.Second, "KeyedProcess"},
	}
	for _, tt := range tests {
		c := config.Default()
		c.Operator, c.TimeCharacteristic = config.OperatorKind(tt.operator), config.TimeCharacteristic(tt.timeKind)
		c.WindowType, c.Aggregate = config.WindowType(tt.window), config.AggregateKind(tt.aggregate)
		c.WindowSize, c.WindowSlide, c.WindowGap = tt.size, tt.slide, tt.gap
		if got := KeyedOperatorName(c); got != tt.want {
			t.Errorf("KeyedOperatorName(%s %s %s %s) = %q, want %q", tt.operator, tt.timeKind, tt.window, tt.aggregate, got, tt.want)
		}
	}
	for _, agg := range []string{"count", "sum", "min", "max", "avg"} {
		c := configWith(t, "job.window.aggregate", agg, "job.window.type", "sliding", "job.window.slide", "15 s")
		g := build(t, c)
		v, _ := g.Vertex(VertexKeyed)
		if v.Operators[0] != KeyedOperatorName(c) {
			t.Errorf("%s: keyed vertex head %q, want %q", agg, v.Operators[0], KeyedOperatorName(c))
		}
	}
}

func TestNames(t *testing.T) {
	subtasks := []struct {
		vertex         string
		index, attempt int
		want           string
	}{
		{VertexSource, 0, 0, "source-0"},
		{VertexKeyed, 1, 0, "window-1"},
		{VertexKeyed, 1, 2, "window-1#2"},
		{VertexSink, 11, 1, "sink-11#1"},
	}
	for _, tt := range subtasks {
		if got := SubtaskName(tt.vertex, tt.index, tt.attempt); got != tt.want {
			t.Errorf("SubtaskName(%q, %d, %d) = %q, want %q", tt.vertex, tt.index, tt.attempt, got, tt.want)
		}
	}
	channels := []struct {
		consumer string
		producer int
		want     string
	}{
		{"window-0", 0, "window-0/ch-0"},
		{"window-1#2", 3, "window-1#2/ch-3"},
	}
	for _, tt := range channels {
		if got := ChannelName(tt.consumer, tt.producer); got != tt.want {
			t.Errorf("ChannelName(%q, %d) = %q, want %q", tt.consumer, tt.producer, got, tt.want)
		}
	}
	for i, want := range []string{"tm-1", "tm-2", "tm-3"} {
		if got := TaskManagerName(i); got != want {
			t.Errorf("TaskManagerName(%d) = %q, want %q", i, got, want)
		}
	}
	if got := TaskManagerName(9); got != "tm-10" {
		t.Errorf("TaskManagerName(9) = %q, want tm-10", got)
	}
}

func TestBaseSubtaskName(t *testing.T) {
	for give, want := range map[string]string{"window-1#2": "window-1", "source-0": "source-0", SubtaskName("sink", 3, 7): "sink-3"} {
		if got := BaseSubtaskName(give); got != want {
			t.Errorf("BaseSubtaskName(%q) = %q, want %q", give, got, want)
		}
	}
}
