package campaign

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/swarm"
)

// runRegression runs the scenario a failed swarm seed wrote with --keep
// (testdata/swarm/NAME.scenario.json, the scenario as the generator drew it
// then, so later changes to the generator do not move it) and requires
// every invariant to hold now.
func runRegression(t *testing.T, name string) {
	t.Helper()
	sc, ref, run := runKept(t, name)
	if v := swarm.Check(&sc, ref, run); v.Class != swarm.ClassOK {
		t.Fatalf("seed %d: %s %s: %v\nreproduce with: %s", sc.Seed, v.Class, v.Invariant(), v.Violations, RunCommand(&sc, false))
	}
}

// runKept runs both runs of the scenario kept in
// testdata/swarm/NAME.scenario.json.
func runKept(t *testing.T, name string) (sc swarm.Scenario, ref, run *swarm.Run) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "swarm", name+".scenario.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	return sc, RunScenario(cluster.RunPlain, &sc, true, 2*time.Minute, nil), RunScenario(cluster.RunPlain, &sc, false, 2*time.Minute, nil)
}

// A source with no exclusive buffers and one floating buffer per gate got an
// output pool of one buffer for three subpartitions and crawled: the
// reference run's sink watermark never reached the horizon. Flink's pool is
// never smaller than numSubpartitions + 1.
func TestSwarmSeed26LivenessWatermark(t *testing.T) { runRegression(t, "seed-26-liveness_watermark") }

// swarmLines runs seeds [from, from+n) at parallel and returns the per-seed
// lines.
func swarmLines(t *testing.T, from uint64, n, parallel int) []string {
	t.Helper()
	var lines []string
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = from + uint64(i)
	}
	Campaign{Parallel: parallel, WallLimit: time.Minute}.RunSeeds(seeds, &bytes.Buffer{},
		func(r SeedResult) { lines = append(lines, r.Line()) })
	return lines
}

// Two swarm runs of the same seed range give the same per-seed outcomes and
// scenario lines, whatever the number of workers and the order they finish
// in.
func TestSwarmSameLinesWhateverTheWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 12 scenarios")
	}
	one := swarmLines(t, 1, 6, 1)
	two := swarmLines(t, 1, 6, 2)
	if len(one) != 6 || strings.Join(one, "\n") != strings.Join(two, "\n") {
		t.Fatalf("--parallel 1:\n%s\n--parallel 2:\n%s", strings.Join(one, "\n"), strings.Join(two, "\n"))
	}
	for i, l := range one {
		if !strings.HasPrefix(l, "seed "+string(rune('1'+i))+" ") {
			t.Fatalf("line %d out of seed order: %s", i, l)
		}
	}
}

// After a rescale under watermark alignment the new job's reader was held
// back for ever: the JobMaster kept the old job's alignment group, with the
// watermark of a reader the new job no longer has, and took a last report
// of the old job's readers after the new job started. The new job now
// aligns its own readers only.
func TestSwarmSeed250LivenessWatermark(t *testing.T) { runRegression(t, "seed-250-liveness_watermark") }

// The swarm's own mistakes, each once a false failure: a window purged and
// made again after a rescale (its firings start over at 1) counted once
// (records_accounted); a session that fired and then merged with a late
// record into a bigger one not left out of the comparison
// (exactly_once_output); a stop-with-savepoint that failed because a
// TaskManager was lost meanwhile taken for a job that should have finished
// (liveness_job_running).
func TestSwarmSeed364RecordsAccounted(t *testing.T) { runRegression(t, "seed-364-records_accounted") }

// A late record produced after the flush counted in a window (its reader
// ran ahead of one that had not read the flush yet) is no over-count.
func TestSwarmSeed1634RecordsAccounted(t *testing.T) { runRegression(t, "seed-1634-records_accounted") }

func TestSwarmSeed1199ExactlyOnceOutput(t *testing.T) {
	runRegression(t, "seed-1199-exactly_once_output")
}

func TestSwarmSeed537LivenessJobRunning(t *testing.T) {
	runRegression(t, "seed-537-liveness_job_running")
}

// Known limitations the swarm found, not fixed: each test fails until the
// simulator models what Flink does.

// A replacement TaskManager killed before it registered was never replaced:
// the ResourceManager replaced only a registered TaskManager whose heartbeat
// timed out, so the job waited for slots for ever. Flink's active
// ResourceManager hears of the terminated worker from Kubernetes or YARN
// (onWorkerTerminated) and starts another while its slots are wanted.
func TestSwarmSeed960LivenessJobRunning(t *testing.T) {
	runRegression(t, "seed-960-liveness_job_running")
}

