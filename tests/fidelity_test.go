package tests

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/exchange"
)

// TestAlignedCheckpointTimeoutInTheInput: with
// execution.checkpointing.aligned-checkpoint-timeout 1 s under heavy
// backpressure (windows at 3 ms a record), a barrier that reached a channel
// but waits behind data is announced to the barrier handler (Flink 1.20:
// RemoteInputChannel's EventAnnouncement, SingleCheckpointBarrierHandler in
// AlternatingWaitingForFirstBarrierUnaligned), so when the timeout expires
// the checkpoint switches to unaligned at once and the waiting barrier
// overtakes the data before it. Every window subtask's snapshot therefore
// comes at most 1 s after the trigger, plus the processing of one barrier
// (1 µs per state entry, a few ms here); real Flink completes such
// checkpoints in about 1.0 s. Without the announcement a barrier stuck
// behind backpressured data is only seen when the task reaches it, up to
// seconds later.
func TestAlignedCheckpointTimeoutInTheInput(t *testing.T) {
	cfg := settings(t, "sim.duration=40 s", "execution.checkpointing.interval=5 s",
		"execution.checkpointing.unaligned.enabled=true", "execution.checkpointing.aligned-checkpoint-timeout=1 s",
		"sim.cost.window=3 ms")
	_, log := run(t, cfg, cluster.Options{})
	evs := parseLog(t, log)
	trigger := map[int64]int64{} // checkpoint -> trigger time (µs)
	for _, e := range eventsOf(evs, "checkpoint_triggered") {
		trigger[e.num("checkpoint_id")] = e.num("timestamp_ms") * 1000
	}
	if len(trigger) < 5 {
		t.Fatalf("only %d checkpoints triggered", len(trigger))
	}
	const bound = 1_000_000 + 10_000 // the timeout plus one barrier's processing
	snapshots := 0
	for _, e := range eventsOf(evs, "checkpoint_snapshot") {
		if a := e.str("actor"); len(a) < 6 || a[:6] != "window" {
			continue
		}
		snapshots++
		if late := e.num("vt") - trigger[e.num("checkpoint_id")]; late > bound {
			t.Errorf("%s took its snapshot of checkpoint %d %d µs after the trigger, over the 1 s timeout", e.str("actor"), e.num("checkpoint_id"), late)
		}
	}
	if snapshots < 8 {
		t.Fatalf("only %d window snapshots", snapshots)
	}
	done := eventsOf(evs, "checkpoint_completed")
	if len(done) < 5 {
		t.Fatalf("%d checkpoints completed", len(done))
	}
	for _, c := range done {
		// the timeout, then what the unaligned snapshot costs: its sync
		// part (2 ms), the channel state at 50 mb/s (a few hundred kb: a
		// few ms) with its file (5 ms), the acknowledgement (2 ms + the
		// 1 ms RPC) and the coordinator's _metadata file (5 ms)
		if d := c.num("duration_ms"); d < 1_000 || d > 1_030 {
			t.Errorf("checkpoint %d took %d ms, want the 1 s timeout and the unaligned snapshot's cost, up to 30 ms", c.num("checkpoint_id"), d)
		}
		if c.num("persisted_records") == 0 {
			t.Errorf("checkpoint %d persisted no in-flight data: it did not switch to unaligned", c.num("checkpoint_id"))
		}
	}
}

