package tests

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/jobgraph"
)

// A TaskManager that stalls longer than heartbeat.timeout (5 s) wakes a
// zombie: the JobManager failed the job over without it, and the
// ResourceManager replaced it; as it wakes it hears the JobManager's
// disconnect and fails its old tasks, whose reports the JobManager ignores
// (fenced by the attempt), and it registers again. The exactly-once output
// is the run's without the stall; the scheduler logs both ends of it; the
// run replays byte for byte.
func TestStalledTaskManagerWakesAZombie(t *testing.T) {
	input := readEvents(t, dataPath("playground-clicks.jsonl"), settings(t))
	cfg := settings(t, eoClicks...)
	base, _ := run(t, cfg, cluster.Options{Events: input})
	opt := cluster.Options{Events: input, Actions: actions(t, "at=40s stall-taskmanager tm-1 for 12s")}
	res, log := run(t, cfg, opt)
	evs := parseLog(t, log)
	stalls, resumes := eventsOf(evs, "host_stalled"), eventsOf(evs, "host_resumed")
	if len(stalls) != 1 || stalls[0].str("host") != "tm-1" || stalls[0].num("vt") != 40_000_000 || stalls[0].num("duration_ms") != 12_000 {
		t.Fatalf("host_stalled %v", stalls)
	}
	if len(resumes) != 1 || resumes[0].num("vt") != 52_000_000 || resumes[0].num("held_envelopes") == 0 {
		t.Fatalf("host_resumed %v", resumes)
	}
	timedOut := false
	for _, e := range eventsOf(evs, "heartbeat_timeout") {
		timedOut = timedOut || (e.str("actor") == jobgraph.JobManagerName && e.str("task_manager") == "tm-1")
	}
	if !timedOut {
		t.Fatal("the JobManager did not time tm-1 out")
	}
	// the zombie fails its old tasks as it wakes; the JobManager takes no
	// state of an attempt older than the last submitted
	zombieFailed, last := 0, int64(-1)
	for _, e := range evs {
		switch {
		case e.str("event") == "submit_task":
			last = max(last, e.num("attempt"))
		case e.str("event") == "task_state" && e.str("actor") == "tm-1" && e.str("state") == "FAILED" && e.num("vt") == 52_000_000:
			zombieFailed++
		case e.str("event") == "task_state" && e.str("actor") == jobgraph.JobManagerName:
			id, err := jobgraph.ParseActorID(e.str("task"))
			if err == nil && int64(id.Attempt()) < last {
				t.Fatalf("the JobManager took %s %s of attempt %d while %d is current", e.str("task"), e.str("state"), id.Attempt(), last)
			}
		}
	}
	if zombieFailed == 0 {
		t.Fatal("tm-1 failed none of its old tasks as it woke")
	}
	reregistered := false
	for _, e := range eventsOf(evs, "task_executor_registered") {
		reregistered = reregistered || (e.str("task_manager") == "tm-1" && e.num("vt") > 52_000_000)
	}
	if !reregistered {
		t.Fatal("tm-1 did not register again after it woke")
	}
	if !mapsEqual(resultSet(t, base), resultSet(t, res)) || res.Duplicates != 0 || res.JobStatus != "FINISHED" {
		t.Fatalf("job %s, %d results (%d duplicates), want the %d of the run without the stall", res.JobStatus, len(res.Sink), res.Duplicates, len(base.Sink))
	}
	if _, again := run(t, cfg, opt); !bytes.Equal(log, again) {
		t.Fatal("a run with a stall is not reproducible")
	}
}

// Jitter on every link changes when envelopes arrive, not what the
// exactly-once job writes; the run replays byte for byte.
func TestJitterKeepsTheOutput(t *testing.T) {
	input := readEvents(t, dataPath("playground-clicks.jsonl"), settings(t))
	cfg := settings(t, eoClicks...)
	base, baseLog := run(t, cfg, cluster.Options{Events: input})
	opt := cluster.Options{Events: input, Actions: actions(t, "at=20s network-jitter 5ms for 60s")}
	res, log := run(t, cfg, opt)
	evs := parseLog(t, log)
	ended := eventsOf(evs, "network_jitter_ended")
	if len(eventsOf(evs, "network_jitter")) != 1 || len(ended) != 1 || ended[0].num("jittered_envelopes") == 0 {
		t.Fatalf("jitter events %v", ended)
	}
	if bytes.Equal(log, baseLog) {
		t.Fatal("the jitter changed nothing in the log")
	}
	if !mapsEqual(resultSet(t, base), resultSet(t, res)) || res.Duplicates != 0 || res.JobStatus != "FINISHED" {
		t.Fatalf("job %s, %d results (%d duplicates), want the %d of the run without jitter", res.JobStatus, len(res.Sink), res.Duplicates, len(base.Sink))
	}
	if _, again := run(t, cfg, opt); !bytes.Equal(log, again) {
		t.Fatal("a run with jitter is not reproducible")
	}
}

