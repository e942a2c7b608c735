package remote

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"
	"google.golang.org/protobuf/proto"

	"github.com/flinksim/flinksim/actors"
	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/spawn"
)

// GatewayName is the Hollywood kind and ID of a taskmanager process's
// gateway: the actor the jobmanager's hub talks to.
const GatewayName = "gateway"

// TaskManagerConfig configures a taskmanager process.
type TaskManagerConfig struct {
	// Join is the jobmanager's address (jobmanager.rpc.address and
	// jobmanager.rpc.port).
	Join string
	// Host is the address the jobmanager reaches this process at
	// (taskmanager.host); "" takes the local address of the connection to
	// the jobmanager, as Flink's TaskManager finds its address. Port is
	// taskmanager.rpc.port (0: any free port); BindHost, when set, the
	// interface to listen on (taskmanager.bind-host).
	Host     string
	Port     int
	BindHost string
	// ResourceID names the process (taskmanager.resource-id); "": its
	// address. The jobmanager refuses a second process with one name.
	ResourceID string
	TLS        *tls.Config
	// RegistrationTimeout bounds the wait for the jobmanager's answer
	// (taskmanager.registration.timeout).
	RegistrationTimeout time.Duration
	// Interrupt, when closed, makes the process leave (SIGINT, SIGTERM).
	Interrupt <-chan struct{}
	Stderr    io.Writer
}

// tmEvent is what the gateway tells the process's main goroutine.
type tmEvent struct {
	accepted *messages.JoinAccepted
	refused  string
	hosting  string
	over     *messages.RunOver
	fatal    error
	closed   bool // the connection to the jobmanager closed
}

// RunTaskManager joins the jobmanager at cfg.Join and serves it until the
// run is over. It returns nil when the run ended; otherwise an error that
// names the jobmanager: refused, unreachable, lost, undecodable, given up or
// interrupted. It never waits without a bound.
func RunTaskManager(cfg TaskManagerConfig) error {
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	if cfg.RegistrationTimeout <= 0 {
		cfg.RegistrationTimeout = 30 * time.Second
	}
	say := func(format string, args ...any) { fmt.Fprintf(cfg.Stderr, "taskmanager: "+format+"\n", args...) }
	if _, _, err := SplitAddress("--join", cfg.Join); err != nil {
		return &Error{Code: ExitUsage, Err: err}
	}
	jm := cfg.Join
	events := make(chan tmEvent, 16)
	installLog(cfg.Stderr, "taskmanager", func(err string) {
		events <- tmEvent{fatal: fmt.Errorf("cannot decode a message from the jobmanager at %s: %s (is it the same flinksim version?)", jm, err)}
	})
	local, err := probeRetrying(jm, cfg.TLS, cfg.RegistrationTimeout, cfg.Interrupt, say)
	if err != nil {
		return fmt.Errorf("cannot join the jobmanager at %s: %w", jm, err)
	}
	host := cfg.Host
	if host == "" {
		host = local.(*net.TCPAddr).IP.String()
	}
	engine, ep, err := newEngine(Endpoint{Advertise: net.JoinHostPort(host, strconv.Itoa(cfg.Port)), BindHost: cfg.BindHost}, cfg.TLS)
	if err != nil {
		return err
	}
	id := cfg.ResourceID
	if id == "" {
		id = ep.Advertise
	}
	g := &gateway{hub: hubPID(jm), jm: jm, events: events, engine: engine}
	g.lastPing.Store(time.Now().UnixNano())
	gpid := spawnInline(engine, GatewayName, g.receive)
	g.self = gpid
	w := engine.SpawnFunc(func(c *actor.Context) {
		if ev, ok := c.Message().(actor.RemoteUnreachableEvent); ok && ev.ListenAddr == jm {
			events <- tmEvent{closed: true}
		}
	}, "watch", actor.WithID("jobmanager"))
	engine.Subscribe(w)
	engine.SendWithSender(g.hub, &messages.JoinRequest{Version: Version(), ResourceId: id, Address: ep.Advertise}, gpid)
	say("joining the jobmanager at %s as %s (listening on %s, %s)", jm, id, ep.Advertise, Version())

	register := time.NewTimer(cfg.RegistrationTimeout)
	defer register.Stop()
	check := time.NewTicker(100 * time.Millisecond)
	defer check.Stop()
	var watchdog time.Duration // 0 until accepted
	for {
		select {
		case ev := <-events:
			switch {
			case ev.accepted != nil:
				register.Stop()
				a := ev.accepted
				watchdog = time.Duration(a.WatchdogTimeoutMs) * time.Millisecond
				if a.Spare {
					say("joined as spare process %d (sim.taskmanagers=%d): a replacement TaskManager may start here", a.Position, a.Expected)
				} else {
					say("joined as process %d of %d; waiting for the run to start", a.Position, a.Expected)
				}
			case ev.refused != "":
				return fmt.Errorf("the jobmanager at %s refused this process: %s", jm, ev.refused)
			case ev.hosting != "":
				say("hosting TaskManager %s", ev.hosting)
			case ev.over != nil:
				time.Sleep(200 * time.Millisecond) // let the Bye leave
				if ev.over.Failed {
					return fmt.Errorf("the jobmanager at %s ended the run: %s", jm, ev.over.Reason)
				}
				say("%s", ev.over.Reason)
				return nil
			case ev.fatal != nil:
				return ev.fatal
			case ev.closed:
				if watchdog == 0 {
					return fmt.Errorf("the jobmanager at %s closed the connection while this process was joining (if it uses TLS, give this process --tls-cert, --tls-key and --tls-ca)", jm)
				}
				return fmt.Errorf("lost the connection to the jobmanager at %s", jm)
			}
		case <-register.C:
			return fmt.Errorf("no answer from the jobmanager at %s within %s (taskmanager.registration.timeout): can it reach this process at %s? set --taskmanager.host",
				jm, cfg.RegistrationTimeout, ep.Advertise)
		case <-check.C:
			if watchdog > 0 {
				if d := time.Since(time.Unix(0, g.lastPing.Load())); d > watchdog {
					return fmt.Errorf("lost the jobmanager at %s: no heartbeat for %s", jm, d.Round(time.Millisecond))
				}
			}
		case <-cfg.Interrupt:
			return fmt.Errorf("interrupted (the jobmanager at %s treats this process as lost)", jm)
		}
	}
}

