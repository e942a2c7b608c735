package session

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/flinksim/flinksim/sim/vt"

	"github.com/flinksim/flinksim/sim/eventlog"
)

// Limits of what the observer keeps: the page shows the recent past; the
// download (a re-run) has everything.
const (
	maxCheckpoints = 50  // checkpoints and savepoints listed
	maxLateRecords = 100 // late side-output records listed
	maxNotices     = 20  // ignored actions and failures listed
	maxAttempts    = 4096
)

// Checkpoint is one checkpoint or savepoint as the log tells it
// (checkpoint_triggered, checkpoint_snapshot, checkpoint_completed,
// checkpoint_failed). Times are virtual µs; sizes bytes.
type Checkpoint struct {
	ID               int64           `json:"id"`
	Kind             string          `json:"kind"` // periodic, manual, savepoint, stop-with-savepoint
	Status           string          `json:"status"`
	TriggerVT        vt.Time         `json:"trigger_vt"`
	TimestampMs      int64           `json:"timestamp_ms"`
	Unaligned        bool            `json:"unaligned"`
	Acknowledged     int             `json:"acknowledged"`    // tasks that acknowledged (the coordinator's count), or took their snapshot
	Tasks            int             `json:"tasks,omitempty"` // tasks the checkpoint waits for
	EndVT            vt.Time         `json:"end_vt,omitempty"`
	DurationMs       int64           `json:"duration_ms"`
	StateSize        int64           `json:"state_size"`
	CheckpointedSize int64           `json:"checkpointed_size"`
	PersistedRecords int64           `json:"persisted_records"`
	PersistedBytes   int64           `json:"persisted_bytes"`
	MaxAlignmentMs   int64           `json:"max_alignment_ms"`
	SourceOffsets    json.RawMessage `json:"source_offsets,omitempty"`
	SavepointPath    string          `json:"savepoint_path,omitempty"`
	Reason           string          `json:"reason,omitempty"`
	Message          string          `json:"message,omitempty"`
	// Job is the job whose CheckpointCoordinator triggered it (job-1, or
	// the job started from a savepoint): Flink keeps statistics per job.
	Job string `json:"job,omitempty"`
	// Vertices are the snapshots of each JobVertex's subtasks, in the order
	// the vertices first took one (TaskCheckpointStatistics).
	Vertices []VertexCheckpoint `json:"vertices,omitempty"`
}

// VertexCheckpoint is what the subtasks of one JobVertex reported for a
// checkpoint (their checkpoint_snapshot events). Times are virtual µs.
type VertexCheckpoint struct {
	Vertex           string  `json:"vertex"`
	Subtasks         int     `json:"subtasks"`     // the vertex's parallelism in the job (0: not known)
	Acknowledged     int     `json:"acknowledged"` // subtasks that took their snapshot
	LatestVT         vt.Time `json:"latest_vt"`    // the last of them
	StateSize        int64   `json:"state_size"`
	CheckpointedSize int64   `json:"checkpointed_size"`
	PersistedRecords int64   `json:"persisted_records"`
	MaxAlignmentMs   int64   `json:"max_alignment_ms"`
}

// clone is a copy that shares nothing the observer changes later.
func (c *Checkpoint) clone() Checkpoint {
	cc := *c
	cc.Vertices = slices.Clone(c.Vertices)
	return cc
}

// IsSavepoint reports whether c is a savepoint.
func (c *Checkpoint) IsSavepoint() bool {
	return c.Kind == "savepoint" || c.Kind == "stop-with-savepoint"
}

// LateRecord is one record sent to the late side output.
type LateRecord struct {
	VT        vt.Time `json:"vt"`
	Actor     string  `json:"actor"`
	Key       string  `json:"key"`
	Timestamp int64   `json:"timestamp"`
}

// Notice is something the page tells the user once: an action that was not
// carried out, a failure, a job status with a cause.
type Notice struct {
	VT   vt.Time `json:"vt"`
	Kind string  `json:"kind"`
	Text string  `json:"text"`
}

