package jobgraph

import (
	"fmt"
	"strconv"
	"strings"
)

// ActorKind is what an actor is: which Flink component its name addresses.
type ActorKind uint8

// The kinds of actor (ActorID.Kind). The zero ActorKind is no actor.
const (
	ActorJobManager            ActorKind = 1 + iota // jobmanager: the JobMaster (with the Dispatcher's job)
	ActorResourceManager                            // resourcemanager
	ActorCheckpointCoordinator                      // checkpoint-coordinator
	ActorKafka                                      // kafka: the broker with the built-in generator
	ActorTaskManager                                // tm-N: a TaskExecutor (N from 1)
	ActorSubtask                                    // VERTEX-I or VERTEX-I#A: subtask I of a vertex, attempt A (0 unwritten)
	ActorInputChannel                               // SUBTASK/ch-K: the InputChannel of SUBTASK reading producer subtask K
)

// ActorID is an actor's address with its kind: the name envelopes carry in
// to and from and the log writes as actor, made by SubtaskName,
// ChannelName and TaskManagerName or one of the fixed names (names.go),
// and read back by ParseActorID. Two IDs are equal when their names are.
// The zero ActorID is no actor.
type ActorID struct {
	name string
	kind ActorKind
	// for a subtask or an input channel: the subtask's vertex, index and
	// attempt; for a channel also its producer's index; for a task manager
	// its number (index)
	vertex         string
	index, attempt int
	producer       int
}

// ParseActorID reads an actor name of the simulator's scheme, as
// SubtaskName, ChannelName and TaskManagerName write it (every number in
// its canonical decimal form) or a fixed name; anything else is an error
// naming it. Cost: one pass over the name.
func ParseActorID(name string) (ActorID, error) {
	switch name {
	case JobManagerName:
		return ActorID{name: name, kind: ActorJobManager}, nil
	case ResourceManagerName:
		return ActorID{name: name, kind: ActorResourceManager}, nil
	case CheckpointCoordinatorName:
		return ActorID{name: name, kind: ActorCheckpointCoordinator}, nil
	case KafkaName:
		return ActorID{name: name, kind: ActorKafka}, nil
	}
	if rest, ok := strings.CutPrefix(name, "tm-"); ok {
		if n, ok := canonicalInt(rest); ok && n >= 1 {
			return ActorID{name: name, kind: ActorTaskManager, index: n}, nil
		}
		return ActorID{}, fmt.Errorf("actor %q: a task manager is tm-N, N a whole number from 1", name)
	}
	subtask, channel, isChannel := strings.Cut(name, "/")
	id, err := parseSubtask(subtask)
	if err != nil {
		return ActorID{}, fmt.Errorf("actor %q: %v", name, err)
	}
	id.name = name
	if !isChannel {
		return id, nil
	}
	k, ok := strings.CutPrefix(channel, "ch-")
	if n, okN := canonicalInt(k); ok && okN {
		id.kind, id.producer = ActorInputChannel, n
		return id, nil
	}
	return ActorID{}, fmt.Errorf("actor %q: an input channel is SUBTASK/ch-K, K a producer's index", name)
}

// parseSubtask reads VERTEX-I or VERTEX-I#A (A from 1), VERTEX being one of
// the vertex IDs.
func parseSubtask(s string) (ActorID, error) {
	base, attempt, hasAttempt := strings.Cut(s, "#")
	i := strings.LastIndexByte(base, '-')
	if i < 0 {
		return ActorID{}, fmt.Errorf("not an actor of this simulator (want jobmanager, resourcemanager, checkpoint-coordinator, kafka, tm-N, VERTEX-I[#A] or VERTEX-I[#A]/ch-K)")
	}
	id := ActorID{kind: ActorSubtask, vertex: base[:i]}
	switch id.vertex {
	case VertexSource, VertexParse, VertexFilter, VertexKeyed, VertexSink:
	default:
		return ActorID{}, fmt.Errorf("%q is not a vertex (source, parse, filter, window, sink)", id.vertex)
	}
	var ok bool
	if id.index, ok = canonicalInt(base[i+1:]); !ok {
		return ActorID{}, fmt.Errorf("subtask index %q is not a whole number", base[i+1:])
	}
	if hasAttempt {
		if id.attempt, ok = canonicalInt(attempt); !ok || id.attempt < 1 {
			return ActorID{}, fmt.Errorf("attempt %q is not a whole number from 1", attempt)
		}
	}
	return id, nil
}

// canonicalInt reads a non-negative decimal written as strconv.Itoa writes
// it (no sign, no leading zero).
func canonicalInt(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && strconv.Itoa(n) == s
}

// Kind is what the actor is (0 for the zero ActorID).
func (a ActorID) Kind() ActorKind { return a.kind }

// Vertex is the vertex ID of a subtask or of an input channel's consumer
// ("" for other kinds).
func (a ActorID) Vertex() string { return a.vertex }

// Index is a subtask's index (of an input channel: its consumer's; of a
// task manager: its number); 0 for other kinds.
func (a ActorID) Index() int { return a.index }

// Attempt is a subtask's execution attempt (of an input channel: its
// consumer's); 0 for the first attempt and for other kinds.
func (a ActorID) Attempt() int { return a.attempt }
