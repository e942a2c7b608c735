package console

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
)

// Warner is the Observer that names the traps a run fell into, on stderr,
// once each, with the setting that fixes it (warn). It reads only events
// and the run's settings.
type Warner struct {
	cfg  config.Config
	warn func(text string)
	done map[string]bool

	noSplit       []string // readers without a split, gathered for one warning
	noSplitVT     int64
	wmValue       int64 // the window watermark last seen, and since when
	wmSince       int64
	wmSeen        bool
	windowMetrics map[string]int64 // window subtask -> its input watermark
	recordsIn     map[string]int64
	inAtWm        int64 // records into windows when the watermark last moved
	lastCause     string
	lastCauseFrom string
	lastCauseVT   int64
	slotsNeeded   int64 // of the last NoResourceAvailableException: the widest vertex of the job then running
	finished      bool  // the job reached FINISHED: its bounded input ended
	unfired       int64 // processing-time windows never fired when their subtasks finished, and their records
	unfiredIn     int64
}

// stuckAfter is how long the watermark may stand still, in virtual time,
// while records arrive, before it is worth a warning: longer than any
// window or out-of-orderness bound of the run, and at least 30 s.
// LastCause is the root cause of the job's last FAILED status the warner
// saw ("": none).
func (w *Warner) LastCause() string { return w.lastCause }

func (w *Warner) stuckAfter() int64 {
	d := max(30*time.Second, 2*w.cfg.WindowSize, 2*w.cfg.WindowGap, 2*w.cfg.OutOfOrderness)
	return d.Microseconds()
}

func NewWarner(cfg config.Config, warn func(string)) *Warner {
	return &Warner{cfg: cfg, warn: warn, done: map[string]bool{}, windowMetrics: map[string]int64{}, recordsIn: map[string]int64{}}
}

// once prints the warning id the first time only.
func (w *Warner) once(id, text string) {
	if w.done[id] {
		return
	}
	w.done[id] = true
	w.warn("warning: " + text)
}

func (w *Warner) eventTimeWindows() bool {
	return w.cfg.Operator == config.OperatorWindow && w.cfg.TimeCharacteristic == config.EventTime
}

func (w *Warner) Observe(ev *eventlog.LogEvent) {
	if ev.Kind() != eventlog.KindReaderNoSplits && len(w.noSplit) > 0 && ev.Vt > w.noSplitVT {
		w.flushNoSplit()
	}
	switch e := eventlog.Decode(ev).(type) {
	case eventlog.ReaderNoSplits:
		if w.eventTimeWindows() && w.cfg.Idleness == 0 {
			w.noSplit = append(w.noSplit, e.Reader)
			w.noSplitVT = ev.Vt
		}
	case eventlog.TaskMetrics:
		w.metrics(ev, e)
	case eventlog.FinalCounters:
		late, unfired, unfiredIn := e.Int("numLateRecordsDropped"), e.Int("unfired_windows"), e.Int("records_in_unfired_windows")
		if late > 0 {
			w.late(late)
		}
		if w.cfg.Operator == config.OperatorWindow && w.cfg.TimeCharacteristic == config.ProcessingTime {
			w.unfired += unfired
			w.unfiredIn += unfiredIn
		}
	case eventlog.NoResourceAvailable:
		w.slotsNeeded = e.SlotsNeeded
		w.lastCauseFrom = fmt.Sprintf("the JobManager at %s: %d slots needed, %d offered within slot.request.timeout %s",
			strings.TrimSpace(fmtVT(ev.Vt)), e.SlotsNeeded, e.SlotsOffered, e.SlotRequestTimeout)
		w.lastCause, w.lastCauseVT = e.Exception, ev.Vt
	case eventlog.Failover:
		if w.lastCause != e.Cause || w.lastCauseFrom == "" {
			w.lastCauseFrom = fmt.Sprintf("%s at %s", ev.Actor, strings.TrimSpace(fmtVT(ev.Vt)))
		}
		w.lastCause, w.lastCauseVT = e.Cause, ev.Vt
	case eventlog.TaskState:
		if e.State == "FAILED" && e.Reason != "" {
			w.lastCause, w.lastCauseFrom = e.Reason, fmt.Sprintf("task %s at %s", e.Task, strings.TrimSpace(fmtVT(ev.Vt)))
		}
	case eventlog.JobStatus:
		if e.Status == "RUNNING" {
			// a new attempt or job: the old subtasks' watermarks no longer count
			w.windowMetrics, w.recordsIn, w.wmSeen = map[string]int64{}, map[string]int64{}, false
		}
		switch e.Status {
		case "FAILING", "RESTARTING":
			if c := e.Cause; c != "" && w.lastCause == "" {
				w.lastCause, w.lastCauseFrom = c, fmt.Sprintf("the JobManager at %s", strings.TrimSpace(fmtVT(ev.Vt)))
			}
		case "FAILED":
			w.failed(e.Cause)
		case "FINISHED":
			w.finished = true
		}
	}
}