// JobStatusTime is when a job entered a status (virtual µs).
type JobStatusTime struct {
	Job    string  `json:"job"`
	Status string  `json:"status"`
	VT     vt.Time `json:"vt"`
}

// attemptCounters are the counters of one execution (one actor name) as
// far as the log and the views have reported them.
type attemptCounters struct {
	recordsRead, lateDropped, expired int64
	// the accumulated busy, backpressured and idle time (ms) since the
	// execution's mailbox started, summed over its metrics ticks: TaskIO-
	// MetricGroup's accumulateBusyTimeMs (a double),
	// accumulateBackPressuredTimeMs and accumulateIdleTimeMs, as of its last
	// tick
	accBusy        float64
	accBP, accIdle int64
	lastTick       vt.Time // 0: no tick yet
}

// metricsTick adds one task_metrics event at t to the accumulated times.
// A tick covers the time since the previous one; the first covers the
// metrics interval (the task's first tick comes one virtual second after
// its mailbox started). ms per second × the span in seconds is ms.
func (a *attemptCounters) metricsTick(t vt.Time, m eventlog.TaskMetrics) {
	span := vt.Second
	if a.lastTick > 0 {
		span = t - a.lastTick
	}
	a.lastTick = t
	if span <= 0 {
		return
	}
	a.accBusy += float64(m.BusyTimeMsPerSecond) * float64(span) / float64(vt.Second)
	a.accBP += m.BackPressuredTimeMsPerSecond * int64(span) / int64(vt.Second)
	a.accIdle += m.IdleTimeMsPerSecond * int64(span) / int64(vt.Second)
}

// jobCheckpoints are one job's checkpoint statistics as its
// CheckpointStatsTracker keeps them: the counts and the summary of every
// completed checkpoint (not only those still listed).
type jobCheckpoints struct {
	counts                                                      struct{ triggered, completed, failed, restored int64 }
	checkpointedSize, stateSize, duration, persisted, processed statsSummaryAcc
	restored                                                    *Checkpoint
	restoredVT                                                  vt.Time
}

// statsSummaryAcc is Flink's StatsSummary: min, max, sum and count of every
// value added (values below 0 are ignored), and the last
// summaryWindow values for the percentiles (CompletedCheckpointStatsSummary's
// DescriptiveStatisticsHistogram of HISTOGRAM_WINDOW_SIZE).
type statsSummaryAcc struct {
	min, max, sum, count int64
	window               []int64 // a ring of the last summaryWindow values
	next                 int
}

// summaryWindow is CompletedCheckpointStatsSummary.HISTOGRAM_WINDOW_SIZE.
const summaryWindow = 10_000

func (s *statsSummaryAcc) add(v int64) {
	if v < 0 {
		return
	}
	if s.count == 0 {
		s.min, s.max = v, v
	} else {
		s.min, s.max = min(s.min, v), max(s.max, v)
	}
	s.count++
	s.sum += v
	if len(s.window) < summaryWindow {
		// an append writes past the length copies have (clone)
		s.window = append(s.window, v)
		return
	}
	s.window = slices.Clone(s.window) // copies may read every element
	s.window[s.next] = v
	s.next = (s.next + 1) % summaryWindow
}

// clone is a copy for a snapshot. It shares the window: add never changes
// an element a copy can see (it appends, or writes a new array).
func (s *statsSummaryAcc) clone() statsSummaryAcc { return *s }

func (j *jobCheckpoints) clone() *jobCheckpoints {
	c := *j
	c.checkpointedSize, c.stateSize, c.duration = j.checkpointedSize.clone(), j.stateSize.clone(), j.duration.clone()
	c.persisted, c.processed = j.persisted.clone(), j.processed.clone()
	if j.restored != nil {
		r := j.restored.clone()
		c.restored = &r
	}
	return &c
}

