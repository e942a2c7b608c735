package task

// The operator chain after the head: ParseOrder and Filter, the window
// operator or the keyed process function, then the sink or the output
// partition.

import (
	"errors"
	"math"
	"strconv"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/checkpoint"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/filter"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/process"
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

// operatorChain is the operators of a task after its head (OperatorChain):
// ParseOrder and Filter where the chain holds them, the keyed operator of
// the keyed vertex (the WindowOperator or the KeyedProcessFunction), and the
// KafkaSink. A record leaves it into the sink or the task's output.
type operatorChain struct {
	t         *StreamTask
	parse     bool              // the chain holds ParseOrder
	filter    *filter.Predicate // the chain holds job.filter's Filter
	needValue bool              // ParseOrder reads the aggregate's field of the record
	op        *window.Operator
	proc      *process.Function // job.operator=process
	procTimer int64             // processing-time timer scheduled (ms), or math.MinInt64
	sink      *kafkaSinkWriter  // nil: the chain has no sink
}

// initKeyed builds the keyed operator of the keyed vertex: the process
// function (job.operator=process) or the window operator; false when its
// settings are refused (a broken invariant ends the run).
func (c *operatorChain) initKeyed(o *kernel.Out) bool {
	t := c.t
	if t.d.JobVertex != jobgraph.VertexKeyed {
		return true
	}
	if t.cfg.Operator == config.OperatorProcess {
		fn, err := process.New(process.Config{TTLMs: t.cfg.StateTTL.Milliseconds()})
		if err != nil {
			o.Invariant("process_config", "%v", err)
			return false
		}
		c.proc = fn
		return true
	}
	op, err := window.NewOperator(WindowConfig(t.cfg))
	if err != nil {
		o.Invariant("window_config", "%v", err)
		return false
	}
	c.op = op
	return true
}

// procTimeMs is the processing-time clock in ms (virtual time after the
// generator's epoch).
func procTimeMs(o *kernel.Out) int64 {
	return kafka.GeneratorEpochMillis + vt.Millis(o.Now())
}

// processRecord hands one record from the gate to the chain (the keyed
// operator, the unchained sink, or ParseOrder and Filter) and returns the
// cost of what it emitted. payload is the record itself where the edge
// carries it (nil on the keyBy edge).
func (c *operatorChain) processRecord(o *kernel.Out, key string, ts int64, value float64, payload []byte) vt.Time {
	t := c.t
	t.m.recordsIn++
	switch {
	case c.op != nil:
		t.ck.touch(key)
		now := procTimeMs(o)
		var cost vt.Time
		if tm, ok := c.op.NextProcessingTimeTimer(); ok && tm <= now {
			cost += c.emitResults(o, c.op.AdvanceProcessingTime(now))
		}
		return cost + c.emitResults(o, c.op.ProcessElement(key, ts, value, now))
	case c.proc != nil:
		t.ck.touch(key)
		return c.processElement(o, key, ts)
	case c.sink != nil:
		// an unchained sink subtask writes the keyed operator's result as
		// it rendered it (the payload), so the sink topic holds what a
		// chained sink would have written
		c.sink.write(&messages.KafkaRecord{Key: key, Timestamp: ts, Value: payload})
		return 0
	default:
		// ParseOrder and/or Filter in a task of their own (chaining off)
		if c.filter != nil && !c.filter.Match(key, payload) {
			return 0
		}
		if c.parse {
			value = c.parsedValue(payload)
		}
		t.rp.AddPayloadRecord(t.target(key), key, ts, value, payload)
		t.m.recordsOut++
		return 0
	}
}

// processElement runs the keyed process function on one record and sends
// the running count to the sink; it returns the sink's cost.
func (c *operatorChain) processElement(o *kernel.Out, key string, ts int64) vt.Time {
	t := c.t
	out := c.proc.ProcessElement(key, ts, procTimeMs(o))
	v := make([]byte, 0, 64)
	v = append(v, `{"key":`...)
	v = eventlog.AppendJSONString(v, key)
	v = append(v, `,"value":`...)
	v = strconv.AppendInt(v, out.Count, 10)
	v = append(v, `,"timestamp":`...)
	v = strconv.AppendInt(v, ts, 10)
	v = append(v, '}')
	rec := &messages.KafkaRecord{Key: key, Timestamp: ts, Value: v}
	if c.sink != nil {
		c.sink.write(rec)
		return vt.FromDuration(t.cfg.CostSink)
	}
	t.rp.AddPayloadRecord(t.target(key), key, ts, float64(out.Count), v)
	t.m.recordsOut++
	return 0
}

// advanceWatermark hands a new input watermark to the window operator and
// returns the cost of the firings.
func (c *operatorChain) advanceWatermark(o *kernel.Out, wm int64) vt.Time {
	if c.op == nil {
		return 0
	}
	return c.emitResults(o, c.op.AdvanceWatermark(wm))
}

// onProcessingTime is the window operator's processing-time timer firing.
func (c *operatorChain) onProcessingTime(o *kernel.Out) {
	c.procTimer = math.MinInt64
	if c.op != nil {
		c.emitResults(o, c.op.AdvanceProcessingTime(procTimeMs(o)))
	}
}

// emitResults sends window firings to the sink (chained) or downstream, logs
// them, counts late records, and returns the sink's cost.
func (c *operatorChain) emitResults(o *kernel.Out, out window.Output) vt.Time {
	t := c.t
	var cost vt.Time
	if out.Err != nil && t.status == status.Running {
		// the exception escapes processElement and fails the task (StreamTask),
		// e.g. a Long.MIN_VALUE timestamp in TumblingEventTimeWindows.assignWindows
		cause := out.Err.Error()
		var fe *window.FlinkError
		if errors.As(out.Err, &fe) && fe.Exception != "" {
			cause = fe.Exception + ": " + fe.Message
		}
		t.setState(o, status.Failed, cause)
	}
	var recs []messages.KafkaRecord
	var values []byte
	if c.sink != nil && len(out.Results) > 0 {
		// the records of one firing in two allocations: a firing of a
		// million keys is a million records, read by the broker (which
		// copies them into its topic) and then dropped together
		recs = make([]messages.KafkaRecord, len(out.Results))
		n := 0
		for _, r := range out.Results {
			n += resultRecordSize(r)
		}
		values = make([]byte, 0, n)
	}
	for i, r := range out.Results {
		t.m.windowsFired++
		o.Log(eventlog.WindowFired{Key: r.Key, WindowStart: r.Window.Start, WindowEnd: r.Window.End, Value: r.Value,
			Firing: int64(r.Firing), Watermark: c.op.CurrentWatermark()})
		if c.sink != nil {
			cost += vt.FromDuration(t.cfg.CostSink)
			start := len(values)
			values = appendResultValue(values, r)
			rec := &recs[i]
			rec.Key, rec.Timestamp, rec.Value = r.Key, r.Window.MaxTimestamp(), values[start:len(values):len(values)]
			c.sink.write(rec)
		} else if t.rp != nil {
			// the unchained sink writes the result as the chained one would
			t.rp.AddPayloadRecord(t.target(r.Key), r.Key, r.Window.MaxTimestamp(), r.Value, resultRecord(r, t.index).Value)
			t.m.recordsOut++
		}
	}
	for _, l := range out.Late {
		o.Log(eventlog.LateSideOutput{Key: l.Key, Timestamp: l.Timestamp})
	}
	if d := c.op.NumLateRecordsDropped(); d != t.m.lateDropped {
		t.m.lateDropped = d
	}
	if tm, ok := c.op.NextProcessingTimeTimer(); ok && tm != c.procTimer {
		c.procTimer = tm
		delay := vt.FromMillis(tm-kafka.GeneratorEpochMillis) - o.Now()
		o.Timer(max(0, delay), timerProcessingTime, tm)
	}
	return cost
}

// resultRecord renders one firing as the sink's JSON record.
func resultRecord(r window.Result, subtask int) *messages.KafkaRecord {
	v := appendResultValue(make([]byte, 0, resultRecordSize(r)), r)
	return &messages.KafkaRecord{Key: r.Key, Timestamp: r.Window.MaxTimestamp(), Value: v}
}

// resultRecordSize is about the length of r's value (appendResultValue):
// the fixed text, the key (escaped bytes counted at their longest), the
// window bounds and firing exactly, the value at 8 bytes (a count or a
// short sum; a longer one grows the slab it is written to).
func resultRecordSize(r window.Result) int {
	n := len(`{"key":"","window_start":,"window_end":,"value":,"firing":}`) + 8
	for i := 0; i < len(r.Key); i++ {
		if c := r.Key[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			n += 6
		} else {
			n++
		}
	}
	return n + decimalLen(r.Window.Start) + decimalLen(r.Window.End) + decimalLen(int64(r.Firing))
}

// decimalLen is the length of v in base 10.
func decimalLen(v int64) int {
	n := 1
	if v < 0 {
		n++
	}
	for v >= 10 || v <= -10 {
		v /= 10
		n++
	}
	return n
}

// appendResultValue appends r's sink record value.
func appendResultValue(v []byte, r window.Result) []byte {
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
	return append(v, '}')
}

// parsedValue is what ParseOrder makes of a record's value for the
// aggregate: its job.window.aggregate-field (0 when missing), or 1 for a
// count, which reads no field.
func (c *operatorChain) parsedValue(payload []byte) float64 {
	if !c.needValue {
		return 1
	}
	v, _ := events.NumericField(payload, c.t.cfg.AggregateField)
	return v
}

// recordCost is what one record from the gate costs the chain: the window
// or process function (sim.cost.window) with one keyed-state access on
// RocksDB (sim.cost.state.rocksdb), the sink alone (sim.cost.sink) for a
// sink task, or ParseOrder (sim.cost.parse) and Filter (sim.cost.filter)
// where the chain holds them. Restored channel state costs the same as new
// input.
func (c *operatorChain) recordCost() vt.Time {
	cfg := c.t.cfg
	switch {
	case c.op != nil || c.proc != nil:
		cost := vt.FromDuration(cfg.CostWindow)
		if cfg.StateBackend == config.BackendRocksDB {
			cost += vt.FromDuration(cfg.CostRocksDB)
		}
		return cost
	case c.sink != nil:
		return vt.FromDuration(cfg.CostSink)
	}
	var cost vt.Time
	if c.parse {
		cost += vt.FromDuration(cfg.CostParse)
	}
	if c.filter != nil {
		cost += vt.FromDuration(cfg.CostFilter)
	}
	return cost
}

// restore loads the keyed operator's state from the checkpoint r; false
// when it is refused (a broken invariant ends the run).
func (c *operatorChain) restore(o *kernel.Out, r *messages.TaskStateSnapshot) bool {
	if c.op != nil && len(r.Windows) > 0 {
		if err := c.op.Restore(windowStateFromProto(r.Windows)); err != nil {
			o.Invariant("restore", "%s: %v", o.Name(), err)
			return false
		}
	}
	if c.proc != nil && len(r.Values) > 0 {
		if err := c.proc.Restore(valueStateFromProto(r.Values)); err != nil {
			o.Invariant("restore", "%s: %v", o.Name(), err)
			return false
		}
	}
	return true
}

// snapshotState puts the keyed operator's state into st and returns its
// full size, the size of the keys changed since the last completed
// checkpoint (changes; nil: every key counts as changed) and the number of
// entries (bytes, bytes, count).
func (c *operatorChain) snapshotState(o *kernel.Out, st *messages.TaskStateSnapshot, changes *checkpoint.ChangeTracker) (full, changed int64, entries int) {
	addKeyed := func(sizes map[string]int64) {
		for k, sz := range sizes {
			full += sz
			entries++
			if changes != nil && changes.Changed(k) {
				changed += sz
			}
		}
	}
	if c.op != nil {
		ws, sizes := windowStateToProto(c.op.Snapshot(), c.t.maxP)
		st.Windows = ws
		addKeyed(sizes)
	}
	if c.proc != nil {
		vs, sizes := valueStateToProto(c.proc.Snapshot(procTimeMs(o)), c.t.maxP)
		st.Values = vs
		addKeyed(sizes)
	}
	return full, changed, entries
}

// addMetrics fills the keyed operator's part of task_metrics.
func (c *operatorChain) addMetrics(m *eventlog.TaskMetrics) {
	if c.proc != nil {
		m.HasProcess, m.ProcessKeys, m.ExpiredStateReads = true, int64(c.proc.NumKeys()), c.proc.ExpiredStateCount()
	}
	if c.op != nil {
		m.HasWindow, m.WindowKeys, m.Windows, m.LateDropped = true, int64(c.op.NumKeys()), int64(c.op.NumWindows()), c.op.NumLateRecordsDropped()
	}
}

// appendFinal appends the chain's counters of final_counters.
func (c *operatorChain) appendFinal(fields []eventlog.Value) []eventlog.Value {
	if c.op != nil {
		// windows still open when the task ends: for processing-time
		// windows on a bounded input Flink quiesces the processing-time
		// service at end of input (FLINK-14231), so they never fire
		var open, held int64
		for _, ks := range c.op.Snapshot() {
			for _, w := range ks.Windows {
				if w.Fired == 0 {
					open++
					held += w.Acc.Count
				}
			}
		}
		fields = append(fields, eventlog.I("windows_fired", c.t.m.windowsFired),
			eventlog.I("numLateRecordsDropped", c.op.NumLateRecordsDropped()),
			eventlog.I("unfired_windows", open), eventlog.I("records_in_unfired_windows", held))
	}
	if c.proc != nil {
		fields = append(fields, eventlog.I("keys", int64(c.proc.NumKeys())),
			eventlog.I("expired_state_reads", c.proc.ExpiredStateCount()))
	}
	if c.sink != nil {
		fields = append(fields, eventlog.I("results_sent", c.t.m.resultsWritten))
	}
	return fields
}
