package eventlog

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/kernel"
)

// Event is a typed log event: producers build one and log its Fields;
// observers (the summary, the terminal view, the UI, tests) get it back
// with Decode instead of reading fields by name. Each type's Fields and its
// decoder are tested against each other (typed_test.go).
type Event interface {
	Kind() Kind
	Fields() []*messages.Field
}

// Decode returns the typed form of ev, or nil for a kind that has no type
// (yet): such events are read through their fields.
func Decode(ev *messages.LogEvent) Event {
	f := fieldsOf(ev)
	switch Kind(ev.Kind) {
	case KindJobStatus:
		return JobStatus{JobID: f.str("job_id"), Status: f.str("status"), Previous: f.str("previous"), Cause: f.str("cause")}
	case KindOutputView:
		return OutputView{Topic: f.str("topic"), FromOffset: f.int("from_offset")}
	case KindActionIgnored:
		return ActionIgnored{Action: f.str("action"), Reason: f.str("reason")}
	case KindAction:
		return Action{Action: f.str("action"), To: f.str("to")}
	case KindWindowFired:
		return WindowFired{Key: f.str("key"), WindowStart: f.int("window_start"), WindowEnd: f.int("window_end"),
			Value: f.float("value"), Firing: f.int("firing"), Watermark: f.int("watermark")}
	case KindOutputIsolation:
		return OutputIsolation{IsolationLevel: f.str("isolation_level")}
	case KindFailure:
		return Failure{Invariant: f.str("invariant"), What: f.str("what")}
	case KindFinal:
		return FinalCounters{List: ev.Fields}
	case KindTaskMetrics:
		return TaskMetrics{BusyTimeMsPerSecond: f.int("busyTimeMsPerSecond"),
			BackPressuredTimeMsPerSecond: f.int("backPressuredTimeMsPerSecond"),
			IdleTimeMsPerSecond:          f.int("idleTimeMsPerSecond"),
			NumRecordsIn:                 f.int("numRecordsIn"), NumRecordsOut: f.int("numRecordsOut")}
	}
	return nil
}

// KindAction is a live user action, logged by the scheduler when it is
// delivered (a UI session's or a replayed one's; actions of the header are
// not logged again).
const KindAction = kernel.KindAction

// JobStatus is a job status transition (JobStatus in Flink:
// org.apache.flink.api.common.JobStatus).
type JobStatus struct {
	JobID    string
	Status   string // CREATED, RUNNING, RESTARTING, FAILING, FAILED, FINISHED, CANCELED
	Previous string // "" for the first status of a job
	Cause    string // "" when there is none
}

func (JobStatus) Kind() Kind { return KindJobStatus }

func (e JobStatus) Fields() []*messages.Field {
	fs := []*messages.Field{messages.Str("job_id", e.JobID), messages.Str("status", e.Status)}
	if e.Previous != "" {
		fs = append(fs, messages.Str("previous", e.Previous))
	}
	if e.Cause != "" {
		fs = append(fs, messages.Str("cause", e.Cause))
	}
	return fs
}

// OutputView says where a job started from a savepoint begins to write: a
// consumer of its output reads the sink topic from FromOffset.
type OutputView struct {
	Topic      string
	FromOffset int64
}

func (OutputView) Kind() Kind { return KindOutputView }

func (e OutputView) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("topic", e.Topic), messages.Int("from_offset", e.FromOffset)}
}

// ActionIgnored is a user action that was not carried out, and why.
type ActionIgnored struct {
	Action string // the action's text
	Reason string
}

func (ActionIgnored) Kind() Kind { return KindActionIgnored }

func (e ActionIgnored) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("action", e.Action), messages.Str("reason", e.Reason)}
}

// Action is a live user action, delivered to To.
type Action struct {
	Action string // the action's text, with its at=
	To     string // the actor it was delivered to
}

func (Action) Kind() Kind { return KindAction }

func (e Action) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("action", e.Action), messages.Str("to", e.To)}
}

// WindowFired is one firing of a window (WindowOperator emitting a result).
type WindowFired struct {
	Key                    string
	WindowStart, WindowEnd int64 // ms
	Value                  float64
	Firing                 int64 // 1, then 2.. for late firings
	Watermark              int64 // the operator's watermark when it fired (ms)
}

func (WindowFired) Kind() Kind { return KindWindowFired }

func (e WindowFired) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("key", e.Key), messages.Int("window_start", e.WindowStart),
		messages.Int("window_end", e.WindowEnd), messages.Float("value", e.Value), messages.Int("firing", e.Firing),
		messages.Int("watermark", e.Watermark)}
}

// OutputIsolation is a change of the output consumer's isolation.level
// (sim.output.isolation-level): it changes only which sink records the
// output view shows.
type OutputIsolation struct {
	IsolationLevel string // read_uncommitted or read_committed
}

func (OutputIsolation) Kind() Kind { return KindOutputIsolation }

func (e OutputIsolation) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("isolation_level", e.IsolationLevel)}
}

// Failure is a broken invariant that ended the run.
type Failure struct {
	Invariant string
	What      string
}

func (Failure) Kind() Kind { return KindFailure }

func (e Failure) Fields() []*messages.Field {
	return []*messages.Field{messages.Str("invariant", e.Invariant), messages.Str("what", e.What)}
}

// FinalCounters are an actor's counters when it finishes or the run ends,
// in the order its producer logged them.
type FinalCounters struct {
	List []*messages.Field
}

func (FinalCounters) Kind() Kind { return KindFinal }

func (e FinalCounters) Fields() []*messages.Field { return e.List }

// Ints calls f for every integer counter, in order.
func (e FinalCounters) Ints(f func(key string, v int64)) {
	for _, x := range e.List {
		if v, ok := x.Value.(*messages.Field_Int); ok {
			f(x.Key, v.Int)
		}
	}
}

// TaskMetrics are the per-second metrics of a subtask that observers read
// (Flink's metric names; the event carries more fields).
type TaskMetrics struct {
	BusyTimeMsPerSecond, BackPressuredTimeMsPerSecond, IdleTimeMsPerSecond int64
	NumRecordsIn, NumRecordsOut                                            int64
}

func (TaskMetrics) Kind() Kind { return KindTaskMetrics }

func (e TaskMetrics) Fields() []*messages.Field {
	return []*messages.Field{messages.Int("busyTimeMsPerSecond", e.BusyTimeMsPerSecond),
		messages.Int("backPressuredTimeMsPerSecond", e.BackPressuredTimeMsPerSecond),
		messages.Int("idleTimeMsPerSecond", e.IdleTimeMsPerSecond),
		messages.Int("numRecordsIn", e.NumRecordsIn), messages.Int("numRecordsOut", e.NumRecordsOut)}
}

// fields is a LogEvent's fields by key (the first of a key wins).
type fields []*messages.Field

func fieldsOf(ev *messages.LogEvent) fields { return ev.Fields }

func (fs fields) get(k string) *messages.Field {
	for _, f := range fs {
		if f.Key == k {
			return f
		}
	}
	return nil
}

func (fs fields) str(k string) string    { return fs.get(k).GetStr() }
func (fs fields) int(k string) int64     { return fs.get(k).GetInt() }
func (fs fields) float(k string) float64 { return fs.get(k).GetFloat() }
