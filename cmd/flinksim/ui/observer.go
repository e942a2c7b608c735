package ui

import (
	"encoding/json"
	"github.com/flinksim/flinksim/sim/vt"
	"sync"

	"github.com/flinksim/flinksim/messages"
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
}

func newObserver(isolation string) *observer {
	return &observer{attempts: map[string]*attemptCounters{}, isolation: isolation, reconfigured: map[string]string{}}
}

// observe takes the next event of the log (cluster.Options.Observe).
func (o *observer) observe(ev *messages.LogEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f := fields(ev.Fields)
	t := vt.Of(ev.Vt)
	switch eventlog.Kind(ev.Kind) {
	case eventlog.KindJobStatus:
		st := f.str("status")
		o.jobStatus = st
		if len(o.statuses) >= 4*maxCheckpoints {
			o.statuses = o.statuses[1:]
		}
		o.statuses = append(o.statuses, JobStatusTime{Job: f.str("job_id"), Status: st, VT: t})
		if c := f.str("cause"); c != "" {
			o.notice(t, "job_status", st+": "+c)
		}
	case eventlog.KindWindowFired:
		o.windowsFired++
	case eventlog.KindCheckpointTriggered:
		o.counts.triggered++
		c := &Checkpoint{ID: f.int("checkpoint_id"), Kind: f.str("kind"), Status: "IN_PROGRESS", TriggerVT: t,
			TimestampMs: f.int("timestamp_ms"), Unaligned: f.bool("unaligned")}
		o.checkpoints = append(o.checkpoints, c)
		if len(o.checkpoints) > maxCheckpoints {
			o.checkpoints = o.checkpoints[1:]
		}
	case eventlog.KindCheckpointSnapshot:
		if c := o.checkpoint(f.int("checkpoint_id")); c != nil {
			c.Acknowledged++
			c.PersistedRecords += f.int("persisted_records")
			c.MaxAlignmentMs = max(c.MaxAlignmentMs, f.int("alignment_ms"))
		}
	case eventlog.KindCheckpointCompleted:
		o.counts.completed++
		if c := o.checkpoint(f.int("checkpoint_id")); c != nil {
			c.Status, c.EndVT = "COMPLETED", t
			c.DurationMs, c.StateSize, c.CheckpointedSize = f.int("duration_ms"), f.int("state_size"), f.int("checkpointed_size")
			c.PersistedRecords, c.PersistedBytes = f.int("persisted_records"), f.int("persisted_bytes")
			c.MaxAlignmentMs, c.SavepointPath = f.int("max_alignment_ms"), f.str("savepoint_path")
			if raw := f.raw("source_offsets"); raw != "" {
				c.SourceOffsets = json.RawMessage(raw)
			}
		}
	case eventlog.KindCheckpointFailed:
		o.counts.failed++
		if c := o.checkpoint(f.int("checkpoint_id")); c != nil {
			c.Status, c.EndVT, c.Reason, c.Message = "FAILED", t, f.str("reason"), f.str("message")
		}
	case eventlog.KindCheckpointDeclined:
		o.counts.declined++
		o.notice(t, "checkpoint_declined", f.str("kind")+" not triggered: "+f.str("message"))
	case eventlog.KindRestore:
		if f.str("from") == "checkpoint" {
			o.counts.restored++
			o.restored, o.restoredVT = o.checkpoint(f.int("checkpoint_id")), t
		}
	case eventlog.KindLateSideOutput:
		o.lateCount++
		o.late = append(o.late, LateRecord{VT: t, Actor: ev.Actor, Key: f.str("key"), Timestamp: f.int("timestamp")})
		if len(o.late) > maxLateRecords {
			o.late = o.late[1:]
		}
	case eventlog.KindTaskMetrics:
		if bp := f.int("backPressuredTimeMsPerSecond"); bp > o.maxBP {
			o.maxBP, o.maxBPTask = bp, ev.Actor
		}
		a := o.attempt(ev.Actor)
		if f.has("assignedSplits") { // a source reader
			a.recordsRead = max(a.recordsRead, f.int("numRecordsIn"))
		}
		a.lateDropped = max(a.lateDropped, f.int("numLateRecordsDropped"))
		a.expired = max(a.expired, f.int("expired_state_reads"))
	case eventlog.KindFinal:
		a := o.attempt(ev.Actor)
		a.recordsRead = max(a.recordsRead, f.int("records_read"))
		a.lateDropped = max(a.lateDropped, f.int("numLateRecordsDropped"))
		a.expired = max(a.expired, f.int("expired_state_reads"))
	case eventlog.KindOutputView:
		o.outputFrom = f.int("from_offset")
	case "reconfigure": // set KEY=VALUE of the job's configuration: a new job takes it
		if k := f.str("setting"); k != "" {
			o.reconfigured[k] = f.str("value")
		}
	case eventlog.KindOutputIsolation: // set sim.output.isolation-level=...
		o.isolation = f.str("isolation_level")
	case eventlog.KindActionIgnored:
		o.ignoredAction++
		o.notice(t, "action_ignored", f.str("action")+": "+f.str("reason"))
	case eventlog.KindFailure:
		o.notice(t, "failure", f.str("invariant")+": "+f.str("what"))
	case eventlog.KindFailover:
		o.restartsSeen++
		o.notice(t, "failover", "failover: "+f.str("cause"))
	}
}

func (o *observer) notice(t vt.Time, kind, text string) {
	o.noticeSeq++
	o.notices = append(o.notices, Notice{VT: t, Kind: kind, Text: text})
	if len(o.notices) > maxNotices {
		o.notices = o.notices[1:]
	}
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

// fields reads a log event's fields by key.
type fields []*messages.Field

func (fs fields) get(k string) *messages.Field {
	for _, f := range fs {
		if f.Key == k {
			return f
		}
	}
	return nil
}

func (fs fields) has(k string) bool   { return fs.get(k) != nil }
func (fs fields) str(k string) string { return fs.get(k).GetStr() }
func (fs fields) int(k string) int64  { return fs.get(k).GetInt() }
func (fs fields) bool(k string) bool  { return fs.get(k).GetBool() }
func (fs fields) raw(k string) string { return fs.get(k).GetRawJson() }
