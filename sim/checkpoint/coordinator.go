package checkpoint

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// noTrigger marks "no periodic trigger scheduled" (Flink's Long.MAX_VALUE).
const noTrigger int64 = math.MaxInt64

// unknownCheckpointID is CheckpointFailureManager.UNKNOWN_CHECKPOINT_ID.
const unknownCheckpointID int64 = -1

// Errors of the scheduler controls, with the texts of CheckpointCoordinator's exceptions.
var (
	ErrCoordinatorShutdown  = errors.New("Checkpoint coordinator is shut down")
	ErrNoPeriodicConfigured = errors.New("Can not start checkpoint scheduler, if no periodic checkpointing is configured")
)

// Sentinels for acknowledgements that do not count; Acknowledge wraps them in *AckError,
// whose text is the sentence CheckpointCoordinator logs for the case.
var (
	// ErrDuplicateAck: the task already acknowledged this checkpoint
	// (TaskAcknowledgeResult.DUPLICATE).
	ErrDuplicateAck = errors.New("duplicate acknowledge message")
	// ErrUnknownTask: the task is not one the checkpoint waits for
	// (TaskAcknowledgeResult.UNKNOWN).
	ErrUnknownTask = errors.New("unknown task")
	// ErrLateAck: the checkpoint expired recently (one of the last 16 expired ids).
	ErrLateAck = errors.New("late message for expired checkpoint")
	// ErrUnknownCheckpoint: no pending checkpoint has this id (completed, failed long ago,
	// subsumed, declined, or never triggered).
	ErrUnknownCheckpoint = errors.New("unknown checkpoint")
	// ErrAckAfterTimeout: the acknowledgement arrived at or after the checkpoint's
	// deadline, before CheckTimeouts expired it. Flink's canceller timer would have run
	// first, so the acknowledgement does not count (not a Flink message).
	ErrAckAfterTimeout = errors.New("acknowledgement at or after the checkpoint timeout")
)

// AckError explains why an acknowledgement did not count. Err is one of the Err*Ack,
// ErrUnknownTask, ErrUnknownCheckpoint or ErrCoordinatorShutdown sentinels (errors.Is works).
type AckError struct {
	Err          error
	CheckpointID int64
	Task         string
}

// Error returns the sentence CheckpointCoordinator.receiveAcknowledgeMessage logs.
func (e *AckError) Error() string {
	switch e.Err {
	case ErrDuplicateAck:
		return fmt.Sprintf("Received a duplicate acknowledge message for checkpoint %d, task %s.", e.CheckpointID, e.Task)
	case ErrUnknownTask:
		return fmt.Sprintf("Could not acknowledge the checkpoint %d for task %s, because the task's execution attempt id was unknown.", e.CheckpointID, e.Task)
	case ErrLateAck:
		return fmt.Sprintf("Received late message for now expired checkpoint attempt %d from task %s.", e.CheckpointID, e.Task)
	case ErrUnknownCheckpoint:
		return fmt.Sprintf("Received message for an unknown checkpoint %d from task %s.", e.CheckpointID, e.Task)
	case ErrAckAfterTimeout:
		return fmt.Sprintf("Acknowledgement of checkpoint %d from task %s arrived at or after its timeout.", e.CheckpointID, e.Task)
	}
	return fmt.Sprintf("%v (checkpoint %d, task %s)", e.Err, e.CheckpointID, e.Task)
}

// Unwrap returns the sentinel.
func (e *AckError) Unwrap() error { return e.Err }

// request is a CheckpointCoordinator.CheckpointTriggerRequest.
type request struct {
	seq       int64
	kind      Kind
	timestamp int64 // when submitted, ms
	periodic  bool
	force     bool
}

// before is CheckpointRequestDecider's queue order: savepoints first, then forced requests,
// then non-periodic ones, then older ones; Flink breaks the last tie by identity hash, we by
// submission order.
func (r *request) before(o *request) bool {
	if r.kind.IsSavepoint() != o.kind.IsSavepoint() {
		return r.kind.IsSavepoint()
	}
	if r.force != o.force {
		return r.force
	}
	if r.periodic != o.periodic {
		return !r.periodic
	}
	if r.timestamp != o.timestamp {
		return r.timestamp < o.timestamp
	}
	return r.seq < o.seq
}

