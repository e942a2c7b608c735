package eventlog

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/logenc"
)

// ValueType is the JSON type of a Value.
type ValueType uint8

const (
	TypeInt ValueType = iota
	TypeStr
	TypeBool
	TypeFloat
	TypeRaw // already JSON (an array, an object)
)

// Value is one named field of an event whose fields are a list (final
// counters, whose names depend on the actor): a flat value, no pointer but
// its strings.
type Value struct {
	Key  string
	Type ValueType
	Int  int64
	Str  string // TypeStr, or the JSON text of TypeRaw
	F    float64
	Bool bool
}

// I is an integer Value.
func I(key string, v int64) Value { return Value{Key: key, Type: TypeInt, Int: v} }

// S is a string Value.
func S(key, v string) Value { return Value{Key: key, Type: TypeStr, Str: v} }

// R is a Value already written as JSON.
func R(key, json string) Value { return Value{Key: key, Type: TypeRaw, Str: json} }

func appendValues(b []byte, vs []Value) []byte {
	for i := range vs {
		v := &vs[i]
		switch v.Type {
		case TypeInt:
			b = logenc.Int(b, v.Key, v.Int)
		case TypeStr:
			b = logenc.Str(b, v.Key, v.Str)
		case TypeBool:
			b = logenc.Bool(b, v.Key, v.Bool)
		case TypeFloat:
			b = logenc.Float(b, v.Key, v.F)
		case TypeRaw:
			b = logenc.Raw(b, v.Key, v.Str)
		}
	}
	return b
}

func valuesOf(list []*messages.Field) []Value {
	vs := make([]Value, 0, len(list))
	for _, f := range list {
		switch x := f.Value.(type) {
		case *messages.Field_Int:
			vs = append(vs, I(f.Key, x.Int))
		case *messages.Field_Str:
			vs = append(vs, S(f.Key, x.Str))
		case *messages.Field_Bool:
			vs = append(vs, Value{Key: f.Key, Type: TypeBool, Bool: x.Bool})
		case *messages.Field_Float:
			vs = append(vs, Value{Key: f.Key, Type: TypeFloat, F: x.Float})
		case *messages.Field_RawJson:
			vs = append(vs, R(f.Key, x.RawJson))
		}
	}
	return vs
}

// FinalCounters are an actor's counters when it finishes or the run ends,
// in the order its producer logged them.
type FinalCounters struct {
	List []Value
}

// Kind is KindFinal.
func (FinalCounters) Kind() Kind { return KindFinal }

// AppendJSON appends the FinalCounters event's fields to b in the log's order.
func (e FinalCounters) AppendJSON(b []byte) []byte { return appendValues(b, e.List) }

// Ints calls f for every integer counter, in order.
func (e FinalCounters) Ints(f func(key string, v int64)) {
	for _, x := range e.List {
		if x.Type == TypeInt {
			f(x.Key, x.Int)
		}
	}
}

// Int is the integer counter key (the last one of that key), 0 when there
// is none.
func (e FinalCounters) Int(key string) int64 {
	var v int64
	for _, x := range e.List {
		if x.Type == TypeInt && x.Key == key {
			v = x.Int
		}
	}
	return v
}

func finalCountersOf(list []*messages.Field) FinalCounters {
	return FinalCounters{List: valuesOf(list)}
}

