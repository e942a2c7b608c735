package kernel

import (
	"bytes"
	"testing"
)

// Proto writes every event's JSON text once and carves the events and their
// texts from one slice each: the allocations of a Done's proto do not grow
// with its events (before: two per event).
func TestDoneProtoAllocations(t *testing.T) {
	d := &Done{Step: 1, Actor: "window-0"}
	for i := 0; i < 40; i++ {
		d.Events = append(d.Events, Event{Vt: int64(i), Actor: "window-0", Seq: uint64(i + 1),
			Body: ActionIgnored{Action: "at=1s kill-taskmanager tm-1", Reason: "no such actor: tm-1 with a reason long enough to outgrow the estimate"}})
	}
	p := d.Proto()
	for i, e := range p.Events {
		want := d.Events[i].Body.AppendJSON(nil)
		if !bytes.Equal(e.Json, want) || e.Seq != uint64(i+1) || e.Vt != int64(i) || e.Kind != string(KindActionIgnored) {
			t.Fatalf("event %d: %+v, want json %s", i, e, want)
		}
	}
	n := testing.AllocsPerRun(50, func() { d.Proto() })
	if n > 6 {
		t.Errorf("Proto of a Done with %d events: %.0f allocations, want at most 6", len(d.Events), n)
	}
}
