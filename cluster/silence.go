package cluster

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/filter"
	"github.com/flinksim/flinksim/sim/kafka"
)

// Silence explains a run that read no record, or wrote no result, without
// failing: why, and the setting that fixes it, as one warning for a person
// ("" when the run read records and wrote results). It reads only the
// settings, the run's options and its Result, after the run; it never
// changes a run. The reasons, checked in this order:
//
//   - the job needs more slots than the cluster has and waited for them all
//     run long (within slot.request.timeout, after which Flink fails it);
//   - the run ended before the sources read anything: a sim.duration under
//     a second is named as the slip it usually is (--duration 5 is 5 ms, as
//     Flink reads a duration without a unit: "did you mean 5s?");
//   - the source started at the latest offsets of a topic written before;
//   - the generator writes nothing (sim.source.rate 0);
//   - job.filter passed no record: the fields a record has are named;
//   - the run ended before the first window could fire (event time: the
//     watermark has to pass a window's end; processing time: the clock);
//   - otherwise a plain statement of the counts.
//
// The warnings a run's events give on their own (a reader without a split,
// a watermark that stands still, late records dropped) name their causes;
// the caller gives this one only when none of them was given.
func Silence(cfg config.Config, opt Options, res *Result) string {
	read, results := res.Counters["records_read"], res.Counters["results_written"]
	if read > 0 && results > 0 {
		return ""
	}
	end := config.FormatDuration(time.Duration(res.EndVT/1000) * time.Millisecond)
	if read == 0 {
		if need, have := SlotsNeeded(cfg), cfg.TaskManagers*cfg.Slots(); need > have {
			return fmt.Sprintf("no record was read: %s, so its tasks waited for slots for the whole run (%s; after slot.request.timeout %s Flink fails the job with NoResourceAvailableException). Fix: %s",
				SlotsShortage(cfg, need), end, config.FormatDuration(cfg.SlotRequestTimeout), SlotsFix(cfg, need))
		}
		if !opt.Bounded() && cfg.Duration < time.Second {
			msg := fmt.Sprintf("no record was read: sim.duration is %s, and the job's sources start reading about 120 ms into a run", config.FormatDuration(cfg.Duration))
			if cfg.Duration%time.Millisecond == 0 {
				n := cfg.Duration.Milliseconds()
				msg += fmt.Sprintf(" (Flink reads a duration without a unit as milliseconds: did you mean %ds? --duration %ds)", n, n)
			}
			return msg
		}
		if cfg.StartingOffsets == config.OffsetsLatest && res.Source > 0 {
			return fmt.Sprintf("no record was read: job.source.starting-offsets is latest, so the source starts at the end of each partition and reads only what is appended after it started; the %d records of the topic were there before. Fix: --set job.source.starting-offsets=earliest", res.Source)
		}
		if opt.Events == nil && cfg.SourceRate == 0 {
			return "no record was read: sim.source.rate is 0, so the generator writes no record. Fix: --set sim.source.rate=1000"
		}
		return fmt.Sprintf("no record was read in %s of virtual time (the source topic holds %d records); the log (--log FILE) shows what the sources did", end, res.Source)
	}
	if cfg.Filter != "" && res.Counters["records_emitted"] == 0 {
		return filterSilence(cfg, res, read)
	}
	if why := unfiredWindows(cfg, opt, res, end); why != "" {
		return why
	}
	return fmt.Sprintf("the run read %d records and wrote no result in %s of virtual time; the log (--log FILE) shows where they went (task_metrics numRecordsIn and numRecordsOut of each subtask)", read, end)
}

// SlotsNeeded is what the JobManager asks slots for: the widest JobVertex,
// since every vertex is in one slot-sharing group.
func SlotsNeeded(cfg config.Config) int {
	return max(cfg.SourceSubtasks(), cfg.WindowSubtasks(), cfg.SinkSubtasks())
}

// SlotsFix names the settings that give a job that needs need slots enough
// of them: more TaskManagers, more slots each, or a lower parallelism
// ("--set sim.taskmanagers=4, or ...").
func SlotsFix(c config.Config, need int) string {
	slots, tms := c.Slots(), c.TaskManagers
	have := tms * slots
	lower := fmt.Sprintf("--set parallelism.default=%d", have)
	for _, k := range []struct {
		key string
		p   int
	}{{"job.source.parallelism", c.SourceParallelism}, {"job.window.parallelism", c.WindowParallelism}, {"job.sink.parallelism", c.SinkParallelism}} {
		if k.p > have {
			lower = fmt.Sprintf("--set %s=%d", k.key, have)
			break
		}
	}
	return fmt.Sprintf("--set sim.taskmanagers=%d, or --set taskmanager.numberOfTaskSlots=%d, or a parallelism of at most %d (%s)",
		(need+slots-1)/slots, (need+tms-1)/tms, have, lower)
}

