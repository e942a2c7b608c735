package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/jobmaster"
)

type windowKey struct {
	key   string
	start int64
}

// oracleCounts counts records per (key, tumbling window) straight from the
// records, with floor division (an oracle written differently from
// TimeWindow.getWindowStartWithOffset).
func oracleCounts(recs []events.Record, sizeMs int64) map[windowKey]int64 {
	out := map[windowKey]int64{}
	for _, r := range recs {
		q := r.Timestamp / sizeMs
		if r.Timestamp < 0 && r.Timestamp%sizeMs != 0 {
			q--
		}
		out[windowKey{r.Key, q * sizeMs}]++
	}
	return out
}

func resultCounts(t *testing.T, rs []result) map[windowKey]int64 {
	t.Helper()
	out := map[windowKey]int64{}
	for _, r := range rs {
		k := windowKey{r.Key, r.WindowStart}
		if _, dup := out[k]; dup {
			t.Errorf("window %v fired twice", k)
		}
		out[k] = int64(r.Value)
	}
	return out
}

func compareCounts(t *testing.T, got, want map[windowKey]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d (key, window) results, want %d", len(got), len(want))
	}
	var bad []string
	for k, w := range want {
		if g := got[k]; g != w {
			bad = append(bad, fmt.Sprintf("%s@%d: got %d want %d", k.key, k.start, g, w))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("%d windows differ, first: %v", len(bad), bad[:min(5, len(bad))])
	}
}

// The Operations Playground click stream: every page has exactly 1000
// clicks in every 15 s window. Key by page, 15 s tumbling event-time window,
// count.
func TestPlaygroundClicksCounts(t *testing.T) {
	cfg := settings(t, "job.window.size=15 s", "job.watermark.out-of-orderness=0 ms", "job.sink.topic=output")
	recs := readEvents(t, dataPath("playground-clicks.jsonl"), cfg)
	res, log := run(t, cfg, cluster.Options{Events: recs})
	if res.JobStatus != "FINISHED" {
		t.Fatalf("job status %s, want FINISHED", res.JobStatus)
	}
	rs := sinkResults(t, res)
	for _, r := range rs {
		if r.Value != 1000 {
			t.Fatalf("page %s window [%d,%d) counted %v clicks, want 1000", r.Key, r.WindowStart, r.WindowEnd, r.Value)
		}
	}
	compareCounts(t, resultCounts(t, rs), oracleCounts(recs, 15000))
	if got := res.Counters["records_read"]; got != int64(len(recs)) {
		t.Errorf("records_read %d, want %d", got, len(recs))
	}
	if got := res.Counters["numLateRecordsDropped"]; got != 0 {
		t.Errorf("numLateRecordsDropped %d, want 0", got)
	}
	// liveness: the sources get their splits at 0.12 s (the JobManager at
	// 4 RPCs + 1 ms = 5 ms, slots and SubmitTask 3 RPCs later, 10 ms
	// DEPLOYING, 100 ms INITIALIZING, the TaskManager's report and the
	// split assignment one RPC each); each then parses its 24,000 records
	// at 20 µs each (0.48 s of virtual time, in parallel); everything after
	// that is a few buffer hand-overs, far below one buffer timeout per
	// buffer.
	if res.EndVT < 600_000 || res.EndVT > 720_000 {
		t.Errorf("the bounded job ended at %s of virtual time, want between 0.6 s and 0.72 s", res.EndVT)
	}
	sum := eventsOf(parseLog(t, log), "summary")
	if len(sum) != 1 || sum[0].str("job_status") != "FINISHED" || sum[0].num("results_written") != int64(len(rs)) {
		t.Errorf("summary line %v", sum)
	}
}

// orders-sample.jsonl has bounded disorder; with a watermark bound above it
// every (key, minute) count equals the oracle's and nothing is late.
func TestOrdersSampleCounts(t *testing.T) {
	cfg := settings(t)
	recs := readEvents(t, dataPath("orders-sample.jsonl"), cfg)
	maxDisorder := int64(0)
	maxTs := recs[0].Timestamp
	for _, r := range recs {
		if maxTs-r.Timestamp > maxDisorder {
			maxDisorder = maxTs - r.Timestamp
		}
		maxTs = max(maxTs, r.Timestamp)
	}
	if maxDisorder >= cfg.OutOfOrderness.Milliseconds() {
		t.Fatalf("sample disorder %d ms is not within the default bound %v", maxDisorder, cfg.OutOfOrderness)
	}
	res, _ := run(t, cfg, cluster.Options{Events: recs})
	if res.JobStatus != "FINISHED" {
		t.Fatalf("job status %s", res.JobStatus)
	}
	compareCounts(t, resultCounts(t, sinkResults(t, res)), oracleCounts(recs, 60000))
	if d := res.Counters["numLateRecordsDropped"]; d != 0 {
		t.Errorf("numLateRecordsDropped = %d, want 0", d)
	}
}