// probeRetrying probes the jobmanager, and while it refuses connections
// (not started yet) tries again every half second until timeout, as Flink's
// TaskManager retries its registration; any other failure is final.
func probeRetrying(addr string, tlsConf *tls.Config, timeout time.Duration, interrupt <-chan struct{}, say func(string, ...any)) (net.Addr, error) {
	deadline := time.Now().Add(timeout)
	told := false
	for {
		local, err := probe(addr, tlsConf)
		if err == nil || !errors.Is(err, errRefused) || time.Now().After(deadline) {
			return local, err
		}
		if !told {
			say("the jobmanager at %s refuses connections (not started yet?): trying again for up to %s", addr, timeout)
			told = true
		}
		select {
		case <-time.After(500 * time.Millisecond):
		case <-interrupt:
			return nil, fmt.Errorf("interrupted while waiting for the jobmanager: %w", err)
		}
	}
}

// Exit codes of the remote commands beyond run's.
const (
	ExitUsage  = 2 // bad flags or addresses
	ExitRemote = 5 // refused, unreachable, lost, undecodable: a transport failure
)

// Error carries an exit code; errors without one are transport failures.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// gateway is a taskmanager process's end of the process protocol: it
// builds the components from the settings it is given, hands each step's
// deliveries to its actors and answers with their Dones in one reply. It is
// inline (spawnInline): a StepBatch is handed out on the goroutine that
// decoded it, and the last Done of a step sends the reply on its node's
// goroutine; mu guards the step.
type gateway struct {
	hub      *actor.PID // at the address the process joined (the one that works from here)
	jm       string
	engine   *actor.Engine
	self     *actor.PID
	events   chan<- tmEvent
	lastPing atomic.Int64 // unix ns of the last Ping

	mu      sync.Mutex
	cfg     *config.Config
	host    *actors.Host
	step    uint64 // the step being handled (0: none)
	waiting int
	dones   []*kernel.Done
}