// pendingCheckpoint is a PendingCheckpoint with its PendingCheckpointStats.
type pendingCheckpoint struct {
	id         int64
	req        request
	triggerMs  int64
	deadlineMs int64
	acks       map[string]TaskAck
	stats      int // index into Coordinator.history
}

// Coordinator triggers checkpoints and savepoints, collects the tasks' acknowledgements,
// expires, declines and subsumes pending checkpoints and keeps their statistics, following
// org.apache.flink.runtime.checkpoint.CheckpointCoordinator with its
// CheckpointRequestDecider, PendingCheckpoint, CheckpointFailureManager and
// DefaultCheckpointStatsTracker (Flink 1.20). The decider's queue is a requestDecider
// (request_decider.go), the tolerable-failure count a failureManager (failure_manager.go).
//
// It is a pure state machine: it keeps no clock and sends nothing. Every method that
// depends on time takes the virtual time nowMs (milliseconds, never decreasing across
// calls). Results come back as values; side effects a call cannot return (a queued request
// started after a completion, a checkpoint subsumed by a newer one) wait in TakeReady.
//
// The caller's duties, mirroring Flink's timers and RPCs:
//   - send TriggerCheckpoint to the source tasks for every started CheckpointID, the
//     barrier carrying the checkpoint's timestamp (TriggerResult.AtMs);
//   - call Trigger(t, KindPeriodic) when t reaches NextPeriodicTrigger;
//   - call CheckTimeouts(t) before delivering anything else at virtual time t (Flink's
//     canceller fires at trigger time + timeout);
//   - notify tasks of completions and aborts (CompletedCheckpoint.NotifyTasks,
//     FailedCheckpoint.NotifyTasks) and fail the job when FailedCheckpoint.JobFailure is set;
//   - on failover, StopScheduler (aborts with CHECKPOINT_COORDINATOR_SUSPEND, as the job
//     leaving RUNNING does) and StartScheduler again when it runs.
//
// Simplifications: triggering is instantaneous (Flink's isTriggering phase, master hooks,
// operator coordinators and storage initialization take no time and cannot fail);
// checkpoint cleaning takes no time (the decider's "too many checkpoints being cleaned"
// check never blocks); the checkpoint interval during backlog is not modelled; all
// completed checkpoints are kept in History (Flink's web history keeps the last 10).
//
// Not safe for concurrent use.
type Coordinator struct {
	cfg       CoordinatorConfig
	tasks     []string
	taskIndex map[string]int

	nextID  int64 // CheckpointIDCounter
	nextSeq int64

	pending map[int64]*pendingCheckpoint
	decider requestDecider

	periodicScheduling bool
	nextTriggerMs      int64
	shutdown           bool
	tasksRunning       bool

	hasCompleted     bool
	lastCompletionMs int64

	latest        *CompletedCheckpoint
	history       []CheckpointStats
	recentExpired []int64
	failures      failureManager

	// the request of the Trigger call in progress, and its outcome
	currentSeq int64
	current    *TriggerResult
	ready      Ready
}

// NewCoordinator returns a coordinator for a job whose checkpoints must be acknowledged by
// every task in tasks (task names, at least one, no duplicates; the list is copied and
// sorted). cfg is validated with Flink's rules and messages (ErrIntervalTooSmall, ...).
// The periodic scheduler is off until StartScheduler; tasks count as running until
// SetTasksRunning(false).
func NewCoordinator(cfg CoordinatorConfig, tasks []string) (*Coordinator, error) {
	n, err := cfg.normalized()
	if err != nil {
		return nil, err
	}
	if len(tasks) == 0 {
		return nil, ErrNoTasks
	}
	sorted := append([]string(nil), tasks...)
	sort.Strings(sorted)
	index := make(map[string]int, len(sorted))
	for i, t := range sorted {
		if _, dup := index[t]; dup {
			return nil, ErrDuplicateTask
		}
		index[t] = i
	}
	return &Coordinator{
		cfg:           n,
		tasks:         sorted,
		taskIndex:     index,
		nextID:        1,
		nextSeq:       1,
		pending:       make(map[int64]*pendingCheckpoint),
		nextTriggerMs: noTrigger,
		tasksRunning:  true,
		failures:      newFailureManager(n.TolerableFailures),
	}, nil
}

// Config returns the configuration in use: zero values replaced by Flink's defaults, the
// interval raised to the min pause if it was smaller.
func (c *Coordinator) Config() CoordinatorConfig { return c.cfg }

