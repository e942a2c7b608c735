package kernel

import (
	"fmt"
	"slices"
	"testing"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/vt"
)

// forecaster, on Start, sends its peer three heartbeats ahead of their
// time (as of 10, 20 and 30 ms, each due 1 ms later) and sets a timer at 15
// ms that withdraws the one of 20 ms; the peer records what reaches it.
type forecaster struct {
	peer string
	seqs []uint64
	got  *[]string
}

func (f *forecaster) Step(o *Out, e *messages.Envelope) {
	switch e.Body.(type) {
	case *messages.Envelope_Start:
		for _, at := range []vt.Time{10_000, 20_000, 30_000} {
			o.SendAhead(f.peer, at, 1000, &messages.Envelope_HeartbeatRequest{HeartbeatRequest: &messages.HeartbeatRequest{}})
			f.seqs = append(f.seqs, o.Sent())
		}
		o.Timer(15_000, messages.TimerKind_TIMER_KIND_UNSPECIFIED, 0) // the kernel never reads a kind
	case *messages.Envelope_Timer:
		o.Cancel(f.seqs[1])
	case *messages.Envelope_HeartbeatRequest:
		*f.got = append(*f.got, fmt.Sprintf("at %d sent %d", o.Now(), e.SentAt))
	}
}

// An envelope sent ahead is delivered at its time with its send time; one
// withdrawn before its time is never delivered; and what is in flight
// between two steps leaves out both what is sent ahead of a time still to
// come and what was withdrawn.
func TestSendAheadAndCancel(t *testing.T) {
	var got []string
	k := New(Config{Limit: 40_000})
	l := NewLoop(k, 1, nil)
	a := &forecaster{peer: "b", got: &got}
	k.Register([]*messages.Spawned{l.Host("a", a), l.Host("b", &forecaster{got: &got})})
	k.Push(&messages.Envelope{To: "a", From: SchedulerName, SenderSeq: 1, Body: &messages.Envelope_Start{Start: &messages.Start{}}})

	inFlight := func() []string {
		var out []string
		for _, e := range k.Queued(nil) {
			if _, ok := e.Body.(*messages.Envelope_HeartbeatRequest); ok {
				out = append(out, fmt.Sprintf("sent %d due %d", e.SentAt, e.DeliverAt))
			}
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		until vt.Time
		want  []string
	}{
		{5_000, nil}, // all three still ahead of their time
		{10_500, []string{"sent 10000 due 11000"}}, // the first on its way
		{16_000, nil}, // the first delivered, the second withdrawn, the third ahead
		{30_000, []string{"sent 30000 due 31000"}}, // paused before the step at 30 ms: its time has come
	} {
		if st := l.Run(c.until, 0); st != StatePaused {
			t.Fatalf("run to %d: state %v", c.until, st)
		}
		if f := inFlight(); !slices.Equal(f, c.want) {
			t.Errorf("in flight at %d: %v, want %v", c.until, f, c.want)
		}
	}
	if st := l.Run(Forever, 0); st != StateEnded {
		t.Fatalf("run to the end: state %v", st)
	}
	if want := []string{"at 11000 sent 10000", "at 31000 sent 30000"}; !slices.Equal(got, want) {
		t.Errorf("delivered %v, want %v", got, want)
	}
}