func (g *gateway) receive(msg any, _ *actor.PID) {
	switch m := msg.(type) {
	case *messages.JoinAccepted:
		cfg, err := cluster.ConfigFromHeader(m.Header)
		if err != nil {
			g.events <- tmEvent{fatal: fmt.Errorf("the settings from the jobmanager at %s do not load here: %w", g.jm, err)}
			return
		}
		g.mu.Lock()
		g.cfg = &cfg // one read-only copy for every component, as in one process
		g.host = &actors.Host{Engine: g.engine, Scheduler: g.self, Seed: cfg.Seed, Build: cluster.Factory{Config: g.cfg}.Build}
		g.mu.Unlock()
		g.lastPing.Store(time.Now().UnixNano())
		g.events <- tmEvent{accepted: m}
	case *messages.JoinRefused:
		g.events <- tmEvent{refused: m.Reason}
	case *messages.HostTaskManager:
		g.mu.Lock()
		host := g.host
		g.mu.Unlock()
		if host == nil {
			g.events <- tmEvent{fatal: fmt.Errorf("the jobmanager at %s asked for %s before accepting this process", g.jm, m.Name)}
			return
		}
		// HostTaskManager is a TaskExecutorSpec on the wire
		if _, err := host.Spawn(m.Name, spawn.TaskExecutorSpec{}); err != nil {
			g.events <- tmEvent{fatal: fmt.Errorf("cannot start TaskManager %s: %w", m.Name, err)}
			return
		}
		g.events <- tmEvent{hosting: m.Name}
	case *messages.StepBatch:
		g.deliver(m)
	case *kernel.Done:
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.step == 0 || m.Step != g.step {
			return
		}
		g.dones = append(g.dones, m)
		g.waiting--
		if g.waiting == 0 {
			g.reply()
		}
	case *messages.Ping:
		g.lastPing.Store(time.Now().UnixNano())
		g.engine.SendWithSender(g.hub, &messages.Pong{Seq: m.Seq}, g.self)
	case *messages.InspectReply:
		g.engine.SendWithSender(g.hub, m, g.self)
	case *messages.RunOver:
		// said before the Bye leaves: the jobmanager may exit, and the
		// connection close, as soon as it has it
		g.events <- tmEvent{over: m}
		g.engine.SendWithSender(g.hub, &messages.Bye{}, g.self)
	}
}

func (g *gateway) deliver(m *messages.StepBatch) {
	var b messages.DeliverBatch
	if err := proto.Unmarshal(m.DeliverBatch, &b); err != nil {
		g.events <- tmEvent{fatal: fmt.Errorf("cannot decode step %d from the jobmanager at %s: %v", m.Step, g.jm, err)}
		return
	}
	addr := g.engine.Address()
	g.mu.Lock()
	if g.step != 0 {
		g.mu.Unlock()
		g.events <- tmEvent{fatal: fmt.Errorf("the jobmanager at %s sent step %d before step %d was answered", g.jm, m.Step, g.step)}
		return
	}
	g.step, g.waiting, g.dones = m.Step, 0, g.dones[:0]
	send := b.Deliveries[:0:0]
	for _, d := range b.Deliveries {
		if g.engine.Registry.GetPID("node", d.To) == nil {
			g.dones = append(g.dones, &kernel.Done{Step: m.Step, Actor: d.To,
				Failure: fmt.Sprintf("no actor %s in the taskmanager process at %s", d.To, addr)})
			continue
		}
		send = append(send, d)
	}
	g.waiting = len(send)
	if g.waiting == 0 {
		g.reply()
	}
	g.mu.Unlock()
	for _, d := range send {
		g.engine.SendWithSender(actors.NodePID(addr, d.To), &messages.Deliver{Step: b.Step, Now: b.Now, Envelopes: d.Envelopes}, g.self)
	}
}

// reply sends the step's Dones in one message, encoded now that every
// receiver of this process has finished (mu held).
func (g *gateway) reply() {
	batch := &messages.DoneBatch{Dones: make([]*messages.Done, len(g.dones))}
	for i, d := range g.dones {
		batch.Dones[i] = d.Proto()
	}
	b, err := proto.Marshal(batch)
	if err == nil && len(b) > maxBatchBytes {
		// the jobmanager rebuilds this process's actors and goes on
		err = fmt.Errorf("%d bytes, above the transport's limit of %d", len(b), maxBatchBytes)
	}
	if err != nil {
		g.events <- tmEvent{fatal: fmt.Errorf("cannot encode the answer to step %d: %v", g.step, err)}
		return
	}
	g.engine.SendWithSender(g.hub, &messages.StepReply{Step: g.step, DoneBatch: b}, g.self)
	clear(g.dones)
	g.dones = g.dones[:0]
	g.step = 0
}
