package tests

import (
	"encoding/json"
	"testing"

	"github.com/flinksim/flinksim/cluster"
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
		if d := c.num("duration_ms"); d > 1_010 {
			t.Errorf("checkpoint %d took %d ms, want about the 1 s timeout", c.num("checkpoint_id"), d)
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