// RestoreIDCounter makes the next checkpoint id at least next: a job restored
// from a checkpoint or savepoint continues its ids after the restored one
// (CheckpointCoordinator.restoreSavepoint sets the CheckpointIDCounter to the
// restored id + 1). It never lowers the counter.
func (c *Coordinator) RestoreIDCounter(next int64) {
	if next > c.nextID {
		c.nextID = next
	}
}

// Tasks returns the sorted task names every checkpoint waits for.
func (c *Coordinator) Tasks() []string { return append([]string(nil), c.tasks...) }

// SetTasksRunning records whether every task the checkpoint plan needs is RUNNING. While
// false, a request that would start is declined with NOT_ALL_REQUIRED_TASKS_RUNNING
// (DefaultCheckpointPlanCalculator) and consumes no checkpoint id.
func (c *Coordinator) SetTasksRunning(running bool) { c.tasksRunning = running }

// StartScheduler starts periodic checkpointing at nowMs, the first trigger initialDelayMs
// later (CheckpointCoordinator.startCheckpointScheduler). Flink draws the delay uniformly
// from CoordinatorConfig.InitialDelayRange; the caller draws it from its seeded generator.
// A negative delay counts as 0. Like Flink it first stops the scheduler, which aborts every
// pending checkpoint and queued request with CHECKPOINT_COORDINATOR_SUSPEND; those failures
// go to Ready. Errors: ErrCoordinatorShutdown, ErrNoPeriodicConfigured (interval 0).
func (c *Coordinator) StartScheduler(nowMs, initialDelayMs int64) error {
	if c.shutdown {
		return ErrCoordinatorShutdown
	}
	if c.cfg.IntervalMs == 0 {
		return ErrNoPeriodicConfigured
	}
	c.ready.Failed = append(c.ready.Failed, c.StopScheduler(nowMs)...)
	if initialDelayMs < 0 {
		initialDelayMs = 0
	}
	c.periodicScheduling = true
	c.nextTriggerMs = nowMs + initialDelayMs
	return nil
}

// StopScheduler stops periodic checkpointing and aborts every pending checkpoint and
// queued request with CHECKPOINT_COORDINATOR_SUSPEND (stopCheckpointScheduler, run when the
// job leaves RUNNING, e.g. on failover). It returns those failures, queued requests first.
func (c *Coordinator) StopScheduler(nowMs int64) []FailedCheckpoint {
	c.periodicScheduling = false
	c.nextTriggerMs = noTrigger
	return c.abortPendingAndQueued(ReasonCheckpointCoordinatorSuspend, nowMs)
}

// Shutdown shuts the coordinator down for good (CheckpointCoordinator.shutdown): pending
// checkpoints and queued requests fail with CHECKPOINT_COORDINATOR_SHUTDOWN (returned),
// later triggers are declined with it and acknowledgements are refused.
func (c *Coordinator) Shutdown(nowMs int64) []FailedCheckpoint {
	if c.shutdown {
		return nil
	}
	c.shutdown = true
	c.periodicScheduling = false
	c.nextTriggerMs = noTrigger
	return c.abortPendingAndQueued(ReasonCheckpointCoordinatorShutdown, nowMs)
}

// IsShutdown reports whether Shutdown was called.
func (c *Coordinator) IsShutdown() bool { return c.shutdown }

// PeriodicSchedulingStarted reports whether the periodic scheduler runs.
func (c *Coordinator) PeriodicSchedulingStarted() bool { return c.periodicScheduling }

// NextPeriodicTrigger returns the virtual time (ms) at which the caller must call
// Trigger(t, KindPeriodic), and false when periodic checkpointing is off or stopped. The
// schedule is Flink's fixed-rate ScheduledTrigger: each firing moves it one interval on;
// when a periodic request is dropped because the min pause since the last completion has
// not passed (MINIMUM_TIME_BETWEEN_CHECKPOINTS), the next firing moves to last completion +
// min pause, so no periodic checkpoint starts earlier than that. A trigger already due
// (behind nowMs) is returned as nowMs.
func (c *Coordinator) NextPeriodicTrigger(nowMs int64) (int64, bool) {
	if !c.periodicScheduling || c.nextTriggerMs == noTrigger {
		return 0, false
	}
	if c.nextTriggerMs < nowMs {
		return nowMs, true
	}
	return c.nextTriggerMs, true
}

