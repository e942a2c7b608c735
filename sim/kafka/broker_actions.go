package kafka

import (
	"encoding/json"
	"strconv"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// action carries out a user action addressed to the broker: a record sent
// by hand, a stalled or resumed producer, the output consumer's isolation.
func (k *Broker) action(o *kernel.Out, m *messages.Action) {
	a := action.FromMessage(m)
	text := a.String()
	ignore := func(reason string) {
		o.Log(eventlog.ActionIgnored{Action: text, Reason: reason})
	}
	switch a.Verb {
	case action.SendEvent:
		e := a.Event
		n := k.source.NumPartitions()
		p := e.Partition
		if p >= n {
			ignore("partition " + strconv.Itoa(p) + " does not exist: topic " + k.cfg.SourceTopic + " has " + strconv.Itoa(n) + " partitions (0.." + strconv.Itoa(n-1) + ")")
			return
		}
		if p < 0 {
			p = DefaultPartition([]byte(e.Key), n)
		}
		ts := e.Ts
		if e.Now {
			ts += k.nowMs(o)
		}
		value := eventValue(e.Fields)
		var off int64
		if k.gen != nil {
			off = k.edited().Append(p, &messages.KafkaRecord{Timestamp: ts, Key: e.Key, Value: value})
		} else {
			off = k.file.appendStored(p, ts, e.Key, value)
		}
		o.Log(eventlog.EventSent{Partition: int64(p), Offset: off, Key: e.Key, Timestamp: ts, Value: string(value)})
		k.serveParked(o)
	case action.PausePartition, action.ResumePartition:
		p := a.Partition
		if n := k.source.NumPartitions(); p >= n {
			ignore("partition " + strconv.Itoa(p) + " does not exist: topic " + k.cfg.SourceTopic + " has " + strconv.Itoa(n) + " partitions")
			return
		}
		pause := a.Verb == action.PausePartition
		if k.isPaused(p) == pause {
			ignore("partition " + strconv.Itoa(p) + " is " + map[bool]string{true: "already paused", false: "not paused"}[pause])
			return
		}
		if k.gen != nil {
			// the generator goes on drawing: what it draws for the
			// partition meanwhile is never produced
			if pause {
				k.edited().Pause(p)
			} else {
				k.edited().Resume(p)
			}
		} else {
			k.file.paused[p] = pause
		}
		if pause {
			o.Log(eventlog.PartitionPaused{Partition: int64(p)})
			return
		}
		held := k.file.held[p]
		k.file.held[p] = nil
		for _, i := range held {
			k.file.appendEvent(i)
		}
		o.Log(eventlog.PartitionResumed{Partition: int64(p), HeldRecords: int64(len(held))})
		k.serveParked(o)
	case action.Set:
		if a.Key != "sim.output.isolation-level" {
			ignore("not an action for the broker")
			return
		}
		o.Log(eventlog.OutputIsolation{IsolationLevel: a.Value})
	default:
		ignore("not an action for the broker")
	}
}

// nowMs is "now" for send-event: the generator's clock while it generates
// (its newest records' event time), otherwise the newest event time in the
// source topic, or the generator's clock when the topic is still empty.
func (k *Broker) nowMs(o *kernel.Out) int64 {
	if k.gen == nil && k.file.haveTs {
		return k.file.maxTs
	}
	return GeneratorEpochMillis + vt.Millis(o.Now())
}

// edited is the generator's topic with the users' edits, made the source
// topic at the first edit (before it the generated topic is read as it is).
func (k *Broker) edited() *EditedTopic {
	if k.edit == nil {
		k.edit = Edit(k.gen)
		k.source = k.edit
	}
	return k.edit
}

// isPaused reports whether partition p's producer is stalled.
func (k *Broker) isPaused(p int) bool {
	if k.edit != nil {
		return k.edit.Paused(p)
	}
	return k.file.paused[p]
}

// eventValue renders send-event's fields as the record's JSON value: a
// field is a JSON number when it parses as one, otherwise a string.
func eventValue(fields [][2]string) []byte {
	b := []byte{'{'}
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(f[0])
		b = append(b, kb...)
		b = append(b, ':')
		if _, err := strconv.ParseFloat(f[1], 64); err == nil && json.Valid([]byte(f[1])) {
			b = append(b, f[1]...)
		} else {
			vb, _ := json.Marshal(f[1])
			b = append(b, vb...)
		}
	}
	return append(b, '}')
}
