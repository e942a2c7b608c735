package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/anthdm/hollywood/actor"

	"github.com/flinksim/flinksim/actors"
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/vt"
)

// Remote are the hooks of a run whose TaskManagers live in other processes
// (package remote, ARCHITECTURE.md "Remote transport"). None of them reaches
// the log: where an actor lives is the transport's business.
type Remote struct {
	// Engine is the jobmanager process's engine (local: package remote
	// carries what crosses processes on its own connections). The scheduler, the broker, the JobManager and the
	// ResourceManager live on it.
	Engine *actor.Engine
	// Sender carries each step's Delivers, one batch per process
	// (Scheduler.Sender).
	Sender actors.StepSender
	// Place starts a TaskManager in a taskmanager process, which builds it
	// from its spec with its own Factory, or returns nil to build and host
	// it in this one (Host.Place).
	Place func(name string, spec kernel.Spec) *messages.Spawned
}

// NewRemoteSession is NewSession on r's engine with r's hooks. It also
// returns the jobmanager process's Host (whose Scheduler is the scheduler's
// PID): where the actors of a lost process are adopted (Rebuild).
func NewRemoteSession(cfg config.Config, opt Options, r Remote) (*Session, *actors.Host, error) {
	if r.Engine == nil {
		return nil, nil, fmt.Errorf("a remote session needs the jobmanager process's engine")
	}
	h := &hollywood{engine: r.Engine, sender: r.Sender, place: r.Place}
	s, err := newSession(cfg, opt, h.host)
	if err != nil {
		return nil, nil, err
	}
	return s, h.hosted, nil
}

// HeaderLine is the first line of the JSON log of a run of (cfg, opt),
// without its newline: what a joining process is told.
func HeaderLine(cfg config.Config, opt Options) []byte {
	var b bytes.Buffer
	writeHeader(eventlog.NewWriter(&b, false), cfg, opt)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// ConfigFromHeader reads the settings of a JSON log header line, as replay
// does: every key set in key order, then validated.
func ConfigFromHeader(line []byte) (config.Config, error) {
	var h struct {
		Event    string            `json:"event"`
		Format   string            `json:"format"`
		Settings map[string]string `json:"settings"`
	}
	if err := json.Unmarshal(line, &h); err != nil || h.Event != string(eventlog.KindHeader) {
		return config.Default(), fmt.Errorf("not a flinksim log header")
	}
	if h.Format != eventlog.FormatVersion {
		return config.Default(), fmt.Errorf("log format %q, this flinksim reads %q", h.Format, eventlog.FormatVersion)
	}
	return config.FromSettings(h.Settings)
}

// Rebuild brings back the actors of a lost process. It re-runs the recipe
// (cfg, opt with its actions, and the live actions given so far) in this
// goroutine without actors for exactly `steps` scheduler steps, then hands
// every actor of names that is still live to host, with the state, sequence
// numbers and random generator it reached; it returns the names adopted.
//
// This is exact because an actor's state after a step is a function of the
// recipe alone (ARCHITECTURE.md): the re-run rebuilds what the lost process
// held after step `steps`, provided none of its actors received anything
// after that step. The re-run's other components are dropped. It costs a
// plain run of the first `steps` steps.
func Rebuild(cfg config.Config, opt Options, live []action.Action, steps uint64, names []string, host *actors.Host) ([]string, error) {
	o := opt
	o.Log, o.Console, o.Observe, o.Interrupt, o.Progress, o.StopAt = io.Discard, false, nil, nil, nil, 0
	o.LiveActions = append(slices.Clone(opt.LiveActions), live...)
	r := &rebuildLoop{actors: map[string]*rebuilt{}}
	if _, err := newSession(cfg, o, r.host); err != nil {
		return nil, err
	}
	if err := r.runTo(steps); err != nil {
		return nil, err
	}
	var adopted []string
	r.spawn = host.Spawn // what the adopted actors spawn from now on lives in this process
	for _, n := range slices.Sorted(slices.Values(names)) {
		a := r.actors[n]
		if a == nil || !r.k.Live(n) {
			continue
		}
		host.Adopt(n, a.c, a.out)
		adopted = append(adopted, n)
	}
	return adopted, nil
}

// rebuildLoop is the plain driver of a Rebuild: kernel.Loop's delivery with
// the components kept for adoption and a spawner that can be pointed
// elsewhere afterwards.
type rebuildLoop struct {
	k      *kernel.Kernel
	seed   uint64
	build  kernel.Build
	actors map[string]*rebuilt
	spawn  kernel.Spawner // nil: keep the component here
}

type rebuilt struct {
	c   kernel.Component
	out *kernel.Out
}

func (r *rebuildLoop) host(k *kernel.Kernel, seed uint64, build kernel.Build, _ Options) (kernel.Spawner, func([]*messages.Spawned, []*messages.Envelope), driver, error) {
	r.k, r.seed, r.build = k, seed, build
	kick := func(sp []*messages.Spawned, initial []*messages.Envelope) {
		k.Register(sp)
		for _, e := range initial {
			k.Push(e)
		}
	}
	return r.add, kick, r, nil
}

// add is the spawner of every Out of the re-run: it builds the component
// with the run's factory and keeps it here, or, once the adopted actors run
// in the jobmanager process, hands the spec to that process's host.
func (r *rebuildLoop) add(name string, spec kernel.Spec) (*messages.Spawned, error) {
	if r.spawn != nil {
		return r.spawn(name, spec)
	}
	c, err := r.build(name, spec)
	if err != nil {
		return nil, err
	}
	r.actors[name] = &rebuilt{c: c, out: kernel.NewOut(name, r.seed, r.add)}
	return &messages.Spawned{Name: name}, nil
}

// runTo delivers steps until step n is finished; a step numbered beyond n
// (after steps with nothing to deliver) is left undelivered.
func (r *rebuildLoop) runTo(n uint64) error {
	for r.k.Steps() < n {
		st, state := r.k.Next(kernel.Forever)
		if state != kernel.StateStep {
			return fmt.Errorf("the re-run ended after %d steps, before step %d", r.k.Steps(), n)
		}
		if st.N > n {
			return nil
		}
		dones := make([]*kernel.Done, len(st.Deliveries))
		for i, d := range st.Deliveries {
			a := r.actors[d.To]
			dones[i] = kernel.Deliver(a.c, a.out, st.N, st.Now, d.Envelopes)
		}
		r.k.Finish(dones)
		for _, d := range dones {
			for _, name := range d.Stopped {
				delete(r.actors, name)
			}
		}
	}
	return nil
}

// The driver methods: a Rebuild never steers its session.
func (r *rebuildLoop) run(vt.Time, int) actors.Report              { return actors.Report{} }
func (r *rebuildLoop) inject(*messages.Envelope) (vt.Time, error)  { return 0, fmt.Errorf("rebuild") }
func (r *rebuildLoop) interrupt()                                  {}
func (r *rebuildLoop) inspect([]string) map[string]json.RawMessage { return nil }
func (r *rebuildLoop) inFlight() []*messages.Envelope              { return nil }