// Trigger submits a request of the given kind at nowMs (CheckpointCoordinator.triggerCheckpoint
// / triggerSavepoint / triggerSynchronousSavepoint) and returns its outcome. A KindPeriodic
// call at or after NextPeriodicTrigger is the scheduler's firing and advances the schedule
// by one interval first.
//
// The request goes through CheckpointRequestDecider, in Flink's order:
//  1. the queue of waiting requests is bounded (1000): when full of user requests the new
//     one is declined, otherwise the last in queue order is dropped, both with
//     TOO_MANY_CHECKPOINT_REQUESTS;
//  2. the first request in queue order (savepoints, then forced, then non-periodic, then
//     oldest) is considered: while MaxConcurrent checkpoints are pending only a forced one
//     (a savepoint with unaligned checkpoints off) may start, the others stay queued;
//  3. a periodic request whose min pause since the last completion has not passed is
//     declined with MINIMUM_TIME_BETWEEN_CHECKPOINTS and the periodic trigger moves to last
//     completion + min pause. Manual checkpoints and savepoints ignore the min pause.
//
// A request that may start is checked as startTriggeringCheckpoint does: coordinator shut
// down (CHECKPOINT_COORDINATOR_SHUTDOWN), periodic request while the scheduler is stopped
// (PERIODIC_SCHEDULER_SHUTDOWN), tasks not running (NOT_ALL_REQUIRED_TASKS_RUNNING); only
// then it takes the next checkpoint id (ids start at 1 and are shared with savepoints) and
// its timeout starts. Declined requests consume no id and leave no history row.
//
// The result is Queued when the request waits; its outcome then comes in Ready. Other
// queued requests this call decides also go to Ready; they may have started before or after
// this call's own request (all at nowMs): checkpoint ids give the start order. An invalid
// kind is declined with an empty reason.
func (c *Coordinator) Trigger(nowMs int64, kind Kind) TriggerResult {
	seq := c.nextSeq
	c.nextSeq++
	if !kind.Valid() {
		return TriggerResult{RequestID: seq, Kind: kind, AtMs: nowMs, Declined: true}
	}
	if kind == KindPeriodic && c.periodicScheduling && c.nextTriggerMs != noTrigger && nowMs >= c.nextTriggerMs {
		// ScheduledTrigger.run: fixed-rate rescheduling before the request is made
		c.nextTriggerMs += c.cfg.IntervalMs
	}
	r := &request{
		seq:       seq,
		kind:      kind,
		timestamp: nowMs,
		periodic:  kind == KindPeriodic,
		force:     kind.IsSavepoint() && !c.cfg.Unaligned,
	}
	c.currentSeq, c.current = seq, nil
	c.submit(r, nowMs)
	c.currentSeq = 0
	if c.current != nil {
		res := *c.current
		c.current = nil
		return res
	}
	return TriggerResult{RequestID: seq, Kind: kind, Savepoint: kind.IsSavepoint(), AtMs: nowMs, Queued: true}
}

// submit is CheckpointRequestDecider.chooseRequestToExecute(newRequest, ...) followed by
// starting whatever it chooses, repeatedly (onTriggerSuccess -> executeQueuedRequest).
func (c *Coordinator) submit(r *request, nowMs int64) {
	if dropped := c.decider.enqueue(r); dropped != nil {
		c.decline(dropped, ReasonTooManyCheckpointRequests, nowMs)
	}
	c.executeQueued(nowMs)
}

// executeQueued starts queued requests while the decider allows
// (CheckpointCoordinator.executeQueuedRequest after every trigger, completion and abort).
// A periodic request the min pause turns away is declined and moves the periodic trigger to
// when the pause is over (rescheduleTrigger).
func (c *Coordinator) executeQueued(nowMs int64) {
	for {
		pauseLeft := int64(0)
		if c.hasCompleted {
			pauseLeft = c.lastCompletionMs + c.cfg.MinPauseMs - nowMs
		}
		r, tooEarly := c.decider.chooseQueued(len(c.pending), c.cfg.MaxConcurrent, pauseLeft)
		if tooEarly {
			c.decline(r, ReasonMinimumTimeBetweenCheckpoints, nowMs)
			if c.periodicScheduling {
				c.nextTriggerMs = nowMs + pauseLeft // rescheduleTrigger
			}
			return
		}
		if r == nil {
			return
		}
		c.start(r, nowMs)
	}
}

