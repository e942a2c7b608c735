package kernel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/vt"
)

// pinger sends a timer-driven ping to its peer every ms until stop, and
// records what it receives: "ping from X at T" or "lost X at T".
type pinger struct {
	peer  string
	stop  vt.Time
	got   *[]string
	spawn string // an actor to spawn on Start, on this pinger's host
	ack   bool   // ping with AcknowledgeCheckpoint instead (an RPC lose-rpc can lose)
}

func (p *pinger) Step(o *Out, e *messages.Envelope) {
	switch b := e.Body.(type) {
	case *messages.Envelope_Start:
		if p.spawn != "" {
			o.Spawn(p.spawn, pingerSpec{peer: p.peer, stop: p.stop, got: p.got})
			o.Send(p.spawn, 0, &messages.Envelope_Start{Start: &messages.Start{}})
		}
		o.Timer(1000, messages.TimerKind_TIMER_KIND_UNSPECIFIED, 0)
	case *messages.Envelope_Timer:
		if o.Now() < p.stop && p.ack {
			o.Send(p.peer, 0, &messages.Envelope_AcknowledgeCheckpoint{AcknowledgeCheckpoint: &messages.AcknowledgeCheckpoint{}})
			o.Timer(1000, messages.TimerKind_TIMER_KIND_UNSPECIFIED, 0)
		} else if o.Now() < p.stop {
			o.Send(p.peer, 0, &messages.Envelope_HeartbeatRequest{HeartbeatRequest: &messages.HeartbeatRequest{}})
			o.Timer(1000, messages.TimerKind_TIMER_KIND_UNSPECIFIED, 0)
		}
	case *messages.Envelope_HeartbeatRequest, *messages.Envelope_AcknowledgeCheckpoint:
		*p.got = append(*p.got, fmt.Sprintf("%s: ping from %s at %d", o.Name(), e.From, o.Now()))
	case *messages.Envelope_ConnectionLost:
		*p.got = append(*p.got, fmt.Sprintf("%s: lost %s at %d", o.Name(), b.ConnectionLost.Peer, o.Now()))
	}
}

// pingerSpec is what a pinger spawns: a pinger of the same peer and stop.
type pingerSpec struct {
	peer string
	stop vt.Time
	got  *[]string
}

func (pingerSpec) Component() string { return "pinger" }

// buildPinger is the tests' Build: it knows pingerSpec alone.
func buildPinger(_ string, s Spec) (Component, error) {
	if p, ok := s.(pingerSpec); ok {
		return &pinger{peer: p.peer, stop: p.stop, got: p.got}, nil
	}
	return nil, fmt.Errorf("no component for %T", s)
}

type netRun struct {
	got    []string
	events []string
	gone   []string
}

// runNet runs actors a (host A) and b (host B), each pinging the other
// every ms until 12 ms, with the given user actions to the scheduler.
func runNet(t *testing.T, spawn string, actions ...string) *netRun {
	t.Helper()
	return runNetWith(t, spawn, false, actions...)
}

// runNetWith is runNet, the pings AcknowledgeCheckpoint envelopes with ack.
func runNetWith(t *testing.T, spawn string, ack bool, actions ...string) *netRun {
	t.Helper()
	r := &netRun{}
	k := New(Config{
		Log: func(ev *Event) {
			if ev.Actor == SchedulerName || ev.Actor == UserName {
				r.events = append(r.events, fmt.Sprintf("%d %s %s", ev.Vt, ev.Kind(), strings.Join(keyValues(t, ev.Body), " ")))
			}
		},
		HostOf: func(actor, spawnerHost string) string {
			if spawnerHost != "" {
				return spawnerHost
			}
			return strings.ToUpper(actor)
		},
		ActionText: testActionText,
		DeadLetter: func(e *messages.Envelope) []string {
			r.gone = append(r.gone, e.To)
			return nil
		},
	})
	l := NewLoop(k, 1, buildPinger)
	k.Register([]*messages.Spawned{l.Host("a", &pinger{peer: "b", stop: 12_000, got: &r.got, spawn: spawn, ack: ack}),
		l.Host("b", &pinger{peer: "a", stop: 12_000, got: &r.got, ack: ack})})
	k.Push(&messages.Envelope{To: "a", From: SchedulerName, SenderSeq: 1, Body: &messages.Envelope_Start{Start: &messages.Start{}}})
	k.Push(&messages.Envelope{To: "b", From: SchedulerName, SenderSeq: 2, Body: &messages.Envelope_Start{Start: &messages.Start{}}})
	for i, text := range actions {
		var at int64
		fmt.Sscanf(text, "%d", &at)
		text = text[strings.Index(text, " ")+1:]
		a := testAction(text)
		k.Push(&messages.Envelope{DeliverAt: at, To: SchedulerName, From: UserName, SenderSeq: uint64(i + 1),
			Body: &messages.Envelope_Action{Action: a}})
	}
	if st := l.Run(Forever, 0); st != StateEnded {
		t.Fatalf("state %v", st)
	}
	return r
}