// A notifyCheckpointComplete lost on its way to window-0 (the sink is
// chained to it) leaves that checkpoint's transaction
// pre-committed; the next checkpoint's notification commits it with its
// own (CommitterOperator commits every committable up to the checkpoint),
// so the exactly-once output is the run's without the loss.
func TestLostNotificationCommitsOnTheNext(t *testing.T) {
	input := readEvents(t, dataPath("playground-clicks.jsonl"), settings(t))
	cfg := settings(t, eoClicks...)
	base, _ := run(t, cfg, cluster.Options{Events: input})
	res, log := run(t, cfg, cluster.Options{Events: input, Actions: actions(t, "at=35s lose-rpc notify-checkpoint-complete on window-0 within 15s")})
	evs := parseLog(t, log)
	lost := eventsOf(evs, "rpc_lost")
	if len(lost) != 1 || lost[0].str("rpc") != "notify-checkpoint-complete" || lost[0].str("from") != "checkpoint-coordinator" {
		t.Fatalf("rpc_lost %v", lost)
	}
	// the subtask that missed it commits its transaction later, with the
	// next checkpoint's
	sub := lost[0].str("to")
	lostAt := lost[0].num("vt")
	preAt, committedAt := int64(-1), int64(-1)
	for _, e := range eventsOf(evs, "transaction") {
		if e.str("producer") != sub || e.num("vt") > lostAt+20_000_000 {
			continue
		}
		if e.str("op") == "pre_commit" && e.num("vt") < lostAt {
			preAt = e.num("vt")
			committedAt = -1
			txn := e.str("transactional_id")
			for _, c := range eventsOf(evs, "transaction") {
				if c.str("op") == "commit" && c.str("transactional_id") == txn {
					committedAt = c.num("vt")
					break
				}
			}
		}
	}
	if preAt < 0 || committedAt < lostAt+5_000_000 {
		t.Fatalf("%s's transaction pre-committed at %d, committed at %d: want the commit a checkpoint after the loss at %d", sub, preAt, committedAt, lostAt)
	}
	if !mapsEqual(resultSet(t, base), resultSet(t, res)) || res.Duplicates != 0 || res.JobStatus != "FINISHED" {
		t.Fatalf("job %s, %d results (%d duplicates), want the %d of the run without the loss", res.JobStatus, len(res.Sink), res.Duplicates, len(base.Sink))
	}
}

// A lost acknowledgeCheckpoint leaves its checkpoint pending until
// execution.checkpointing.timeout expires it; with no tolerated failure the
// CheckpointFailureManager fails the job over, which restores the latest
// completed checkpoint: the exactly-once output is the run's without the
// loss.
func TestLostAcknowledgementExpiresTheCheckpoint(t *testing.T) {
	input := readEvents(t, dataPath("playground-clicks.jsonl"), settings(t))
	cfg := settings(t, append([]string{"execution.checkpointing.timeout=20 s"}, eoClicks...)...)
	base, _ := run(t, cfg, cluster.Options{Events: input})
	res, log := run(t, cfg, cluster.Options{Events: input, Actions: actions(t, "at=35s lose-rpc acknowledge-checkpoint within 15s")})
	evs := parseLog(t, log)
	lost := eventsOf(evs, "rpc_lost")
	if len(lost) != 1 || lost[0].str("rpc") != "acknowledge-checkpoint" || lost[0].str("to") != "checkpoint-coordinator" {
		t.Fatalf("rpc_lost %v", lost)
	}
	expired := false
	for _, e := range eventsOf(evs, "checkpoint_failed") {
		expired = expired || e.str("reason") == "CHECKPOINT_EXPIRED"
	}
	failedOver := false
	for _, e := range eventsOf(evs, "failover") {
		failedOver = failedOver || strings.Contains(e.str("cause"), "Exceeded checkpoint tolerable failure threshold")
	}
	if !expired || !failedOver {
		t.Fatalf("checkpoint expired %v, job failed over for it %v", expired, failedOver)
	}
	if !mapsEqual(resultSet(t, base), resultSet(t, res)) || res.Duplicates != 0 || res.JobStatus != "FINISHED" {
		t.Fatalf("job %s, %d results (%d duplicates), want the %d of the run without the loss", res.JobStatus, len(res.Sink), res.Duplicates, len(base.Sink))
	}
}