// TaskMetrics are a subtask's metrics of the last virtual second, with
// Flink's metric names: every task's, then its ResultPartition's (when it
// writes one), then its head's (a source reader's, or an InputGate's with
// the keyed operator of its chain).
type TaskMetrics struct {
	BusyTimeMsPerSecond, BackPressuredTimeMsPerSecond, IdleTimeMsPerSecond int64
	NumRecordsIn, NumRecordsOut                                            int64
	// the ResultPartition (HasOutput): outputQueueLengths is the buffers
	// each subpartition holds, in subpartition order
	HasOutput                  bool
	NumBuffersOut, NumBytesOut int64
	OutPoolUsage               float64
	OutputQueueLengths         []int64
	// Watermark is currentInputWatermark (InputWatermark set: a subtask
	// reading an InputGate) or a source's currentOutputWatermark, when
	// HasWatermark (ms; Long.MIN_VALUE before the first).
	Watermark                    int64
	HasWatermark, InputWatermark bool
	AssignedSplits               int64 // a source's
	// an InputGate's (InputWatermark)
	NumBuffersIn, NumBytesIn int64
	InPoolUsage              float64
	InputQueueLength         int64
	InputQueueLengths        []int64
	// the chain's process function (HasProcess: keys, expired_state_reads)
	// or window operator (HasWindow: keys, windows, numLateRecordsDropped)
	HasProcess                       bool
	ProcessKeys, ExpiredStateReads   int64
	HasWindow                        bool
	WindowKeys, Windows, LateDropped int64
}

// Kind is KindTaskMetrics.
func (TaskMetrics) Kind() Kind { return KindTaskMetrics }

// AppendJSON appends the TaskMetrics event's fields to b in the log's order.
func (e TaskMetrics) AppendJSON(b []byte) []byte {
	b = logenc.Int(b, "busyTimeMsPerSecond", e.BusyTimeMsPerSecond)
	b = logenc.Int(b, "backPressuredTimeMsPerSecond", e.BackPressuredTimeMsPerSecond)
	b = logenc.Int(b, "idleTimeMsPerSecond", e.IdleTimeMsPerSecond)
	b = logenc.Int(b, "numRecordsIn", e.NumRecordsIn)
	b = logenc.Int(b, "numRecordsOut", e.NumRecordsOut)
	if e.HasOutput {
		b = logenc.Int(b, "numBuffersOut", e.NumBuffersOut)
		b = logenc.Int(b, "numBytesOut", e.NumBytesOut)
		b = logenc.Float(b, "outPoolUsage", e.OutPoolUsage)
		b = appendInts(logenc.Key(b, "outputQueueLengths"), e.OutputQueueLengths)
	}
	switch {
	case e.HasWatermark && e.InputWatermark:
		b = logenc.Int(b, "currentInputWatermark", e.Watermark)
		b = logenc.Int(b, "numBuffersIn", e.NumBuffersIn)
		b = logenc.Int(b, "numBytesIn", e.NumBytesIn)
		b = logenc.Float(b, "inPoolUsage", e.InPoolUsage)
		b = logenc.Int(b, "inputQueueLength", e.InputQueueLength)
		b = appendInts(logenc.Key(b, "inputQueueLengths"), e.InputQueueLengths)
	case e.HasWatermark:
		b = logenc.Int(b, "currentOutputWatermark", e.Watermark)
		b = logenc.Int(b, "assignedSplits", e.AssignedSplits)
	}
	if e.HasProcess {
		b = logenc.Int(b, "keys", e.ProcessKeys)
		b = logenc.Int(b, "expired_state_reads", e.ExpiredStateReads)
	}
	if e.HasWindow {
		b = logenc.Int(b, "keys", e.WindowKeys)
		b = logenc.Int(b, "windows", e.Windows)
		b = logenc.Int(b, "numLateRecordsDropped", e.LateDropped)
	}
	return b
}

// appendInts appends a JSON array of integers (JSONInts).
func appendInts(b []byte, vs []int64) []byte {
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return append(b, ']')
}

