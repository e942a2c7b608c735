package tests

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/events"
)

// Over random inputs and cluster shapes, a bounded tumbling-window job
// (1) never breaks an invariant (watermarks never go back at any keyed
// operator, credit never negative, buffer sequence numbers contiguous),
// (2) accounts for every record exactly once: counted in its window's last
// firing, sent to the late side output, or dropped and counted in
// numLateRecordsDropped, and (3) writes the same log when run twice.
func TestPropertyEveryRecordAccountedFor(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		partitions := rapid.IntRange(1, 5).Draw(t, "partitions")
		parallelism := rapid.IntRange(1, 4).Draw(t, "parallelism")
		slots := rapid.IntRange(1, 2).Draw(t, "slots")
		tms := (parallelism + slots - 1) / slots
		n := rapid.IntRange(1, 400).Draw(t, "records")
		keys := rapid.IntRange(1, 12).Draw(t, "keys")
		disorder := rapid.Int64Range(0, 8000).Draw(t, "disorder_ms")
		sideOutput := rapid.Bool().Draw(t, "side_output")
		lateness := rapid.SampledFrom([]string{"0 ms", "3 s"}).Draw(t, "lateness")
		bufferRecords := rapid.IntRange(1, 64).Draw(t, "buffer_records")
		parse := rapid.SampledFrom([]string{"20 µs", "500 µs", "20 ms"}).Draw(t, "parse_cost")
		var b strings.Builder
		ts := int64(0)
		for i := 0; i < n; i++ {
			ts += rapid.Int64Range(0, 400).Draw(t, "step")
			at := ts - rapid.Int64Range(0, disorder).Draw(t, "behind")
			fmt.Fprintf(&b, "{\"key\":\"k%d\",\"ts\":%d,\"partition\":%d}\n",
				rapid.IntRange(0, keys-1).Draw(t, "key"), at, rapid.IntRange(0, partitions-1).Draw(t, "partition"))
		}
		recs, err := events.Parse([]byte(b.String()), "random.jsonl", events.Options{KeyField: "key", TimeField: "ts", Partitions: partitions})
		if err != nil {
			t.Fatal(err)
		}
		cfg := settings(t, fmt.Sprintf("job.source.partitions=%d", partitions), fmt.Sprintf("parallelism.default=%d", parallelism),
			fmt.Sprintf("taskmanager.numberOfTaskSlots=%d", slots), fmt.Sprintf("sim.taskmanagers=%d", tms),
			"job.window.size=5 s", "job.watermark.out-of-orderness=2 s", "job.window.allowed-lateness="+lateness,
			fmt.Sprintf("job.window.side-output-late-data=%t", sideOutput), fmt.Sprintf("sim.buffer.records=%d", bufferRecords),
			"sim.cost.parse="+parse)
		res, log := run(t, cfg, cluster.Options{Events: recs})
		if res.JobStatus != "FINISHED" {
			t.Fatalf("job %s", res.JobStatus)
		}
		last := map[windowKey]result{}
		for _, r := range sinkResults(t, res) {
			k := windowKey{r.Key, r.WindowStart}
			if prev, ok := last[k]; ok && r.Firing <= prev.Firing {
				t.Fatalf("window %v fired #%d after #%d", k, r.Firing, prev.Firing)
			}
			last[k] = r
		}
		counted := int64(0)
		for _, r := range last {
			counted += int64(r.Value)
		}
		side := int64(len(eventsOf(parseLog(t, log), "late_side_output")))
		dropped := res.Counters["numLateRecordsDropped"]
		if counted+side+dropped != int64(n) {
			t.Fatalf("counted %d + side output %d + dropped %d != %d records", counted, side, dropped, n)
		}
		if sideOutput && dropped != 0 || !sideOutput && side != 0 {
			t.Fatalf("side output %v: %d to the side, %d dropped", sideOutput, side, dropped)
		}
		_, again := run(t, cfg, cluster.Options{Events: recs})
		if !bytes.Equal(log, again) {
			t.Fatal("the same run wrote a different log")
		}
	})
}