// A short cut between a TaskManager and the JobManager during a restart
// lost the SubmitTask of the tasks deployed there: they never started and
// the job waited for ever. Flink's submitTask RPC fails after
// pekko.ask.timeout and the JobMaster fails the deployment over.
func TestSwarmSeed59LivenessCheckpoint(t *testing.T) {
	runRegression(t, "seed-59-liveness_checkpoint")
}

// A rescale asked for while the restarted tasks were still INITIALIZING was
// declined (NOT_ALL_REQUIRED_TASKS_RUNNING), but the periodic scheduler it
// had stopped for the stop-with-savepoint stayed stopped: no checkpoint ever
// completed again. Flink starts the scheduler again when the savepoint
// cannot be created.
func TestSwarmSeed363LivenessCheckpoint(t *testing.T) {
	runRegression(t, "seed-363-liveness_checkpoint")
}

// With checkpointing off, after two restarts from the earliest offsets the
// reader catches up under backpressure; its splits were taken for idle
// (the idleness timer ran on virtual processing time) and the watermark ran
// ahead of their backlog, so records the reference run fired on time went
// to the late side output. Flink's idleness clock (PausableRelativeClock)
// stands still while the task is backpressured.
func TestSwarmSeed2394AtLeastOnceOutput(t *testing.T) {
	runRegression(t, "seed-2394-at_least_once_output")
}

// An exactly-once job lost results: tm-7 killed, tm-8 cut off from the
// JobManager for 13 s. The tasks cancelled at the second failover were
// still writing their last slice; their KafkaWriter.close (an abort of the
// transaction they had open, flinksim-1-9, ...) reached the broker after
// the new attempt had recovered from checkpoint 8 and begun flinksim-1-9
// again, and aborted the new attempt's transaction: its records were
// refused and checkpoint 9's commit failed. The broker now refuses an
// abort from a fenced producer (PRODUCER_FENCED), as Kafka's transaction
// coordinator refuses an EndTxn with an older producer epoch.
func TestSwarmSeed90761ExactlyOnceOutput(t *testing.T) {
	runRegression(t, "seed-90761-exactly_once_output")
}

// The swarm drew a rescale to 4 for a cluster of one TaskManager of two
// slots that would never have more: tm-1 killed, its replacement tm-2 cut
// off from the JobManager before it registered. The generator counted a
// replacement for tm-2 too, but the ResourceManager has no heartbeat of a
// TaskManager that never registered, so nothing replaces it (as in Flink's
// ActiveResourceManager, which waits for such a worker until
// resourcemanager.taskmanager-registration.timeout): the job at parallelism
// 4 waited for slots for ever, no checkpoint completed. The generator now
// counts only the TaskManagers the cluster surely has, and seed 90095 draws
// a rescale the slots allow.
func TestSwarmSeed90095LivenessCheckpoint(t *testing.T) {
	sc := swarm.Generate(90095)
	r := Campaign{WallLimit: 2 * time.Minute}.RunSeed(90095)
	if r.Verdict.Class != swarm.ClassOK {
		t.Fatalf("seed 90095: %s %s: %v\nreproduce with: %s", r.Verdict.Class, r.Verdict.Invariant(), r.Verdict.Violations, RunCommand(&sc, false))
	}
}

// The scenario seed 90095 drew before (testdata/swarm): the simulator keeps
// the cluster at one TaskManager, as Flink does, so the rescale to 4 waits
// for slots for ever and the faulty run fails liveness while the reference
// run (no faults) passes. Should the ResourceManager ever replace a
// TaskManager that never registered, this fails and the generator's
// picture of the cluster (sim/swarm, cluster) must follow.
func TestSwarmSeed90095OldScenarioStarves(t *testing.T) {
	sc, ref, run := runKept(t, "seed-90095-liveness_checkpoint")
	v := swarm.Check(&sc, ref, run)
	if v.Class != swarm.ClassLiveness || v.Reference || v.Invariant() != swarm.InvCheckpoint || !run.Obs.NoResource {
		t.Fatalf("class %s (reference run's: %v), first invariant %q, NoResourceAvailableException %v: want the faulty run to starve (liveness_checkpoint)\n%v",
			v.Class, v.Reference, v.Invariant(), run.Obs.NoResource, v.Violations)
	}
}

