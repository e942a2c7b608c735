package jobgraph

import (
	"errors"
	"reflect"
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

func TestBuildWithoutChaining(t *testing.T) {
	g := build(t, configWith(t, "pipeline.operator-chaining.enabled", "false"))
	want := []Vertex{
		{ID: VertexSource, Name: "Source: orders -> ParseOrder", Operators: []string{"Source: orders", "ParseOrder"}, Parallelism: 2},
		{ID: VertexKeyed, Name: defaultWindow, Operators: []string{defaultWindow}, Parallelism: 2},
		{ID: VertexSink, Name: "Sink: orders-per-minute", Operators: []string{"Sink: orders-per-minute"}, Parallelism: 2},
	}
	if !reflect.DeepEqual(g.Vertices, want) {
		t.Errorf("Vertices =\n%+v\nwant\n%+v", g.Vertices, want)
	}
	wantEdges := []Edge{
		{From: VertexSource, To: VertexKeyed, Partitioner: PartitionHash},
		{From: VertexKeyed, To: VertexSink, Partitioner: PartitionForward},
	}
	if !reflect.DeepEqual(g.Edges, wantEdges) {
		t.Errorf("Edges = %+v, want %+v", g.Edges, wantEdges)
	}
	if g.SlotsNeeded != 2 || g.MaxParallelism != 128 {
		t.Errorf("SlotsNeeded %d MaxParallelism %d, want 2 128", g.SlotsNeeded, g.MaxParallelism)
	}
	if v, ok := g.Vertex(VertexSink); !ok || v.Parallelism != 2 {
		t.Errorf("Vertex(%q) = %+v, %v", VertexSink, v, ok)
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
