package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/keygroup"
)

// randomInput is a bounded input of n records over keys k0..k(keys-1),
// event times rising by 10-60 ms with up to 2 s of disorder (less than the
// 5 s out-of-orderness, so nothing is late).
func randomInput(rng *rand.Rand, n, keys int) []events.Record {
	out := make([]events.Record, n)
	ts := int64(1_700_000_000_000)
	for i := range out {
		ts += 10 + rng.Int64N(51)
		key := "k" + strconv.Itoa(rng.IntN(keys))
		out[i] = events.Record{Key: key, Timestamp: ts - rng.Int64N(2001), Partition: -1,
			Value: []byte(`{"key":"` + key + `"}`), Line: i + 1}
	}
	return out
}

// resultSet counts each sink result.
func resultSet(t tb, res *cluster.Result) map[result]int {
	m := map[result]int{}
	for _, r := range sinkResults(t, res) {
		m[r]++
	}
	return m
}

// Exactly-once as a property: for 50 seeds, a random input, checkpointing
// every 3-10 s, a random TaskManager killed at a random time, the
// exactly-once KafkaSink and a read_committed consumer: the output equals,
// result for result, the output of the same run without the failure. Every
// third seed takes unaligned checkpoints under backpressure (a slow window
// operator), so restores include channel state.
func TestExactlyOnceUnderFailures(t *testing.T) {
	skipInShort(t)
	withChannelState := 0
	for seed := uint64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		input := randomInput(rng, 1200+rng.IntN(1200), 3+rng.IntN(10))
		span := time.Duration(input[len(input)-1].Timestamp-input[0].Timestamp) * time.Millisecond
		kv := []string{"sim.events.pace=event-time", "job.window.size=20 s",
			fmt.Sprintf("execution.checkpointing.interval=%d s", 3+rng.IntN(8)),
			"sink.delivery-guarantee=exactly-once", "sim.output.isolation-level=read_committed"}
		if seed%3 == 0 {
			kv = append(kv, "execution.checkpointing.unaligned.enabled=true", "sim.cost.window=40 ms", "sim.buffer.records=4")
		}
		cfg := settings(t, kv...)
		killAt := time.Duration(5+rng.IntN(int(span.Seconds())-10)) * time.Second
		tm := "tm-" + strconv.Itoa(1+rng.IntN(2))
		base, _ := run(t, cfg, cluster.Options{Events: input})
		failed, log := run(t, cfg, cluster.Options{Events: input, Actions: kill(t, killAt, tm)})
		want, got := resultSet(t, base), resultSet(t, failed)
		if len(want) == 0 || !mapsEqual(want, got) || failed.Duplicates != 0 || failed.JobStatus != "FINISHED" {
			t.Fatalf("seed %d (kill %s at %s): %d results without the failure, %d with (%d duplicates, job %s)\nmissing %v\nextra %v",
				seed, tm, killAt, len(base.Sink), len(failed.Sink), failed.Duplicates, failed.JobStatus, diff(want, got), diff(got, want))
		}
		evs := parseLog(t, log)
		if len(eventsOf(evs, "failover")) != 1 {
			t.Fatalf("seed %d: the kill at %s caused no failover", seed, killAt)
		}
		for _, e := range eventsOf(evs, "state_restored") {
			if e.num("input_channel_records")+e.num("output_channel_records") > 0 {
				withChannelState++
				break
			}
		}
	}
	if withChannelState < 5 {
		t.Fatalf("only %d runs restored channel state", withChannelState)
	}
}