// Seed 5551331 (the held-out range) cut tm-1, the only TaskManager, from
// the JobManager from 4.2 s to 17.0 s: the ResourceManager replaced it with
// tm-2, and tm-1 went on trying to register with its backoff (attempts at
// 15.3 s, then 21.7 s). The generator drew a rescale to 6 at 19.2 s counting
// tm-1's 4 slots, then killed tm-1 at 20.9 s, before it registered again:
// the ResourceManager had dropped it, nothing replaced it, and the job at
// parallelism 6 waited for slots with 4 for ever (no checkpoint after the
// heal, liveness_checkpoint). Flink does the same; the generator now counts
// for a rescale only the cut TaskManagers that registered again by then.
func TestSwarmSeed5551331LivenessCheckpoint(t *testing.T) {
	sc := swarm.Generate(5551331)
	r := Campaign{WallLimit: 2 * time.Minute}.RunSeed(5551331)
	if r.Verdict.Class != swarm.ClassOK {
		t.Fatalf("seed 5551331: %s %s: %v\nreproduce with: %s", r.Verdict.Class, r.Verdict.Invariant(), r.Verdict.Violations, RunCommand(&sc, false))
	}
	for _, f := range sc.Faults {
		for _, a := range f.Actions {
			if a.Verb == action.Rescale && a.Parallelism > 4 {
				t.Fatalf("seed 5551331 rescales to %d with one TaskManager of 4 slots surely there", a.Parallelism)
			}
		}
	}
}

// The scenario seed 5551331 drew before: the faulty run starves (no
// resources for parallelism 6) while the reference run passes.
func TestSwarmSeed5551331OldScenarioStarves(t *testing.T) {
	sc, ref, run := runKept(t, "seed-5551331-liveness_checkpoint")
	v := swarm.Check(&sc, ref, run)
	if v.Class != swarm.ClassLiveness || v.Reference || v.Invariant() != swarm.InvCheckpoint || !run.Obs.NoResource {
		t.Fatalf("class %s (reference run's: %v), first invariant %q, NoResourceAvailableException %v: want the faulty run to starve (liveness_checkpoint)\n%v",
			v.Class, v.Reference, v.Invariant(), run.Obs.NoResource, v.Violations)
	}
}

// Seed 129 stalled tm-2 just before the job's restart deployed a subtask
// to it: the submission waited in the frozen process, and the downstream
// sink's partition request to that subtask came to an actor not started
// yet (log_invariant:unknown_receiver). In Flink the request waits in the
// stalled TaskManager's socket until it wakes and deploys the task; the
// scheduler now holds an envelope to an actor not started yet while a host
// stalls until just after it wakes.
func TestSwarmSeed129UnknownReceiver(t *testing.T) {
	runRegression(t, "seed-129-unknown_receiver")
}

// Seeds 1000193, 1000355, 1000418 and 1000488 stalled a TaskManager past
// its heartbeat timeout. It woke with its old tasks still running: they
// took the checkpoint triggers and notifications held for them, and their
// exactly-once writers began transactions (flinksim-1-4 for seed 1000418)
// that stayed open when the zombie was then killed, so a read_committed
// consumer stopped at them until transaction.timeout.ms (results missing).
// The other three had the same zombie (at_least_once_output twice,
// liveness_watermark once) and pass with the same fix; their paths were not
// traced one by one. The JobMaster now does as JobMaster.disconnectTaskManager
// does at a TaskManager's heartbeat timeout: it tells the TaskManager to
// disconnect (TaskExecutorGateway.disconnectJobManager), which a stalled
// one hears as it wakes, failing its tasks at once (their writers abort).
func TestSwarmSeed1000418ExactlyOnceOutput(t *testing.T) {
	runRegression(t, "seed-1000418-exactly_once_output")
}

func TestSwarmSeed1000355AtLeastOnceOutput(t *testing.T) {
	runRegression(t, "seed-1000355-at_least_once_output")
}

func TestSwarmSeed1000488AtLeastOnceOutput(t *testing.T) {
	runRegression(t, "seed-1000488-at_least_once_output")
}

func TestSwarmSeed1000193LivenessWatermark(t *testing.T) {
	runRegression(t, "seed-1000193-liveness_watermark")
}

// Seed 1000078 drew aligned checkpoints with no exclusive buffers and one
// floating buffer per gate at a per-record cost of 13.7 ms: the generator
// counted two buffers ahead of a barrier, but the readers' output pools
// (never below numSubpartitions + 1 buffers) held 57 for the busiest keyed
// subtask, which took over 10 s to drain, so after the faults every
// checkpoint expired and the job restarted for ever (Flink's loop with no
// tolerated failure). The generator now counts each reader's subpartition up
// to max-buffers-per-channel of its pool, and seed 1000078 runs at u=0.04.
func TestSwarmSeed1000078LivenessCheckpoint(t *testing.T) {
	sc := swarm.Generate(1000078)
	if sc.Utilization > 0.1 {
		t.Fatalf("seed 1000078 drew u=%g, want the aligned drain bound to keep it at most 0.1", sc.Utilization)
	}
	r := Campaign{WallLimit: 2 * time.Minute}.RunSeed(1000078)
	if r.Verdict.Class != swarm.ClassOK {
		t.Fatalf("seed 1000078: %s %s: %v\nreproduce with: %s", r.Verdict.Class, r.Verdict.Invariant(), r.Verdict.Violations, RunCommand(&sc, false))
	}
}

