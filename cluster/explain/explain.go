// Package explain computes what `flinksim explain` shows: where a key goes
// (KeyGroupRangeAssignment), which reader owns each partition
// (KafkaSourceEnumerator.getSplitOwner), which windows an element falls in
// and when they are cleaned up (WindowAssigner, WindowOperator), and how a
// job is laid out (vertices, edges and channels, slots, key groups,
// splits). The rules are sim/'s own; this package puts their answers
// together, as the JSON explain --json prints (field order is the output's).
package explain

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/keygroup"
	"github.com/flinksim/flinksim/sim/source"
	"github.com/flinksim/flinksim/sim/window"
)

// Key is the JSON of "explain key". The first seven fields are
// the documented interface; the rest add context.
type Key struct {
	HashCode              int32  `json:"hash_code"`
	MurmurHash            int32  `json:"murmur_hash"`
	KeyGroup              int    `json:"key_group"`
	Subtask               int    `json:"subtask"`
	KeyGroupRange         [2]int `json:"key_group_range"` // inclusive [start, end]
	MaxParallelism        int    `json:"max_parallelism"`
	Key                   string `json:"key"`
	KeyType               string `json:"key_type"`
	Parallelism           int    `json:"parallelism"`
	MaxParallelismDefault bool   `json:"max_parallelism_default"` // true when computed, not given
}

// SplitAssignment is one partition's owner in "explain split" JSON.
type SplitAssignment struct {
	Partition int `json:"partition"`
	Reader    int `json:"reader"`
}

// Splits is the JSON of "explain split". Assignments and
// IdleReaders are the documented interface; the rest add context.
type Splits struct {
	Assignments   []SplitAssignment `json:"assignments"`  // by partition, ascending
	IdleReaders   []int             `json:"idle_readers"` // ascending; [] when none
	Topic         string            `json:"topic"`
	TopicHashCode int32             `json:"topic_hash_code"`
	Partitions    int               `json:"partitions"`
	Readers       int               `json:"readers"`
	StartIndex    int               `json:"start_index"` // the reader of partition 0
	Note          string            `json:"note,omitempty"`
}

// Window is one window in "explain window" output; all values are
// epoch milliseconds.
type Window struct {
	Start        int64 `json:"start"`
	End          int64 `json:"end"`
	MaxTimestamp int64 `json:"max_timestamp"`
	CleanupTime  int64 `json:"cleanup_time"`
}

// Windows is the JSON of "explain window".
type Windows struct {
	Windows []Window `json:"windows"`
}

// JobVertex is one JobVertex in "explain job" JSON.
type JobVertex struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Parallelism int      `json:"parallelism"`
	Operators   []string `json:"operators"`
}

// JobEdge is one JobEdge: its ship strategy, and how many channels
// it makes (producer subtasks x the consumer subtasks each writes to).
type JobEdge struct {
	From         string `json:"from"`
	To           string `json:"to"`
	ShipStrategy string `json:"ship_strategy"`
	Channels     int    `json:"channels"`
}

// KeyGroups is the key-group range of one keyed subtask.
type KeyGroups struct {
	Subtask string `json:"subtask"`
	Start   int    `json:"start"`
	End     int    `json:"end"`
}

// Job is the JSON of "explain job".
type Job struct {
	JobName        string      `json:"job_name"`
	Vertices       []JobVertex `json:"vertices"`
	Edges          []JobEdge   `json:"edges"`
	MaxParallelism int         `json:"max_parallelism"`
	SlotsNeeded    int         `json:"slots_needed"`
	SlotsOffered   int         `json:"slots_offered"` // sim.taskmanagers x taskmanager.numberOfTaskSlots
	SlotsPerTM     int         `json:"-"`
	KeyGroups      []KeyGroups `json:"key_groups"`
	Slots          [][]string  `json:"slots"`  // slot i: the subtasks it holds
	Splits         [][]int     `json:"splits"` // source reader i: the partitions it owns
}

// KeyOf is where key (of key type kt, Java hashCode hash) goes at
// parallelism p and max parallelism m (maxDefault: m was computed, not
// given), which KeyGroupRangeAssignment's preconditions must allow
// (keygroup.CheckParallelismPreconditions).
func KeyOf(key string, kt keygroup.KeyType, hash int32, p, m int, maxDefault bool) (Key, error) {
	murmur := keygroup.MurmurHash(hash)
	kg := keygroup.AssignToKeyGroup(hash, m)
	subtask := keygroup.OperatorIndexForKeyGroup(m, p, kg)
	rng, err := keygroup.RangeForOperatorIndex(m, p, subtask)
	if err != nil {
		return Key{}, err
	}
	res := Key{
		HashCode:              hash,
		MurmurHash:            murmur,
		KeyGroup:              kg,
		Subtask:               subtask,
		KeyGroupRange:         [2]int{rng.Start, rng.End},
		MaxParallelism:        m,
		Key:                   key,
		KeyType:               kt.String(),
		Parallelism:           p,
		MaxParallelismDefault: maxDefault,
	}
	return res, nil
}

