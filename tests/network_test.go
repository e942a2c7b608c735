package tests

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/exchange"
)

// eoClicks are the settings of the exactly-once playground-clicks job of
// the failover tests.
var eoClicks = []string{"sim.events.pace=event-time", "execution.checkpointing.interval=10 s",
	"sink.delivery-guarantee=exactly-once", "sim.output.isolation-level=read_committed"}

// A cut between two TaskManagers breaks the data connections across it: the
// channels on both sides fail their tasks with Flink's
// RemoteTransportException, the job fails over (again while the cut lasts,
// since the new attempt's partition requests are lost too), and after the
// heal the exactly-once output is the output of the run without the cut.
// The scheduler logs the cut and its heal with what it dropped; the run
// replays byte for byte.
func TestCutBetweenTaskManagersFailsTheirTasks(t *testing.T) {
	input := readEvents(t, dataPath("playground-clicks.jsonl"), settings(t))
	cfg := settings(t, eoClicks...)
	base, _ := run(t, cfg, cluster.Options{Events: input})
	opt := cluster.Options{Events: input, Actions: actions(t, "at=40s partition-network tm-1 tm-2 for 3s")}
	res, log := run(t, cfg, opt)
	evs := parseLog(t, log)
	cuts, heals := eventsOf(evs, "network_partition"), eventsOf(evs, "network_partition_healed")
	if len(cuts) != 1 || cuts[0].str("host_a") != "tm-1" || cuts[0].num("duration_ms") != 3000 || cuts[0].num("vt") != 40_000_000 {
		t.Fatalf("cut events %v", cuts)
	}
	if len(heals) != 1 || heals[0].num("vt") != 43_000_000 || heals[0].num("dropped_envelopes") == 0 {
		t.Fatalf("heal events %v", heals)
	}
	errs := eventsOf(evs, "channel_error")
	if len(errs) < 2 || errs[0].num("vt") < 40_000_000 {
		t.Fatalf("channel errors %v", errs)
	}
	want := exchange.RemoteTransportException("tm-2:data#0", "tm-2")
	failed := false
	for _, e := range eventsOf(evs, "failover") {
		failed = failed || e.str("cause") == want
	}
	if !failed {
		t.Fatalf("no failover with %q: %v", want, eventsOf(evs, "failover"))
	}
	if !mapsEqual(resultSet(t, base), resultSet(t, res)) || res.Duplicates != 0 || res.JobStatus != "FINISHED" {
		t.Fatalf("job %s, %d results (%d duplicates), want the %d of the run without the cut", res.JobStatus, len(res.Sink), res.Duplicates, len(base.Sink))
	}
	if _, again := run(t, cfg, opt); !bytes.Equal(log, again) {
		t.Fatal("a run with a network cut is not reproducible")
	}
}

// A TaskManager cut off from the JobManager just misses its heartbeats: the
// JobManager and the ResourceManager lose it after heartbeat.timeout (a
// replacement starts), the TaskManager loses them too, fails its tasks and
// frees its slots, and after the heal registers again. The exactly-once
// output is the output of the run without the cut.
func TestCutFromTheJobManagerMissesHeartbeats(t *testing.T) {
	input := readEvents(t, dataPath("playground-clicks.jsonl"), settings(t))
	cfg := settings(t, eoClicks...)
	base, _ := run(t, cfg, cluster.Options{Events: input})
	res, log := run(t, cfg, cluster.Options{Events: input, Actions: actions(t, "at=40s partition-network tm-1 jobmanager for 12s")})
	evs := parseLog(t, log)
	var sides []string
	for _, e := range eventsOf(evs, "heartbeat_timeout") {
		sides = append(sides, e.str("actor")+":"+e.str("task_manager")+e.str("job_manager")+e.str("resource_manager"))
	}
	for _, want := range []string{"jobmanager:tm-1", "tm-1:jobmanager", "tm-1:resourcemanager"} {
		if !strings.Contains(strings.Join(sides, " "), want) {
			t.Fatalf("heartbeat timeouts %v, want %s", sides, want)
		}
	}
	lost := eventsOf(evs, "taskmanager_lost")
	if len(lost) != 1 || lost[0].str("task_manager") != "tm-1" || lost[0].str("replacement") != "tm-3" {
		t.Fatalf("taskmanager_lost %v", lost)
	}
	// tm-1 fails its own tasks, then registers again once the cut heals
	failedByTM, reregistered := 0, false
	for _, e := range evs {
		if e.str("actor") == "tm-1" && e.str("event") == "task_state" && e.str("state") == "FAILED" {
			failedByTM++
		}
		if e.str("event") == "task_executor_registered" && e.str("task_manager") == "tm-1" && e.num("vt") > 52_000_000 {
			reregistered = true
		}
	}
	if failedByTM == 0 || !reregistered {
		t.Fatalf("tm-1 failed %d tasks, registered again after the heal: %v", failedByTM, reregistered)
	}
	if !mapsEqual(resultSet(t, base), resultSet(t, res)) || res.Duplicates != 0 || res.JobStatus != "FINISHED" {
		t.Fatalf("job %s, %d results (%d duplicates), want the %d of the run without the cut", res.JobStatus, len(res.Sink), res.Duplicates, len(base.Sink))
	}
}

// A cut that names a host nothing lives on drops nothing.
func TestCutOfNothing(t *testing.T) {
	_, log := run(t, settings(t, "sim.duration=20 s"), cluster.Options{Actions: actions(t, "at=5s partition-network tm-7 jobmanager for 2s")})
	heals := eventsOf(parseLog(t, log), "network_partition_healed")
	if len(heals) != 1 || heals[0].num("dropped_envelopes") != 0 {
		t.Fatalf("heals %v", heals)
	}
}

// Network cuts are the kernel's: the Hollywood driver and the plain loop
// write the same log for a run with both kinds of cut.
func TestCutsSameOnBothDrivers(t *testing.T) {
	input := readEvents(t, dataPath("playground-clicks.jsonl"), settings(t))
	cfg := settings(t, eoClicks...)
	opt := cluster.Options{Events: input, Actions: actions(t, "at=30s partition-network tm-1 tm-2 for 2s",
		"at=60s partition-network jobmanager tm-2 for 9s")}
	var a, b bytes.Buffer
	opt.Log = &a
	if _, err := cluster.Run(cfg, opt); err != nil {
		t.Fatal(err)
	}
	opt.Log = &b
	if _, err := cluster.RunPlain(cfg, opt); err != nil {
		t.Fatal(err)
	}
	if line, x, y, differ := eventlog.FirstDifference(a.Bytes(), b.Bytes()); differ {
		t.Fatalf("the drivers differ at line %d:\n  actors: %s\n  plain:  %s", line, x, y)
	}
}