// A cut between two hosts drops exactly the envelopes due between them
// while it lasts, tells each end once, logs its start and its end with the
// count, and hands every dropped envelope to the dead-letter rule; after
// the heal the pings flow again.
func TestCutDropsBetweenTwoHosts(t *testing.T) {
	r := runNet(t, "", "5000 cut A B 3")
	for _, want := range []string{
		"a: ping from b at 4000", "b: ping from a at 4000",
		"a: lost b at 5000", "b: lost a at 5000",
		"a: ping from b at 8000", "b: ping from a at 8000",
	} {
		if !slices.Contains(r.got, want) {
			t.Errorf("missing %q in %v", want, r.got)
		}
	}
	for _, e := range r.got {
		for _, at := range []string{" at 5000", " at 6000", " at 7000"} {
			if strings.HasSuffix(e, at) && strings.Contains(e, "ping") {
				t.Errorf("delivered during the cut: %s", e)
			}
		}
	}
	want := []string{
		`5000 network_partition host_a=A host_b=B duration_ms=3 action=cut A B 3`,
		`8000 network_partition_healed host_a=A host_b=B dropped_envelopes=6 connections_lost=2`,
	}
	if !slices.Equal(r.events, want) {
		t.Errorf("scheduler events\n%s\nwant\n%s", strings.Join(r.events, "\n"), strings.Join(want, "\n"))
	}
	if len(r.gone) != 6 {
		t.Errorf("dead-letter rule asked about %d envelopes, want 6: %v", len(r.gone), r.gone)
	}
}

// An actor spawned by a is on a's host: cut off from b with a, and a's
// envelopes to it are never dropped.
func TestSpawnedActorInheritsTheHost(t *testing.T) {
	r := runNet(t, "c", "5000 cut A B 3")
	if !slices.Contains(r.got, "c: lost b at 5000") || !slices.Contains(r.got, "b: lost c at 5000") {
		t.Fatalf("c was not cut off from b: %v", r.got)
	}
	if !slices.Contains(r.got, "b: ping from c at 8000") {
		t.Fatalf("c got nothing after the heal: %v", r.got)
	}
}

// A cut between hosts that do not exchange anything drops nothing; an
// action that is not for the scheduler is ignored with its reason; a cut still
// in progress when the run ends is logged as ended with the run.
func TestCutIgnoredAndUnhealed(t *testing.T) {
	r := runNet(t, "", "2000 cut A Z 2", "3000 explode", "11000 cut A B 100")
	want := []string{
		`2000 network_partition host_a=A host_b=Z duration_ms=2 action=cut A Z 2`,
		`3000 action_ignored action=ACTION_TRIGGER_CHECKPOINT reason=not an action for the scheduler`,
		`4000 network_partition_healed host_a=A host_b=Z dropped_envelopes=0 connections_lost=0`,
		`11000 network_partition host_a=A host_b=B duration_ms=100 action=cut A B 100`,
		`12000 network_partition_healed host_a=A host_b=B dropped_envelopes=2 connections_lost=2 run_ended=true`,
	}
	if !slices.Equal(r.events, want) {
		t.Errorf("scheduler events\n%s\nwant\n%s", strings.Join(r.events, "\n"), strings.Join(want, "\n"))
	}
}

// keyValues reads p's fields back from its JSON text as key=value, in
// order.
func keyValues(t *testing.T, p Payload) []string {
	t.Helper()
	text := p.AppendJSON(nil)
	dec := json.NewDecoder(bytes.NewReader(append([]byte("{"), text[1:]...)))
	var out []string
	if _, err := dec.Token(); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	for {
		k, err := dec.Token()
		if err != nil {
			return out
		}
		if _, ok := k.(string); !ok {
			return out
		}
		v, err := dec.Token()
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		out = append(out, fmt.Sprintf("%s=%v", k, v))
	}
}