// SlotsShortage says what a job that needs need slots lacks: "the job
// needs 4 slots (its widest operator's parallelism) and the cluster has 2
// (sim.taskmanagers 2 x taskmanager.numberOfTaskSlots 1)".
func SlotsShortage(c config.Config, need int) string {
	return fmt.Sprintf("the job needs %d slots (its widest operator's parallelism) and the cluster has %d (sim.taskmanagers %d x taskmanager.numberOfTaskSlots %d)",
		need, c.TaskManagers*c.Slots(), c.TaskManagers, c.Slots())
}

// sampleRecords is how many records of the source topic filterSilence
// reads to name their fields.
const sampleRecords = 100

// filterSilence says why job.filter passed none of the read records: the
// field it compares is in no record read (and which fields they have), or
// no value matched.
func filterSilence(cfg config.Config, res *Result, read int64) string {
	p, err := filter.Parse(cfg.Filter)
	if err != nil {
		return ""
	}
	var sample [][]byte // the values of the first records of the topic
	if res.SourceTopic != nil {
		for part := 0; part < res.SourceTopic.NumPartitions() && len(sample) < sampleRecords; part++ {
			for _, r := range kafka.Read(res.SourceTopic, part, 0, sampleRecords-len(sample)) {
				sample = append(sample, r.Value)
			}
		}
	}
	fields := []string{"key"}
	has := p.Field == "key"
	for _, v := range sample {
		for _, f := range events.FieldNames(v) {
			if !slices.Contains(fields, f) {
				fields = append(fields, f)
			}
		}
		if _, ok := events.StringField(v, p.Field); ok {
			has = true
		}
	}
	msg := fmt.Sprintf("job.filter %q passed none of the %d records read", cfg.Filter, read)
	if !has && len(sample) > 0 {
		return msg + fmt.Sprintf(": no record has a field %q; a record's fields are %s (key is the record's key, job.key-field of the input). Fix: compare one of them, e.g. --set 'job.filter=key %s %s'",
			p.Field, strings.Join(fields, ", "), p.Op, p.Value)
	}
	return msg + fmt.Sprintf(" (a record's fields are %s): no value of %s is %s %s", strings.Join(fields, ", "), p.Field, p.Op, p.Value)
}

// unfiredWindows says why an unbounded run wrote no result although records
// reached its windows: it ended before the first window could fire.
func unfiredWindows(cfg config.Config, opt Options, res *Result, end string) string {
	if cfg.Operator != config.OperatorWindow || opt.Bounded() || res.Counters["windows_fired"] > 0 {
		return ""
	}
	// span is the longest a window can take from its first record to its
	// end: the first of the windows holding a record ends within it
	span, windows := cfg.WindowSize, "the windows are "+config.FormatDuration(cfg.WindowSize)+" long"
	switch cfg.WindowType {
	case config.WindowSliding:
		span = min(cfg.WindowSlide, cfg.WindowSize)
		windows = fmt.Sprintf("windows of %s start every %s", config.FormatDuration(cfg.WindowSize), config.FormatDuration(cfg.WindowSlide))
	case config.WindowSession:
		span = cfg.WindowGap
		windows = "a session ends after a gap of " + config.FormatDuration(cfg.WindowGap)
	}
	if cfg.TimeCharacteristic == config.ProcessingTime {
		if cfg.Duration >= 2*span {
			return ""
		}
		return fmt.Sprintf("no window fired: processing-time windows fire on the processing-time clock at their end, %s, and the run ended at %s. Fix: --duration %s",
			windows, end, config.FormatDuration(roundUp(2*span, time.Second)))
	}
	first := span + cfg.OutOfOrderness + cfg.AutoWatermarkInterval + time.Second
	if cfg.Duration >= 2*first {
		return ""
	}
	return fmt.Sprintf("no window fired: an event-time window fires when the watermark (the largest event time - job.watermark.out-of-orderness %s - 1 ms) passes its end, %s, and the run ended at %s, before the first could. Fix: --duration %s",
		config.FormatDuration(cfg.OutOfOrderness), windows, end, config.FormatDuration(roundUp(2*first, time.Minute)))
}

// roundUp is d rounded up to a multiple of unit.
func roundUp(d, unit time.Duration) time.Duration {
	return (d + unit - 1) / unit * unit
}