// SplitsOf is KafkaSourceEnumerator.getSplitOwner over the n partitions of
// topic and its readers (at least 1): each partition's owner, the readers
// that own none, and each reader's partitions (owned, by reader).
func SplitsOf(topic string, n, readers int) (res Splits, owned [][]int) {
	res = Splits{
		Assignments:   make([]SplitAssignment, n),
		IdleReaders:   []int{},
		Topic:         topic,
		TopicHashCode: keygroup.StringHashCode(topic),
		Partitions:    n,
		Readers:       readers,
		StartIndex:    source.SplitOwner(topic, 0, readers),
	}
	owned = make([][]int, readers)
	for p := range n {
		r := source.SplitOwner(topic, p, readers)
		res.Assignments[p] = SplitAssignment{Partition: p, Reader: r}
		owned[r] = append(owned[r], p)
	}
	for r, ps := range owned {
		if len(ps) == 0 {
			res.IdleReaders = append(res.IdleReaders, r)
		}
	}
	if len(res.IdleReaders) > 0 {
		res.Note = idleReaderNote(res.IdleReaders)
	}
	return res, owned
}

// WindowsOf is every window assigner puts an element of event time ts in
// (WindowAssigner.assignWindows), by start, each with its cleanup time at
// allowed lateness lateness (ms).
func WindowsOf(assigner window.WindowAssigner, ts, lateness int64) (Windows, error) {
	ws, err := assigner.AssignWindows(ts, 0)
	if err != nil {
		return Windows{}, err
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].Start < ws[j].Start })

	res := Windows{Windows: make([]Window, 0, len(ws))}
	for _, w := range ws {
		cleanup := w.MaxTimestamp() + lateness
		if cleanup < w.MaxTimestamp() {
			cleanup = math.MaxInt64 // WindowOperator.cleanupTime caps an overflow
		}
		res.Windows = append(res.Windows, Window{Start: w.Start, End: w.End, MaxTimestamp: w.MaxTimestamp(), CleanupTime: cleanup})
	}
	return res, nil
}

// JobOf lays g out as explain job shows it: its vertices and edges with
// their channels, the slots (slot i holds subtask i of every vertex), the
// keyed vertex's key-group ranges and the source readers' partitions
// (getSplitOwner), with the slots c's cluster offers.
func JobOf(g jobgraph.JobGraph, c config.Config) Job {
	res := Job{JobName: g.JobName, MaxParallelism: g.MaxParallelism, SlotsNeeded: g.SlotsNeeded,
		SlotsOffered: c.TaskManagers * c.Slots(), SlotsPerTM: c.Slots(),
		KeyGroups: []KeyGroups{}, Slots: make([][]string, g.SlotsNeeded)}
	for _, v := range g.Vertices {
		res.Vertices = append(res.Vertices, JobVertex{v.ID, v.Name, v.Parallelism, v.Operators})
		for i := 0; i < v.Parallelism; i++ {
			res.Slots[i] = append(res.Slots[i], jobgraph.SubtaskName(v.ID, i, 0))
		}
	}
	for _, e := range g.Edges {
		up, _ := g.Vertex(e.From)
		down, _ := g.Vertex(e.To)
		n := up.Parallelism * down.Parallelism
		if e.Partitioner == jobgraph.PartitionForward {
			n = up.Parallelism
		}
		res.Edges = append(res.Edges, JobEdge{e.From, e.To, e.Partitioner, n})
	}
	if keyed, ok := g.Vertex(jobgraph.VertexKeyed); ok {
		for i := 0; i < keyed.Parallelism; i++ {
			r, _ := keygroup.RangeForOperatorIndex(g.MaxParallelism, keyed.Parallelism, i) // Build checked the preconditions
			res.KeyGroups = append(res.KeyGroups, KeyGroups{jobgraph.SubtaskName(keyed.ID, i, 0), r.Start, r.End})
		}
	}
	src, _ := g.Vertex(jobgraph.VertexSource)
	res.Splits = make([][]int, src.Parallelism)
	for r := range res.Splits {
		res.Splits[r] = []int{}
	}
	for p := 0; p < c.SourcePartitions; p++ {
		r := source.SplitOwner(c.SourceTopic, p, src.Parallelism)
		res.Splits[r] = append(res.Splits[r], p)
	}
	return res
}

// idleReaderNote says what a reader without a split does to the
// watermarks (the split result's Note).
func idleReaderNote(idle []int) string {
	who := "reader " + JoinInts(idle) + " owns"
	if len(idle) > 1 {
		who = "readers " + JoinInts(idle) + " own"
	}
	return fmt.Sprintf("%s no split. A reader without a split does not go idle by itself: "+
		"it holds the watermark of every downstream operator at Long.MIN_VALUE (%d), so event-time "+
		"windows never fire, unless the WatermarkStrategy sets withIdleness(...).", who, int64(math.MinInt64))
}

// JoinInts is xs as the notes and tables list them: "1, 2, 3".
func JoinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
