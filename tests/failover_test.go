package tests

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/action"
)

func kill(t *testing.T, at time.Duration, tm string) []action.Action {
	a, err := action.Parse(fmt.Sprintf("at=%dms kill-taskmanager %s", at.Milliseconds(), tm))
	if err != nil {
		t.Fatal(err)
	}
	return []action.Action{a}
}

// A killed TaskManager is noticed only when its heartbeat times out: the
// restart starts at kill time + heartbeat.timeout (within one
// heartbeat.interval) + the restart delay, in new slots from a replacement
// TaskManager, with attempt numbers in the task names.
func TestKilledTaskManagerRestartTiming(t *testing.T) {
	cfg := settings(t, "sim.duration=40 s", "heartbeat.interval=1 s", "heartbeat.timeout=5 s",
		"restart-strategy.type=fixed-delay", "restart-strategy.fixed-delay.delay=2 s")
	res, log := run(t, cfg, cluster.Options{Actions: kill(t, 15*time.Second, "tm-1")})
	evs := parseLog(t, log)
	var restartAt int64 = -1
	for _, e := range eventsOf(evs, "job_status") {
		if e.str("status") == "RUNNING" && e.str("previous") == "RESTARTING" {
			restartAt = e.num("vt")
		}
	}
	lo, hi := int64((15+5-1+2)*1_000_000), int64((15+5+1+2)*1_000_000)
	if restartAt < lo || restartAt > hi {
		t.Fatalf("restart at %d µs, want in [%d, %d] (kill 15 s + timeout 5 s ± interval 1 s + delay 2 s)", restartAt, lo, hi)
	}
	if n := len(eventsOf(evs, "taskmanager_lost")); n != 1 {
		t.Fatalf("%d taskmanager_lost events", n)
	}
	redeployed := 0
	for _, e := range eventsOf(evs, "submit_task") {
		if e.num("attempt") == 1 {
			redeployed++
			if strings.Contains(e.str("task_manager"), "tm-1") {
				t.Fatalf("%s redeployed on the killed tm-1", e.str("task"))
			}
			if !strings.HasSuffix(e.str("task"), "#1") {
				t.Fatalf("attempt 1 task named %s", e.str("task"))
			}
		}
	}
	if redeployed != 4 || res.JobStatus != "RUNNING" {
		t.Fatalf("%d tasks redeployed, job %s", redeployed, res.JobStatus)
	}
}

// Without checkpointing Flink's default restart strategy is none: the job
// fails when the TaskManager's heartbeat times out.
func TestKilledTaskManagerWithoutRestartStrategyFailsTheJob(t *testing.T) {
	cfg := settings(t, "sim.duration=40 s")
	res, log := run(t, cfg, cluster.Options{Actions: kill(t, 10*time.Second, "tm-2")})
	if res.JobStatus != "FAILED" {
		t.Fatalf("job %s, want FAILED", res.JobStatus)
	}
	if !bytes.Contains(log, []byte("Recovery is suppressed by NoRestartBackoffTimeStrategy")) {
		t.Fatal("the log does not say why the job was not restarted")
	}
}

// Restarted without a completed checkpoint, the job reads the topic again
// from the starting offsets: windows that fired before the failure fire
// again, so the plain sink writes them twice (duplicates by result
// identity: key, window, firing). The same run replays byte for byte.
func TestRestartWithoutCheckpointWritesDuplicates(t *testing.T) {
	skipInShort(t)
	cfg := settings(t, "sim.duration=150 s", "restart-strategy.type=fixed-delay")
	opt := cluster.Options{Actions: kill(t, 100*time.Second, "tm-1")}
	res, log := run(t, cfg, opt)
	seen := map[result]int{}
	dups := 0
	for _, r := range sinkResults(t, res) {
		seen[r]++
		if seen[r] == 2 {
			dups++
		}
	}
	if dups == 0 {
		t.Fatal("no result was written twice after restarting from the starting offsets")
	}
	_, again := run(t, cfg, opt)
	if !bytes.Equal(log, again) {
		t.Fatal("a run with a kill is not reproducible")
	}
}