// explainedSilence reports whether a warning given so far says why a run
// read or wrote nothing: a reader without a split, a watermark that stood
// still, late records dropped, processing-time windows never fired.
func (w *Warner) ExplainedSilence() bool {
	return w.done["no-split"] || w.done["watermark-stuck"] || w.done["late"] || w.done["processing-time-end"] || w.done["failed"]
}

// finish gives what is still gathered once the run is over.
func (w *Warner) Finish() {
	w.flushNoSplit()
	if w.finished && w.unfired > 0 {
		// WindowOperator registers a processing-time timer per window; when
		// a bounded input ends, the task quiesces its ProcessingTimeService
		// before it finishes (StreamOperatorWrapper.finish: a timer already
		// running completes, a later one never fires), while event time gets
		// a final Long.MAX_VALUE watermark that fires every window
		w.once("processing-time-end", fmt.Sprintf("the input ended with %d processing-time windows never fired (%d records in them): a bounded input's end fires every event-time window with its final watermark, but no processing-time timer, so these windows' results are lost. Fix: --set job.time-characteristic=event-time",
			w.unfired, w.unfiredIn))
	}
}

func (w *Warner) flushNoSplit() {
	if len(w.noSplit) == 0 {
		return
	}
	readers := w.noSplit
	w.noSplit = nil
	noun := "source reader " + readers[0] + " has"
	if len(readers) > 1 {
		noun = fmt.Sprintf("%d source readers (%s) have", len(readers), strings.Join(readers, ", "))
	}
	p, key := w.cfg.Parallelism, "parallelism.default"
	if w.cfg.SourceParallelism > 0 {
		p, key = w.cfg.SourceParallelism, "job.source.parallelism"
	}
	w.once("no-split", fmt.Sprintf("%s no split (%d partitions of %s, source parallelism %d) and job.watermark.idleness is off: a reader without a split does not go idle by itself and holds every downstream watermark at Long.MIN_VALUE, so no event-time window will fire. Fix: --set job.watermark.idleness=10s (WatermarkStrategy.withIdleness), or --set %s=%d",
		noun, w.cfg.SourcePartitions, w.cfg.SourceTopic, p, key, min(p, w.cfg.SourcePartitions)))
}

func (w *Warner) metrics(ev *eventlog.LogEvent, m eventlog.TaskMetrics) {
	if d := m.LateDropped; d > 0 {
		w.late(d)
	}
	if !m.InputWatermark || !w.eventTimeWindows() {
		return
	}
	w.windowMetrics[ev.Actor] = m.Watermark
	w.recordsIn[ev.Actor] = m.NumRecordsIn
	wm, in := int64(math.MaxInt64), int64(0)
	for name, v := range w.windowMetrics {
		wm = min(wm, v)
		in += w.recordsIn[name]
	}
	if !w.wmSeen || wm != w.wmValue {
		w.wmSeen, w.wmValue, w.wmSince, w.inAtWm = true, wm, ev.Vt, in
		return
	}
	if wm == math.MaxInt64 {
		return // the input ended
	}
	if ev.Vt-w.wmSince >= w.stuckAfter() && in > w.inAtWm {
		cause := "a source split without records (an idle partition) holds it back"
		if w.done["no-split"] {
			cause = "a source reader without a split holds it back (see above)"
		}
		w.once("watermark-stuck", fmt.Sprintf("the window operators' watermark has stayed at %s for %s of virtual time while %d records arrived: %s, and no event-time window fires meanwhile. Fix: --set job.watermark.idleness=10s so that idle splits leave the minimum",
			fmtTimestamp(wm), config.FormatDuration(time.Duration(ev.Vt-w.wmSince)*time.Microsecond/time.Second*time.Second), in-w.inAtWm, cause))
	}
}

func (w *Warner) late(n int64) {
	w.once("late", fmt.Sprintf("records arrived after the watermark had passed the end of all their windows (plus allowed lateness %s) and were dropped: numLateRecordsDropped %d so far (the summary has the total). Fix: --set job.window.allowed-lateness=... or a larger job.watermark.out-of-orderness (now %s), or --set job.window.side-output-late-data=true to keep them",
		config.FormatDuration(w.cfg.AllowedLateness), n, config.FormatDuration(w.cfg.OutOfOrderness)))
}

