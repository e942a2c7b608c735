package tests

import (
	"strings"
	"testing"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/jobgraph"
)

// A checkpoint storage outage fails the uploads of the checkpoint taken
// while it lasts: each task whose asynchronous part overlaps it declines
// with CHECKPOINT_ASYNC_EXCEPTION (AsyncCheckpointRunnable), the
// coordinator aborts the checkpoint, and with
// execution.checkpointing.tolerable-failed-checkpoints 0 (Flink's default)
// CheckpointFailureManager fails the job over: "Exceeded checkpoint
// tolerable failure threshold". The job restores the latest completed
// checkpoint, and the exactly-once output is the run's without the outage.
func TestStorageOutageFailsTheJobOver(t *testing.T) {
	input := readEvents(t, dataPath("playground-clicks.jsonl"), settings(t))
	cfg := settings(t, eoClicks...)
	base, _ := run(t, cfg, cluster.Options{Events: input})
	// checkpoints every 10 s: the one of 47.9 s uploads during it
	res, log := run(t, cfg, cluster.Options{Events: input, Actions: actions(t, "at=47s fail-checkpoint-storage for 2s")})
	evs := parseLog(t, log)
	down, up := eventsOf(evs, "checkpoint_storage_unavailable"), eventsOf(evs, "checkpoint_storage_available")
	failed := eventsOf(evs, "checkpoint_upload_failed")
	if len(down) != 1 || down[0].num("vt") != 47_000_000 || len(up) != 1 || up[0].num("vt") != 49_000_000 {
		t.Fatalf("outage events %v, %v", down, up)
	}
	if len(failed) == 0 || up[0].num("failed_uploads") != int64(len(failed)) {
		t.Fatalf("%d uploads failed, the outage's end counts %d", len(failed), up[0].num("failed_uploads"))
	}
	id := failed[0].num("checkpoint_id")
	aborted := false
	for _, e := range eventsOf(evs, "checkpoint_failed") {
		if e.num("checkpoint_id") == id {
			aborted = e.str("reason") == "CHECKPOINT_ASYNC_EXCEPTION" && e.str("task") != ""
		}
	}
	failedOver := false
	for _, e := range eventsOf(evs, "failover") {
		failedOver = failedOver || (e.num("vt") >= failed[0].num("vt") && strings.Contains(e.str("cause"), "Exceeded checkpoint tolerable failure threshold"))
	}
	if !aborted || !failedOver {
		t.Fatalf("checkpoint %d aborted for the task's CHECKPOINT_ASYNC_EXCEPTION %v, job failed over for it %v", id, aborted, failedOver)
	}
	completedAfter := false
	for _, e := range eventsOf(evs, "checkpoint_completed") {
		completedAfter = completedAfter || e.num("checkpoint_id") > id
	}
	if !completedAfter {
		t.Fatalf("no checkpoint after %d completed", id)
	}
	if !mapsEqual(resultSet(t, base), resultSet(t, res)) || res.Duplicates != 0 || res.JobStatus != "FINISHED" {
		t.Fatalf("job %s, %d results (%d duplicates), want the %d of the run without the outage", res.JobStatus, len(res.Sink), res.Duplicates, len(base.Sink))
	}
}

// With tolerable-failed-checkpoints 3 the same outage costs one checkpoint
// and no failover: the next checkpoint completes, which resets the
// failure counter, and its notification commits the failed one's
// transaction too.
func TestStorageOutageWithinTolerableFailures(t *testing.T) {
	input := readEvents(t, dataPath("playground-clicks.jsonl"), settings(t))
	cfg := settings(t, append([]string{"execution.checkpointing.tolerable-failed-checkpoints=3"}, eoClicks...)...)
	base, _ := run(t, cfg, cluster.Options{Events: input})
	res, log := run(t, cfg, cluster.Options{Events: input, Actions: actions(t, "at=47s fail-checkpoint-storage for 2s")})
	evs := parseLog(t, log)
	if len(eventsOf(evs, "checkpoint_upload_failed")) == 0 {
		t.Fatal("no upload failed")
	}
	if fo := eventsOf(evs, "failover"); len(fo) != 0 {
		t.Fatalf("failed over within the tolerable failures: %v", fo)
	}
	for _, e := range eventsOf(evs, "task_state") {
		if e.str("actor") == jobgraph.JobManagerName && e.str("state") == "FAILED" {
			t.Fatalf("a task failed: %v", e)
		}
	}
	if !mapsEqual(resultSet(t, base), resultSet(t, res)) || res.Duplicates != 0 || res.JobStatus != "FINISHED" {
		t.Fatalf("job %s, %d results (%d duplicates), want the %d of the run without the outage", res.JobStatus, len(res.Sink), res.Duplicates, len(base.Sink))
	}
}

// A Kafka outage holds what crosses to and from the broker's host until it
// ends (the clients retry until the broker is back): the broker serves no
// fetch, produce or transaction request meanwhile and gets them all as it
// comes back. With the sink's transaction.timeout.ms as KafkaSinkBuilder
// sets it (1 h) no transaction times out, and the exactly-once output is
// the run's without the outage.
func TestKafkaOutageHoldsTheClients(t *testing.T) {
	input := readEvents(t, dataPath("playground-clicks.jsonl"), settings(t))
	cfg := settings(t, eoClicks...)
	base, _ := run(t, cfg, cluster.Options{Events: input})
	res, log := run(t, cfg, cluster.Options{Events: input, Actions: actions(t, "at=48s kafka-unavailable for 20s")})
	evs := parseLog(t, log)
	down, up := eventsOf(evs, "kafka_unavailable"), eventsOf(evs, "kafka_available")
	if len(down) != 1 || down[0].num("vt") != 48_000_000 || down[0].str("host") != "kafka" || len(up) != 1 || up[0].num("vt") != 68_000_000 || up[0].num("held_envelopes") == 0 {
		t.Fatalf("outage events %v, %v", down, up)
	}
	during, after := 0, 0
	for _, e := range eventsOf(evs, "transaction") {
		switch vt := e.num("vt"); {
		case vt > 48_000_000 && vt < 68_000_000:
			during++
		case vt == 68_000_000:
			after++
		}
		if strings.Contains(e.str("note"), "transaction.timeout.ms") {
			t.Fatalf("a transaction timed out: %v", e)
		}
	}
	// the checkpoint of 57.9 s pre-committed and began transactions, and
	// its notification committed: all of it reaches the broker at 68 s
	if during != 0 || after == 0 {
		t.Fatalf("%d transaction requests served during the outage, %d as it ended", during, after)
	}
	if !mapsEqual(resultSet(t, base), resultSet(t, res)) || res.Duplicates != 0 || res.JobStatus != "FINISHED" {
		t.Fatalf("job %s, %d results (%d duplicates), want the %d of the run without the outage", res.JobStatus, len(res.Sink), res.Duplicates, len(base.Sink))
	}
}