// TestCommittedOffsetsAreTheCheckpoints: KafkaSourceReader commits, on
// notifyCheckpointComplete(id), the offsets it snapshotted for checkpoint
// id (offsetsToCommit), for periodic and manual checkpoints alike: every
// offsets_committed of a checkpoint equals, partition by partition, the
// source_offsets that checkpoint stored.
func TestCommittedOffsetsAreTheCheckpoints(t *testing.T) {
	cfg := settings(t, "sim.duration=40 s", "execution.checkpointing.interval=10 s")
	_, log := run(t, cfg, cluster.Options{Actions: actions(t, "at=15s trigger-checkpoint", "at=27s trigger-checkpoint")})
	evs := parseLog(t, log)
	stored := map[int64]map[string]int64{}
	kinds := map[string]int{}
	for _, c := range eventsOf(evs, "checkpoint_completed") {
		m := map[string]int64{}
		for _, so := range c["source_offsets"].([]any) {
			x := logEvent(so.(map[string]any))
			m[x.str("split")] = x.num("offset")
		}
		stored[c.num("checkpoint_id")] = m
		kinds[c.str("kind")]++
	}
	if kinds["manual"] != 2 || kinds["periodic"] < 2 {
		t.Fatalf("completed checkpoints by kind %v, want 2 manual and periodic ones", kinds)
	}
	commits := 0
	for _, oc := range eventsOf(evs, "offsets_committed") {
		id := oc.num("checkpoint_id")
		for _, po := range oc["offsets"].([]any) {
			x := logEvent(po.(map[string]any))
			split := "orders-" + x.str("partition")
			if p, ok := x["partition"].(json.Number); ok {
				split = "orders-" + p.String()
			}
			want, ok := stored[id][split]
			if !ok || x.num("offset") != want {
				t.Errorf("checkpoint %d: %s committed at %d, the checkpoint stored %d", id, split, x.num("offset"), want)
			}
			commits++
		}
	}
	if commits < 8 {
		t.Fatalf("only %d committed offsets", commits)
	}
}

// An events file that scripts out-of-order arrival (sim.events.pace=
// file-order, issue 13.6): examples/data/late-arrival.jsonl, five records
// of one key in the file's order, each at its arrival field. With
// forBoundedOutOfOrderness(1 s) the watermark is the largest timestamp so
// far - 1000 - 1 (B = 1700000000000):
//
//	arrival  ts        watermark after it
//	0 s      B+1000    B-1
//	1 s      B+5000    B+3999
//	2 s      B+12000   B+10999: [B, B+10000) (maxTimestamp B+9999) fires, count 2
//	3 s      B+3000    B+10999: its only window was cleaned up at B+9999 (no
//	                   allowed lateness), so it is late: the side output
//	3.5 s    B+11000   B+10999: on time in [B+10000, B+20000)
//	end      -         Long.MAX_VALUE: [B+10000, B+20000) fires, count 2
//
// The watermark goes out at the source's next periodic emission
// (pipeline.auto-watermark-interval, 200 ms), so the first firing is
// within 2 s + 200 ms plus the fetch, parse and network hops, and the
// late record reaches the side output at the source's next flush
// (execution.buffer-timeout, 100 ms) after its arrival at 3 s.
func TestEventsFileArrivalOrder(t *testing.T) {
	const b = int64(1_700_000_000_000)
	cfg := settings(t, "sim.events.pace=file-order", "parallelism.default=1", "job.window.size=10 s",
		"job.watermark.out-of-orderness=1 s", "job.window.side-output-late-data=true")
	recs := readEvents(t, dataPath("late-arrival.jsonl"), cfg)
	res, log := run(t, cfg, cluster.Options{Events: recs})
	_, again := run(t, cfg, cluster.Options{Events: recs})
	if string(log) != string(again) {
		t.Fatal("two runs of the same file differ")
	}
	if res.JobStatus != "FINISHED" {
		t.Fatalf("job %s", res.JobStatus)
	}
	evs := parseLog(t, log)
	fired := eventsOf(evs, "window_fired")
	type firing struct{ start, end, value, wm int64 }
	want := []firing{{b, b + 10_000, 2, b + 10_999}, {b + 10_000, b + 20_000, 2, math.MaxInt64}}
	if len(fired) != len(want) {
		t.Fatalf("%d firings, want %d", len(fired), len(want))
	}
	for i, w := range want {
		e := fired[i]
		if got := (firing{e.num("window_start"), e.num("window_end"), e.num("value"), e.num("watermark")}); got != w {
			t.Errorf("firing %d = %+v, want %+v", i, got, w)
		}
	}
	if at := fired[0].num("vt"); at < 2_000_000 || at > 2_210_000 {
		t.Errorf("the first window fired at %d µs, want within 2 s + 200 ms + a few hops", at)
	}
	late := eventsOf(evs, "late_side_output")
	if len(late) != 1 || late[0].num("timestamp") != b+3000 {
		t.Fatalf("late side output %v, want the one record of B+3000", late)
	}
	if at := late[0].num("vt"); at < 3_000_000 || at > 3_110_000 {
		t.Errorf("the late record reached the side output at %d µs, want within a buffer timeout of its arrival at 3 s", at)
	}
	// the window's input watermark at the metrics reports of 2 s and 3 s
	for _, m := range metricsFrom(evs, "window-0", 2) {
		sec := m.num("vt") / 1_000_000
		if m.num("vt") >= 3_500_000 {
			break // the last report, at the end of input
		}
		wm := m.num("currentInputWatermark")
		if (sec == 2 && wm != b+3999) || (sec == 3 && wm != b+10_999) {
			t.Errorf("window-0's watermark at %d µs = %d, want %d", m.num("vt"), wm, map[int64]int64{2: b + 3999, 3: b + 10_999}[sec])
		}
	}
}