func mapsEqual(a, b map[result]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// diff lists what a has more often than b.
func diff(a, b map[result]int) []result {
	var out []result
	for k, v := range a {
		if b[k] < v {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(x, y result) int { return strings.Compare(fmt.Sprint(x), fmt.Sprint(y)) })
	return out
}

// expectedDuplicates reads from the log the window firings the failed
// attempt made after its snapshot of the checkpoint the job restored from
// (all of them when it restored from the starting offsets): those results
// are written again by the new attempt.
func expectedDuplicates(t *testing.T, evs []logEvent) int {
	t.Helper()
	restores := eventsOf(evs, "restore")
	if len(restores) != 1 {
		t.Fatalf("%d restores", len(restores))
	}
	restored := restores[0].num("checkpoint_id") // 0: starting offsets
	after := map[string]bool{}                   // attempt-0 task -> its snapshot of the restored checkpoint was logged
	n := 0
	for _, e := range evs {
		actor := e.str("actor")
		if strings.Contains(actor, "#") {
			continue
		}
		switch e.str("event") {
		case "checkpoint_snapshot":
			if e.num("checkpoint_id") == restored {
				after[actor] = true
			}
		case "window_fired":
			if restored == 0 || after[actor] {
				n++
			}
		}
	}
	return n
}

// AT_LEAST_ONCE and NONE: after a failure the job restores the last
// completed checkpoint and emits again every window result emitted after
// it; nothing is missing, and the duplicates are exactly those results.
func TestAtLeastOnceAndNoneWriteDuplicates(t *testing.T) {
	skipInShort(t)
	input := readEvents(t, dataPath("playground-clicks.jsonl"), settings(t))
	for _, g := range []string{"at-least-once", "none"} {
		t.Run(g, func(t *testing.T) {
			cfg := settings(t, "sim.events.pace=event-time", "execution.checkpointing.interval=10 s", "sink.delivery-guarantee="+g)
			base, _ := run(t, cfg, cluster.Options{Events: input})
			res, log := run(t, cfg, cluster.Options{Events: input, Actions: kill(t, 67*time.Second, "tm-1")})
			want := expectedDuplicates(t, parseLog(t, log))
			if want == 0 || res.Duplicates != int64(want) {
				t.Fatalf("%d duplicates, want %d (firings after the restored checkpoint's snapshot)", res.Duplicates, want)
			}
			got := resultSet(t, res)
			for r := range resultSet(t, base) {
				if got[r] == 0 {
					t.Fatalf("result %+v of the run without failure is missing", r)
				}
			}
			if len(got) != len(base.Sink) || len(res.Sink) != len(base.Sink)+want {
				t.Fatalf("%d distinct results in %d records, want %d + %d duplicates", len(got), len(res.Sink), len(base.Sink), want)
			}
		})
	}
}

// Under backpressure an aligned checkpoint waits for its barriers behind
// the queued buffers and blocks the channels that delivered theirs;
// unaligned barriers overtake the queues, which become channel state, and
// the checkpoint completes much sooner.
func TestAlignedVersusUnalignedUnderBackpressure(t *testing.T) {
	summary := func(unaligned bool, extra ...string) (maxAlign, persisted, totalDuration int64, n int) {
		cfg := settings(t, append([]string{"sim.duration=40 s", "sim.cost.window=3 ms", "execution.checkpointing.interval=10 s",
			"execution.checkpointing.unaligned.enabled=" + strconv.FormatBool(unaligned)}, extra...)...)
		_, log := run(t, cfg, cluster.Options{})
		for _, e := range eventsOf(parseLog(t, log), "checkpoint_completed") {
			maxAlign = max(maxAlign, e.num("max_alignment_ms"))
			persisted += e.num("persisted_records")
			totalDuration += e.num("duration_ms")
			n++
		}
		return
	}
	aAlign, aPersisted, aDur, an := summary(false)
	uAlign, uPersisted, uDur, un := summary(true)
	if an < 2 || un < 2 {
		t.Fatalf("%d aligned and %d unaligned checkpoints completed", an, un)
	}
	if aAlign == 0 || aPersisted != 0 {
		t.Fatalf("aligned: max alignment %d ms, %d persisted records; want > 0 and 0", aAlign, aPersisted)
	}
	if uPersisted == 0 {
		t.Fatalf("unaligned: no in-flight record persisted (alignment %d ms)", uAlign)
	}
	if uDur*int64(an) >= aDur*int64(un) {
		t.Fatalf("unaligned checkpoints took %d ms on average, aligned %d ms", uDur/int64(un), aDur/int64(an))
	}
	// aligned-checkpoint-timeout: aligned for 200 ms after the trigger,
	// then unaligned: the checkpoint takes at least the 200 ms, persists
	// channel state and still ends long before an aligned one. (The queues
	// are deep enough that no barrier arrives in the 200 ms: every channel
	// switches on its announcement's timer.)
	tAlign, tPersisted, tDur, tn := summary(true, "execution.checkpointing.aligned-checkpoint-timeout=200 ms")
	if tDur < 200*int64(tn) || tPersisted == 0 || tDur*int64(an) >= aDur*int64(tn) {
		t.Fatalf("with the aligned timeout: alignment %d ms, %d persisted, %d ms on average (aligned %d ms)", tAlign, tPersisted, tDur/int64(tn), aDur/int64(an))
	}
}

// RocksDB with incremental checkpoints uploads only the keys changed since
// the last completed checkpoint: the first checkpoint is full; once 1000
// keys are in and only 10 of them keep changing, later ones are a small
// part of the full size. The hashmap backend uploads everything every time.
func TestIncrementalCheckpointsUploadChangedKeys(t *testing.T) {
	var input []events.Record
	ts := int64(1_700_000_000_000)
	for i := 0; i < 1000; i++ { // every key once in the first second
		key := "k" + strconv.Itoa(i)
		input = append(input, events.Record{Key: key, Timestamp: ts + int64(i), Partition: -1, Value: []byte(`{}`), Line: len(input) + 1})
	}
	for i := 0; i < 120; i++ { // then two records a second on ten keys
		key := "k" + strconv.Itoa(i%10)
		input = append(input, events.Record{Key: key, Timestamp: ts + 1000 + int64(i)*500, Partition: -1, Value: []byte(`{}`), Line: len(input) + 1})
	}
	sizes := func(kv ...string) (full, incr []int64) {
		cfg := settings(t, append([]string{"sim.events.pace=event-time", "job.operator=process", "execution.checkpointing.interval=10 s"}, kv...)...)
		_, log := run(t, cfg, cluster.Options{Events: input})
		for _, e := range eventsOf(parseLog(t, log), "checkpoint_completed") {
			full = append(full, e.num("state_size"))
			incr = append(incr, e.num("checkpointed_size"))
		}
		return
	}
	full, incr := sizes("state.backend.type=rocksdb", "state.backend.incremental=true")
	if len(full) < 4 || incr[0] != full[0] {
		t.Fatalf("checkpoints: full %v, incremental %v; want at least 4, the first one full", full, incr)
	}
	for i := 2; i < len(full); i++ {
		if incr[i]*10 >= full[i] {
			t.Fatalf("checkpoint %d: incremental %d of full %d; want under a tenth (10 of 1000 keys change)", i+1, incr[i], full[i])
		}
	}
	hfull, hincr := sizes("state.backend.type=hashmap", "state.backend.incremental=true")
	if !slices.Equal(hfull, hincr) || !slices.Equal(hfull, full) {
		t.Fatalf("hashmap: full %v, uploaded %v; want full uploads of the same state (rocksdb full %v)", hfull, hincr, full)
	}
}

// fired is one window firing as the log reports it.
type fired struct {
	key        string
	start, end int64
	value      string
}

func firings(evs []logEvent) map[fired]string {
	out := map[fired]string{}
	for _, e := range eventsOf(evs, "window_fired") {
		out[fired{e.str("key"), e.num("window_start"), e.num("window_end"), fmt.Sprint(e["value"])}] = e.str("actor")
	}
	return out
}

// Rescaling 2 -> 3 through stop-with-savepoint: every key's state goes to
// the subtask its key group belongs to under the new parallelism, the
// windows continue without loss, the new job writes to a fresh view of
// the output; above the max parallelism, or with another max parallelism,
// the new job is refused with Flink's messages.
func TestRescaleFromSavepoint(t *testing.T) {
	skipInShort(t)
	input := readEvents(t, dataPath("playground-clicks.jsonl"), settings(t))
	cfg := settings(t, "sim.events.pace=event-time", "taskmanager.numberOfTaskSlots=2")
	base, baseLog := run(t, cfg, cluster.Options{Events: input})
	res, log := run(t, cfg, cluster.Options{Events: input, Actions: actions(t, "at=70s rescale 3")})
	evs := parseLog(t, log)
	if res.JobStatus != "FINISHED" {
		t.Fatalf("job %s", res.JobStatus)
	}
	want, got := firings(parseLog(t, baseLog)), firings(evs)
	if len(want) != len(got) {
		t.Fatalf("%d firings, want %d", len(got), len(want))
	}
	newJob := 0
	for f, actor := range got {
		if _, ok := want[f]; !ok {
			t.Fatalf("firing %+v not in the run without rescale", f)
		}
		if !strings.HasSuffix(actor, "#1") {
			continue
		}
		newJob++
		kg := keygroup.AssignToKeyGroup(keygroup.StringHashCode(f.key), 128)
		if owner := "window-" + strconv.Itoa(keygroup.OperatorIndexForKeyGroup(128, 3, kg)) + "#1"; owner != actor {
			t.Fatalf("key %s (key group %d) fired in %s, want %s", f.key, kg, actor, owner)
		}
	}
	restored := 0
	for _, e := range eventsOf(evs, "state_restored") {
		restored += int(e.num("window_keys"))
	}
	if newJob == 0 || restored == 0 || len(res.Sink) != newJob || len(base.Sink) != len(want) {
		t.Fatalf("new job fired %d windows, restored %d keys, its output view has %d results", newJob, restored, len(res.Sink))
	}
	for _, tc := range []struct{ action, message string }{
		{"at=70s rescale 200", "The maximum parallelism (128) of the restored state is lower than the configured parallelism (200). Please reduce the parallelism of the task to be lower or equal to the maximum parallelism."},
		{"at=70s rescale 3 max-parallelism=256", "Cannot map operator window with max parallelism 128 to new program with max parallelism 256."},
	} {
		res, log := run(t, cfg, cluster.Options{Events: input, Actions: actions(t, tc.action)})
		if res.JobStatus != "FAILED" || !bytes.Contains(log, []byte(tc.message)) {
			t.Fatalf("%s: job %s, log without %q", tc.action, res.JobStatus, tc.message)
		}
	}
}

// With checkpointing on and no restart strategy configured Flink uses
// exponential-delay: the restart comes at heartbeat timeout + the logged
// backoff, and the job resumes from the last checkpoint completed before
// the failure.
func TestRestartFromCheckpointTiming(t *testing.T) {
	cfg := settings(t, "sim.duration=60 s", "execution.checkpointing.interval=4 s", "heartbeat.interval=1 s", "heartbeat.timeout=5 s")
	_, log := run(t, cfg, cluster.Options{Actions: kill(t, 21*time.Second, "tm-2")})
	evs := parseLog(t, log)
	timeouts, failovers := eventsOf(evs, "heartbeat_timeout"), eventsOf(evs, "failover")
	if len(timeouts) != 1 || len(failovers) != 1 || failovers[0].str("strategy") != "exponential-delay" {
		t.Fatalf("%d heartbeat timeouts, failovers %v", len(timeouts), failovers)
	}
	detected := timeouts[0].num("vt")
	if detected < 25_000_000 || detected > 27_000_000 {
		t.Fatalf("timeout noticed at %d µs, want kill 21 s + timeout 5 s ± interval 1 s", detected)
	}
	// HeartbeatMonitorImpl's timer: exactly timeout after the last heartbeat
	if last := timeouts[0].num("last_heartbeat_ms"); detected/1000 != last+5000 {
		t.Fatalf("timeout noticed at %d µs, last heartbeat at %d ms: want last + 5000 ms", detected, last)
	}
	var restartAt int64
	for _, e := range eventsOf(evs, "job_status") {
		if e.str("previous") == "RESTARTING" {
			restartAt = e.num("vt")
		}
	}
	if backoff := failovers[0].num("backoff_ms"); restartAt != detected+backoff*1000 || backoff < 900 || backoff > 1100 {
		t.Fatalf("restart at %d µs, timeout at %d µs, backoff %d ms (initial backoff 1 s ± 10%% jitter)", restartAt, detected, backoff)
	}
	var lastBefore int64
	for _, e := range eventsOf(evs, "checkpoint_completed") {
		if e.num("vt") < 21_000_000 {
			lastBefore = e.num("checkpoint_id")
		}
	}
	if r := eventsOf(evs, "restore"); len(r) != 1 || r[0].num("checkpoint_id") != lastBefore || lastBefore == 0 {
		t.Fatalf("restore %v, want checkpoint %d", r, lastBefore)
	}
	_, again := run(t, cfg, cluster.Options{Actions: kill(t, 21*time.Second, "tm-2")})
	if !bytes.Equal(log, again) {
		t.Fatal("a run with checkpoints and a kill is not reproducible")
	}
}

// An aligned checkpoint that cannot finish within execution.checkpointing.timeout
// expires; with no tolerated failure the CheckpointFailureManager fails the
// job over, with some tolerated it goes on.
func TestExpiredCheckpointsFailTheJobBeyondTolerance(t *testing.T) {
	kv := []string{"sim.duration=30 s", "sim.cost.window=3 ms", "execution.checkpointing.interval=5 s", "execution.checkpointing.timeout=100 ms"}
	_, log := run(t, settings(t, kv...), cluster.Options{})
	evs := parseLog(t, log)
	failed := eventsOf(evs, "checkpoint_failed")
	if len(failed) == 0 || failed[0].str("reason") != "CHECKPOINT_EXPIRED" || failed[0].str("message") != "Checkpoint expired before completing." {
		t.Fatalf("failed checkpoints %v, want the first expired", failed)
	}
	if f := eventsOf(evs, "failover"); len(f) == 0 || !strings.Contains(f[0].str("cause"), "Exceeded checkpoint tolerable failure threshold") {
		t.Fatalf("failovers %v, want one for the tolerable failure threshold", f)
	}
	_, log = run(t, settings(t, append(kv, "execution.checkpointing.tolerable-failed-checkpoints=100")...), cluster.Options{})
	evs = parseLog(t, log)
	if len(eventsOf(evs, "checkpoint_failed")) < 3 || len(eventsOf(evs, "failover")) != 0 {
		t.Fatalf("%d expired, %d failovers; want several tolerated", len(eventsOf(evs, "checkpoint_failed")), len(eventsOf(evs, "failover")))
	}
}

// execution.checkpointing.min-pause: a periodic checkpoint starts no sooner
// than min pause after the last one completed, even with a shorter interval.
func TestMinPauseBetweenCheckpoints(t *testing.T) {
	_, log := run(t, settings(t, "sim.duration=40 s", "execution.checkpointing.interval=1 s", "execution.checkpointing.min-pause=4 s"), cluster.Options{})
	evs := parseLog(t, log)
	trig, done := eventsOf(evs, "checkpoint_triggered"), eventsOf(evs, "checkpoint_completed")
	if len(trig) < 5 {
		t.Fatalf("%d checkpoints triggered", len(trig))
	}
	for i := 1; i < len(trig) && i < len(done); i++ {
		gap := trig[i].num("vt") - done[i-1].num("vt")
		if gap < 4_000_000-1000 || gap > 5_000_000 { // the coordinator counts whole ms
			t.Fatalf("checkpoint %d triggered %d µs after %d completed, want in [4 s, 5 s]", i+1, gap, i)
		}
	}
}

// stop-with-savepoint: the sources stop, the savepoint completes and is
// notified, the job ends FINISHED without the final watermark, so open
// windows stay unfired; the source's committed offsets are the savepoint's.
func TestStopWithSavepoint(t *testing.T) {
	res, log := run(t, settings(t, "sim.duration=5 min"), cluster.Options{Actions: actions(t, "at=90s stop-with-savepoint")})
	evs := parseLog(t, log)
	done := eventsOf(evs, "checkpoint_completed")
	if len(done) != 1 || done[0].str("kind") != "stop-with-savepoint" || done[0].str("savepoint_path") == "" {
		t.Fatalf("completed %v, want the stop-with-savepoint", done)
	}
	if res.JobStatus != "FINISHED" || res.EndVT > 91_000_000 || res.Counters["unfired_windows"] == 0 {
		t.Fatalf("job %s at %d µs with %d unfired windows; want FINISHED right after 90 s with the open windows unfired",
			res.JobStatus, res.EndVT, res.Counters["unfired_windows"])
	}
	committed := map[string]bool{}
	for _, e := range eventsOf(evs, "offsets_committed") {
		committed[fmt.Sprint(e["offsets"])] = true
	}
	if len(committed) != 2 {
		t.Fatalf("offsets committed by %d readers, want 2", len(committed))
	}
}

// Checkpoints, a kill, a savepoint and a rescale reproduce byte for byte,
// whatever GOMAXPROCS (CI also runs this under the race detector).
func TestDeterminismCheckpointsAndFailures(t *testing.T) {
	input := readEvents(t, dataPath("playground-clicks.jsonl"), settings(t))
	cfg := settings(t, "sim.events.pace=event-time", "taskmanager.numberOfTaskSlots=2", "execution.checkpointing.interval=7 s",
		"execution.checkpointing.unaligned.enabled=true", "sim.cost.window=1 ms", "sink.delivery-guarantee=exactly-once")
	opt := cluster.Options{Events: input, Actions: actions(t, "at=30s kill-taskmanager tm-1", "at=50s trigger-savepoint", "at=80s rescale 3")}
	res, a := run(t, cfg, opt)
	var b []byte
	withProcs(1, func() { _, b = run(t, cfg, opt) })
	if !bytes.Equal(a, b) {
		t.Fatal("two runs with checkpoints, a kill, a savepoint and a rescale wrote different logs")
	}
	evs := parseLog(t, a)
	if res.JobStatus != "FINISHED" || len(eventsOf(evs, "failover")) != 1 || len(eventsOf(evs, "output_view")) != 1 {
		t.Fatalf("job %s, %d failovers, %d rescales", res.JobStatus, len(eventsOf(evs, "failover")), len(eventsOf(evs, "output_view")))
	}
}

// Two kills: the second TaskManager dies while the restart deploys onto it
// (tasks deployed to a dead TaskManager never run, what is sent to them is
// lost), or the replacement dies after the first restore with unaligned
// checkpoints under backpressure (restored channel state not yet replayed
// must stay in the next checkpoint). The exactly-once output is still the
// output of the run without failures.
func TestTwoKillsExactlyOnce(t *testing.T) {
	skipInShort(t)
	clicks := readEvents(t, dataPath("playground-clicks.jsonl"), settings(t))
	orders := readEvents(t, dataPath("orders-sample.jsonl"), settings(t))
	for _, tc := range []struct {
		name    string
		input   []events.Record
		kv      []string
		actions []string
	}{
		{"kill during the restart", clicks, []string{"sim.events.pace=event-time"}, []string{"at=67s kill-taskmanager tm-1", "at=72500ms kill-taskmanager tm-2"}},
		{"unaligned, backpressured", clicks, []string{"sim.events.pace=event-time", "execution.checkpointing.unaligned.enabled=true", "sim.cost.window=8 ms",
			"execution.checkpointing.timeout=10 min"}, []string{"at=150s kill-taskmanager tm-1", "at=160s kill-taskmanager tm-3"}},
		// a slot offered while the job is deployed or restarting stays in
		// the pool; readers without a split finish early
		{"three kills, four TaskManagers", orders, []string{"execution.checkpointing.interval=3 s", "parallelism.default=4", "sim.taskmanagers=4",
			"job.source.partitions=2", "execution.checkpointing.unaligned.enabled=true", "execution.checkpointing.aligned-checkpoint-timeout=10 ms",
			"sim.buffer.records=1", "taskmanager.network.memory.buffers-per-channel=1", "job.window.size=1 s", "job.window.aggregate=sum"},
			[]string{"at=356ms kill-taskmanager tm-1", "at=1930ms kill-taskmanager tm-4", "at=2479ms kill-taskmanager tm-3"}},
		{"one partition, four readers", orders, []string{"execution.checkpointing.interval=3 s", "parallelism.default=4", "sim.taskmanagers=4",
			"job.source.partitions=1", "sim.cost.window=5 ms", "taskmanager.network.memory.buffers-per-channel=1", "job.window.type=sliding",
			"job.window.slide=30 s", "job.window.aggregate=sum"}, []string{"at=1022ms kill-taskmanager tm-3", "at=14813ms kill-taskmanager tm-5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := settings(t, append([]string{"execution.checkpointing.interval=10 s",
				"sink.delivery-guarantee=exactly-once", "sim.output.isolation-level=read_committed"}, tc.kv...)...)
			base, _ := run(t, cfg, cluster.Options{Events: tc.input})
			res, log := run(t, cfg, cluster.Options{Events: tc.input, Actions: actions(t, tc.actions...)})
			if !mapsEqual(resultSet(t, base), resultSet(t, res)) || res.Duplicates != 0 || res.Uncommitted != 0 || res.JobStatus != "FINISHED" {
				t.Fatalf("job %s, %d results (%d duplicates, %d uncommitted), want the %d of the run without failures\nmissing %d, extra %d",
					res.JobStatus, len(res.Sink), res.Duplicates, res.Uncommitted, len(base.Sink), len(diff(resultSet(t, base), resultSet(t, res))), len(diff(resultSet(t, res), resultSet(t, base))))
			}
			if n := len(eventsOf(parseLog(t, log), "failover")); n < len(tc.actions)-1 {
				t.Fatalf("%d failovers for %d kills", n, len(tc.actions))
			}
		})
	}
}