// Seed 2000880 stalled tm-2 while the job's new attempt initialised there;
// as tm-2 woke, its zombie reader source-0#1 registered with the source
// coordinator, which assigned index 0's splits again, to the current
// reader source-0#2: it read them twice, and a sliding window counted 758
// records where the reference run counted 306. Flink discards an operator
// event of an execution that is not the registered, running one
// (SchedulerBase.deliverOperatorEventToCoordinator); the JobMaster now
// fences a reader registration by its attempt too.
func TestSwarmSeed2000880ExactlyOnceOutput(t *testing.T) {
	runRegression(t, "seed-2000880-exactly_once_output")
}

// Watermark alignment with idleness: once partition 0 was paused, source-1
// was the only active reader of the group and kept waiting for the
// alignment announcement that it had itself held back. Its idleness clock
// ran on while it waited, so 1 s into a wait it went IDLE, the window
// operators' watermark followed source-0 alone past the windows source-1
// still had records for, and those records arrived after their window had
// fired. A sliding window's record whose other window was still open is
// neither counted nor sent to the late side output (WindowOperator skips a
// late window, and side-outputs only a record late for all of them): the
// reference run counted user-13's [13 s, 15 s) window 12 where the faulty
// run, timed differently, counted all 18. Flink (FLIP-471, FLINK-36751 in
// 1.20.1) stops a source's activity clocks while it waits for alignment.
func TestSwarmSeed6001841AtLeastOnceOutput(t *testing.T) {
	runRegression(t, "seed-6001841-at_least_once_output")
}

// The same cause as seed 6001841: in the reference run source-1 went idle
// every few seconds while waiting for alignment (source-0 idle), and sliding
// windows lost a record each to it; the faulty run counted one more.
func TestSwarmSeed5557655AtLeastOnceOutput(t *testing.T) {
	runRegression(t, "seed-5557655-at_least_once_output")
}

// A producer backpressured by a consumer without exclusive buffers slept
// until the next buffer timeout: with buffers-per-channel 0 and one
// floating buffer per gate, parse-0's pool (3 buffers) filled with buffers
// for window-1 waiting for credit; window-1's AddCredit let one go, which
// gave its segment back to the pool, but the task had already looked at
// its output before the send and did not run again until its next mail, the
// 100 ms flush. The job moved a few buffers of 4 records a flush per channel,
// 360 records/s for the 500 produced: the reference run fell 20 s behind and the
// faulty run, 10 s more behind after its restore, missed the horizon by
// 5.7 s. In Flink the recycled segment completes LocalBufferPool's
// availability future and the mailbox goes on at once.
func TestSwarmSeed5559879LivenessWatermark(t *testing.T) {
	runRegression(t, "seed-5559879-liveness_watermark")
}

// The same as seed 5559879 (no exclusive buffers, one floating buffer per
// gate, 4 records a buffer): the producers, woken only by the 100 ms flush
// after each credit, fell behind the 400 records/s produced, and after three
// kills the faulty run's sink watermark was 11.2 s short of the horizon.
func TestSwarmSeed5559121LivenessWatermark(t *testing.T) {
	runRegression(t, "seed-5559121-liveness_watermark")
}

// Every unaligned checkpoint after the stall expired and the job restarted
// for ever (liveness_watermark; liveness_job_running once producers woke at
// a credit, seed 5559879). parse-3, its output pool and overdraft buffers all queued for
// window-0 (one record a buffer, a watermark broadcast needing a buffer in
// each of 7 subpartitions), was blocked writing and never took its
// barrier. window-0, with no exclusive buffers, had asked for a floating
// buffer for parse-3's channel, but its channels with a long backlog kept
// every floating buffer they had used as a credit, so that request waited
// for ever. A used floating buffer goes back to the gate's LocalBufferPool,
// which gives it to the channel waiting longest (BufferManager,
// LocalBufferPool.recycle).
func TestSwarmSeed4000833LivenessWatermark(t *testing.T) {
	runRegression(t, "seed-4000833-liveness_watermark")
}
