package kernel

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/logenc"
)

// Payload is the typed body of a log event: a flat struct of the event's
// fields that stays as it is until its line is written, and then appends
// those fields straight to the line's bytes (package logenc writes them as
// zerolog did), with no field object on the way. sim/eventlog holds the
// payloads of every kind; observers read them with eventlog.Decode.
type Payload interface {
	Kind() Kind
	// AppendJSON appends the event's fields after vt, actor and event:
	// ,"key":value for each, in the log's order.
	AppendJSON(dst []byte) []byte
}

// Event is one log event: when (virtual µs), who, its place among the
// events of one delivery, and its typed body.
type Event struct {
	Vt    int64
	Actor string
	Seq   uint64
	Body  Payload
}

// Kind is the event's kind.
func (e *Event) Kind() Kind { return e.Body.Kind() }

// Fields is a payload given as proto fields: an event of a test, or one
// read back from a log (replay); AppendJSON writes them in order.
type Fields struct {
	K    Kind
	List []*messages.Field
}

// Kind is the kind the fields are logged under.
func (f Fields) Kind() Kind { return f.K }

// AppendJSON appends the fields to dst in their order (AppendFields).
func (f Fields) AppendJSON(dst []byte) []byte { return AppendFields(dst, f.List) }

// AppendFields appends proto fields as the log writes them.
func AppendFields(dst []byte, fields []*messages.Field) []byte {
	for _, f := range fields {
		switch v := f.Value.(type) {
		case *messages.Field_Int:
			dst = logenc.Int(dst, f.Key, v.Int)
		case *messages.Field_Str:
			dst = logenc.Str(dst, f.Key, v.Str)
		case *messages.Field_Bool:
			dst = logenc.Bool(dst, f.Key, v.Bool)
		case *messages.Field_Float:
			dst = logenc.Float(dst, f.Key, v.Float)
		case *messages.Field_RawJson:
			dst = logenc.Raw(dst, f.Key, v.RawJson)
		}
	}
	return dst
}

// RawJSON is a payload that crossed the remote transport: its kind and its
// fields as its producer wrote them (the text after "event", ,"key":value
// each). It writes them back unchanged; eventlog.Decode reads it into its
// typed form again.
type RawJSON struct {
	K    Kind
	JSON []byte
}

// Kind is the kind the event's JSON text was logged under.
func (r RawJSON) Kind() Kind { return r.K }

// AppendJSON appends the event's JSON text to dst as it came.
func (r RawJSON) AppendJSON(dst []byte) []byte { return append(dst, r.JSON...) }

// Done is what one delivery did (Out's Ready): the envelopes it sent, its
// log events, the actors it spawned and stopped, a broken invariant, the
// end of the run, and the envelopes it withdrew. In one process it goes to
// the kernel as it is; between processes as a messages.Done (Proto,
// DoneFromProto), its events as RawJSON.
type Done struct {
	Step      uint64
	Actor     string
	Out       []*messages.Envelope
	Events    []Event
	Spawned   []*messages.Spawned
	Stopped   []string
	Failure   string // a recovered panic or a broken invariant
	Invariant string // non-empty when Failure is a broken invariant
	EndRun    bool
	Cancelled []uint64
}

// Proto is d as the remote transport carries it: every event's fields
// written once to their JSON text.
func (d *Done) Proto() *messages.Done {
	p := &messages.Done{Step: d.Step, Actor: d.Actor, Out: d.Out, Spawned: d.Spawned, Stopped: d.Stopped,
		Failure: d.Failure, Invariant: d.Invariant, EndRun: d.EndRun, Cancelled: d.Cancelled}
	if len(d.Events) > 0 {
		// the events and their JSON texts are carved from one slice each,
		// not allocated one by one (a text written past the buffer's room
		// moves it; the texts cut before keep the old array)
		p.Events = make([]*messages.LogEvent, len(d.Events))
		evs := make([]messages.LogEvent, len(d.Events))
		buf := make([]byte, 0, 96*len(d.Events))
		for i := range d.Events {
			e := &d.Events[i]
			from := len(buf)
			buf = e.Body.AppendJSON(buf)
			evs[i].Vt, evs[i].Actor, evs[i].Seq, evs[i].Kind, evs[i].Json = e.Vt, e.Actor, e.Seq, string(e.Body.Kind()), buf[from:len(buf):len(buf)]
			p.Events[i] = &evs[i]
		}
	}
	return p
}

// DoneFromProto is the Done p carries (Proto's inverse: events come back
// as RawJSON, or as Fields when p was built with fields).
func DoneFromProto(p *messages.Done) *Done {
	d := &Done{Step: p.Step, Actor: p.Actor, Out: p.Out, Spawned: p.Spawned, Stopped: p.Stopped,
		Failure: p.Failure, Invariant: p.Invariant, EndRun: p.EndRun, Cancelled: p.Cancelled}
	if len(p.Events) > 0 {
		d.Events = make([]Event, len(p.Events))
		for i, e := range p.Events {
			d.Events[i] = Event{Vt: e.Vt, Actor: e.Actor, Seq: e.Seq, Body: EventBody(e)}
		}
	}
	return d
}

// EventBody is the payload of a proto event: its JSON text, or its fields.
func EventBody(e *messages.LogEvent) Payload {
	if len(e.Fields) > 0 || e.Json == nil {
		return Fields{K: Kind(e.Kind), List: e.Fields}
	}
	return RawJSON{K: Kind(e.Kind), JSON: e.Json}
}
