package kernel

import (
	"errors"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/messages"
)

// spawner is a component that spawns one actor of spec on Start.
type spawner struct {
	child string
	spec  Spec
}

func (s *spawner) Step(o *Out, e *messages.Envelope) {
	if _, ok := e.Body.(*messages.Envelope_Start); ok {
		o.Spawn(s.child, s.spec)
	}
}

// A spawn goes through the driver's spawner with the name and the spec as
// given, and the Done carries where the new actor lives; a spec the driver
// cannot build, or an Out without a driver, is the spawn invariant, naming
// the spawner, the actor and the spec's component, and the Done carries no
// spawned actor.
func TestSpawnHandsTheSpecToTheDriver(t *testing.T) {
	start := []*messages.Envelope{{To: "a", From: SchedulerName, Body: &messages.Envelope_Start{Start: &messages.Start{}}}}
	spec := pingerSpec{peer: "x", stop: 5}
	var gotName string
	var gotSpec Spec
	o := NewOut("a", 1, func(name string, s Spec) (*messages.Spawned, error) {
		gotName, gotSpec = name, s
		return &messages.Spawned{Name: name, Address: "here"}, nil
	})
	d := Deliver(&spawner{child: "b", spec: spec}, o, 1, 0, start)
	if d.Failure != "" || gotName != "b" || gotSpec != spec || len(d.Spawned) != 1 || d.Spawned[0].Address != "here" {
		t.Fatalf("spawned %q %v, Done %v (failure %q)", gotName, gotSpec, d.Spawned, d.Failure)
	}

	refuse := NewOut("a", 1, func(string, Spec) (*messages.Spawned, error) { return nil, errors.New("no such component") })
	d = Deliver(&spawner{child: "b", spec: spec}, refuse, 1, 0, start)
	if d.Invariant != "spawn" || !strings.Contains(d.Failure, "a cannot start b (pinger): no such component") || len(d.Spawned) != 0 {
		t.Errorf("refused spawn: invariant %q, failure %q, spawned %v", d.Invariant, d.Failure, d.Spawned)
	}

	d = Deliver(&spawner{child: "b", spec: spec}, NewOut("a", 1, nil), 1, 0, start)
	if d.Invariant != "spawn" || len(d.Spawned) != 0 {
		t.Errorf("spawn without a driver: invariant %q, spawned %v", d.Invariant, d.Spawned)
	}
}

// The plain driver builds a spawned component with its Build and delivers
// to it; without a Build a spawn is refused.
func TestLoopBuildsWhatIsSpawned(t *testing.T) {
	var built []string
	k := New(Config{})
	l := NewLoop(k, 1, func(name string, s Spec) (Component, error) {
		built = append(built, name+":"+s.Component())
		return buildPinger(name, s)
	})
	k.Register([]*messages.Spawned{l.Host("a", &spawner{child: "b", spec: pingerSpec{peer: "a", stop: 0}})})
	k.Push(&messages.Envelope{To: "a", From: SchedulerName, SenderSeq: 1, Body: &messages.Envelope_Start{Start: &messages.Start{}}})
	if st := l.Run(Forever, 0); st != StateEnded {
		t.Fatalf("state %v", st)
	}
	if len(built) != 1 || built[0] != "b:pinger" || !k.Live("b") {
		t.Fatalf("built %v, b live %v", built, k.Live("b"))
	}
	if _, err := NewLoop(New(Config{}), 1, nil).Spawn("c", pingerSpec{}); err == nil {
		t.Error("a loop without Build spawned")
	}
}