func taskMetricsOf(f fields) TaskMetrics {
	m := TaskMetrics{BusyTimeMsPerSecond: f.int("busyTimeMsPerSecond"),
		BackPressuredTimeMsPerSecond: f.int("backPressuredTimeMsPerSecond"),
		IdleTimeMsPerSecond:          f.int("idleTimeMsPerSecond"),
		NumRecordsIn:                 f.int("numRecordsIn"), NumRecordsOut: f.int("numRecordsOut")}
	if f.get("numBuffersOut") != nil {
		m.HasOutput, m.NumBuffersOut, m.NumBytesOut = true, f.int("numBuffersOut"), f.int("numBytesOut")
		m.OutPoolUsage, m.OutputQueueLengths = f.float("outPoolUsage"), f.ints("outputQueueLengths")
	}
	if x := f.get("currentInputWatermark"); x != nil {
		m.Watermark, m.HasWatermark, m.InputWatermark = x.GetInt(), true, true
		m.NumBuffersIn, m.NumBytesIn, m.InPoolUsage = f.int("numBuffersIn"), f.int("numBytesIn"), f.float("inPoolUsage")
		m.InputQueueLength, m.InputQueueLengths = f.int("inputQueueLength"), f.ints("inputQueueLengths")
	} else if x := f.get("currentOutputWatermark"); x != nil {
		m.Watermark, m.HasWatermark, m.AssignedSplits = x.GetInt(), true, f.int("assignedSplits")
	}
	if f.get("expired_state_reads") != nil {
		m.HasProcess, m.ProcessKeys, m.ExpiredStateReads = true, f.int("keys"), f.int("expired_state_reads")
	}
	if f.get("windows") != nil {
		m.HasWindow, m.WindowKeys, m.Windows, m.LateDropped = true, f.last("keys").GetInt(), f.int("windows"), f.int("numLateRecordsDropped")
	}
	return m
}

// fields is an event's fields by key (the first of a key wins).
type fields []*messages.Field

func (fs fields) get(k string) *messages.Field {
	for _, f := range fs {
		if f.Key == k {
			return f
		}
	}
	return nil
}

func (fs fields) last(k string) *messages.Field {
	for i := len(fs) - 1; i >= 0; i-- {
		if fs[i].Key == k {
			return fs[i]
		}
	}
	return nil
}

func (fs fields) str(k string) string { return fs.get(k).GetStr() }
func (fs fields) int(k string) int64  { return fs.get(k).GetInt() }

// float reads a float field; a whole number read back from JSON text is
// an integer field.
func (fs fields) float(k string) float64 {
	f := fs.get(k)
	if x, ok := f.GetValue().(*messages.Field_Int); ok {
		return float64(x.Int)
	}
	return f.GetFloat()
}

func (fs fields) ints(k string) []int64 {
	var vs []int64
	if raw := fs.get(k).GetRawJson(); raw != "" {
		if json.Unmarshal([]byte(raw), &vs) != nil {
			return nil
		}
	}
	return vs
}

// FieldsOf returns the fields of ev in the log's order, read from its JSON
// text: for an observer that shows an event as it is (the terminal view)
// rather than reading a typed payload. Cost: one write and one read of the
// event's fields.
func FieldsOf(ev *LogEvent) []*messages.Field {
	switch b := ev.Body.(type) {
	case nil:
		return nil
	case kernel.Fields:
		return b.List
	}
	return ParseFields(ev.Body.AppendJSON(nil))
}

// ParseFields reads fields written by AppendJSON (,"key":value each) back
// as proto fields: a whole number as an integer, any other number as a
// float, an array or object as raw JSON. Text that is not such fields
// gives the fields read before the first error.
func ParseFields(text []byte) []*messages.Field {
	if len(text) == 0 || text[0] != ',' {
		return nil
	}
	obj := make([]byte, 0, len(text)+1)
	obj = append(append(append(obj, '{'), text[1:]...), '}')
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return nil
	}
	var out []*messages.Field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil || len(raw) == 0 {
			return out
		}
		switch raw[0] {
		case '"':
			var s string
			_ = json.Unmarshal(raw, &s)
			out = append(out, messages.Str(key, s))
		case 't', 'f':
			out = append(out, messages.Bool(key, raw[0] == 't'))
		case '[', '{', 'n':
			out = append(out, messages.Raw(key, string(raw)))
		default:
			if bytes.ContainsAny(raw, ".eE") {
				v, _ := strconv.ParseFloat(string(raw), 64)
				out = append(out, messages.Float(key, v))
			} else if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
				out = append(out, messages.Int(key, v))
			} else {
				v, _ := strconv.ParseFloat(string(raw), 64)
				out = append(out, messages.Float(key, v))
			}
		}
	}
	return out
}
