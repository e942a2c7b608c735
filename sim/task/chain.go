package task

// The operator chain after the head: ParseOrder and Filter, the window
// operator or the keyed process function, then the sink or the output
// partition.

import (
	"errors"
	"strconv"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/status"
	"github.com/flinksim/flinksim/sim/vt"
	"github.com/flinksim/flinksim/sim/window"
)

// WindowConfig maps the settings to the window operator's configuration.
func WindowConfig(c *config.Config) window.Config {
	wc := window.Config{Size: c.WindowSize.Milliseconds(), Slide: c.WindowSlide.Milliseconds(), Gap: c.WindowGap.Milliseconds(),
		Offset: c.WindowOffset.Milliseconds(), AllowedLateness: c.AllowedLateness.Milliseconds(),
		SideOutputLateData: c.SideOutputLateData}
	switch c.WindowType {
	case "sliding":
		wc.Assigner = window.Sliding
	case "session":
		wc.Assigner = window.Session
	default:
		wc.Assigner = window.Tumbling
	}
	if c.TimeCharacteristic == config.ProcessingTime {
		wc.TimeCharacteristic = window.ProcessingTime
	} else {
		wc.TimeCharacteristic = window.EventTime
	}
	switch c.Aggregate {
	case "sum":
		wc.Aggregate = window.Sum
	case "min":
		wc.Aggregate = window.Min
	case "max":
		wc.Aggregate = window.Max
	case "avg":
		wc.Aggregate = window.Avg
	default:
		wc.Aggregate = window.Count
	}
	return wc
}

// procTimeMs is the processing-time clock in ms (virtual time after the
// generator's epoch).
func (s *Subtask) procTimeMs(o *kernel.Out) int64 {
	return kafka.GeneratorEpochMillis + vt.Millis(o.Now())
}

// processRecord hands one record from the gate to the chain (the keyed
// operator, the unchained sink, or ParseOrder and Filter) and returns the
// cost of what it emitted. payload is the record itself where the edge
// carries it (nil on the keyBy edge).
func (s *Subtask) processRecord(o *kernel.Out, key string, ts int64, value float64, payload []byte) vt.Time {
	s.m.recordsIn++
	switch {
	case s.op != nil:
		s.touch(key)
		now := s.procTimeMs(o)
		var cost vt.Time
		if t, ok := s.op.NextProcessingTimeTimer(); ok && t <= now {
			cost += s.emitResults(o, s.op.AdvanceProcessingTime(now))
		}
		return cost + s.emitResults(o, s.op.ProcessElement(key, ts, value, now))
	case s.proc != nil:
		s.touch(key)
		return s.processElement(o, key, ts)
	case s.hasSink:
		s.sinkWrite(key, ts, payload)
		return 0
	default:
		// ParseOrder and/or Filter in a task of their own (chaining off)
		if s.filter != nil && !s.filter.Match(key, payload) {
			return 0
		}
		if s.parse {
			value = s.parsedValue(payload)
		}
		s.rp.AddPayloadRecord(s.target(key), key, ts, value, payload)
		s.m.recordsOut++
		return 0
	}
}

// replaySlice processes up to sim.buffer.records records of restored input
// channel state, before any new input.
func (s *Subtask) replaySlice(o *kernel.Out) (cost vt.Time) {
	perRecord := s.recordCost()
	n := min(len(s.ck.replayIn), s.cfg.RecordsPerBuffer())
	for k, r := range s.ck.replayIn[:n] {
		if k > 0 && s.rp != nil && !s.rp.Available() {
			n = k
			break
		}
		cost += perRecord + s.processRecord(o, r.Key, r.Timestamp, r.Value, r.Payload)
	}
	s.ck.replayIn = s.ck.replayIn[n:]
	return cost
}

// processElement runs the keyed process function on one record and sends
// the running count to the sink; it returns the sink's cost.
func (s *Subtask) processElement(o *kernel.Out, key string, ts int64) vt.Time {
	out := s.proc.ProcessElement(key, ts, s.procTimeMs(o))
	v := make([]byte, 0, 64)
	v = append(v, `{"key":`...)
	v = eventlog.AppendJSONString(v, key)
	v = append(v, `,"value":`...)
	v = strconv.AppendInt(v, out.Count, 10)
	v = append(v, `,"timestamp":`...)
	v = strconv.AppendInt(v, ts, 10)
	v = append(v, '}')
	rec := &messages.KafkaRecord{Key: key, Timestamp: ts, Value: v}
	if s.hasSink {
		s.sinkOut = append(s.sinkOut, rec)
		s.m.resultsWritten++
		return vt.FromDuration(s.cfg.CostSink)
	}
	s.rp.AddPayloadRecord(s.target(key), key, ts, float64(out.Count), v)
	s.m.recordsOut++
	return 0
}