// start is startTriggeringCheckpoint + createPendingCheckpoint.
func (c *Coordinator) start(r *request, nowMs int64) {
	switch {
	case c.shutdown:
		c.decline(r, ReasonCheckpointCoordinatorShutdown, nowMs)
		return
	case r.periodic && !c.periodicScheduling:
		c.decline(r, ReasonPeriodicSchedulerShutdown, nowMs)
		return
	case !c.tasksRunning:
		c.decline(r, ReasonNotAllRequiredTasksRunning, nowMs)
		return
	}
	id := c.nextID
	c.nextID++
	p := &pendingCheckpoint{
		id:         id,
		req:        *r,
		triggerMs:  nowMs,
		deadlineMs: nowMs + c.cfg.TimeoutMs,
		acks:       make(map[string]TaskAck, len(c.tasks)),
		stats:      len(c.history),
	}
	c.pending[id] = p
	c.history = append(c.history, CheckpointStats{
		ID:         id,
		Kind:       r.kind,
		Status:     StatusInProgress,
		TriggerMs:  nowMs,
		EndMs:      -1,
		DurationMs: -1,
		NumTasks:   len(c.tasks),
	})
	c.decided(TriggerResult{RequestID: r.seq, Kind: r.kind, CheckpointID: id, Savepoint: r.kind.IsSavepoint(), AtMs: nowMs})
}

// decline fails a request before any checkpoint started. Pre-flight failures go through
// CheckpointFailureManager as job-level failures with an unknown id; none of the reasons
// used here is counted, so no job failure can result.
func (c *Coordinator) decline(r *request, reason FailureReason, nowMs int64) {
	c.decided(TriggerResult{
		RequestID:     r.seq,
		Kind:          r.kind,
		Savepoint:     r.kind.IsSavepoint(),
		AtMs:          nowMs,
		Declined:      true,
		Reason:        reason.Message(),
		FailureReason: reason,
	})
}

func (c *Coordinator) decided(res TriggerResult) {
	if res.RequestID == c.currentSeq {
		c.current = &res
		return
	}
	c.ready.Triggered = append(c.ready.Triggered, res)
}

// Acknowledge records task's acknowledgement of checkpoint id at nowMs
// (receiveAcknowledgeMessage, PendingCheckpoint.acknowledgeTask). When it is the last one
// missing, the checkpoint completes at nowMs and is returned: for a checkpoint (not a
// savepoint) it becomes LatestCompleted; a checkpoint or stop-with-savepoint then subsumes
// every older pending checkpoint (CHECKPOINT_SUBSUMED, into Ready); the min pause counts
// from nowMs; queued requests may start (into Ready).
//
// An acknowledgement that does not count returns an *AckError for the caller to log:
// duplicate (ErrDuplicateAck), task not in the plan (ErrUnknownTask), recently expired
// checkpoint (ErrLateAck), any other id (ErrUnknownCheckpoint), at or after the
// checkpoint's deadline (ErrAckAfterTimeout), coordinator shut down
// (ErrCoordinatorShutdown). The ack's slices are copied.
func (c *Coordinator) Acknowledge(id int64, task string, ack TaskAck, nowMs int64) (*CompletedCheckpoint, error) {
	if c.shutdown {
		return nil, &AckError{Err: ErrCoordinatorShutdown, CheckpointID: id, Task: task}
	}
	p := c.pending[id]
	if p == nil {
		for _, e := range c.recentExpired {
			if e == id {
				return nil, &AckError{Err: ErrLateAck, CheckpointID: id, Task: task}
			}
		}
		return nil, &AckError{Err: ErrUnknownCheckpoint, CheckpointID: id, Task: task}
	}
	if nowMs >= p.deadlineMs {
		return nil, &AckError{Err: ErrAckAfterTimeout, CheckpointID: id, Task: task}
	}
	if _, ok := c.taskIndex[task]; !ok {
		return nil, &AckError{Err: ErrUnknownTask, CheckpointID: id, Task: task}
	}
	if _, dup := p.acks[task]; dup {
		return nil, &AckError{Err: ErrDuplicateAck, CheckpointID: id, Task: task}
	}
	ack = ack.clone()
	p.acks[task] = ack
	st := &c.history[p.stats]
	st.NumAcknowledged++
	st.StateSizeBytes += ack.StateSizeBytes
	st.IncrementalSizeBytes += ack.IncrementalSizeBytes
	if ack.PersistedInFlightRecords > 0 {
		st.PersistedInFlightRecords += ack.PersistedInFlightRecords
	}
	if ack.PersistedInFlightBytes > 0 {
		st.PersistedInFlightBytes += ack.PersistedInFlightBytes
	}
	if ack.AlignmentDurationMs > st.MaxAlignmentDurationMs {
		st.MaxAlignmentDurationMs = ack.AlignmentDurationMs
	}
	st.DurationMs = max(0, nowMs-p.triggerMs)
	if len(p.acks) < len(c.tasks) {
		return nil, nil
	}
	return c.complete(p, nowMs+max(0, c.cfg.FinalizeMs)), nil
}