func (w *Warner) failed(finalCause string) {
	root := w.lastCause
	if root == "" {
		root = finalCause
	}
	text := "the job FAILED; the root cause is " + rootException(root)
	if w.lastCauseFrom != "" {
		text += ", from " + w.lastCauseFrom
	}
	if finalCause != "" && finalCause != root {
		text += " (the job then stopped: " + shortCause(finalCause) + ")"
	}
	if fix := failureFix(root, w.cfg, w.slotsNeeded); fix != "" {
		text += ". Fix: " + fix
	}
	w.once("failed", text)
}

// rootException is the first exception of a cause chain as Flink prints
// it: the text before any "Caused by", without the Java package.
func rootException(c string) string {
	c, _, _ = strings.Cut(c, "\nCaused by")
	return shortCause(c)
}

// failureFix names the settings that fix a known root cause. need is the
// slots the JobManager asked for (the widest JobVertex: a rescale's new
// parallelism, or an operator's own); 0 takes parallelism.default.
func failureFix(cause string, c config.Config, need int64) string {
	switch {
	case strings.Contains(cause, "NoResourceAvailableException"):
		if need <= 0 {
			need = int64(c.Parallelism)
		}
		return cluster.SlotsShortage(c, int(need)) + ": " + cluster.SlotsFix(c, int(need))
	case strings.Contains(cause, "heartbeat of TaskManager"):
		return "with a restart strategy the job restarts: --set restart-strategy.type=fixed-delay, or turn checkpointing on (--set execution.checkpointing.interval=10s, exponential-delay by default)"
	case strings.Contains(cause, "Long.MIN_VALUE timestamp"):
		return "give every record a timestamp (the events file's time field, job.time-field)"
	}
	return ""
}

// NoEffectWarnings names the settings the user gave that do nothing in this
// run, with why.
func NoEffectWarnings(c config.Config, explicit map[string]bool, bounded, events bool) []string {
	var out []string
	add := func(key, why string) {
		if explicit[key] {
			out = append(out, fmt.Sprintf("warning: %s has no effect in this run: %s", key, why))
		}
	}
	if bounded {
		add("sim.duration", "the input is bounded (--events), so the job runs until every record is processed; --unbounded keeps it running for sim.duration")
	}
	if events {
		for _, k := range []string{"sim.source.rate", "sim.source.keys", "sim.source.disorder", "sim.source.late-fraction"} {
			add(k, "the records come from --events, not from the generator")
		}
		if c.EventsPace != config.PaceFileOrder {
			add("sim.events.gap", "it spaces records only with sim.events.pace=file-order (the pace is "+string(c.EventsPace)+")")
		}
	} else {
		add("sim.events.pace", "there is no --events file")
		add("sim.events.gap", "there is no --events file")
	}
	if c.StateBackend != config.BackendRocksDB {
		add("state.backend.incremental", "only the rocksdb backend takes incremental checkpoints (state.backend.type is "+string(c.StateBackend)+")")
		add("sim.cost.state.rocksdb", "state.backend.type is "+string(c.StateBackend))
	}
	if !c.UnalignedCheckpoints {
		add("execution.checkpointing.aligned-checkpoint-timeout", "it applies to unaligned checkpoints (execution.checkpointing.unaligned.enabled is false)")
	}
	if c.Operator != config.OperatorWindow {
		for _, k := range []string{"job.window.type", "job.window.size", "job.window.slide", "job.window.gap", "job.window.aggregate", "job.window.allowed-lateness"} {
			add(k, "job.operator is "+string(c.Operator))
		}
	}
	if c.TimeCharacteristic == config.ProcessingTime {
		add("job.watermark.idleness", "processing-time windows ignore watermarks")
		add("job.window.allowed-lateness", "processing-time windows ignore watermarks")
	}
	if c.DeliveryGuarantee != config.DeliveryExactlyOnce {
		add("sink.transactional-id-prefix", "only the exactly-once sink uses transactions (sink.delivery-guarantee is "+string(c.DeliveryGuarantee)+")")
	}
	return out
}

// ActionHint says how to make an action that was not carried out happen.
func ActionHint(reason string, c config.Config) string {
	switch {
	case strings.Contains(reason, "not submitted yet"):
		return "give it a later at=, after the job is submitted (a few ms into the run)"
	case strings.Contains(reason, "no such actor"):
		return fmt.Sprintf("the TaskManagers are tm-1..tm-%d (sim.taskmanagers)", c.TaskManagers)
	case strings.Contains(reason, "ended before its time"):
		return "a longer --duration, or --unbounded with --events"
	}
	return ""
}
