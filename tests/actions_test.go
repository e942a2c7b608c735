package tests

import (
	"testing"

	"github.com/flinksim/flinksim/sim/config"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/action"
)

func actions(t *testing.T, texts ...string) []action.Action {
	t.Helper()
	var out []action.Action
	for _, s := range texts {
		a, err := action.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// TestSendEvent sends records by hand into the generated stream. The
// generator's event time at virtual time 0 is 2023-11-14T22:13:20Z, 20 s
// into a minute, so at 30 s "now" is 50 s into that minute: a record at
// ts=now falls into the current 1-minute window and is counted there; one at
// ts=now-60s belongs to the window before, which fired once the watermark
// (now - 5 s - 1 ms) passed its end, so it is late and dropped
// (numLateRecordsDropped). An explicit partition is kept.
func TestSendEvent(t *testing.T) {
	cfg := settings(t, "sim.duration=100 s")
	res, log := run(t, cfg, cluster.Options{Actions: actions(t,
		"at=30s send-event key=probe ts=now partition=3 amount=7",
		"at=30s send-event key=late-probe ts=now-60s")})
	evs := parseLog(t, log)
	sent := eventsOf(evs, "event_sent")
	if len(sent) != 2 {
		t.Fatalf("%d event_sent, want 2", len(sent))
	}
	if sent[0].num("partition") != 3 || sent[0].str("key") != "probe" {
		t.Fatalf("first record went to %v", sent[0])
	}
	ts := sent[0].num("timestamp")
	if off := (ts - 1_700_000_000_000) - 30_000; off < -2_000 || off > 0 {
		t.Fatalf("ts=now gave %d, %d ms from the generator's clock at 30 s", ts, off)
	}
	if sent[1].num("timestamp") != ts-60_000 {
		t.Fatalf("ts=now-60s gave %d, want %d", sent[1].num("timestamp"), ts-60_000)
	}
	start := ts - ts%60_000
	found := false
	for _, f := range eventsOf(evs, "window_fired") {
		if f.str("key") == "probe" {
			if f.num("window_start") != start || f.num("value") != 1 {
				t.Fatalf("probe fired %v, want window_start %d value 1", f, start)
			}
			found = true
		}
		if f.str("key") == "late-probe" {
			t.Fatalf("the late record fired a window: %v", f)
		}
	}
	if !found {
		t.Fatal("the probe's window never fired")
	}
	if res.Counters["numLateRecordsDropped"] != 1 {
		t.Fatalf("numLateRecordsDropped %d, want 1 (the late probe)", res.Counters["numLateRecordsDropped"])
	}
}

// TestPausePartition stalls the producer of partition 2 from 10 s to 20 s:
// its end offset stands still in kafka_metrics meanwhile, the others grow,
// and it grows again after the resume.
func TestPausePartition(t *testing.T) {
	cfg := settings(t, "sim.duration=30 s")
	_, log := run(t, cfg, cluster.Options{Actions: actions(t, "at=10s pause-partition 2", "at=20s resume-partition 2")})
	end := map[int64][]int64{} // vt in s -> end offsets
	for _, m := range eventsOf(parseLog(t, log), "kafka_metrics") {
		for _, p := range m["partitions"].([]any) {
			pm := p.(map[string]any)
			end[m.num("vt")/1_000_000] = append(end[m.num("vt")/1_000_000], logEvent(pm).num("end_offset"))
		}
	}
	if end[11][2] != end[19][2] {
		t.Fatalf("partition 2 grew while paused: %d at 11 s, %d at 19 s", end[11][2], end[19][2])
	}
	if end[19][0] <= end[11][0] || end[25][2] <= end[19][2] {
		t.Fatalf("partition 0 %d -> %d, partition 2 after resume %d -> %d", end[11][0], end[19][0], end[19][2], end[25][2])
	}
}

// TestSetRestartsFromSavepoint switches on unaligned checkpoints while the
// job runs: as a running Flink job takes new configuration only through a
// restart, the job stops with a savepoint and job-2 starts from it, whose
// checkpoints are unaligned. The output consumer's isolation changes only
// the view.
func TestSetRestartsFromSavepoint(t *testing.T) {
	cfg := settings(t, "sim.duration=60 s", "execution.checkpointing.interval=10 s", "sink.delivery-guarantee=exactly-once")
	res, log := run(t, cfg, cluster.Options{Actions: actions(t, "at=25s set execution.checkpointing.unaligned.enabled=true",
		"at=40s set sim.output.isolation-level=read_committed")})
	evs := parseLog(t, log)
	var before, after int
	for _, c := range eventsOf(evs, "checkpoint_triggered") {
		switch {
		case c.str("kind") == "periodic" && c.num("vt") < 25_000_000 && c["unaligned"] == false:
			before++
		case c.str("kind") == "periodic" && c.num("vt") > 25_000_000 && c["unaligned"] == true:
			after++
		case c.str("kind") != "stop-with-savepoint":
			t.Fatalf("unexpected checkpoint %v", c)
		}
	}
	if before != 2 || after < 3 {
		t.Fatalf("%d aligned checkpoints before, %d unaligned after", before, after)
	}
	var jobs []string
	for _, s := range eventsOf(evs, "job_status") {
		jobs = append(jobs, s.str("job_id")+" "+s.str("status"))
	}
	want := []string{"job-1 CREATED", "job-1 RUNNING", "job-1 FINISHED", "job-2 CREATED", "job-2 RUNNING"}
	if len(jobs) != len(want) {
		t.Fatalf("job statuses %v, want %v", jobs, want)
	}
	for i := range want {
		if jobs[i] != want[i] {
			t.Fatalf("job statuses %v, want %v", jobs, want)
		}
	}
	if res.OutputIsolation != string(config.ReadCommitted) {
		t.Fatalf("output view at %s", res.OutputIsolation)
	}
}

// TestSetIdlenessFixesTheTrap is the reader-without-split trap repaired
// while the job runs: three readers for two partitions hold every
// watermark at Long.MIN_VALUE, so nothing fires until `set
// job.watermark.idleness` restarts the job with withIdleness.
func TestSetIdlenessFixesTheTrap(t *testing.T) {
	cfg := settings(t, "sim.duration=150 s", "job.source.partitions=2", "parallelism.default=3", "sim.taskmanagers=3")
	_, log := run(t, cfg, cluster.Options{Actions: actions(t, "at=70s set job.watermark.idleness=5s")})
	fired := eventsOf(parseLog(t, log), "window_fired")
	if len(fired) == 0 {
		t.Fatal("no window fired after idleness was set")
	}
	if first := fired[0].num("vt"); first < 70_000_000 {
		t.Fatalf("a window fired at %d µs, before idleness was set", first)
	}
}
