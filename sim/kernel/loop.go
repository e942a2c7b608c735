package kernel

import (
	"fmt"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/vt"
)

// Loop is the plain driver: it hosts every component in the caller's
// goroutine and delivers each step with direct calls, one receiver after
// the other. It exists as the oracle for the Hollywood driver (the product
// runs every component as a Hollywood actor): both must write the same log,
// byte for byte, for the same components and first envelopes.
type Loop struct {
	K      *Kernel
	seed   uint64
	build  Build
	actors map[string]*hosted
}

type hosted struct {
	c   Component
	out *Out
}

// NewLoop returns a plain driver of k whose actors draw randomness from
// (seed, actor name) and whose spawned components build makes from their
// specs.
func NewLoop(k *Kernel, seed uint64, build Build) *Loop {
	return &Loop{K: k, seed: seed, build: build, actors: map[string]*hosted{}}
}

// Spawn builds the component spec describes and hosts it as actor name; it
// is the Spawner of every Out the loop creates. The kernel learns of the
// actor from the Done that spawned it, or from Register for the first
// actors of a run.
func (l *Loop) Spawn(name string, spec Spec) (*messages.Spawned, error) {
	if l.build == nil {
		return nil, fmt.Errorf("the plain driver was given no Build")
	}
	c, err := l.build(name, spec)
	if err != nil {
		return nil, err
	}
	return l.Host(name, c), nil
}

// Host hosts the component c, already built, as actor name.
func (l *Loop) Host(name string, c Component) *messages.Spawned {
	l.actors[name] = &hosted{c: c, out: NewOut(name, l.seed, l.Spawn)}
	return &messages.Spawned{Name: name}
}

// Run delivers steps until the next one is due at or after until, or
// maxSteps steps were taken (0: no bound), or the run ends; it returns the
// kernel's state then (StatePaused after maxSteps).
func (l *Loop) Run(until vt.Time, maxSteps int) State {
	for n := 0; maxSteps <= 0 || n < maxSteps; n++ {
		st, state := l.K.Next(until)
		if state != StateStep {
			return state
		}
		dones := make([]*Done, len(st.Deliveries))
		for i, d := range st.Deliveries {
			h := l.actors[d.To]
			dones[i] = Deliver(h.c, h.out, st.N, st.Now, d.Envelopes)
		}
		l.K.Finish(dones)
		for _, d := range dones {
			for _, name := range d.Stopped {
				delete(l.actors, name)
			}
		}
	}
	if l.K.Ended() {
		return StateEnded
	}
	return StatePaused
}

// Inspect returns the view of actor name between two steps (nil when it
// has none or is gone).
func (l *Loop) Inspect(name string) any {
	h := l.actors[name]
	if h == nil {
		return nil
	}
	if in, ok := h.c.(Inspector); ok {
		return in.Inspect(l.K.Now())
	}
	return nil
}

// Names are the hosted actors' names, in no particular order.
func (l *Loop) Names() []string {
	out := make([]string, 0, len(l.actors))
	for n := range l.actors {
		out = append(out, n)
	}
	return out
}