// Control-plane time (issue 13.3): every RPC between Flink's components
// takes sim.rpc.latency, a task is DEPLOYING for sim.task.deploy-time and
// INITIALIZING for sim.task.init-time. The JobMaster learns that its tasks
// run at
//
//	(4 rpc + 1 ms)   the job is submitted once the TaskManagers registered
//	+ 4 rpc          declare resources, request slot, offer slots, SubmitTask
//	+ deploy + init  on the TaskManager
//	+ 1 rpc          the TaskManager's updateTaskExecutionState
//
// 5 + 4 + 10 + 100 + 1 = 120 ms with the defaults (1 ms, 10 ms, 100 ms);
// 13 + 12 + 20 + 50 + 3 = 98 ms with 3 ms, 20 ms, 50 ms. A checkpoint of a
// small state takes the trigger RPC (1 ms; the source emits its barrier
// before its snapshot's sync part), a barrier's network hop (200 µs), the
// records queued before the barrier at the window (10 µs each, a few dozen
// arrive in 1 ms at 1000 records/s), the window's sync part (2 ms), the
// upload (4.5 kb at 50 mb/s: 87 µs, inline: below the 20 kb
// state.storage.fs.memory-threshold, so no file), the acknowledgement (2 ms
// and the 1 ms RPC): 6.3 to 7 ms after the trigger, which the coordinator
// counts in whole ms, then its _metadata file (5 ms): 11 or 12 ms.
func TestControlPlaneTime(t *testing.T) {
	for _, tc := range []struct {
		kv      []string
		running int64 // µs
	}{
		{nil, 120_000},
		{[]string{"sim.rpc.latency=3 ms", "sim.task.deploy-time=20 ms", "sim.task.init-time=50 ms"}, 98_000},
	} {
		cfg := settings(t, append([]string{"sim.duration=11 s"}, tc.kv...)...)
		_, log := run(t, cfg, cluster.Options{Actions: actions(t, "at=10s trigger-checkpoint")})
		evs := parseLog(t, log)
		n := 0
		for _, e := range eventsOf(evs, "task_state") {
			if e.str("actor") == "jobmanager" && e.str("state") == "RUNNING" {
				n++
				if e.num("vt") != tc.running {
					t.Errorf("%v: %s RUNNING at the JobMaster at %d µs, want %d", tc.kv, e.str("task"), e.num("vt"), tc.running)
				}
			}
		}
		if n != 4 {
			t.Errorf("%v: %d tasks RUNNING, want 4", tc.kv, n)
		}
		if tc.kv != nil {
			continue
		}
		done := eventsOf(evs, "checkpoint_completed")
		if len(done) != 1 {
			t.Fatalf("%d checkpoints completed, want 1", len(done))
		}
		if at, d := done[0].num("vt"), done[0].num("duration_ms"); at < 10_011_000 || at > 10_012_000 || d < 11 || d > 12 {
			t.Errorf("checkpoint completed at %d µs after %d ms, want 10.011 s to 10.012 s, 11 or 12 ms", at, d)
		}
	}
}