// observer reads the live session's events as they are logged (on the
// scheduler's goroutine: it only updates counters and bounded lists under
// its mutex) and keeps what the page derives from the log rather than from
// the actors' views.
type observer struct {
	mu sync.Mutex

	jobStatus     string
	statuses      []JobStatusTime // bounded by maxCheckpoints×4
	windowsFired  int64
	checkpoints   []*Checkpoint // by id, the last maxCheckpoints
	counts        struct{ triggered, completed, failed, declined, restored int64 }
	restored      *Checkpoint // the checkpoint the last restore came from (nil: none or starting offsets)
	restoredVT    vt.Time
	late          []LateRecord
	lateCount     int64
	attempts      map[string]*attemptCounters
	base          attemptCounters // folded attempts
	maxBP         int64
	maxBPTask     string
	outputFrom    int64
	isolation     string
	notices       []Notice
	noticeSeq     int64
	restartsSeen  int64
	ignoredAction int64
	reconfigured  map[string]string // setting -> value, from set actions

	job           string                     // the current job (the last job_status)
	fromSavepoint *Checkpoint                // the savepoint the next job is submitted from
	jobs          map[string]*jobCheckpoints // by job
	parallelism   map[string]map[string]int  // job -> vertex -> subtasks deployed (submit_task)
}

func newObserver(isolation string) *observer {
	return &observer{attempts: map[string]*attemptCounters{}, isolation: isolation, reconfigured: map[string]string{},
		jobs: map[string]*jobCheckpoints{}, parallelism: map[string]map[string]int{}}
}

// jobStats is the checkpoint statistics of job.
func (o *observer) jobStats(job string) *jobCheckpoints {
	j := o.jobs[job]
	if j == nil {
		j = &jobCheckpoints{}
		o.jobs[job] = j
	}
	return j
}

// splitSubtask reads an execution name (jobgraph.SubtaskName: vertex-i or
// vertex-i#attempt) into its vertex and subtask index.
func splitSubtask(name string) (vertex string, index int, ok bool) {
	name, _, _ = strings.Cut(name, "#")
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return name[:i], n, true
}

