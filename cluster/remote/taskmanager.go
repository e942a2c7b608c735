package remote

import (
	"cmp"
	"crypto/hmac"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
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
// gateway: the inline process its actors answer and the jobmanager's
// messages go through.
const GatewayName = "gateway"

// TaskManagerConfig configures a taskmanager process.
type TaskManagerConfig struct {
	// Join is the jobmanager's address (jobmanager.rpc.address and
	// jobmanager.rpc.port).
	Join string
	// Host and Port, when set, are the local address of this process's
	// connection to the jobmanager (taskmanager.host, taskmanager.rpc.port;
	// BindHost, taskmanager.bind-host, the interface when Host is not set):
	// where the jobmanager sees it. "" and 0: the interface that reaches
	// the jobmanager, and a free port, as Flink's TaskManager finds its
	// address. This process listens nowhere: the jobmanager talks to it on
	// the connection it opened.
	Host     string
	Port     int
	BindHost string
	// ResourceID names the process (taskmanager.resource-id); "": its
	// address. The jobmanager refuses a second process with one name.
	ResourceID string
	TLS        *tls.Config // LoadTLS with RoleTaskManager
	// JoinToken, when set, is the secret the jobmanager holds too
	// (--join-token-file): this process proves it holds it, and so must the
	// jobmanager.
	JoinToken []byte
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
	installLog(cfg.Stderr, "taskmanager")
	var local *net.TCPAddr
	if h := cmp.Or(cfg.Host, cfg.BindHost); h != "" || cfg.Port != 0 {
		var ip net.IP
		if h != "" {
			a, err := net.ResolveIPAddr("ip", h)
			if err != nil {
				return &Error{Code: ExitUsage, Err: fmt.Errorf("taskmanager.host %q: %v", h, err)}
			}
			ip = a.IP
		}
		local = &net.TCPAddr{IP: ip, Port: cfg.Port}
	}
	nc, err := dialRetrying(jm, local, cfg.TLS, cfg.RegistrationTimeout, cfg.Interrupt, say)
	if err != nil {
		return fmt.Errorf("cannot join the jobmanager at %s: %w", jm, err)
	}
	c := newConn(nc)
	defer c.close()
	addr := nc.LocalAddr().String()
	id := cfg.ResourceID
	if id == "" {
		id = addr
	}
	if err := nc.SetReadDeadline(time.Now().Add(cfg.RegistrationTimeout)); err != nil {
		return fmt.Errorf("joining the jobmanager at %s: %v", jm, err)
	}
	f, err := c.read()
	if err != nil {
		if errors.Is(err, errUndecodable) {
			return fmt.Errorf("the peer at %s is not a flinksim jobmanager of this version: %v", jm, err)
		}
		if cfg.TLS == nil {
			return fmt.Errorf("the jobmanager at %s closed the connection while this process was joining (if it uses TLS, give this process --tls-cert, --tls-key and --tls-ca): %v", jm, err)
		}
		if strings.Contains(err.Error(), "remote error: tls") {
			return fmt.Errorf("TLS: the jobmanager at %s refused this process's certificate: %v", jm, err)
		}
		return fmt.Errorf("the jobmanager at %s closed the connection while this process was joining: %v", jm, err)
	}
	if r := f.GetJoinRefused(); r != nil {
		return fmt.Errorf("the jobmanager at %s refused this process: %s", jm, r.Reason)
	}
	ch := f.GetChallenge()
	if ch == nil {
		return fmt.Errorf("the peer at %s is not a flinksim jobmanager: its first message is a %s", jm, frameName(f))
	}
	if err := nc.SetReadDeadline(time.Time{}); err != nil {
		return fmt.Errorf("joining the jobmanager at %s: %v", jm, err)
	}
	c.member() // the jobmanager answered the way only one does
	req := &messages.JoinRequest{Version: Version(), ResourceId: id, Address: addr, Fingerprint: Fingerprint()}
	if cfg.JoinToken != nil {
		req.Nonce = nonce()
		req.Mac = joinMAC(cfg.JoinToken, RoleTaskManager, ch.Nonce, req.Nonce, req.ResourceId, req.Fingerprint, req.Version)
	}
	engine, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		return err
	}
	events := make(chan tmEvent, 16)
	quit := make(chan struct{})
	defer close(quit)
	tell := func(ev tmEvent) {
		select {
		case events <- ev:
		case <-quit:
		}
	}
	g := &gateway{c: c, jm: jm, tell: tell, engine: engine, token: cfg.JoinToken, jmNonce: ch.Nonce, req: req}
	g.lastPing.Store(time.Now().UnixNano())
	g.self = spawnInline(engine, GatewayName, g.receive)
	go func() {
		for {
			f, err := c.read()
			if err != nil {
				if errors.Is(err, errUndecodable) {
					tell(tmEvent{fatal: fmt.Errorf("cannot decode a message from the jobmanager at %s: %v (is it the same flinksim version?)", jm, err)})
				} else {
					tell(tmEvent{closed: true})
				}
				return
			}
			g.fromJobManager(f)
		}
	}()
	c.send(&messages.Frame{Body: &messages.Frame_JoinRequest{JoinRequest: req}})
	say("joining the jobmanager at %s as %s (from %s, %s, build %s)", jm, id, addr, Version(), Fingerprint())

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
				c.flushClose(time.Second) // the Bye leaves
				if ev.over.Failed {
					return fmt.Errorf("the jobmanager at %s ended the run: %s", jm, ev.over.Reason)
				}
				say("%s", ev.over.Reason)
				return nil
			case ev.fatal != nil:
				return ev.fatal
			case ev.closed:
				if watchdog == 0 {
					return fmt.Errorf("the jobmanager at %s closed the connection while this process was joining", jm)
				}
				return fmt.Errorf("lost the connection to the jobmanager at %s", jm)
			}
		case <-register.C:
			return fmt.Errorf("no answer from the jobmanager at %s within %s (taskmanager.registration.timeout)", jm, cfg.RegistrationTimeout)
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