// TestAlignedCheckpointsUnderBackpressureAreSteady: the README's
// backpressure job with aligned checkpoints every 5 s (issue 24). A barrier
// waits behind what the network buffers between source and window hold, so
// a checkpoint takes about as long as that backlog needs at the window's
// rate (3 ms per record: 333 records/s), and Flink bounds the backlog: per
// window subtask, its LocalInputChannel reads a subpartition of at most
// max-buffers-per-channel = 10 buffers, and its RemoteInputChannel holds at
// most 2 exclusive + 8 floating buffers with at most 10 more in the
// producer's subpartition: 30 buffers of 327 records, 9810 records, 29.4 s
// at the most. Once the backlog reached its bound, the checkpoints stay
// steady instead of growing with the Kafka lag, and no shorter than what
// the local subpartition at its bound holds for certain: 8 full buffers
// ahead of the barrier (the 9th is the one the source just opened, the
// 10th the one the window reads), 7.8 s. A checkpoint's duration is the
// slowest window's start delay (Flink's checkpointStartDelay: the backlog
// at 3 ms a record), its alignment, and the snapshot's own costs.
func TestAlignedCheckpointsUnderBackpressureAreSteady(t *testing.T) {
	cfg := settings(t, "sim.duration=240 s", "sim.seed=2", "execution.checkpointing.interval=5 s", "sim.cost.window=3 ms")
	_, log := run(t, cfg, cluster.Options{})
	evs := parseLog(t, log)
	// the bounds from Flink 1.20's sizes, computed here from the settings:
	// NettyShuffleUtils.getMinMaxNetworkBuffersPerResultPartition gives a
	// pipelined partition of n subpartitions a pool of at most
	// max(n + 1, n * buffers-per-channel + floating-buffers-per-gate)
	n, bpc, fpg, mpc := cfg.Parallelism, cfg.BuffersPerChannel, cfg.FloatingBuffersPerGate, cfg.MaxBuffersPerChannel
	if pool := max(n+1, n*bpc+fpg); pool != 12 || exchange.PoolSize(n, bpc, fpg) != pool {
		t.Fatalf("output pool of %d buffers (exchange.PoolSize %d), want 2 * 2 + 8 = 12", pool, exchange.PoolSize(n, bpc, fpg))
	}
	// a window subtask's barriers come through a local subpartition (at
	// most max-buffers-per-channel buffers) and a remote path: the
	// producer's subpartition (max-buffers-per-channel) and the
	// RemoteInputChannel (its exclusive buffers and the gate's floating
	// ones, SingleInputGate / BufferManager)
	perBuffer := int(cfg.SegmentSize) / cfg.RecordBytes // 32 kb / 100 bytes = 327 records
	const cost = 3                                      // ms a record: 333 records/s
	most := int64((mpc + mpc + bpc + fpg) * perBuffer * cost)
	if perBuffer != 327 || most != 29430 {
		t.Fatalf("%d records a buffer, at most %d ms ahead of a barrier; want 327 and 30 buffers, 29430 ms", perBuffer, most)
	}
	trigger := map[int64]int64{}
	for _, e := range eventsOf(evs, "checkpoint_triggered") {
		trigger[e.num("checkpoint_id")] = e.num("vt")
	}
	var steady []int64
	for _, c := range eventsOf(evs, "checkpoint_completed") {
		id, d := c.num("checkpoint_id"), c.num("duration_ms")
		if d > most+100 {
			t.Errorf("checkpoint %d took %d ms, more than the %d ms Flink's buffers can hold ahead of a barrier", id, d, most)
		}
		var last logEvent
		for _, s := range eventsOf(evs, "checkpoint_snapshot") {
			if s.num("checkpoint_id") == id && strings.HasPrefix(s.str("actor"), "window") && (last == nil || s.num("vt") > last.num("vt")) {
				last = s
			}
		}
		if last == nil {
			t.Fatalf("checkpoint %d: no window snapshot", id)
		}
		// the duration is the start delay, the alignment, and the costs of
		// the snapshot itself (tens of ms)
		if rest := d - last.num("start_delay_ms") - last.num("alignment_ms"); rest < 0 || rest > 30 {
			t.Errorf("checkpoint %d: %d ms beyond the slowest window's start delay and alignment", id, rest)
		}
		if trigger[id] > 100_000_000 {
			steady = append(steady, d)
		}
	}
	if len(steady) < 6 {
		t.Fatalf("%d checkpoints after 100 s", len(steady))
	}
	slices.Sort(steady)
	med := steady[len(steady)/2]
	// at the trigger the source is backpressured: its local subpartition
	// holds max-buffers-per-channel buffers, 8 of them full ahead of the
	// barrier (one just opened, one being read): 8 * 327 records, 7.8 s.
	// At most 60 / 7.8 = 7 checkpoints a minute: the 8 in 60 s
	// cannot be had with Flink's default buffers.
	if least := int64((mpc - 2) * perBuffer * cost); med < least || 60_000/least >= 8 {
		t.Errorf("steady checkpoints take %d ms, less than the %d ms the bounded local subpartition holds for certain", med, least)
	}
	for _, d := range steady {
		if d < med*97/100 || d > med*103/100 {
			t.Errorf("steady checkpoints %v: %d ms is more than 3%% off their median %d ms", steady, d, med)
		}
	}
}