// observe takes the next event of the log (cluster.Options.Observe).
func (o *observer) observe(ev *eventlog.LogEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	t := vt.Of(ev.Vt)
	switch e := eventlog.Decode(ev).(type) {
	case eventlog.JobStatus:
		o.jobStatus, o.job = e.Status, e.JobID
		if p := o.fromSavepoint; p != nil && e.Status == "CREATED" {
			// the job submitted from the savepoint restores it
			// (CheckpointStatsTracker.reportRestoredCheckpoint)
			o.fromSavepoint = nil
			j := o.jobStats(e.JobID)
			j.counts.restored++
			j.restored, j.restoredVT = p, t
		}
		if len(o.statuses) >= 4*maxCheckpoints {
			o.statuses = o.statuses[1:]
		}
		o.statuses = append(o.statuses, JobStatusTime{Job: e.JobID, Status: e.Status, VT: t})
		if e.Cause != "" {
			o.notice(t, "job_status", e.Status+": "+e.Cause)
		}
		return
	case eventlog.TaskMetrics:
		a := o.attempt(ev.Actor)
		a.metricsTick(t, e)
		if bp := e.BackPressuredTimeMsPerSecond; bp > o.maxBP {
			o.maxBP, o.maxBPTask = bp, ev.Actor
		}
		if e.HasWatermark && !e.InputWatermark { // a source reader
			a.recordsRead = max(a.recordsRead, e.NumRecordsIn)
		}
		a.lateDropped = max(a.lateDropped, e.LateDropped)
		a.expired = max(a.expired, e.ExpiredStateReads)
		return
	case eventlog.WindowFired:
		o.windowsFired++
		return
	case eventlog.LateSideOutput:
		o.lateCount++
		o.late = append(o.late, LateRecord{VT: t, Actor: ev.Actor, Key: e.Key, Timestamp: e.Timestamp})
		if len(o.late) > maxLateRecords {
			o.late = o.late[1:]
		}
		return
	case eventlog.SubmitTask:
		if v, i, ok := splitSubtask(e.Task); ok {
			p := o.parallelism[o.job]
			if p == nil {
				p = map[string]int{}
				o.parallelism[o.job] = p
			}
			p[v] = max(p[v], i+1)
		}
		return
	case eventlog.CheckpointSnapshot:
		if c := o.checkpoint(e.CheckpointID); c != nil {
			c.Acknowledged++
			c.PersistedRecords += e.PersistedRecords
			c.MaxAlignmentMs = max(c.MaxAlignmentMs, e.AlignmentMs)
			if v, _, ok := splitSubtask(ev.Actor); ok {
				o.vertexSnapshot(c, v, t, e)
			}
		}
		return
	case eventlog.CheckpointTriggered:
		o.counts.triggered++
		o.jobStats(o.job).counts.triggered++
		c := &Checkpoint{ID: e.CheckpointID, Kind: e.CheckpointKind, Status: "IN_PROGRESS", TriggerVT: t,
			TimestampMs: e.TimestampMs, Unaligned: e.Unaligned, Job: o.job}
		o.checkpoints = append(o.checkpoints, c)
		if len(o.checkpoints) > maxCheckpoints {
			o.checkpoints = o.checkpoints[1:]
		}
		return
	case eventlog.CheckpointCompleted:
		o.counts.completed++
		if c := o.checkpoint(e.CheckpointID); c != nil {
			c.Status, c.EndVT = "COMPLETED", t
			c.DurationMs, c.StateSize, c.CheckpointedSize = e.DurationMs, e.StateSize, e.CheckpointedSize
			c.PersistedRecords, c.PersistedBytes = e.PersistedRecords, e.PersistedBytes
			c.MaxAlignmentMs, c.SavepointPath = e.MaxAlignmentMs, e.SavepointPath
			if e.SourceOffsets != "" {
				c.SourceOffsets = json.RawMessage(e.SourceOffsets)
			}
			if e.Tasks != "" {
				// a completed checkpoint was acknowledged by every task it
				// lists, whether or not a snapshot saw the coordinator count
				var tasks []struct{}
				if json.Unmarshal([]byte(e.Tasks), &tasks) == nil {
					c.Acknowledged, c.Tasks = len(tasks), len(tasks)
				}
			}
			j := o.jobStats(c.Job)
			j.counts.completed++
			// CompletedCheckpointStatsSummary.updateSummary
			j.checkpointedSize.add(c.CheckpointedSize)
			j.stateSize.add(c.StateSize)
			j.duration.add(vt.Millis(c.EndVT - c.TriggerVT))
			j.persisted.add(c.PersistedBytes)
			j.processed.add(0)
		}
		return
	case eventlog.CheckpointFailed:
		o.counts.failed++
		if c := o.checkpoint(e.CheckpointID); c != nil {
			c.Status, c.EndVT, c.Reason, c.Message = "FAILED", t, e.Reason, e.Message
			o.jobStats(c.Job).counts.failed++
		}
		return
	case eventlog.Restore:
		if e.From == "checkpoint" {
			o.counts.restored++
			o.restored, o.restoredVT = o.checkpoint(e.CheckpointID), t
			j := o.jobStats(o.job)
			j.counts.restored++
			j.restored, j.restoredVT = o.restored, t
		}
		return
	case eventlog.CheckpointDeclined:
		o.counts.declined++
		o.notice(t, "checkpoint_declined", e.CheckpointKind+" not triggered: "+e.Message)
	case eventlog.FinalCounters:
		a := o.attempt(ev.Actor)
		e.Ints(func(k string, v int64) {
			switch k {
			case "records_read":
				a.recordsRead = max(a.recordsRead, v)
			case "numLateRecordsDropped":
				a.lateDropped = max(a.lateDropped, v)
			case "expired_state_reads":
				a.expired = max(a.expired, v)
			}
		})
	case eventlog.OutputView:
		o.outputFrom = e.FromOffset
	case eventlog.Reconfigure: // set KEY=VALUE of the job's configuration: a new job takes it
		if e.Setting != "" {
			o.reconfigured[e.Setting] = e.Value
		}
		o.submitFromSavepoint(e.Step, e.SavepointPath)
	case eventlog.Rescale:
		o.submitFromSavepoint(e.Step, e.SavepointPath)
	case eventlog.OutputIsolation: // set sim.output.isolation-level=...
		o.isolation = e.IsolationLevel
	case eventlog.ActionIgnored:
		o.ignoredAction++
		o.notice(t, "action_ignored", e.Action+": "+e.Reason)
	case eventlog.Failure:
		o.notice(t, "failure", e.Invariant+": "+e.What)
	case eventlog.Failover:
		o.restartsSeen++
		o.notice(t, "failover", "failover: "+e.Cause)
	}
}