// dialRetrying dials the jobmanager, and while it refuses connections (not
// started yet) tries again every half second until timeout, as Flink's
// TaskManager retries its registration; any other failure is final.
func dialRetrying(addr string, local *net.TCPAddr, tlsConf *tls.Config, timeout time.Duration, interrupt <-chan struct{}, say func(string, ...any)) (net.Conn, error) {
	deadline := time.Now().Add(timeout)
	told := false
	for {
		c, err := dial(addr, local, tlsConf)
		if err == nil || !errors.Is(err, errRefused) || time.Now().After(deadline) {
			return c, err
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
// deliveries to its actors and answers with their Dones in one reply. It
// reads only the connection it opened to the jobmanager (this process
// listens nowhere). It is inline (spawnInline): a StepBatch is handed out on
// the connection's reader goroutine, and the last Done of a step sends the
// reply on its node's goroutine; mu guards the step.
type gateway struct {
	c        *conn
	jm       string
	engine   *actor.Engine
	self     *actor.PID
	tell     func(tmEvent)
	token    []byte
	jmNonce  []byte
	req      *messages.JoinRequest
	lastPing atomic.Int64 // unix ns of the last Ping

	mu      sync.Mutex
	cfg     *config.Config
	host    *actors.Host
	step    uint64 // the step being handled (0: none)
	waiting int
	dones   []*kernel.Done
}

// fromJobManager handles a message from the jobmanager's connection.
func (g *gateway) fromJobManager(f *messages.Frame) {
	switch b := f.Body.(type) {
	case *messages.Frame_JoinAccepted:
		m := b.JoinAccepted
		if g.token != nil && !hmac.Equal(m.Mac, acceptMAC(g.token, g.jmNonce, g.req.Nonce, g.req.ResourceId, m)) {
			g.tell(tmEvent{fatal: fmt.Errorf("the jobmanager at %s accepted this process without proving the join token over its whole answer (--join-token-file; a changed answer fails too): not trusted", g.jm)})
			return
		}
		cfg, err := cluster.ConfigFromHeader(m.Header)
		if err != nil {
			g.tell(tmEvent{fatal: fmt.Errorf("the settings from the jobmanager at %s do not load here: %w", g.jm, err)})
			return
		}
		g.mu.Lock()
		g.cfg = &cfg // one read-only copy for every component, as in one process
		g.host = &actors.Host{Engine: g.engine, Scheduler: g.self, Seed: cfg.Seed, Build: cluster.Factory{Config: g.cfg}.Build}
		g.mu.Unlock()
		g.lastPing.Store(time.Now().UnixNano())
		g.tell(tmEvent{accepted: m})
	case *messages.Frame_JoinRefused:
		g.tell(tmEvent{refused: b.JoinRefused.Reason})
	case *messages.Frame_HostTaskManager:
		name := b.HostTaskManager.Name
		g.mu.Lock()
		host := g.host
		g.mu.Unlock()
		if host == nil {
			g.tell(tmEvent{fatal: fmt.Errorf("the jobmanager at %s asked for %s before accepting this process", g.jm, name)})
			return
		}
		// HostTaskManager is a TaskExecutorSpec on the wire
		if _, err := host.Spawn(name, spawn.TaskExecutorSpec{}); err != nil {
			g.tell(tmEvent{fatal: fmt.Errorf("cannot start TaskManager %s: %w", name, err)})
			return
		}
		g.tell(tmEvent{hosting: name})
	case *messages.Frame_StepBatch:
		g.deliver(b.StepBatch)
	case *messages.Frame_Ping:
		g.lastPing.Store(time.Now().UnixNano())
		g.c.send(&messages.Frame{Body: &messages.Frame_Pong{Pong: &messages.Pong{Seq: b.Ping.Seq}}})
	case *messages.Frame_Inspect:
		m := b.Inspect
		if m.Request == nil || g.engine.Registry.GetPID("node", m.To) == nil {
			// an empty view: the query ends
			g.c.send(&messages.Frame{Body: &messages.Frame_InspectReply{InspectReply: &messages.InspectReply{Id: m.GetRequest().GetId(), Actor: m.To}}})
			return
		}
		g.engine.SendWithSender(actors.NodePID(g.engine.Address(), m.To), m.Request, g.self)
	case *messages.Frame_RunOver:
		// said before the Bye leaves: the jobmanager may exit, and the
		// connection close, as soon as it has it
		g.tell(tmEvent{over: b.RunOver})
		g.c.send(&messages.Frame{Body: &messages.Frame_Bye{Bye: &messages.Bye{}}})
	default:
		g.tell(tmEvent{fatal: fmt.Errorf("the jobmanager at %s sent a %s, which no jobmanager sends", g.jm, frameName(f))})
	}
}

// receive takes what this process's actors answer: their Dones and views.
func (g *gateway) receive(msg any, _ *actor.PID) {
	switch m := msg.(type) {
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
	case *messages.InspectReply:
		g.c.send(&messages.Frame{Body: &messages.Frame_InspectReply{InspectReply: m}})
	}
}

func (g *gateway) deliver(m *messages.StepBatch) {
	var b messages.DeliverBatch
	if err := proto.Unmarshal(m.DeliverBatch, &b); err != nil {
		g.tell(tmEvent{fatal: fmt.Errorf("cannot decode step %d from the jobmanager at %s: %v", m.Step, g.jm, err)})
		return
	}
	addr := g.engine.Address()
	g.mu.Lock()
	if g.step != 0 {
		g.mu.Unlock()
		g.tell(tmEvent{fatal: fmt.Errorf("the jobmanager at %s sent step %d before step %d was answered", g.jm, m.Step, g.step)})
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
		g.tell(tmEvent{fatal: fmt.Errorf("cannot encode the answer to step %d: %v", g.step, err)})
		return
	}
	g.c.send(&messages.Frame{Body: &messages.Frame_StepReply{StepReply: &messages.StepReply{Step: g.step, DoneBatch: b}}})
	clear(g.dones)
	g.dones = g.dones[:0]
	g.step = 0
}
