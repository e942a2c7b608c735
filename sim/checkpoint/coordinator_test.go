package checkpoint

import (
	"errors"
	"reflect"
	"testing"
)

func newCoord(t *testing.T, cfg CoordinatorConfig, tasks ...string) *Coordinator {
	t.Helper()
	if len(tasks) == 0 {
		tasks = []string{"task-a", "task-b"}
	}
	c, err := NewCoordinator(cfg, tasks)
	if err != nil {
		t.Fatalf("NewCoordinator: %v", err)
	}
	return c
}

// ackAll acknowledges checkpoint id by every task at nowMs and returns the completion.
func ackAll(t *testing.T, c *Coordinator, id int64, nowMs int64) *CompletedCheckpoint {
	t.Helper()
	var done *CompletedCheckpoint
	for _, task := range c.Tasks() {
		cc, err := c.Acknowledge(id, task, TaskAck{}, nowMs)
		if err != nil {
			t.Fatalf("ack %d by %s: %v", id, task, err)
		}
		if cc != nil {
			done = cc
		}
	}
	if done == nil {
		t.Fatalf("checkpoint %d did not complete", id)
	}
	return done
}

func mustStart(t *testing.T, r TriggerResult, wantID int64) {
	t.Helper()
	if r.Declined || r.Queued || r.CheckpointID != wantID {
		t.Fatalf("trigger = %+v, want started with id %d", r, wantID)
	}
}

func mustDecline(t *testing.T, r TriggerResult, want FailureReason) {
	t.Helper()
	if !r.Declined || r.FailureReason != want || r.Reason != want.Message() || r.CheckpointID != 0 {
		t.Fatalf("trigger = %+v, want declined with %s", r, want)
	}
}