// Over random jobs and network settings, no network queue ever passes
// Flink's bounds. Inside the run every subtask checks its output pool and
// its InputGate after every envelope (invariant network_buffer_bounds: a
// subpartition holds at most max-buffers-per-channel pool buffers, the pool
// lends at most its size plus the overdraft buffers, a RemoteInputChannel
// queues at most its exclusive buffers and the gate's floating ones, a
// LocalInputChannel reads one buffer at a time), and every receiver that
// its producer never sends a data buffer without a credit
// (credit_non_negative). The test also reads Flink's metrics in the log,
// an oracle apart from those checks: every outputQueueLengths entry is at
// most the pool's buffers with the overdraft ones and the events behind
// them (a barrier per concurrent checkpoint, EndOfData, EndOfPartition), and
// at most max-buffers-per-channel + 1 on the keyBy edge out of a source (a
// source stops before the record after the one that reached the bound);
// every RemoteInputChannel's inputQueueLengths entry at most its exclusive
// and the gate's floating buffers, a LocalInputChannel's at most 1;
// inPoolUsage within [0, 1], outPoolUsage within [0, (size + overdraft) /
// size].
func TestPropertyNetworkQueuesWithinFlinksBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		exclusive := rapid.IntRange(0, 3).Draw(t, "buffers_per_channel")
		floating := rapid.IntRange(0, 8).Draw(t, "floating_per_gate")
		if exclusive+floating == 0 {
			floating = 1
		}
		maxPer := rapid.IntRange(0, 12).Draw(t, "max_buffers_per_channel")
		overdraft := rapid.IntRange(0, 5).Draw(t, "overdraft")
		sources := rapid.IntRange(1, 3).Draw(t, "source_parallelism")
		windows := rapid.IntRange(1, 3).Draw(t, "window_parallelism")
		mode := rapid.SampledFrom([]string{"none", "aligned", "unaligned", "aligned-timeout"}).Draw(t, "checkpoints")
		kv := []string{"sim.duration=20 s",
			fmt.Sprintf("taskmanager.network.memory.buffers-per-channel=%d", exclusive),
			fmt.Sprintf("taskmanager.network.memory.floating-buffers-per-gate=%d", floating),
			fmt.Sprintf("taskmanager.network.memory.max-buffers-per-channel=%d", maxPer),
			fmt.Sprintf("taskmanager.network.memory.max-overdraft-buffers-per-gate=%d", overdraft),
			fmt.Sprintf("job.source.parallelism=%d", sources), fmt.Sprintf("job.window.parallelism=%d", windows),
			fmt.Sprintf("sim.taskmanagers=%d", max(sources, windows)),
			fmt.Sprintf("sim.buffer.records=%d", rapid.IntRange(1, 400).Draw(t, "buffer_records")),
			"execution.buffer-timeout=" + rapid.SampledFrom([]string{"0 ms", "10 ms", "100 ms"}).Draw(t, "buffer_timeout"),
			"sim.cost.window=" + rapid.SampledFrom([]string{"10 µs", "500 µs", "3 ms"}).Draw(t, "window_cost"),
			fmt.Sprintf("sim.source.rate=%d", rapid.IntRange(50, 3000).Draw(t, "rate")),
			"pipeline.operator-chaining.enabled=" + rapid.SampledFrom([]string{"true", "false"}).Draw(t, "chaining"),
		}
		if mode != "none" {
			kv = append(kv, "execution.checkpointing.interval=2 s")
		}
		if mode == "unaligned" || mode == "aligned-timeout" {
			kv = append(kv, "execution.checkpointing.unaligned.enabled=true")
		}
		if mode == "aligned-timeout" {
			kv = append(kv, "execution.checkpointing.aligned-checkpoint-timeout=300 ms")
		}
		cfg := settings(t, kv...)
		res, log := run(t, cfg, cluster.Options{})
		if res.Invariant != "" {
			t.Fatalf("%s broke: %s", res.Invariant, res.Failure)
		}
		// the largest pool: 3 subpartitions at the most (the parallelisms
		// drawn, the sink's default 2)
		pool := max(3+1, 3*exclusive+floating)
		for _, e := range eventsOf(parseLog(t, log), "task_metrics") {
			source := strings.HasPrefix(e.str("actor"), "source")
			if raw, ok := e["outputQueueLengths"]; ok {
				for i, n := range jsonInts(t, raw) {
					if n > int64(pool+overdraft+3) || (source && maxPer > 0 && n > int64(maxPer+1+3)) {
						t.Fatalf("%s at %d µs: subpartition %d queues %d buffers (pool %d, overdraft %d, max per channel %d)",
							e.str("actor"), e.num("vt"), i, n, pool, overdraft, maxPer)
					}
				}
			}
			if v, ok := e.float("inPoolUsage"); ok && (v < 0 || v > 1) {
				t.Fatalf("%s at %d µs: inPoolUsage %v", e.str("actor"), e.num("vt"), v)
			}
			if v, ok := e.float("outPoolUsage"); ok && (v < 0 || v > float64(pool+overdraft)/float64(min(pool, 2*exclusive+floating, 1*exclusive+floating))) {
				t.Fatalf("%s at %d µs: outPoolUsage %v", e.str("actor"), e.num("vt"), v)
			}
			if raw, ok := e["inputQueueLengths"]; ok {
				for i, n := range jsonInts(t, raw) {
					if n > int64(exclusive+floating) && n > 1 {
						t.Fatalf("%s at %d µs: input channel %d queues %d buffers, bound %d", e.str("actor"), e.num("vt"), i, n, exclusive+floating)
					}
				}
			}
		}
	})
}
