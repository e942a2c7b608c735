// Package eventlog is the schema and writer of flinksim's event log: JSON
// lines, no wall-clock timestamps, so the log is a pure function of
// (settings, seed, actions). The first line is the header, the last the
// summary, both written with zerolog; every event line between them is a
// typed payload (typed.go, kinds_*.go) appended straight to the line's
// bytes by package logenc, byte for byte what zerolog wrote. Only the
// scheduler writes it.
package eventlog

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/rs/zerolog"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/logenc"
	"github.com/flinksim/flinksim/sim/vt"
)

// FormatVersion is written in the header; replay refuses other versions.
const FormatVersion = "flinksim-log/1"

// ProgramVersion is the simulator's version, written in the header.
const ProgramVersion = "flinksim 0.1.0"

// Kind names an event. Every line of the log carries one.
type Kind = kernel.Kind

// Event kinds. README.md documents each with its fields.
const (
	KindHeader  Kind = "header"
	KindSummary Kind = "summary"
	// KindRegistrationResponse: a TaskManager learns its registration result.
	KindRegistrationResponse Kind = "registration_response"
	KindGeneratorStarted     Kind = "generator_started"
	KindBackfill             Kind = "backfill"
	KindLateSideOutput       Kind = "late_side_output"
	// KindActionIgnored: an action that could not be carried out.
	KindActionIgnored          = kernel.KindActionIgnored
	KindRestartStrategy   Kind = "restart_strategy"
	KindHeartbeatTimeout  Kind = "heartbeat_timeout"
	KindFailover          Kind = "failover"
	KindTaskManagerKilled Kind = "taskmanager_killed"
	KindTaskManagerLost   Kind = "taskmanager_lost"
	KindWorkerTerminated  Kind = "worker_terminated"
	KindRestore           Kind = "restore"
	KindFailure                = kernel.KindFailure

	// checkpoints
	KindCheckpointTriggered      Kind = "checkpoint_triggered"
	KindCheckpointDeclined       Kind = "checkpoint_declined" // a trigger request the coordinator refused
	KindCheckpointCompleted      Kind = "checkpoint_completed"
	KindCheckpointFailed         Kind = "checkpoint_failed"
	KindCheckpointSnapshot       Kind = "checkpoint_snapshot"         // a task took its snapshot
	KindCheckpointDeclinedByTask Kind = "checkpoint_declined_by_task" // a task declined
	KindCheckpointAckIgnored     Kind = "checkpoint_ack_ignored"      // an acknowledgement that did not count, with Flink's sentence
	KindStateRestored            Kind = "state_restored"
	KindOffsetsCommitted         Kind = "offsets_committed"
	KindRescale                  Kind = "rescale"
	KindBarrierTimedOut          Kind = "output_barrier_timed_out" // an aligned barrier in the output turned unaligned
	KindOutputView               Kind = "output_view"              // a job started from a savepoint: its output view starts here

	// bring-up
	KindActorStarted           Kind = "actor_started"
	KindTaskManagerStarted     Kind = "taskmanager_started"
	KindRegisterTaskExecutor   Kind = "register_task_executor"
	KindTaskExecutorRegistered Kind = "task_executor_registered"
	KindJobGraph               Kind = "job_graph"
	KindJobStatus              Kind = "job_status"
	KindResourceRequirements   Kind = "declare_resource_requirements"
	KindRequestSlot            Kind = "request_slot"
	KindOfferSlots             Kind = "offer_slots"
	KindNoResourceAvailable    Kind = "no_resource_available"
	KindSubmitTask             Kind = "submit_task"
	KindTaskState              Kind = "task_state"

	// Kafka and the source
	KindTopicCreated    Kind = "topic_created"
	KindSplitsAssigned  Kind = "splits_assigned"
	KindReaderNoSplits  Kind = "reader_without_splits"
	KindSplitFinished   Kind = "split_finished"
	KindSplitPaused     Kind = "split_paused"
	KindSplitResumed    Kind = "split_resumed"
	KindAlignment       Kind = "watermark_alignment"
	KindWatermarkStatus Kind = "watermark_status"

	// the broker's user actions
	KindEventSent        Kind = "event_sent"        // send-event appended a record to the source topic
	KindPartitionPaused  Kind = "partition_paused"  // the producer of a source partition stalled
	KindPartitionResumed Kind = "partition_resumed" // and went on
	KindOutputIsolation  Kind = "output_isolation"  // the output consumer's isolation.level changed
	KindReconfigure      Kind = "reconfigure"       // set: the job restarts from a savepoint with a new setting

	// exchange
	KindPartitionRequest    Kind = "partition_request"
	KindNettyFrame          Kind = "netty_frame"
	KindBacklogAnnouncement Kind = "backlog_announcement"
	KindChannelFinished     Kind = "end_of_partition"

	// operators
	KindWatermark    Kind = "watermark"
	KindWindowFired  Kind = "window_fired"
	KindTaskMetrics  Kind = "task_metrics"
	KindKafkaMetrics Kind = "kafka_metrics"
	KindFinal        Kind = "final_counters"
)

// Writer writes the event log. Not safe for concurrent use: only the
// scheduler owns one.
type Writer struct {
	log zerolog.Logger
	w   io.Writer // where lines go: the output, or the console writer
	buf []byte    // the line being written, reused
}