// Aligned checkpoints with one floating buffer per gate and no exclusive
// buffers: a channel blocked by its barrier gives its floating buffer back
// and its producer waits for ResumeConsumption, so the other channels still
// bring their barriers. The job finishes with the output of a run without
// checkpoints.
func TestAlignmentWithOneFloatingBuffer(t *testing.T) {
	skipInShort(t)
	input := readEvents(t, dataPath("orders-sample.jsonl"), settings(t))
	kv := []string{"parallelism.default=3", "taskmanager.numberOfTaskSlots=2", "job.source.partitions=6", "sim.cost.window=1 ms",
		"sim.buffer.records=4", "taskmanager.network.memory.buffers-per-channel=0", "taskmanager.network.memory.floating-buffers-per-gate=1",
		"job.operator=process", "pipeline.operator-chaining.enabled=false"}
	base, _ := run(t, settings(t, kv...), cluster.Options{Events: input})
	res, log := run(t, settings(t, append(kv, "execution.checkpointing.interval=500 ms")...), cluster.Options{Events: input})
	evs := parseLog(t, log)
	if res.JobStatus != "FINISHED" || len(eventsOf(evs, "failover")) != 0 || len(eventsOf(evs, "checkpoint_completed")) < 5 {
		t.Fatalf("job %s after %d µs, %d failovers, %d checkpoints", res.JobStatus, res.EndVT, len(eventsOf(evs, "failover")), len(eventsOf(evs, "checkpoint_completed")))
	}
	if !mapsEqual(resultSet(t, base), resultSet(t, res)) {
		t.Fatalf("%d results, want the %d of the run without checkpoints", len(res.Sink), len(base.Sink))
	}
}