// Records later than the watermark bound are dropped and counted: counted +
// dropped = records read, each late record checked by hand.
func TestLateRecordsCountedOrDropped(t *testing.T) {
	// bound 1 s, 10 s windows, one partition so the order is the file's
	lines := []string{
		`{"key":"a","ts":1000}`,
		`{"key":"a","ts":2000}`,
		`{"key":"b","ts":12000}`, // max 12000 -> watermark 10999 after the next emit: [0,10000) fires
		`{"key":"a","ts":3000}`,  // late if the watermark passed 9999 before it is read
		`{"key":"b","ts":25000}`,
		`{"key":"b","ts":11000}`, // late once the watermark passed 19999
	}
	recs, err := events.Parse([]byte(strings.Join(lines, "\n")), "late.jsonl", events.Options{KeyField: "key", TimeField: "ts", Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	// a backfill in file order; parsing one record takes 300 ms of virtual
	// time, so a periodic watermark (every 200 ms) follows every record
	cfg := settings(t, "job.source.partitions=1", "job.window.size=10 s", "job.watermark.out-of-orderness=1 s",
		"sim.cost.parse=300 ms", "parallelism.default=1", "sim.taskmanagers=1", "sim.buffer.records=1")
	res, _ := run(t, cfg, cluster.Options{Events: recs})
	counted := int64(0)
	for _, r := range sinkResults(t, res) {
		counted += int64(r.Value)
	}
	dropped := res.Counters["numLateRecordsDropped"]
	if counted+dropped != int64(len(recs)) {
		t.Fatalf("counted %d + dropped %d != read %d", counted, dropped, len(recs))
	}
	// by hand: after b@12000 the watermark reaches 10999 and [0,10000)
	// fires with a=2, so a@3000 is late; after b@25000 it reaches 23999 and
	// [10000,20000) has fired with b=1, so b@11000 is late.
	if dropped != 2 {
		t.Fatalf("dropped %d, want 2 (a@3000 and b@11000)", dropped)
	}
	want := map[windowKey]int64{{"a", 0}: 2, {"b", 10000}: 1, {"b", 20000}: 1}
	compareCounts(t, resultCounts(t, sinkResults(t, res)), want)
}

// The same settings and seed give the same log, byte for byte, also with
// GOMAXPROCS=1.
func TestDeterminismBuiltinJob(t *testing.T) {
	cfg := settings(t, "sim.duration=70 s")
	_, a := run(t, cfg, cluster.Options{})
	_, b := run(t, cfg, cluster.Options{})
	var c []byte
	withProcs(1, func() { _, c = run(t, cfg, cluster.Options{}) })
	if !bytes.Equal(a, b) || !bytes.Equal(a, c) {
		t.Fatal("two runs of the built-in job wrote different logs")
	}
	evs := parseLog(t, a)
	if n := len(eventsOf(evs, "window_fired")); n == 0 {
		t.Fatal("the built-in job fired no window in 70 s")
	}
}

func TestDeterminismEventsFile(t *testing.T) {
	cfg := settings(t, "job.window.size=15 s")
	recs := readEvents(t, dataPath("playground-clicks.jsonl"), cfg)
	r1, a := run(t, cfg, cluster.Options{Events: recs})
	var r2 *cluster.Result
	var b []byte
	withProcs(1, func() { r2, b = run(t, cfg, cluster.Options{Events: recs}) })
	if !bytes.Equal(a, b) {
		t.Fatal("two runs of the events-file job wrote different logs")
	}
	if len(r1.Sink) != len(r2.Sink) {
		t.Fatal("outputs differ")
	}
	for i := range r1.Sink {
		if !bytes.Equal(r1.Sink[i].Value, r2.Sink[i].Value) {
			t.Fatalf("output line %d differs", i+1)
		}
	}
}

// Bring-up: every TaskManager starts with its slots and registers with the
// ResourceManager sending its slot count, default slot profile (an equal
// share) and total resources.
func TestBringUpRegistration(t *testing.T) {
	cfg := settings(t, "sim.taskmanagers=3", "taskmanager.numberOfTaskSlots=2", "sim.duration=5 s")
	_, log := run(t, cfg, cluster.Options{})
	evs := parseLog(t, log)
	regs := eventsOf(evs, "register_task_executor")
	if len(regs) != 3 {
		t.Fatalf("%d registrations, want 3", len(regs))
	}
	for _, r := range regs {
		if r.num("num_slots") != 2 {
			t.Errorf("%s registers %d slots", r.str("actor"), r.num("num_slots"))
		}
		total := r["total_resource_profile"].(map[string]any)
		slot := r["default_slot_resource_profile"].(map[string]any)
		for _, k := range []string{"task_heap_bytes", "managed_memory_bytes", "network_memory_bytes"} {
			tv, _ := total[k].(interface{ Int64() (int64, error) }).Int64()
			sv, _ := slot[k].(interface{ Int64() (int64, error) }).Int64()
			if sv != tv/2 {
				t.Errorf("%s: slot %s %d, want total %d / 2", r.str("actor"), k, sv, tv)
			}
		}
	}
	if n := len(eventsOf(evs, "task_executor_registered")); n != 3 {
		t.Errorf("resource manager registered %d task managers, want 3", n)
	}
	if n := len(eventsOf(evs, "submit_task")); n != 4 {
		t.Errorf("%d tasks submitted, want 4 (2 vertices x parallelism 2)", n)
	}
}

// A job that needs 4 slots on 2 task managers with 1 slot each fails after
// slot.request.timeout with Flink's NoResourceAvailableException.
func TestNotEnoughSlots(t *testing.T) {
	cfg := settings(t, "parallelism.default=4", "sim.taskmanagers=2", "taskmanager.numberOfTaskSlots=1", "slot.request.timeout=10 s")
	res, log := run(t, cfg, cluster.Options{})
	if res.JobStatus != "FAILED" {
		t.Fatalf("job status %s, want FAILED", res.JobStatus)
	}
	evs := parseLog(t, log)
	nr := eventsOf(evs, "no_resource_available")
	if len(nr) != 1 || nr[0].str("exception") != jobmaster.NoResourceAvailableMessage {
		t.Fatalf("no_resource_available events: %v", nr)
	}
	if vt := nr[0].num("vt"); vt < 10_000_000 || vt > 10_100_000 {
		t.Errorf("failed at vt %d µs, want the slot request timeout (10 s) after submission", vt)
	}
	if !strings.Contains(string(log), "Slot request bulk is not fulfillable!") {
		t.Error("log lacks Flink's exception text")
	}
}

// More readers than partitions: the reader without a split does not go idle
// by itself and holds the watermark at Long.MIN_VALUE, so no window fires;
// with withIdleness it goes idle and windows fire.
func TestReaderWithoutSplitHoldsWatermark(t *testing.T) {
	base := []string{"job.source.partitions=2", "parallelism.default=3", "sim.taskmanagers=3", "sim.duration=3 min"}
	res, log := run(t, settings(t, base...), cluster.Options{})
	if n := len(res.Sink); n != 0 {
		t.Fatalf("%d results without idleness, want none", n)
	}
	evs := parseLog(t, log)
	if len(eventsOf(evs, "reader_without_splits")) == 0 {
		t.Error("the log does not show the reader without splits")
	}
	res, _ = run(t, settings(t, append(base, "job.watermark.idleness=10 s")...), cluster.Options{})
	if len(res.Sink) == 0 {
		t.Fatal("with idleness 10 s no window fired")
	}
}

// With pipeline.operator-chaining.enabled=false the sink is its own
// JobVertex behind a FORWARD edge; every window result still reaches the
// sink topic, with the window's maxTimestamp as the record's timestamp.
func TestChainingDisabled(t *testing.T) {
	cfg := settings(t, "pipeline.operator-chaining.enabled=false", "job.window.size=15 s")
	recs := readEvents(t, dataPath("playground-clicks.jsonl"), cfg)
	res, log := run(t, cfg, cluster.Options{Events: recs})
	if res.JobStatus != "FINISHED" {
		t.Fatalf("job %s", res.JobStatus)
	}
	// every operator a JobVertex of its own (StreamingJobGraphGenerator:
	// no chaining), FORWARD between equal parallelisms, HASH for keyBy
	g := eventsOf(parseLog(t, log), "job_graph")
	if len(g) != 1 {
		t.Fatalf("%d job_graph events", len(g))
	}
	if got, want := fmt.Sprint(g[0]["edges"]), "[map[from:source partitioner:FORWARD to:parse] map[from:parse partitioner:HASH to:window] map[from:window partitioner:FORWARD to:sink]]"; got != want {
		t.Fatalf("edges %s, want %s", got, want)
	}
	compareCounts(t, resultCounts(t, sinkResults(t, res)), oracleCounts(recs, 15000))
}

// execution.buffer-timeout 0 flushes after every record instead of on a
// timer; a bounded job still finishes with the right counts.
func TestBufferTimeoutZero(t *testing.T) {
	cfg := settings(t, "execution.buffer-timeout=0 ms", "job.window.size=15 s")
	recs := readEvents(t, dataPath("playground-clicks.jsonl"), cfg)
	res, _ := run(t, cfg, cluster.Options{Events: recs})
	if res.JobStatus != "FINISHED" {
		t.Fatalf("job %s", res.JobStatus)
	}
	compareCounts(t, resultCounts(t, sinkResults(t, res)), oracleCounts(recs, 15000))
}

// A key with a control character and a quote still gives valid JSON in
// the sink topic, with the key unchanged.
func TestOddKeysStayValidJSON(t *testing.T) {
	key := "a\u0001\"<b>"
	line, _ := json.Marshal(map[string]any{"key": key, "ts": 1000})
	recs, err := events.Parse([]byte(string(line)+"\n"), "odd.jsonl", events.Options{KeyField: "key", TimeField: "ts", Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := run(t, settings(t), cluster.Options{Events: recs})
	rs := sinkResults(t, res)
	if len(rs) != 1 || rs[0].Key != key || rs[0].Value != 1 {
		t.Fatalf("results %+v, want one count of 1 for key %q", rs, key)
	}
}