// complete is completePendingCheckpoint + cleanupAfterCompletedCheckpoint.
func (c *Coordinator) complete(p *pendingCheckpoint, nowMs int64) *CompletedCheckpoint {
	st := &c.history[p.stats]
	st.Status = StatusCompleted
	st.EndMs = nowMs
	cc := &CompletedCheckpoint{
		ID:                       p.id,
		Kind:                     p.req.kind,
		TriggerMs:                p.triggerMs,
		CompletionMs:             nowMs,
		StateSizeBytes:           st.StateSizeBytes,
		IncrementalSizeBytes:     st.IncrementalSizeBytes,
		PersistedInFlightRecords: st.PersistedInFlightRecords,
		PersistedInFlightBytes:   st.PersistedInFlightBytes,
		MaxAlignmentDurationMs:   st.MaxAlignmentDurationMs,
		NotifyTasks:              !p.req.kind.IsSavepoint() || p.req.kind == KindStopWithSavepoint,
		Tasks:                    make([]TaskState, 0, len(c.tasks)),
	}
	for _, t := range c.tasks {
		cc.Tasks = append(cc.Tasks, TaskState{Task: t, Ack: p.acks[t]})
	}
	delete(c.pending, p.id)
	c.failures.handleCheckpointSuccess(p.id)
	if !p.req.kind.IsSavepoint() {
		c.latest = cc
	}
	c.hasCompleted = true
	c.lastCompletionMs = nowMs
	if cc.NotifyTasks {
		// dropSubsumedCheckpoints: older pending checkpoints that can be subsumed
		for _, old := range c.pendingInOrder() {
			if old.id < p.id && !old.req.kind.IsSavepoint() {
				c.ready.Failed = append(c.ready.Failed, c.abort(old, ReasonCheckpointSubsumed, "", nowMs))
			}
		}
	}
	c.executeQueued(nowMs)
	return cc.clone()
}

// Decline fails pending checkpoint id because task declined it with reason
// (receiveDeclineMessage; the DeclineCheckpoint's CheckpointException). An invalid reason
// counts as CHECKPOINT_DECLINED. It returns nil, changing nothing, when the coordinator is
// shut down or no checkpoint with that id is pending (Flink only logs it). The failure goes
// through CheckpointFailureManager as a task failure: it fails the job at once for a
// stop-with-savepoint, otherwise counts against TolerableFailures when the reason does.
func (c *Coordinator) Decline(id int64, task string, reason FailureReason, nowMs int64) *FailedCheckpoint {
	if c.shutdown {
		return nil
	}
	p := c.pending[id]
	if p == nil {
		return nil
	}
	if !reason.Valid() {
		reason = ReasonCheckpointDeclined
	}
	f := c.abort(p, reason, task, nowMs)
	c.executeQueued(nowMs)
	return &f
}

// CheckTimeouts expires, in id order, every pending checkpoint whose trigger time + timeout
// is at or before nowMs, with CHECKPOINT_EXPIRED (CheckpointCanceller), then lets queued
// requests start. Expired ids are remembered (the last 16) so that late acknowledgements
// are told apart. Expiry is a job-level failure: it counts against TolerableFailures,
// except for savepoints.
func (c *Coordinator) CheckTimeouts(nowMs int64) []FailedCheckpoint {
	var out []FailedCheckpoint
	for _, p := range c.pendingInOrder() {
		if p.deadlineMs <= nowMs {
			out = append(out, c.abort(p, ReasonCheckpointExpired, "", nowMs))
		}
	}
	if len(out) > 0 {
		c.executeQueued(nowMs)
	}
	return out
}

