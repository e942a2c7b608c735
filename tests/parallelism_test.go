package tests

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/keygroup"
)

// Per-operator parallelism (job.source.parallelism, job.window.parallelism,
// job.sink.parallelism): source 2 -> window 3 -> sink 1 on three
// TaskManagers of one slot. The JobGraph has three vertices (the window and
// the sink cannot chain: their parallelisms differ), keyBy is HASH and
// window -> sink REBALANCE. Every window result is the oracle's count, and
// each key fires on the window subtask whose key-group range holds its key
// group: 128 key groups over 3 subtasks are [0,42], [43,85], [86,127]
// (KeyGroupRangeAssignment: start = ceil(i*128/3), end = floor(((i+1)*128-1)/3)).
func TestPerOperatorParallelism(t *testing.T) {
	cfg := settings(t, "job.source.parallelism=2", "job.window.parallelism=3", "job.sink.parallelism=1",
		"sim.taskmanagers=3", "job.window.size=15 s")
	recs := readEvents(t, dataPath("playground-clicks.jsonl"), cfg)
	res, log := run(t, cfg, cluster.Options{Events: recs})
	if res.JobStatus != "FINISHED" {
		t.Fatalf("job %s", res.JobStatus)
	}
	evs := parseLog(t, log)
	g := eventsOf(evs, "job_graph")
	if len(g) != 1 {
		t.Fatalf("%d job_graph events", len(g))
	}
	var verts []string
	for _, v := range g[0]["vertices"].([]any) {
		m := v.(map[string]any)
		verts = append(verts, fmt.Sprintf("%v/%v", m["id"], m["parallelism"]))
	}
	if got := fmt.Sprint(verts); got != "[source/2 window/3 sink/1]" {
		t.Errorf("vertices %s", got)
	}
	if got, want := fmt.Sprint(g[0]["edges"]), "[map[from:source partitioner:HASH to:window] map[from:window partitioner:REBALANCE to:sink]]"; got != want {
		t.Errorf("edges %s, want %s", got, want)
	}
	if n := g[0].num("slots_needed"); n != 3 {
		t.Errorf("slots_needed %d, want 3", n)
	}

	ranges := [][2]int{{0, 42}, {43, 85}, {86, 127}}
	fired := map[int]int{}
	for _, e := range eventsOf(evs, "window_fired") {
		i, err := strconv.Atoi(strings.TrimPrefix(e.str("actor"), "window-"))
		if err != nil {
			t.Fatalf("window_fired by %q", e.str("actor"))
		}
		key := e.str("key")
		kg := keygroup.AssignToKeyGroup(keygroup.StringHashCode(key), 128)
		if kg < ranges[i][0] || kg > ranges[i][1] {
			t.Errorf("key %q (key group %d) fired on window-%d, whose range is %v", key, kg, i, ranges[i])
		}
		fired[i]++
	}
	if len(fired) < 2 {
		t.Errorf("windows fired on %v only; the keys should spread over the three ranges", fired)
	}
	// the one sink subtask writes every result: REBALANCE from all three
	compareCounts(t, resultCounts(t, sinkResults(t, res)), oracleCounts(recs, 15000))

	_, again := run(t, cfg, cluster.Options{Events: recs})
	if !bytes.Equal(log, again) {
		t.Error("the same settings gave two different logs")
	}
}

// Setting each operator's parallelism to parallelism.default changes
// nothing but the header: the JobGraph, the deployment and every event after
// it are the default job's, byte for byte.
func TestOperatorParallelismEqualToDefault(t *testing.T) {
	base := []string{"sim.duration=20 s", "execution.checkpointing.interval=5 s"}
	_, plain := run(t, settings(t, base...), cluster.Options{})
	_, explicit := run(t, settings(t, append(base, "job.source.parallelism=2", "job.window.parallelism=2", "job.sink.parallelism=2")...), cluster.Options{})
	_, a, _ := bytes.Cut(plain, []byte("\n"))
	_, b, _ := bytes.Cut(explicit, []byte("\n"))
	if len(a) < 10000 || !bytes.Equal(a, b) {
		t.Errorf("after the header the logs differ (%d and %d bytes)", len(a), len(b))
	}
	if bytes.Equal(plain, explicit) {
		t.Error("the headers should differ: they carry the settings")
	}
}