func TestConfigValidation(t *testing.T) {
	tests := []struct {
		name string
		give CoordinatorConfig
		want error
	}{
		{"zero value is Flink's defaults", CoordinatorConfig{}, nil},
		{"interval 9 ms", CoordinatorConfig{IntervalMs: 9}, ErrIntervalTooSmall},
		{"negative interval", CoordinatorConfig{IntervalMs: -1}, ErrIntervalTooSmall},
		{"interval 10 ms", CoordinatorConfig{IntervalMs: 10}, nil},
		{"timeout 9 ms", CoordinatorConfig{TimeoutMs: 9}, ErrTimeoutTooSmall},
		{"negative timeout", CoordinatorConfig{TimeoutMs: -5}, ErrTimeoutTooSmall},
		{"negative min pause", CoordinatorConfig{MinPauseMs: -1}, ErrNegativeMinPause},
		{"negative max concurrent", CoordinatorConfig{MaxConcurrent: -1}, ErrMaxConcurrentTooSmall},
		{"negative tolerable", CoordinatorConfig{TolerableFailures: -1}, ErrNegativeTolerable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewCoordinator(tt.give, []string{"t"})
			if err != tt.want {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	// Flink's texts, verbatim.
	msgs := map[error]string{
		ErrIntervalTooSmall:      "Checkpoint interval must be larger than or equal to 10 ms",
		ErrTimeoutTooSmall:       "Checkpoint timeout must be larger than or equal to 10 ms",
		ErrNegativeMinPause:      "Pause value must be zero or positive",
		ErrMaxConcurrentTooSmall: "The maximum number of concurrent attempts must be at least one.",
		ErrNegativeTolerable:     "The tolerable failure checkpoint number must be non-negative.",
	}
	for err, want := range msgs {
		if err.Error() != want {
			t.Errorf("%q, want %q", err.Error(), want)
		}
	}
	if _, err := NewCoordinator(CoordinatorConfig{}, nil); err != ErrNoTasks {
		t.Errorf("no tasks: %v", err)
	}
	if _, err := NewCoordinator(CoordinatorConfig{}, []string{"a", "a"}); err != ErrDuplicateTask {
		t.Errorf("duplicate task: %v", err)
	}
}

func TestConfigDefaultsAndNormalization(t *testing.T) {
	c := newCoord(t, CoordinatorConfig{})
	want := CoordinatorConfig{TimeoutMs: 600_000, MaxConcurrent: 1}
	if got := c.Config(); got != want {
		t.Fatalf("defaults = %+v, want %+v", got, want)
	}
	// interval below min pause is raised to the min pause (CheckpointCoordinator constructor)
	c = newCoord(t, CoordinatorConfig{IntervalMs: 100, MinPauseMs: 500})
	if c.Config().IntervalMs != 500 {
		t.Fatalf("interval = %d, want 500", c.Config().IntervalMs)
	}
	lo, hi, ok := CoordinatorConfig{IntervalMs: 1000, MinPauseMs: 200}.InitialDelayRange()
	if !ok || lo != 200 || hi != 1000 {
		t.Fatalf("InitialDelayRange = %d %d %v", lo, hi, ok)
	}
	if _, _, ok := (CoordinatorConfig{}).InitialDelayRange(); ok {
		t.Fatal("InitialDelayRange with periodic off must be !ok")
	}
	// min pause above a year is capped
	c = newCoord(t, CoordinatorConfig{MinPauseMs: 1 << 60})
	if c.Config().MinPauseMs != maxMinPauseMs {
		t.Fatalf("min pause = %d", c.Config().MinPauseMs)
	}
}

// CheckpointCoordinatorTest.testTriggerAndConfirmSimpleCheckpoint, hand-checked.
func TestTriggerAndConfirmSimpleCheckpoint(t *testing.T) {
	c := newCoord(t, CoordinatorConfig{})
	r := c.Trigger(1000, KindManual)
	mustStart(t, r, 1)
	if r.AtMs != 1000 || r.Savepoint || r.RequestID != 1 {
		t.Fatalf("trigger = %+v", r)
	}
	if got := c.Pending(); !reflect.DeepEqual(got, []int64{1}) {
		t.Fatalf("pending = %v", got)
	}
	cc, err := c.Acknowledge(1, "task-a", TaskAck{StateSizeBytes: 100, IncrementalSizeBytes: 40, AlignmentDurationMs: 7}, 1010)
	if cc != nil || err != nil {
		t.Fatalf("first ack = %v, %v", cc, err)
	}
	_, err = c.Acknowledge(1, "task-a", TaskAck{}, 1011)
	if !errors.Is(err, ErrDuplicateAck) || err.Error() != "Received a duplicate acknowledge message for checkpoint 1, task task-a." {
		t.Fatalf("duplicate ack err = %v", err)
	}
	h := c.History()
	if len(h) != 1 || h[0].Status != StatusInProgress || h[0].NumAcknowledged != 1 || h[0].DurationMs != 10 || h[0].EndMs != -1 {
		t.Fatalf("history in progress = %+v", h)
	}
	cc, err = c.Acknowledge(1, "task-b", TaskAck{StateSizeBytes: 50, IncrementalSizeBytes: 50, PersistedInFlightRecords: 3, PersistedInFlightBytes: 300, AlignmentDurationMs: 4,
		SourceOffsets: []SourceOffset{{"p1", 9}, {"p0", 5}}}, 1030)
	if err != nil || cc == nil {
		t.Fatalf("second ack = %v, %v", cc, err)
	}
	want := &CompletedCheckpoint{
		ID: 1, Kind: KindManual, TriggerMs: 1000, CompletionMs: 1030,
		StateSizeBytes: 150, IncrementalSizeBytes: 90, PersistedInFlightRecords: 3, PersistedInFlightBytes: 300,
		MaxAlignmentDurationMs: 7, NotifyTasks: true,
		Tasks: []TaskState{
			{Task: "task-a", Ack: TaskAck{StateSizeBytes: 100, IncrementalSizeBytes: 40, AlignmentDurationMs: 7}},
			{Task: "task-b", Ack: TaskAck{StateSizeBytes: 50, IncrementalSizeBytes: 50, PersistedInFlightRecords: 3, PersistedInFlightBytes: 300, AlignmentDurationMs: 4,
				SourceOffsets: []SourceOffset{{"p0", 5}, {"p1", 9}}}},
		},
	}
	if !reflect.DeepEqual(cc, want) {
		t.Fatalf("completed = %+v\nwant %+v", cc, want)
	}
	if got := c.LatestCompleted(); !reflect.DeepEqual(got, want) {
		t.Fatalf("latest = %+v", got)
	}
	h = c.History()
	wantStats := CheckpointStats{ID: 1, Kind: KindManual, Status: StatusCompleted, TriggerMs: 1000, EndMs: 1030, DurationMs: 30,
		NumAcknowledged: 2, NumTasks: 2, StateSizeBytes: 150, IncrementalSizeBytes: 90, PersistedInFlightRecords: 3, PersistedInFlightBytes: 300, MaxAlignmentDurationMs: 7}
	if !reflect.DeepEqual(h, []CheckpointStats{wantStats}) {
		t.Fatalf("history = %+v\nwant %+v", h, wantStats)
	}
	if len(c.Pending()) != 0 {
		t.Fatalf("pending after completion = %v", c.Pending())
	}
	// an ack after completion is for an unknown checkpoint
	_, err = c.Acknowledge(1, "task-a", TaskAck{}, 1040)
	if !errors.Is(err, ErrUnknownCheckpoint) || err.Error() != "Received message for an unknown checkpoint 1 from task task-a." {
		t.Fatalf("ack after completion: %v", err)
	}
	mustStart(t, c.Trigger(2000, KindManual), 2)
}

func TestAcknowledgeErrors(t *testing.T) {
	c := newCoord(t, CoordinatorConfig{TimeoutMs: 100})
	mustStart(t, c.Trigger(0, KindManual), 1)
	tests := []struct {
		name    string
		id      int64
		task    string
		now     int64
		wantErr error
		wantMsg string
	}{
		{"unknown task", 1, "nobody", 5, ErrUnknownTask, "Could not acknowledge the checkpoint 1 for task nobody, because the task's execution attempt id was unknown."},
		{"never triggered", 7, "task-a", 5, ErrUnknownCheckpoint, "Received message for an unknown checkpoint 7 from task task-a."},
		{"at the deadline", 1, "task-a", 100, ErrAckAfterTimeout, "Acknowledgement of checkpoint 1 from task task-a arrived at or after its timeout."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc, err := c.Acknowledge(tt.id, tt.task, TaskAck{}, tt.now)
			if cc != nil || !errors.Is(err, tt.wantErr) || err.Error() != tt.wantMsg {
				t.Fatalf("got %v, %v; want %v %q", cc, err, tt.wantErr, tt.wantMsg)
			}
		})
	}
	if h := c.History(); h[0].NumAcknowledged != 0 {
		t.Fatalf("refused acks were counted: %+v", h[0])
	}
}

// CheckpointCoordinatorTest.testCheckpointTimeoutIsolated and the tolerable-failure
// message of CheckpointFailureManager.
func TestCheckpointTimeout(t *testing.T) {
	c := newCoord(t, CoordinatorConfig{TimeoutMs: 200})
	mustStart(t, c.Trigger(1000, KindManual), 1)
	if _, err := c.Acknowledge(1, "task-a", TaskAck{StateSizeBytes: 8}, 1100); err != nil {
		t.Fatal(err)
	}
	if d, ok := c.NextTimeout(); !ok || d != 1200 {
		t.Fatalf("NextTimeout = %d %v", d, ok)
	}
	if got := c.CheckTimeouts(1199); len(got) != 0 {
		t.Fatalf("expired early: %+v", got)
	}
	got := c.CheckTimeouts(1200)
	want := []FailedCheckpoint{{
		CheckpointID: 1, RequestID: 1, Kind: KindManual, TriggerMs: 1000, FailureMs: 1200,
		Reason: ReasonCheckpointExpired, Message: "Checkpoint expired before completing.", NotifyTasks: true,
		JobFailure: "Exceeded checkpoint tolerable failure threshold. The latest checkpoint failed due to Checkpoint expired before completing., view the Checkpoint History tab or the Job Manager log to find out why continuous checkpoints failed.",
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("expired = %+v\nwant %+v", got, want)
	}
	_, err := c.Acknowledge(1, "task-b", TaskAck{}, 1300)
	if !errors.Is(err, ErrLateAck) || err.Error() != "Received late message for now expired checkpoint attempt 1 from task task-b." {
		t.Fatalf("late ack: %v", err)
	}
	h := c.History()[0]
	if h.Status != StatusFailed || h.FailureReason != ReasonCheckpointExpired || h.EndMs != 1200 || h.DurationMs != 200 || h.StateSizeBytes != 8 {
		t.Fatalf("history = %+v", h)
	}
	if _, ok := c.NextTimeout(); ok {
		t.Fatal("NextTimeout with nothing pending")
	}
}

// CheckpointFailureManagerTest: continuous counted failures beyond the tolerable number fail
// the job; a success resets; non-counted reasons do not count; savepoint expiry on the
// JobManager never counts.
func TestTolerableFailures(t *testing.T) {
	type step struct {
		op      string // "expire", "decline", "complete"
		kind    Kind
		reason  FailureReason
		wantJob bool
	}
	tests := []struct {
		name      string
		tolerable int
		steps     []step
	}{
		{"zero tolerates nothing", 0, []step{{op: "expire", wantJob: true}}},
		{"two tolerated, third fails", 2, []step{{op: "expire"}, {op: "decline", reason: ReasonCheckpointDeclined}, {op: "expire", wantJob: true}}},
		{"counter clears after failing", 1, []step{{op: "expire"}, {op: "expire", wantJob: true}, {op: "expire"}, {op: "expire", wantJob: true}}},
		{"success resets", 1, []step{{op: "expire"}, {op: "complete"}, {op: "expire"}, {op: "expire", wantJob: true}}},
		{"not counted reasons", 0, []step{
			{op: "decline", reason: ReasonCheckpointDeclinedSubsumed},
			{op: "decline", reason: ReasonCheckpointDeclinedOnCancellationBarrier},
			{op: "decline", reason: ReasonTaskCheckpointFailure},
			{op: "decline", reason: ReasonCheckpointDeclinedInputEndOfStream},
			{op: "decline", reason: ReasonCheckpointAsyncException, wantJob: true},
		}},
		{"savepoint expiry is not counted", 0, []step{{op: "expire", kind: KindSavepoint}, {op: "expire", kind: KindStopWithSavepoint}}},
		{"savepoint declined by a task counts", 0, []step{{op: "decline", kind: KindSavepoint, reason: ReasonCheckpointDeclined, wantJob: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCoord(t, CoordinatorConfig{TimeoutMs: 100, TolerableFailures: tt.tolerable})
			now := int64(0)
			for i, s := range tt.steps {
				kind := s.kind
				if kind == 0 {
					kind = KindManual
				}
				r := c.Trigger(now, kind)
				if r.CheckpointID == 0 {
					t.Fatalf("step %d: %+v", i, r)
				}
				var f *FailedCheckpoint
				switch s.op {
				case "expire":
					now += 100
					got := c.CheckTimeouts(now)
					if len(got) != 1 {
						t.Fatalf("step %d: expired %+v", i, got)
					}
					f = &got[0]
				case "decline":
					now += 10
					f = c.Decline(r.CheckpointID, "task-a", s.reason, now)
				case "complete":
					now += 10
					ackAll(t, c, r.CheckpointID, now)
				}
				if f != nil && (f.JobFailure != "") != s.wantJob {
					t.Fatalf("step %d (%s): JobFailure = %q, want set=%v", i, s.op, f.JobFailure, s.wantJob)
				}
				now += 10
			}
		})
	}
}

// CheckpointCoordinatorTest.testTriggerAndDeclineCheckpointSimple.
func TestDeclineCheckpoint(t *testing.T) {
	c := newCoord(t, CoordinatorConfig{TolerableFailures: 5})
	mustStart(t, c.Trigger(0, KindManual), 1)
	if _, err := c.Acknowledge(1, "task-a", TaskAck{}, 5); err != nil {
		t.Fatal(err)
	}
	f := c.Decline(1, "task-b", ReasonCheckpointDeclined, 8)
	want := &FailedCheckpoint{CheckpointID: 1, RequestID: 1, Kind: KindManual, TriggerMs: 0, FailureMs: 8,
		Reason: ReasonCheckpointDeclined, Message: "Checkpoint was declined.", Task: "task-b", NotifyTasks: true}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("decline = %+v", f)
	}
	if c.Decline(1, "task-a", ReasonCheckpointDeclined, 9) != nil {
		t.Fatal("second decline of the same checkpoint must be ignored")
	}
	if _, err := c.Acknowledge(1, "task-b", TaskAck{}, 10); !errors.Is(err, ErrUnknownCheckpoint) {
		t.Fatalf("ack after decline: %v", err)
	}
	if c.ConsecutiveFailures() != 1 {
		t.Fatalf("failure counter = %d", c.ConsecutiveFailures())
	}
	// an invalid reason counts as CHECKPOINT_DECLINED
	mustStart(t, c.Trigger(20, KindManual), 2)
	if f := c.Decline(2, "task-a", 0, 21); f.Reason != ReasonCheckpointDeclined {
		t.Fatalf("invalid reason -> %v", f.Reason)
	}
}

// CheckpointCoordinatorTest.testSuccessfulCheckpointSubsumesUnsuccessful.
func TestSuccessfulCheckpointSubsumesOlder(t *testing.T) {
	c := newCoord(t, CoordinatorConfig{MaxConcurrent: 3})
	mustStart(t, c.Trigger(0, KindManual), 1)
	mustStart(t, c.Trigger(10, KindManual), 2)
	mustStart(t, c.Trigger(20, KindManual), 3)
	if _, err := c.Acknowledge(1, "task-a", TaskAck{}, 25); err != nil {
		t.Fatal(err)
	}
	cc := ackAll(t, c, 2, 30)
	if cc.ID != 2 {
		t.Fatalf("completed %d", cc.ID)
	}
	ready := c.TakeReady()
	if len(ready.Failed) != 1 || ready.Failed[0].CheckpointID != 1 || ready.Failed[0].Reason != ReasonCheckpointSubsumed ||
		ready.Failed[0].Message != "Checkpoint has been subsumed." || ready.Failed[0].JobFailure != "" {
		t.Fatalf("ready = %+v", ready)
	}
	if got := c.Pending(); !reflect.DeepEqual(got, []int64{3}) {
		t.Fatalf("pending = %v, want [3] (newer checkpoints are not subsumed)", got)
	}
	if _, err := c.Acknowledge(1, "task-b", TaskAck{}, 40); !errors.Is(err, ErrUnknownCheckpoint) {
		t.Fatalf("ack of subsumed: %v", err)
	}
}

// CheckpointCoordinatorTest.testSavepointsAreNotSubsumed, plus which completions update the
// latest checkpoint and notify tasks.
func TestSavepointsAreNotSubsumed(t *testing.T) {
	// pending savepoints count against max concurrent like checkpoints do
	c := newCoord(t, CoordinatorConfig{MaxConcurrent: 3})
	r := c.Trigger(0, KindSavepoint)
	mustStart(t, r, 1)
	if !r.Savepoint {
		t.Fatal("savepoint flag")
	}
	mustStart(t, c.Trigger(10, KindManual), 2)
	mustStart(t, c.Trigger(20, KindManual), 3)
	ackAll(t, c, 2, 30)
	if got := c.Pending(); !reflect.DeepEqual(got, []int64{1, 3}) {
		t.Fatalf("pending = %v, want the savepoint and the newer checkpoint", got)
	}
	if len(c.TakeReady().Failed) != 0 {
		t.Fatal("nothing may be subsumed")
	}
	sp := ackAll(t, c, 1, 40)
	if sp.Kind != KindSavepoint || sp.NotifyTasks {
		t.Fatalf("savepoint = %+v: tasks are not notified of a plain savepoint", sp)
	}
	if c.LatestCompleted().ID != 2 {
		t.Fatalf("latest = %d, savepoints do not enter the checkpoint store", c.LatestCompleted().ID)
	}
	// stop-with-savepoint subsumes older checkpoints and notifies the tasks
	r = c.Trigger(50, KindStopWithSavepoint)
	mustStart(t, r, 4)
	swsp := ackAll(t, c, 4, 60)
	if !swsp.NotifyTasks {
		t.Fatal("stop-with-savepoint must notify tasks")
	}
	ready := c.TakeReady()
	if len(ready.Failed) != 1 || ready.Failed[0].CheckpointID != 3 || ready.Failed[0].Reason != ReasonCheckpointSubsumed {
		t.Fatalf("ready = %+v", ready)
	}
	if c.LatestCompleted().ID != 2 {
		t.Fatal("stop-with-savepoint does not enter the checkpoint store either")
	}
}

func TestStopWithSavepointDeclineFailsJob(t *testing.T) {
	c := newCoord(t, CoordinatorConfig{TolerableFailures: 100})
	mustStart(t, c.Trigger(0, KindStopWithSavepoint), 1)
	f := c.Decline(1, "task-a", ReasonCheckpointDeclinedTaskNotReady, 5)
	if f.JobFailure != "Checkpoint was declined (tasks not ready)" {
		t.Fatalf("JobFailure = %q", f.JobFailure)
	}
}

// Checkpoints and savepoints share the id counter; declined requests consume no id.
func TestIDsSharedAndStrictlyIncreasing(t *testing.T) {
	c := newCoord(t, CoordinatorConfig{MaxConcurrent: 10})
	mustStart(t, c.Trigger(0, KindManual), 1)
	mustStart(t, c.Trigger(1, KindSavepoint), 2)
	c.SetTasksRunning(false)
	mustDecline(t, c.Trigger(2, KindManual), ReasonNotAllRequiredTasksRunning)
	c.SetTasksRunning(true)
	mustDecline(t, c.Trigger(3, KindPeriodic), ReasonPeriodicSchedulerShutdown)
	mustStart(t, c.Trigger(4, KindStopWithSavepoint), 3)
	mustStart(t, c.Trigger(5, KindManual), 4)
	if len(c.History()) != 4 {
		t.Fatalf("declined requests must leave no history row: %+v", c.History())
	}
}

// CheckpointCoordinatorTriggeringTest.testStopPeriodicScheduler and
// testTriggerCheckpointWithShuttingDownCoordinator.
func TestSchedulerStoppedAndShutdown(t *testing.T) {
	c := newCoord(t, CoordinatorConfig{IntervalMs: 1000})
	mustDecline(t, c.Trigger(0, KindPeriodic), ReasonPeriodicSchedulerShutdown)
	mustStart(t, c.Trigger(0, KindManual), 1)
	if err := c.StartScheduler(5, 100); err != nil {
		t.Fatal(err)
	}
	// starting the scheduler stops it first, suspending the pending checkpoint
	ready := c.TakeReady()
	if len(ready.Failed) != 1 || ready.Failed[0].Reason != ReasonCheckpointCoordinatorSuspend || ready.Failed[0].Message != "Checkpoint Coordinator is suspending." {
		t.Fatalf("ready = %+v", ready)
	}
	failed := c.Shutdown(10)
	if len(failed) != 0 {
		t.Fatalf("shutdown failed %+v", failed)
	}
	mustDecline(t, c.Trigger(20, KindManual), ReasonCheckpointCoordinatorShutdown)
	mustDecline(t, c.Trigger(20, KindSavepoint), ReasonCheckpointCoordinatorShutdown)
	if err := c.StartScheduler(30, 0); err != ErrCoordinatorShutdown || err.Error() != "Checkpoint coordinator is shut down" {
		t.Fatalf("start after shutdown: %v", err)
	}
	if _, err := c.Acknowledge(1, "task-a", TaskAck{}, 40); !errors.Is(err, ErrCoordinatorShutdown) {
		t.Fatalf("ack after shutdown: %v", err)
	}
	off := newCoord(t, CoordinatorConfig{})
	if err := off.StartScheduler(0, 0); err != ErrNoPeriodicConfigured {
		t.Fatalf("start without interval: %v", err)
	}
	if _, ok := off.NextPeriodicTrigger(0); ok {
		t.Fatal("no periodic trigger when off")
	}
}

// Fixed-rate periodic trigger (ScheduledTrigger) and
// CheckpointCoordinatorTest.testMinTimeBetweenCheckpointsInterval (interval 12 ms, min pause
// 50 ms: the next checkpoint starts no earlier than 50 ms after the completion).
func TestPeriodicScheduleAndMinPause(t *testing.T) {
	c := newCoord(t, CoordinatorConfig{IntervalMs: 100})
	if err := c.StartScheduler(0, 30); err != nil {
		t.Fatal(err)
	}
	var times []int64
	for i := 0; i < 4; i++ {
		at, ok := c.NextPeriodicTrigger(0)
		if !ok {
			t.Fatal("no trigger")
		}
		times = append(times, at)
		r := c.Trigger(at, KindPeriodic)
		ackAll(t, c, r.CheckpointID, at+5)
	}
	if !reflect.DeepEqual(times, []int64{30, 130, 230, 330}) {
		t.Fatalf("trigger times = %v", times)
	}

	c = newCoord(t, CoordinatorConfig{IntervalMs: 12, MinPauseMs: 50, TimeoutMs: 200_000})
	if c.Config().IntervalMs != 50 {
		t.Fatalf("base interval = %d, want raised to the min pause 50", c.Config().IntervalMs)
	}
	c = newCoord(t, CoordinatorConfig{IntervalMs: 60, MinPauseMs: 50, TimeoutMs: 200_000})
	if err := c.StartScheduler(0, 60); err != nil {
		t.Fatal(err)
	}
	at, _ := c.NextPeriodicTrigger(0)
	mustStart(t, c.Trigger(at, KindPeriodic), 1) // at 60, next at 120
	ackAll(t, c, 1, 100)                         // completes at 100: no periodic start before 150
	at, _ = c.NextPeriodicTrigger(100)
	if at != 120 {
		t.Fatalf("next = %d, want 120", at)
	}
	mustDecline(t, c.Trigger(at, KindPeriodic), ReasonMinimumTimeBetweenCheckpoints)
	at, _ = c.NextPeriodicTrigger(120)
	if at != 150 {
		t.Fatalf("rescheduled to %d, want last completion 100 + min pause 50", at)
	}
	mustStart(t, c.Trigger(at, KindPeriodic), 2)
	if at, _ = c.NextPeriodicTrigger(150); at != 210 {
		t.Fatalf("after the rescheduled trigger next = %d, want 210", at)
	}
	// a manual checkpoint ignores the min pause
	ackAll(t, c, 2, 160)
	mustStart(t, c.Trigger(161, KindManual), 3)
	// an overdue trigger is due now
	if at, _ := c.NextPeriodicTrigger(500); at != 500 {
		t.Fatalf("overdue = %d", at)
	}
}

// CheckpointCoordinatorTriggeringTest.testMaxConcurrentAttempts{1,2,5}: at most N checkpoints
// are pending; further periodic requests wait in the queue and one starts when one completes.
func TestMaxConcurrentAttempts(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		c := newCoord(t, CoordinatorConfig{IntervalMs: 10, MaxConcurrent: n, TimeoutMs: 200_000})
		if err := c.StartScheduler(0, 0); err != nil {
			t.Fatal(err)
		}
		now := int64(0)
		for i := 1; i <= n; i++ {
			mustStart(t, c.Trigger(now, KindPeriodic), int64(i))
			now += 10
		}
		for i := 0; i < 3; i++ {
			if r := c.Trigger(now, KindPeriodic); !r.Queued {
				t.Fatalf("n=%d: request beyond max concurrent = %+v", n, r)
			}
			now += 10
		}
		if len(c.Pending()) != n || c.NumQueuedRequests() != 3 {
			t.Fatalf("n=%d: pending %v queued %d", n, c.Pending(), c.NumQueuedRequests())
		}
		ackAll(t, c, 1, now)
		ready := c.TakeReady()
		if len(ready.Triggered) != 1 || ready.Triggered[0].CheckpointID != int64(n+1) || ready.Triggered[0].RequestID != int64(n+1) {
			t.Fatalf("n=%d: after completion ready = %+v", n, ready)
		}
		if len(c.Pending()) != n {
			t.Fatalf("n=%d: pending %v", n, c.Pending())
		}
	}
}

// CheckpointRequestDeciderTest, carried over: which requests run at once, wait, or are
// dropped, and in which order queued requests run.
func TestRequestDecider(t *testing.T) {
	t.Run("testForce: a forced savepoint runs despite max concurrent", func(t *testing.T) {
		c := newCoord(t, CoordinatorConfig{})
		mustStart(t, c.Trigger(0, KindManual), 1)
		mustStart(t, c.Trigger(1, KindSavepoint), 2)
		mustStart(t, c.Trigger(2, KindStopWithSavepoint), 3)
	})
	t.Run("testEnqueueOnTooManyPending", func(t *testing.T) {
		c := newCoord(t, CoordinatorConfig{})
		mustStart(t, c.Trigger(0, KindManual), 1)
		r := c.Trigger(1, KindManual)
		if !r.Queued || r.RequestID != 2 {
			t.Fatalf("%+v", r)
		}
		ackAll(t, c, 1, 5)
		ready := c.TakeReady()
		if !reflect.DeepEqual(ready.Triggered, []TriggerResult{{RequestID: 2, Kind: KindManual, CheckpointID: 2, AtMs: 5}}) {
			t.Fatalf("%+v", ready)
		}
	})
	t.Run("testNonForcedEnqueueOnTooManyPending: savepoints wait with unaligned checkpoints", func(t *testing.T) {
		c := newCoord(t, CoordinatorConfig{Unaligned: true})
		mustStart(t, c.Trigger(0, KindManual), 1)
		if r := c.Trigger(1, KindSavepoint); !r.Queued || !r.Savepoint {
			t.Fatalf("%+v", r)
		}
		ackAll(t, c, 1, 5)
		if tr := c.TakeReady().Triggered; len(tr) != 1 || tr[0].CheckpointID != 2 || tr[0].Kind != KindSavepoint {
			t.Fatalf("%+v", tr)
		}
	})
	order := func(t *testing.T, first, second Kind, wantFirst, wantSecond Kind) {
		t.Helper()
		c := newCoord(t, CoordinatorConfig{IntervalMs: 1000, Unaligned: true, TimeoutMs: 100_000})
		if err := c.StartScheduler(0, 1000); err != nil {
			t.Fatal(err)
		}
		mustStart(t, c.Trigger(0, KindManual), 1)
		c.Trigger(1, first)
		c.Trigger(2, second)
		ackAll(t, c, 1, 10)
		tr := c.TakeReady().Triggered
		if len(tr) != 1 || tr[0].Kind != wantFirst || tr[0].CheckpointID != 2 {
			t.Fatalf("first started = %+v, want %v", tr, wantFirst)
		}
		ackAll(t, c, 2, 20)
		tr = c.TakeReady().Triggered
		if len(tr) != 1 || tr[0].Kind != wantSecond || tr[0].CheckpointID != 3 {
			t.Fatalf("second started = %+v, want %v", tr, wantSecond)
		}
	}
	t.Run("testSavepointPrioritized", func(t *testing.T) { order(t, KindManual, KindSavepoint, KindSavepoint, KindManual) })
	t.Run("testUserSubmittedPrioritized", func(t *testing.T) { order(t, KindPeriodic, KindManual, KindManual, KindPeriodic) })
	t.Run("older first among equals", func(t *testing.T) { order(t, KindManual, KindManual, KindManual, KindManual) })
	t.Run("testCheckpointTiming: periodic dropped, manual immediate within the pause", func(t *testing.T) {
		c := newCoord(t, CoordinatorConfig{IntervalMs: 100, MinPauseMs: 10})
		if err := c.StartScheduler(0, 100); err != nil {
			t.Fatal(err)
		}
		mustStart(t, c.Trigger(0, KindManual), 1)
		ackAll(t, c, 1, 50)
		mustDecline(t, c.Trigger(55, KindPeriodic), ReasonMinimumTimeBetweenCheckpoints)
		mustStart(t, c.Trigger(55, KindManual), 2)
	})
	t.Run("testSavepointTiming: savepoints immediate within the pause", func(t *testing.T) {
		for _, unaligned := range []bool{false, true} {
			c := newCoord(t, CoordinatorConfig{MinPauseMs: 10, Unaligned: unaligned})
			mustStart(t, c.Trigger(0, KindManual), 1)
			ackAll(t, c, 1, 50)
			mustStart(t, c.Trigger(51, KindSavepoint), 2)
		}
	})
	t.Run("testQueueSizeLimit: the newest periodic request is dropped", func(t *testing.T) {
		c := newCoord(t, CoordinatorConfig{IntervalMs: 10, TimeoutMs: 1 << 40})
		if err := c.StartScheduler(0, 0); err != nil {
			t.Fatal(err)
		}
		mustStart(t, c.Trigger(0, KindPeriodic), 1)
		for i := 1; i <= maxQueuedRequests; i++ {
			if r := c.Trigger(int64(i*10), KindPeriodic); !r.Queued {
				t.Fatalf("request %d: %+v", i, r)
			}
		}
		mustDecline(t, c.Trigger(int64((maxQueuedRequests+1)*10), KindPeriodic), ReasonTooManyCheckpointRequests)
		if c.NumQueuedRequests() != maxQueuedRequests {
			t.Fatalf("queued %d", c.NumQueuedRequests())
		}
	})
	t.Run("testQueueSizeLimitPriority: a savepoint pushes out the last periodic request", func(t *testing.T) {
		c := newCoord(t, CoordinatorConfig{IntervalMs: 10, TimeoutMs: 1 << 40, Unaligned: true})
		if err := c.StartScheduler(0, 0); err != nil {
			t.Fatal(err)
		}
		mustStart(t, c.Trigger(0, KindPeriodic), 1)
		for i := 1; i <= maxQueuedRequests; i++ {
			c.Trigger(int64(i*10), KindPeriodic)
		}
		r := c.Trigger(20_000, KindSavepoint)
		if !r.Queued {
			t.Fatalf("savepoint %+v", r)
		}
		tr := c.TakeReady().Triggered
		if len(tr) != 1 || tr[0].RequestID != int64(maxQueuedRequests+1) || tr[0].FailureReason != ReasonTooManyCheckpointRequests {
			t.Fatalf("dropped = %+v, want the newest periodic request", tr)
		}
	})
	t.Run("a queue full of user requests refuses the new one", func(t *testing.T) {
		c := newCoord(t, CoordinatorConfig{TimeoutMs: 1 << 40})
		mustStart(t, c.Trigger(0, KindManual), 1)
		for i := 1; i <= maxQueuedRequests; i++ {
			c.Trigger(int64(i), KindManual)
		}
		mustDecline(t, c.Trigger(5000, KindManual), ReasonTooManyCheckpointRequests)
		if len(c.TakeReady().Triggered) != 0 {
			t.Fatal("queued user requests must be kept")
		}
	})
	t.Run("queued periodic request dropped for min pause on completion", func(t *testing.T) {
		c := newCoord(t, CoordinatorConfig{IntervalMs: 100, MinPauseMs: 40, TimeoutMs: 100_000})
		if err := c.StartScheduler(0, 100); err != nil {
			t.Fatal(err)
		}
		mustStart(t, c.Trigger(100, KindPeriodic), 1)
		if r := c.Trigger(200, KindPeriodic); !r.Queued {
			t.Fatalf("%+v", r)
		}
		ackAll(t, c, 1, 250)
		tr := c.TakeReady().Triggered
		if len(tr) != 1 || tr[0].RequestID != 2 || tr[0].FailureReason != ReasonMinimumTimeBetweenCheckpoints {
			t.Fatalf("%+v", tr)
		}
		if at, _ := c.NextPeriodicTrigger(250); at != 290 {
			t.Fatalf("next = %d, want 250 + 40", at)
		}
		mustStart(t, c.Trigger(290, KindPeriodic), 2)
	})
}

func TestAbortAllAndStopScheduler(t *testing.T) {
	c := newCoord(t, CoordinatorConfig{IntervalMs: 100})
	if err := c.StartScheduler(0, 10); err != nil {
		t.Fatal(err)
	}
	mustStart(t, c.Trigger(10, KindPeriodic), 1)
	c.Trigger(12, KindManual) // queued
	got := c.AbortAll(ReasonTaskFailure, 20)
	want := []FailedCheckpoint{
		{RequestID: 2, Kind: KindManual, FailureMs: 20, Reason: ReasonTaskFailure, Message: "Task has failed."},
		{CheckpointID: 1, RequestID: 1, Kind: KindPeriodic, TriggerMs: 10, FailureMs: 20, Reason: ReasonTaskFailure, Message: "Task has failed.", NotifyTasks: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("AbortAll = %+v\nwant %+v", got, want)
	}
	if !c.PeriodicSchedulingStarted() {
		t.Fatal("AbortAll must not stop the scheduler")
	}
	mustStart(t, c.Trigger(110, KindPeriodic), 2)
	got = c.StopScheduler(120)
	if len(got) != 1 || got[0].CheckpointID != 2 || got[0].Reason != ReasonCheckpointCoordinatorSuspend {
		t.Fatalf("StopScheduler = %+v", got)
	}
	if _, ok := c.NextPeriodicTrigger(120); ok {
		t.Fatal("stopped scheduler has no next trigger")
	}
	mustDecline(t, c.Trigger(210, KindPeriodic), ReasonPeriodicSchedulerShutdown)
	if err := c.StartScheduler(300, 50); err != nil {
		t.Fatal(err)
	}
	if at, _ := c.NextPeriodicTrigger(300); at != 350 {
		t.Fatalf("restart next = %d", at)
	}
	mustStart(t, c.Trigger(350, KindPeriodic), 3)
}

func TestFailureReasons(t *testing.T) {
	tests := []struct {
		give      FailureReason
		name, msg string
		counted   bool
		preFlight bool
	}{
		{ReasonPeriodicSchedulerShutdown, "PERIODIC_SCHEDULER_SHUTDOWN", "Periodic checkpoint scheduler is shut down.", false, true},
		{ReasonTooManyCheckpointRequests, "TOO_MANY_CHECKPOINT_REQUESTS", "The maximum number of queued checkpoint requests exceeded", false, true},
		{ReasonMinimumTimeBetweenCheckpoints, "MINIMUM_TIME_BETWEEN_CHECKPOINTS", "The minimum time between checkpoints is still pending. Checkpoint will be triggered after the minimum time.", false, true},
		{ReasonNotAllRequiredTasksRunning, "NOT_ALL_REQUIRED_TASKS_RUNNING", "Not all required tasks are currently running.", false, true},
		{ReasonIOException, "IO_EXCEPTION", "An Exception occurred while triggering the checkpoint. IO-problem detected.", true, true},
		{ReasonCheckpointExpired, "CHECKPOINT_EXPIRED", "Checkpoint expired before completing.", true, false},
		{ReasonCheckpointSubsumed, "CHECKPOINT_SUBSUMED", "Checkpoint has been subsumed.", false, false},
		{ReasonCheckpointDeclined, "CHECKPOINT_DECLINED", "Checkpoint was declined.", true, false},
		{ReasonCheckpointDeclinedSubsumed, "CHECKPOINT_DECLINED_SUBSUMED", "Checkpoint was canceled because a barrier from newer checkpoint was received.", false, false},
		{ReasonCheckpointDeclinedOnCancellationBarrier, "CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER", "Task received cancellation from one of its inputs", false, false},
		{ReasonCheckpointDeclinedInputEndOfStream, "CHECKPOINT_DECLINED_INPUT_END_OF_STREAM", "Checkpoint was declined because one input stream is finished", false, false},
		{ReasonCheckpointCoordinatorSuspend, "CHECKPOINT_COORDINATOR_SUSPEND", "Checkpoint Coordinator is suspending.", false, false},
		{ReasonCheckpointAsyncException, "CHECKPOINT_ASYNC_EXCEPTION", "Asynchronous task checkpoint failed.", true, false},
		{ReasonFinalizeCheckpointFailure, "FINALIZE_CHECKPOINT_FAILURE", "Failure to finalize checkpoint.", true, false},
		{0, "UNKNOWN", "", false, false},
	}
	for _, tt := range tests {
		if tt.give.String() != tt.name || tt.give.Message() != tt.msg || tt.give.CountsAgainstTolerableFailures() != tt.counted || tt.give.PreFlight() != tt.preFlight {
			t.Errorf("%d: %s %q counted=%v preflight=%v", tt.give, tt.give, tt.give.Message(), tt.give.CountsAgainstTolerableFailures(), tt.give.PreFlight())
		}
		if tt.give.Valid() {
			for _, s := range []string{tt.name, tt.msg} {
				if r, ok := ParseFailureReason(s); !ok || r != tt.give {
					t.Errorf("ParseFailureReason(%q) = %v %v", s, r, ok)
				}
			}
		}
	}
	for r := FailureReason(1); r < reasonEnd; r++ {
		if r.String() == "" || r.Message() == "" {
			t.Errorf("reason %d has no name or message", r)
		}
	}
	if _, ok := ParseFailureReason("nonsense"); ok {
		t.Error("nonsense parsed")
	}
}

func TestInvalidKind(t *testing.T) {
	c := newCoord(t, CoordinatorConfig{})
	if r := c.Trigger(0, Kind(42)); !r.Declined || r.CheckpointID != 0 {
		t.Fatalf("%+v", r)
	}
	mustStart(t, c.Trigger(0, KindManual), 1)
}

// A job restored from checkpoint or savepoint n continues with id n+1; the
// counter never goes back.
func TestRestoreIDCounter(t *testing.T) {
	c := newCoord(t, CoordinatorConfig{})
	c.RestoreIDCounter(8)
	mustStart(t, c.Trigger(100, KindManual), 8)
	ackAll(t, c, 8, 110)
	c.RestoreIDCounter(3)
	mustStart(t, c.Trigger(200, KindManual), 9)
}