// NewWriter writes JSON lines to w, or the console format when console is
// true (zerolog.ConsoleWriter without timestamps, for people).
func NewWriter(w io.Writer, console bool) *Writer {
	if console {
		w = zerolog.ConsoleWriter{Out: w, NoColor: true,
			PartsOrder:    []string{"vt", "actor", "event"},
			FieldsExclude: []string{"vt", "actor", "event"},
			FormatPartValueByName: func(v any, name string) string {
				s := fmt.Sprint(v)
				if name == "vt" {
					if us, err := strconv.ParseInt(s, 10, 64); err == nil {
						return FormatVT(us)
					}
				}
				return s
			}}
	}
	return &Writer{log: zerolog.New(w), w: w}
}

// FormatVT renders virtual microseconds as seconds with 6 decimals
// (vt.Time.String).
func FormatVT(us int64) string { return vt.Of(us).String() }

// Header writes the first line: format, program version, build (the
// binary's fingerprint, cluster.BuildFingerprint), seed, every setting
// (settings: key -> value; flink_defaults: key -> Flink's default where it
// differs), and extra fields (actions, events file).
func (w *Writer) Header(seed uint64, build string, settings, flinkDefaults [][2]string, extra ...*messages.Field) {
	e := w.log.Log().Int64("vt", 0).Str("actor", "flinksim").Str("event", string(KindHeader)).
		Str("format", FormatVersion).Str("program", ProgramVersion).Str("build", build).Uint64("seed", seed)
	d := zerolog.Dict()
	for _, kv := range settings {
		d = d.Str(kv[0], kv[1])
	}
	e = e.Dict("settings", d)
	fd := zerolog.Dict()
	for _, kv := range flinkDefaults {
		fd = fd.Str(kv[0], kv[1])
	}
	e = e.Dict("flink_defaults", fd)
	addFields(e, extra)
	e.Send()
}

// Write writes one event line: vt (virtual µs), actor, event, then the
// payload's fields, appended straight to the line's bytes (package logenc
// writes them as zerolog does: the line is the one zerolog wrote from the
// same fields, byte for byte; TestWriterMatchesZerolog) and handed to the
// output in one Write, as zerolog hands it.
func (w *Writer) Write(ev *LogEvent) {
	b := logenc.Line(w.buf[:0], ev.Vt, ev.Actor, string(ev.Body.Kind()))
	b = ev.Body.AppendJSON(b)
	b = append(b, '}', '\n')
	if _, err := w.w.Write(b); err != nil {
		// what zerolog did without an ErrorHandler
		fmt.Fprintf(os.Stderr, "zerolog: could not write event: %v\n", err)
	}
	if cap(b) <= 1<<16 {
		w.buf = b
	}
}

func addFields(e *zerolog.Event, fields []*messages.Field) {
	for _, f := range fields {
		switch v := f.Value.(type) {
		case *messages.Field_Int:
			e.Int64(f.Key, v.Int)
		case *messages.Field_Str:
			e.Str(f.Key, v.Str)
		case *messages.Field_Bool:
			e.Bool(f.Key, v.Bool)
		case *messages.Field_Float:
			e.Float64(f.Key, v.Float)
		case *messages.Field_RawJson:
			e.RawJSON(f.Key, []byte(v.RawJson))
		}
	}
}

// SummaryData is what the summary line reports.
type SummaryData struct {
	JobStatus  string
	EndVT      int64
	Steps      uint64
	Deliveries uint64
	Counters   map[string]int64
	Invariant  string
	// MaxBackPressure is the highest backPressuredTimeMsPerSecond of any
	// subtask during the run, MaxBackPressureTask that subtask.
	MaxBackPressure     int64
	MaxBackPressureTask string
	// ResultsVisible is the number of sink records the output consumer (at
	// sim.output.isolation-level) sees; ResultsUncommitted the records in
	// transactions still open or pre-committed at the end; Duplicates the
	// visible results whose identity the consumer saw earlier.
	ResultsVisible, ResultsUncommitted, Duplicates int64
}

// Summary writes the last line: job status, records read, windows fired,
// results written, what the output consumer sees of them (visible,
// uncommitted, duplicates), numLateRecordsDropped and the virtual duration.
func (w *Writer) Summary(s SummaryData) {
	e := w.log.Log().Int64("vt", s.EndVT).Str("actor", "flinksim").Str("event", string(KindSummary)).
		Str("job_status", s.JobStatus).
		Int64("records_read", s.Counters["records_read"]).
		Int64("windows_fired", s.Counters["windows_fired"]).
		Int64("results_written", s.Counters["results_written"]).
		Int64("results_visible", s.ResultsVisible).
		Int64("results_uncommitted", s.ResultsUncommitted).
		Int64("duplicates", s.Duplicates).
		Int64("numLateRecordsDropped", s.Counters["numLateRecordsDropped"]).
		Str("virtual_duration", FormatVT(s.EndVT)).
		Int64("max_backPressuredTimeMsPerSecond", s.MaxBackPressure).
		Str("max_backpressure_task", s.MaxBackPressureTask).
		Uint64("scheduler_steps", s.Steps).
		Uint64("deliveries", s.Deliveries)
	if s.Invariant != "" {
		e = e.Str("invariant", s.Invariant)
	}
	e.Send()
}