// TestBoundedExactlyOnceFinishesOnItsFinalCheckpoint: a bounded job with the
// exactly-once KafkaSink ends FINISHED on its final checkpoint, whatever
// the checkpoint interval, with no restart and every result committed
// (FLIP-147 with execution.checkpointing.checkpoints-after-tasks-finish, on
// by default: a task whose input ended waits for a checkpoint completed
// after that; a trigger that reaches a task that already finished is
// declined, TASK_NOT_READY, and the next checkpoint goes to the tasks still
// running). The expected results are counted from the records themselves:
// one count per key and 5 s window. The partitions end at different times,
// so one source finishes while the other still reads, and checkpoints go on
// with finished tasks.
func TestBoundedExactlyOnceFinishesOnItsFinalCheckpoint(t *testing.T) {
	const base = int64(1_700_000_000_000)
	var recs []events.Record
	want := map[string]int{} // key|window start -> count
	for ts := int64(0); ts < 9000; ts += 250 {
		for p := int32(0); p < 4; p++ {
			if (p == 3 && ts > 2000) || (p == 1 && ts > 6000) {
				continue
			}
			key := fmt.Sprintf("u%d", (ts/250+int64(p))%3+1)
			recs = append(recs, events.Record{Key: key, Timestamp: base + ts, Partition: p, Value: []byte(`{}`)})
			want[fmt.Sprintf("%s|%d", key, base+ts/5000*5000)]++
		}
	}
	for _, interval := range []string{"300ms", "500ms", "700ms", "1s", "1300ms", "2s", "2500ms", "3s", "5s", "7s"} {
		cfg := settings(t, "sim.events.pace=event-time", "job.window.size=5s", "sink.delivery-guarantee=exactly-once",
			"execution.checkpointing.interval="+interval)
		res, log := run(t, cfg, cluster.Options{Events: recs})
		if res.JobStatus != "FINISHED" || res.Invariant != "" {
			t.Fatalf("interval %s: job %s %s", interval, res.JobStatus, res.Failure)
		}
		for _, e := range eventsOf(parseLog(t, log), "job_status") {
			if s := e.str("status"); s == "RESTARTING" || s == "FAILING" {
				t.Fatalf("interval %s: the job went %s (%s)", interval, s, e.str("cause"))
			}
		}
		if res.Uncommitted != 0 {
			t.Errorf("interval %s: %d results uncommitted at the end", interval, res.Uncommitted)
		}
		got := map[string]int{}
		for _, r := range res.SinkCommitted {
			var v struct {
				Key   string  `json:"key"`
				Start int64   `json:"window_start"`
				Value float64 `json:"value"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatal(err)
			}
			got[fmt.Sprintf("%s|%d", v.Key, v.Start)] += int(v.Value)
		}
		if !maps.Equal(got, want) {
			t.Errorf("interval %s: committed %v, want %v", interval, got, want)
		}
	}
}

// With execution.checkpointing.checkpoints-after-tasks-finish off, Flink's
// behaviour before FLIP-147: tasks finish at the end of their input with no
// final checkpoint, no checkpoint is triggered once a task finished, and the
// exactly-once sink's last transaction, pre-committed at the end of input,
// is never committed (CommitterOperator.endInput commits only without
// checkpointing): the results of the windows that fired at the end stay
// uncommitted, and a read_committed consumer never sees them.
func TestBoundedExactlyOnceWithoutCheckpointsAfterTasksFinish(t *testing.T) {
	const base = int64(1_700_000_000_000)
	var recs []events.Record
	for ts := int64(0); ts < 9000; ts += 250 {
		recs = append(recs, events.Record{Key: "u1", Timestamp: base + ts, Partition: int32(ts/250) % 4, Value: []byte(`{}`)})
	}
	cfg := settings(t, "sim.events.pace=event-time", "job.window.size=5s", "sink.delivery-guarantee=exactly-once",
		"execution.checkpointing.interval=1s", "execution.checkpointing.checkpoints-after-tasks-finish=false")
	res, log := run(t, cfg, cluster.Options{Events: recs})
	if res.JobStatus != "FINISHED" {
		t.Fatalf("job %s", res.JobStatus)
	}
	// both windows fire at the end of input (the final watermark): both
	// results are in the last transaction, pre-committed and left open
	if len(res.SinkCommitted) != 0 || res.Uncommitted != 2 {
		t.Errorf("%d results committed, %d uncommitted; want 0 and 2", len(res.SinkCommitted), res.Uncommitted)
	}
	evs := parseLog(t, log)
	finished := int64(-1)
	for _, e := range eventsOf(evs, "task_state") {
		if e.str("actor") == "jobmanager" && e.str("state") == "FINISHED" && finished < 0 {
			finished = e.num("vt")
		}
	}
	for _, e := range eventsOf(evs, "checkpoint_triggered") {
		if finished >= 0 && e.num("vt") > finished {
			t.Errorf("checkpoint %d triggered at %d µs, after a task finished at %d µs", e.num("checkpoint_id"), e.num("vt"), finished)
		}
	}
}