func (o *observer) notice(t vt.Time, kind, text string) {
	o.noticeSeq++
	o.notices = append(o.notices, Notice{VT: t, Kind: kind, Text: text})
	if len(o.notices) > maxNotices {
		o.notices = o.notices[1:]
	}
}

// submitFromSavepoint notes the savepoint the JobManager submits the next
// job from (a rescale's or reconfiguration's "submit from savepoint" step).
func (o *observer) submitFromSavepoint(step, path string) {
	if step != eventlog.RescaleSubmit {
		return
	}
	for i := len(o.checkpoints) - 1; i >= 0; i-- {
		if c := o.checkpoints[i]; c.SavepointPath == path && path != "" {
			o.fromSavepoint = c
			return
		}
	}
}

// vertexSnapshot adds one subtask's snapshot at t to c's statistics of
// vertex.
func (o *observer) vertexSnapshot(c *Checkpoint, vertex string, t vt.Time, e eventlog.CheckpointSnapshot) {
	i := slices.IndexFunc(c.Vertices, func(x VertexCheckpoint) bool { return x.Vertex == vertex })
	if i < 0 {
		c.Vertices = append(c.Vertices, VertexCheckpoint{Vertex: vertex, Subtasks: o.parallelism[c.Job][vertex]})
		i = len(c.Vertices) - 1
	}
	x := &c.Vertices[i]
	x.Acknowledged++
	x.LatestVT = max(x.LatestVT, t)
	x.StateSize += e.StateSize
	x.CheckpointedSize += e.CheckpointedSize
	x.PersistedRecords += e.PersistedRecords
	x.MaxAlignmentMs = max(x.MaxAlignmentMs, e.AlignmentMs)
}

func (o *observer) checkpoint(id int64) *Checkpoint {
	for i := len(o.checkpoints) - 1; i >= 0; i-- {
		if o.checkpoints[i].ID == id {
			return o.checkpoints[i]
		}
	}
	return nil
}

// attempt is the counters of one execution; the map stays bounded by
// folding the oldest into base (folding keeps the totals).
func (o *observer) attempt(name string) *attemptCounters {
	if a, ok := o.attempts[name]; ok {
		return a
	}
	if len(o.attempts) >= maxAttempts {
		for k, a := range o.attempts { // the order does not matter: only sums are kept
			o.base.recordsRead += a.recordsRead
			o.base.lateDropped += a.lateDropped
			o.base.expired += a.expired
			delete(o.attempts, k)
		}
	}
	a := &attemptCounters{}
	o.attempts[name] = a
	return a
}

// totals sums the counters of every execution so far.
func (o *observer) totals() attemptCounters {
	t := o.base
	for _, a := range o.attempts {
		t.recordsRead += a.recordsRead
		t.lateDropped += a.lateDropped
		t.expired += a.expired
	}
	return t
}
