package jobgraph

import (
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestParseActorID(t *testing.T) {
	tests := []struct {
		give                     string
		kind                     ActorKind
		vertex                   string
		index, attempt, producer int
		task, consumer           string
	}{
		{give: "jobmanager", kind: ActorJobManager, task: "jobmanager"},
		{give: "resourcemanager", kind: ActorResourceManager, task: "resourcemanager"},
		{give: "checkpoint-coordinator", kind: ActorCheckpointCoordinator, task: "checkpoint-coordinator"},
		{give: "kafka", kind: ActorKafka, task: "kafka"},
		{give: "tm-12", kind: ActorTaskManager, index: 12, task: "tm-12"},
		{give: "window-0", kind: ActorSubtask, vertex: "window", task: "window-0"},
		{give: "source-3#2", kind: ActorSubtask, vertex: "source", index: 3, attempt: 2, task: "source-3"},
		{give: "window-0#1/ch-1", kind: ActorInputChannel, vertex: "window", attempt: 1, producer: 1, task: "window-0", consumer: "window-0#1"},
		{give: "sink-10/ch-0", kind: ActorInputChannel, vertex: "sink", index: 10, task: "sink-10", consumer: "sink-10"},
	}
	for _, tt := range tests {
		id, err := ParseActorID(tt.give)
		if err != nil {
			t.Fatalf("%s: %v", tt.give, err)
		}
		if id.String() != tt.give || id.Kind() != tt.kind || id.Vertex() != tt.vertex || id.Index() != tt.index ||
			id.Attempt() != tt.attempt || id.Producer() != tt.producer || id.Task().String() != tt.task || id.Consumer().String() != tt.consumer {
			t.Errorf("%s: got %s kind=%s vertex=%q index=%d attempt=%d producer=%d task=%s consumer=%q", tt.give, id, id.Kind(),
				id.Vertex(), id.Index(), id.Attempt(), id.Producer(), id.Task(), id.Consumer())
		}
	}
}

func TestParseActorIDRefuses(t *testing.T) {
	for _, give := range []string{"", "scheduler", "user", "tm-0", "tm-01", "tm-x", "tm-", "window", "window-", "window-01",
		"window-1#0", "window-1#", "window-1#x", "map-1", "window-1/ch-", "window-1/ch-01", "window-1/x-1", "window--1"} {
		if id, err := ParseActorID(give); err == nil {
			t.Errorf("%q: parsed as %s (%s), want an error", give, id, id.Kind())
		} else if !strings.Contains(err.Error(), strconv.Quote(give)) {
			t.Errorf("%q: error %q does not name it", give, err)
		}
	}
}

// Every name SubtaskName, ChannelName and TaskManagerName make reads back
// as what made it, with the BaseSubtaskName as its task.
func TestActorIDRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		vertex := rapid.SampledFrom([]string{VertexSource, VertexParse, VertexFilter, VertexKeyed, VertexSink}).Draw(t, "vertex")
		index := rapid.IntRange(0, 32767).Draw(t, "index")
		attempt := rapid.IntRange(0, 1000).Draw(t, "attempt")
		name := SubtaskName(vertex, index, attempt)
		id, err := ParseActorID(name)
		if err != nil || id.Kind() != ActorSubtask || id.Vertex() != vertex || id.Index() != index || id.Attempt() != attempt ||
			id.Task().String() != BaseSubtaskName(name) {
			t.Fatalf("%s: %+v, %v", name, id, err)
		}
		producer := rapid.IntRange(0, 32767).Draw(t, "producer")
		ch, err := ParseActorID(ChannelName(name, producer))
		if err != nil || ch.Kind() != ActorInputChannel || ch.Producer() != producer || ch.Consumer() != id {
			t.Fatalf("%s: %+v, %v", ChannelName(name, producer), ch, err)
		}
		tm := rapid.IntRange(0, 1<<20).Draw(t, "tm")
		if id, err := ParseActorID(TaskManagerName(tm)); err != nil || id.Kind() != ActorTaskManager || id.Index() != tm+1 {
			t.Fatalf("%s: %+v, %v", TaskManagerName(tm), id, err)
		}
	})
}

func FuzzParseActorID(f *testing.F) {
	for _, s := range []string{"window-0#1/ch-1", "tm-3", "kafka", "source-2", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		id, err := ParseActorID(name)
		if err != nil {
			return
		}
		// what parses is named as it was read, and reads back the same
		if id.String() != name || id.Kind() == 0 {
			t.Fatalf("%q read as %q kind %d", name, id, id.Kind())
		}
		if again, err := ParseActorID(id.Task().String()); err != nil || again != id.Task() {
			t.Fatalf("%q: task %q reads back as %+v, %v", name, id.Task(), again, err)
		}
	})
}