// TestBufferDebloatBoundsCheckpointsByTime: the same job with buffer
// debloating (taskmanager.network.memory.buffer-debloat.enabled, FLIP-183)
// over the minute the issue asks for. The windows' gates measure 333
// records/s of 100 bytes, 33,300 bytes/s, and announce buffer sizes that
// let their buffers in use be consumed in the 1 s target; once the full
// 32 kb buffers queued before are consumed, the data ahead of a barrier is
// about a second of input, so each aligned checkpoint takes about the
// target plus its alignment, and every 5 s interval gets one: at least 8 in
// 60 s.
func TestBufferDebloatBoundsCheckpointsByTime(t *testing.T) {
	cfg := settings(t, "sim.duration=60 s", "sim.seed=2", "execution.checkpointing.interval=5 s", "sim.cost.window=3 ms",
		"taskmanager.network.memory.buffer-debloat.enabled=true")
	_, log := run(t, cfg, cluster.Options{})
	evs := parseLog(t, log)
	done := eventsOf(evs, "checkpoint_completed")
	if len(done) < 8 {
		t.Fatalf("%d checkpoints completed in 60 s, want at least 8", len(done))
	}
	target := cfg.DebloatTarget.Milliseconds()
	steady := 0
	for _, c := range done {
		if c.num("vt") < 20_000_000 {
			continue // the buffers of 32 kb queued before the first announcements
		}
		steady++
		d, align := c.num("duration_ms"), c.num("max_alignment_ms")
		if d < target/2 || d > target+align+300 {
			t.Errorf("checkpoint %d took %d ms (alignment %d ms), want about the %d ms target plus its alignment",
				c.num("checkpoint_id"), d, align, target)
		}
	}
	if steady < 7 {
		t.Errorf("%d checkpoints completed after 20 s, want 7", steady)
	}
	ann := eventsOf(evs, "buffer_size_announced")
	if len(ann) == 0 {
		t.Fatal("no buffer size announced")
	}
	for _, a := range ann {
		if a.num("throughput") > 0 && (a.num("buffer_size") < cfg.MinSegmentSize || a.num("buffer_size") > cfg.SegmentSize) {
			t.Errorf("announced %d bytes, outside [%d, %d]", a.num("buffer_size"), cfg.MinSegmentSize, cfg.SegmentSize)
		}
	}
	// the gates measure what the windows take: 333 records/s of 100 bytes
	var metrics int
	for _, m := range eventsOf(evs, "task_metrics") {
		if strings.HasPrefix(m.str("actor"), "window") && m["debloatedBufferSize"] != nil {
			metrics++
		}
	}
	if metrics == 0 {
		t.Error("no debloatedBufferSize in the windows' task_metrics")
	}
}