// emitResults sends window firings to the sink (chained) or downstream, logs
// them, counts late records, and returns the sink's cost.
func (s *Subtask) emitResults(o *kernel.Out, out window.Output) vt.Time {
	var cost vt.Time
	if out.Err != nil && s.status == status.Running {
		// the exception escapes processElement and fails the task (StreamTask),
		// e.g. a Long.MIN_VALUE timestamp in TumblingEventTimeWindows.assignWindows
		cause := out.Err.Error()
		var fe *window.FlinkError
		if errors.As(out.Err, &fe) && fe.Exception != "" {
			cause = fe.Exception + ": " + fe.Message
		}
		s.setState(o, status.Failed, cause)
	}
	for _, r := range out.Results {
		s.m.windowsFired++
		o.Log(eventlog.KindWindowFired, messages.Str("key", r.Key), messages.Int("window_start", r.Window.Start),
			messages.Int("window_end", r.Window.End), messages.Float("value", r.Value), messages.Int("firing", int64(r.Firing)),
			messages.Int("watermark", s.op.CurrentWatermark()))
		if s.hasSink {
			cost += vt.FromDuration(s.cfg.CostSink)
			s.sinkOut = append(s.sinkOut, resultRecord(r, s.index))
			s.m.resultsWritten++
		} else if s.rp != nil {
			// the unchained sink writes the result as the chained one would
			s.rp.AddPayloadRecord(s.target(r.Key), r.Key, r.Window.MaxTimestamp(), r.Value, resultRecord(r, s.index).Value)
			s.m.recordsOut++
		}
	}
	for _, l := range out.Late {
		o.Log(eventlog.KindLateSideOutput, messages.Str("key", l.Key), messages.Int("timestamp", l.Timestamp))
	}
	if d := s.op.NumLateRecordsDropped(); d != s.m.lateDropped {
		s.m.lateDropped = d
	}
	if t, ok := s.op.NextProcessingTimeTimer(); ok && t != s.procTimer {
		s.procTimer = t
		delay := vt.FromMillis(t-kafka.GeneratorEpochMillis) - o.Now()
		o.Timer(max(0, delay), timerProcessingTime, t)
	}
	return cost
}

// resultRecord renders one firing as the sink's JSON record.
func resultRecord(r window.Result, subtask int) *messages.KafkaRecord {
	v := make([]byte, 0, 96)
	v = append(v, `{"key":`...)
	v = eventlog.AppendJSONString(v, r.Key)
	v = append(v, `,"window_start":`...)
	v = strconv.AppendInt(v, r.Window.Start, 10)
	v = append(v, `,"window_end":`...)
	v = strconv.AppendInt(v, r.Window.End, 10)
	v = append(v, `,"value":`...)
	v = eventlog.AppendJSONDouble(v, r.Value) // Jackson writes NaN and Infinity as strings (WRITE_NAN_AS_STRINGS)
	v = append(v, `,"firing":`...)
	v = strconv.AppendInt(v, int64(r.Firing), 10)
	v = append(v, '}')
	return &messages.KafkaRecord{Key: r.Key, Timestamp: r.Window.MaxTimestamp(), Value: v}
}

// sinkWrite is an unchained sink subtask writing one record it received:
// the keyed operator's result as it rendered it (the payload), so the sink
// topic holds what a chained sink would have written.
func (s *Subtask) sinkWrite(key string, ts int64, payload []byte) {
	s.sinkOut = append(s.sinkOut, &messages.KafkaRecord{Key: key, Timestamp: ts, Value: payload})
	s.m.resultsWritten++
}

// recordCost is what one record from the gate costs the chain: the window
// or process function (sim.cost.window) with one keyed-state access on
// RocksDB (sim.cost.state.rocksdb), the sink alone (sim.cost.sink) for a
// sink task, or ParseOrder (sim.cost.parse) and Filter (sim.cost.filter)
// where the chain holds them. Restored channel state costs the same as new
// input.
func (s *Subtask) recordCost() vt.Time {
	switch {
	case s.op != nil || s.proc != nil:
		c := vt.FromDuration(s.cfg.CostWindow)
		if s.cfg.StateBackend == config.BackendRocksDB {
			c += vt.FromDuration(s.cfg.CostRocksDB)
		}
		return c
	case s.hasSink:
		return vt.FromDuration(s.cfg.CostSink)
	}
	var c vt.Time
	if s.parse {
		c += vt.FromDuration(s.cfg.CostParse)
	}
	if s.filter != nil {
		c += vt.FromDuration(s.cfg.CostFilter)
	}
	return c
}