// NextTimeout returns the earliest deadline (trigger time + timeout, ms) of a pending
// checkpoint, the time the caller must call CheckTimeouts; false when nothing is pending.
func (c *Coordinator) NextTimeout() (int64, bool) {
	best, ok := int64(0), false
	for _, p := range c.pending {
		if !ok || p.deadlineMs < best {
			best, ok = p.deadlineMs, true
		}
	}
	return best, ok
}

// AbortAll fails every queued request and then every pending checkpoint with reason
// (abortPendingAndQueuedCheckpoints), e.g. TASK_FAILURE or JOB_FAILOVER_REGION on a
// failover; an invalid reason counts as CHECKPOINT_COORDINATOR_SUSPEND. Queued requests come
// first in the result with CheckpointID 0, pending checkpoints follow in id order. The
// periodic scheduler is left as it is (StopScheduler stops it).
func (c *Coordinator) AbortAll(reason FailureReason, nowMs int64) []FailedCheckpoint {
	if !reason.Valid() {
		reason = ReasonCheckpointCoordinatorSuspend
	}
	return c.abortPendingAndQueued(reason, nowMs)
}

func (c *Coordinator) abortPendingAndQueued(reason FailureReason, nowMs int64) []FailedCheckpoint {
	var out []FailedCheckpoint
	for _, r := range c.decider.takeAll() {
		out = append(out, FailedCheckpoint{
			RequestID: r.seq,
			Kind:      r.kind,
			FailureMs: nowMs,
			Reason:    reason,
			Message:   reason.Message(),
		})
	}
	for _, p := range c.pendingInOrder() {
		out = append(out, c.abort(p, reason, "", nowMs))
	}
	return out
}

// abort is abortPendingCheckpoint: dispose, record the failure statistics, remember an
// expired id, and run the failure manager (task-level when task != "").
func (c *Coordinator) abort(p *pendingCheckpoint, reason FailureReason, task string, nowMs int64) FailedCheckpoint {
	delete(c.pending, p.id)
	st := &c.history[p.stats]
	st.Status = StatusFailed
	st.EndMs = nowMs
	st.DurationMs = max(0, nowMs-p.triggerMs)
	st.FailureReason = reason
	st.FailureMessage = reason.Message()
	if reason == ReasonCheckpointExpired {
		if len(c.recentExpired) >= numGhostCheckpointIDs {
			c.recentExpired = c.recentExpired[1:]
		}
		c.recentExpired = append(c.recentExpired, p.id)
	}
	return FailedCheckpoint{
		CheckpointID: p.id,
		RequestID:    p.req.seq,
		Kind:         p.req.kind,
		TriggerMs:    p.triggerMs,
		FailureMs:    nowMs,
		Reason:       reason,
		Message:      reason.Message(),
		Task:         task,
		NotifyTasks:  true,
		JobFailure:   c.failures.handleCheckpointException(reason, p.id, p.req.kind, task != ""),
	}
}

// ConsecutiveFailures returns CheckpointFailureManager's continuous failure counter.
func (c *Coordinator) ConsecutiveFailures() int { return c.failures.counter }

func (c *Coordinator) pendingInOrder() []*pendingCheckpoint {
	out := make([]*pendingCheckpoint, 0, len(c.pending))
	for _, p := range c.pending {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// TakeReady returns the side effects accumulated since the last call and clears them.
func (c *Coordinator) TakeReady() Ready {
	r := c.ready
	c.ready = Ready{}
	return r
}

// LatestCompleted returns a copy of the latest completed checkpoint (savepoints excluded:
// Flink does not add them to the CompletedCheckpointStore), or nil if none.
func (c *Coordinator) LatestCompleted() *CompletedCheckpoint { return c.latest.clone() }

// History returns every checkpoint and savepoint that got an id, in id order, with its
// current statistics (DefaultCheckpointStatsTracker's history, unbounded).
func (c *Coordinator) History() []CheckpointStats {
	return append([]CheckpointStats(nil), c.history...)
}

// Pending returns the ids of the pending checkpoints, ascending.
func (c *Coordinator) Pending() []int64 {
	out := make([]int64, 0, len(c.pending))
	for id := range c.pending {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// NumQueuedRequests returns how many trigger requests wait in the decider's queue.
func (c *Coordinator) NumQueuedRequests() int { return len(c.decider.queue) }
