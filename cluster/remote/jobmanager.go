package remote

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anthdm/hollywood/actor"
	"google.golang.org/protobuf/proto"

	"github.com/flinksim/flinksim/actors"
	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/spawn"
	"github.com/flinksim/flinksim/sim/vt"
)

// HubName is the Hollywood kind and ID of the jobmanager process's hub: the
// actor taskmanager processes join and answer (its PID is kind/ID).
const HubName = "hub"

// hubPID is the hub's PID on the jobmanager engine at address.
func hubPID(address string) *actor.PID { return actor.NewPID(address, HubName+"/"+HubName) }

// JobManagerConfig configures a jobmanager process.
type JobManagerConfig struct {
	Endpoint Endpoint
	TLS      *tls.Config // nil: plain TCP
	// TaskManagers is sim.taskmanagers: the run starts once this many
	// processes joined. Spares more are accepted (for replacement
	// TaskManagers), counting only processes not lost.
	TaskManagers, Spares int
	// Header is the run's log header line, sent to every process.
	Header []byte
	// WatchdogInterval is the wall time between two Pings to a process;
	// WatchdogTimeout the silence after which the process is lost (also the
	// jobmanager's own timeout in each process).
	WatchdogInterval, WatchdogTimeout time.Duration
	// StepTimeout is how long a process may leave a step unanswered while it
	// still answers Pings before it is lost (a stuck process). 0: 30 s.
	StepTimeout time.Duration
	Stderr      io.Writer
}

// JobManager is the jobmanager process's side of the transport.
//
// Concurrency: the hub actor owns the join protocol, the watchdog and the
// losses; the scheduler's goroutine sends steps (transport) and the
// ResourceManager's places TaskManagers (Place); mu guards what they share.
type JobManager struct {
	cfg    JobManagerConfig
	engine *actor.Engine
	self   *actor.PID // the hub
	addr   string     // this process's advertised address

	mu        sync.Mutex
	peers     []*peer          // accepted and not left before the run, in join order
	byAddr    map[string]*peer // by gateway address
	pending   map[string]bool  // resource ids and addresses of joins being checked
	pendingN  int              // joins being checked
	started   bool             // the run has started: later joins are spares
	initial   []*peer          // tm-1.. in order, set when the run starts
	scheduler *actor.PID
	host      *actors.Host
	rebuild   func(steps uint64, names []string) ([]string, error)
	problems  []string // protocol errors: the run goes on, the process exits non-zero

	joined chan struct{}  // a process joined or left before the run
	losses chan *lossNote // processes lost during the run, for the driver

	liveMu sync.Mutex
	live   []action.Action // live actions given so far (the kills), in order

	byes    chan struct{}
	pingSeq uint64
	pingAt  map[uint64]time.Time // when each recent Ping left
	stats   Stats
}

// Stats count the transport's traffic (for the README's figures).
type Stats struct {
	Batches, Bytes uint64 // StepBatches sent and their payload bytes
	// RoundTrips are heartbeat round trips (Ping out, Pong back: one
	// message each way between the processes), during the run.
	RoundTrips []time.Duration
}

// maxRoundTrips bounds the samples kept.
const maxRoundTrips = 100_000

type peer struct {
	id, addr string
	position int  // 1-based join order (renumbered when one leaves before the run)
	spare    bool // joined beyond sim.taskmanagers
	engine   *actor.Engine
	gateway  *actor.PID
	lastPong time.Time
	lost     bool
	cause    string
	tm       string          // the TaskManager it hosts ("": none yet)
	names    map[string]bool // live actors it hosts
	inflight *inflight       // the step it has not answered
	answered uint64          // the last step it answered
	pending  []*inflight     // steps waiting for the rebuild of its actors (lost)
	adopted  bool            // its actors live in this process now
	rebuilds bool            // a rebuild of its actors is under way
}

// String names the process: its resource id and address.
func (p *peer) String() string { return named(p.id, p.addr) }

// named is "ID at ADDR", or ADDR when the id is the default, the address.
func named(id, addr string) string {
	if id == addr {
		return addr
	}
	return id + " at " + addr
}

type inflight struct {
	batch *messages.StepBatch
	n     int // deliveries in it
	at    time.Time
}

type lossNote struct {
	p    *peer
	kill string // the TaskManager to kill ("": it hosts none alive)
}

// hub messages from this process's goroutines (local Go values).
type (
	hubTick     struct{}
	unreachable struct{ p *peer }
	joinChecked struct {
		req    *messages.JoinRequest
		from   *actor.PID
		engine *actor.Engine
		err    error
	}
	lostBatch struct {
		p *peer
		f *inflight
	}
	rebuilt struct {
		peers   []*peer
		adopted []string
		err     error
	}
)

// StartJobManager listens on cfg.Endpoint and starts accepting processes.
func StartJobManager(cfg JobManagerConfig) (*JobManager, error) {
	if cfg.WatchdogInterval <= 0 {
		cfg.WatchdogInterval = 200 * time.Millisecond
	}
	if cfg.WatchdogTimeout <= 0 {
		cfg.WatchdogTimeout = 5 * time.Second
	}
	if cfg.StepTimeout <= 0 {
		cfg.StepTimeout = 30 * time.Second
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	j := &JobManager{cfg: cfg, byAddr: map[string]*peer{}, pending: map[string]bool{}, pingAt: map[uint64]time.Time{},
		joined: make(chan struct{}, 1), losses: make(chan *lossNote, 64), byes: make(chan struct{}, 64)}
	installLog(cfg.Stderr, "jobmanager", func(err string) {
		j.problem("a taskmanager process sent a message this program cannot decode: " + err)
	})
	e, ep, err := newEngine(cfg.Endpoint, cfg.TLS)
	if err != nil {
		return nil, err
	}
	j.engine, j.addr = e, ep.Advertise
	j.self = spawnInline(e, HubName, j.receive)
	go func() {
		t := time.NewTicker(cfg.WatchdogInterval)
		for range t.C {
			e.Send(j.self, hubTick{})
		}
	}()
	return j, nil
}

// Address is where this process is reached (what --join names).
func (j *JobManager) Address() string { return j.addr }

// Engine is the jobmanager process's engine.
func (j *JobManager) Engine() *actor.Engine { return j.engine }

func (j *JobManager) printf(format string, args ...any) {
	fmt.Fprintf(j.cfg.Stderr, "jobmanager: "+format+"\n", args...)
}

func (j *JobManager) problem(what string) {
	j.mu.Lock()
	j.problems = append(j.problems, what)
	j.mu.Unlock()
	j.printf("%s", what)
}

// Problems are the protocol errors seen (undecodable messages): the run
// went on, each peer that caused one treated as lost, but the process
// should exit non-zero.
func (j *JobManager) Problems() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.problems)
}

// WaitForTaskManagers waits until sim.taskmanagers processes have joined,
// saying on stderr every few seconds what it waits for; it gives up after
// timeout or when interrupt closes. Once it returns nil the run has started:
// processes that join later are spares.
func (j *JobManager) WaitForTaskManagers(timeout time.Duration, interrupt <-chan struct{}) error {
	deadline := time.Now().Add(timeout)
	j.printf("listening on %s (%s); waiting up to %s for %d taskmanager processes: start each with\n  flinksim taskmanager --join %s",
		j.addr, Version(), timeout, j.cfg.TaskManagers, j.addr)
	tell := time.NewTicker(5 * time.Second)
	defer tell.Stop()
	giveUp := time.NewTimer(timeout)
	defer giveUp.Stop()
	for {
		j.mu.Lock()
		n := len(j.peers)
		if n >= j.cfg.TaskManagers {
			j.started = true
			j.initial = slices.Clone(j.peers[:j.cfg.TaskManagers])
			for _, p := range j.peers[j.cfg.TaskManagers:] {
				p.spare = true
			}
			j.mu.Unlock()
			return nil
		}
		j.mu.Unlock()
		select {
		case <-j.joined:
		case <-tell.C:
			j.printf("waiting for %d more taskmanager process(es) (%d of %d joined, %s left)",
				j.cfg.TaskManagers-n, n, j.cfg.TaskManagers, time.Until(deadline).Round(time.Second))
		case <-giveUp.C:
			err := fmt.Errorf("gave up after %s: %d of %d taskmanager processes joined (start them with: flinksim taskmanager --join %s)",
				timeout, n, j.cfg.TaskManagers, j.addr)
			j.Close("the jobmanager gave up waiting for taskmanager processes", true)
			return err
		case <-interrupt:
			j.Close("the jobmanager was interrupted before the run started", true)
			return fmt.Errorf("interrupted while waiting for taskmanager processes (%d of %d joined)", n, j.cfg.TaskManagers)
		}
	}
}

// Place is the Host.Place hook: a TaskExecutorSpec is started elsewhere,
// as HostTaskManager (its wire form), and built there by the process's own
// Factory; every other spec is built here. TaskManager tm-K of the first
// sim.taskmanagers starts in the K-th process that joined; a replacement in
// a spare process that hosts nothing yet, or here when there is none, as an
// active resource manager would start a new pod. The choice is said on
// stderr and never reaches the log.
func (j *JobManager) Place(name string, spec kernel.Spec) *messages.Spawned {
	if _, ok := spec.(spawn.TaskExecutorSpec); !ok {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var p *peer
	for k, q := range j.initial {
		if jobgraph.TaskManagerName(k) == name && !q.lost && q.tm == "" {
			p = q
		}
	}
	if p == nil {
		for _, q := range j.peers {
			if q.spare && !q.lost && q.tm == "" {
				p = q
				break
			}
		}
	}
	if p == nil {
		j.printf("TaskManager %s starts inside the jobmanager process (no spare taskmanager process; start one with --spare-taskmanagers)", name)
		return nil
	}
	p.tm = name
	p.names[name] = true
	p.engine.SendWithSender(p.gateway, &messages.HostTaskManager{Name: name}, j.self)
	kind := "taskmanager process"
	if p.spare {
		kind = "spare taskmanager process"
	}
	j.printf("TaskManager %s starts on %s %d (%s)", name, kind, p.position, p)
	return &messages.Spawned{Name: name, Address: p.addr, Id: actors.NodePID(p.addr, name).ID}
}

// Run builds the run's session on this process, drives it to its end and
// returns its result: it runs in slices of virtual time and, between two,
// turns every process lost into a logged `kill-taskmanager tm-N` at the
// virtual time it is noticed, so that the run replays in one process.
func (j *JobManager) Run(cfg config.Config, opt cluster.Options) (*cluster.Result, error) {
	sess, host, err := cluster.NewRemoteSession(cfg, opt, cluster.Remote{Engine: j.engine, Sender: (*transport)(j), Place: j.Place})
	if err != nil {
		return nil, err
	}
	j.mu.Lock()
	j.scheduler, j.host = host.Scheduler, host
	j.rebuild = func(steps uint64, names []string) ([]string, error) {
		j.liveMu.Lock()
		live := slices.Clone(j.live)
		j.liveMu.Unlock()
		return cluster.Rebuild(cfg, opt, live, steps, names, host)
	}
	j.mu.Unlock()
	const slice vt.Time = 100_000 // virtual µs between two looks at the losses
	start := time.Now()
	st := sess.Status()
	for !st.Ended {
		st = sess.RunUntil(st.Now + slice)
		for drained := false; !drained && !st.Ended; {
			select {
			case l := <-j.losses:
				j.kill(sess, l)
				st = sess.Status()
			default:
				drained = true
			}
		}
	}
	res := sess.Finish()
	j.report(res, time.Since(start))
	j.Close("the run ended: job "+res.JobStatus, false)
	return res, nil
}

// report says on stderr what the run cost: steps and records per wall
// second, what crossed, and the heartbeat round trips.
func (j *JobManager) report(res *cluster.Result, wall time.Duration) {
	st := j.Stats()
	sec := wall.Seconds()
	rtt := ""
	if n := len(st.RoundTrips); n > 0 {
		slices.Sort(st.RoundTrips)
		rtt = fmt.Sprintf("; heartbeat round trip median %s, p90 %s (%d)", st.RoundTrips[n/2].Round(time.Microsecond),
			st.RoundTrips[n*9/10].Round(time.Microsecond), n)
	}
	j.printf("the run took %.2fs wall: %d steps (%.0f per second), %d records read (%.0f per second); %d step batches to the processes, %.1f MB%s",
		sec, res.Steps, float64(res.Steps)/sec, res.Counters["records_read"], float64(res.Counters["records_read"])/sec,
		st.Batches, float64(st.Bytes)/1e6, rtt)
}

// kill injects the loss of l's process as a live action.
func (j *JobManager) kill(sess *cluster.Session, l *lossNote) {
	if l.kill == "" {
		return
	}
	j.liveMu.Lock()
	a, err := sess.ActNow(action.Action{Verb: action.KillTaskManager, TaskManager: l.kill})
	if err == nil {
		j.live = append(j.live, a)
	}
	j.liveMu.Unlock()
	if err != nil {
		j.printf("could not inject the loss of %s: %v", l.kill, err)
		return
	}
	j.printf("injected %q at virtual time %s: taskmanager process %d (%s) is lost: %s",
		a.String(), vt.FromDuration(a.At).String(), l.p.position, l.p, l.p.cause)
}

// Close tells every process still reachable that the run is over (failed:
// given up) and waits a little for their answers.
func (j *JobManager) Close(reason string, failed bool) {
	j.mu.Lock()
	n := 0
	for _, p := range j.peers {
		if !p.lost {
			p.engine.SendWithSender(p.gateway, &messages.RunOver{Reason: reason, Failed: failed}, j.self)
			n++
		}
	}
	j.mu.Unlock()
	deadline := time.After(2 * time.Second)
	for ; n > 0; n-- {
		select {
		case <-j.byes:
		case <-deadline:
			return
		}
	}
}

// Stats are the transport's counters so far.
func (j *JobManager) Stats() Stats {
	j.mu.Lock()
	defer j.mu.Unlock()
	st := j.stats
	st.RoundTrips = slices.Clone(st.RoundTrips)
	return st
}

// transport is the scheduler's StepSender: one StepBatch per process per
// step, encoded here, between two steps, while no actor runs (so that what
// crosses is what the sender handed over), and sent before the local
// Delivers so that the network round trip overlaps the local work.
type transport JobManager

var _ actors.StepSender = (*transport)(nil)

func (t *transport) SendStep(e *actor.Engine, self *actor.PID, st *kernel.Step, pids map[string]*actor.PID) {
	j := (*JobManager)(t)
	local := e.Address()
	var groups []*messages.DeliverBatch
	var addrs []string
	for i := range st.Deliveries {
		d := &st.Deliveries[i]
		pid := pids[d.To]
		if pid == nil || pid.Address == local {
			continue
		}
		k := slices.Index(addrs, pid.Address)
		if k < 0 {
			addrs = append(addrs, pid.Address)
			groups = append(groups, &messages.DeliverBatch{Step: st.N, Now: st.Now.Micros()})
			k = len(groups) - 1
		}
		groups[k].Deliveries = append(groups[k].Deliveries, &messages.Delivery{To: d.To, Envelopes: d.Envelopes})
	}
	for k, g := range groups {
		b, err := proto.Marshal(g)
		if err == nil && len(b) > maxBatchBytes {
			err = fmt.Errorf("%d bytes, above the transport's limit of %d", len(b), maxBatchBytes)
		}
		if err != nil {
			for _, d := range g.Deliveries {
				e.SendWithSender(self, &kernel.Done{Step: st.N, Actor: d.To,
					Failure: "cannot encode the step for " + addrs[k] + ": " + err.Error()}, self)
			}
			continue
		}
		j.sendBatch(e, self, addrs[k], g, &inflight{batch: &messages.StepBatch{Step: st.N, DeliverBatch: b}, n: len(g.Deliveries)})
	}
	for i := range st.Deliveries {
		d := &st.Deliveries[i]
		pid := pids[d.To]
		if pid == nil {
			e.SendWithSender(self, &kernel.Done{Step: st.N, Actor: d.To, Failure: "the scheduler has no PID for " + d.To}, self)
			continue
		}
		if pid.Address == local {
			e.SendWithSender(pid, &messages.Deliver{Step: st.N, Now: st.Now.Micros(), Envelopes: d.Envelopes}, self)
		}
	}
}

func (t *transport) Send(e *actor.Engine, self, pid *actor.PID, req *messages.InspectRequest) {
	j := (*JobManager)(t)
	if pid.Address == e.Address() {
		e.SendWithSender(pid, req, self)
		return
	}
	j.mu.Lock()
	p := j.byAddr[pid.Address]
	switch {
	case p != nil && !p.lost:
		p.engine.SendWithSender(pid, req, self)
	case p != nil && p.adopted:
		e.SendWithSender(actor.NewPID(e.Address(), pid.ID), req, self)
	default:
		// gone, or not rebuilt yet: an empty view, so that the query ends
		e.SendWithSender(self, &messages.InspectReply{Id: req.Id}, self)
	}
	j.mu.Unlock()
}

// sendBatch hands one process its part of a step; a lost process's part
// waits in the hub for its actors to be rebuilt here.
func (j *JobManager) sendBatch(e *actor.Engine, self *actor.PID, addr string, g *messages.DeliverBatch, f *inflight) {
	j.mu.Lock()
	p := j.byAddr[addr]
	if p == nil {
		j.mu.Unlock()
		for _, d := range g.Deliveries {
			e.SendWithSender(self, &kernel.Done{Step: g.Step, Actor: d.To,
				Failure: "no taskmanager process at " + addr}, self)
		}
		return
	}
	if p.lost {
		j.mu.Unlock()
		e.Send(j.self, &lostBatch{p: p, f: f})
		return
	}
	f.at = time.Now()
	p.inflight = f
	j.stats.Batches++
	j.stats.Bytes += uint64(len(f.batch.DeliverBatch))
	p.engine.SendWithSender(p.gateway, f.batch, j.self)
	j.mu.Unlock()
}

// receive is the hub: the jobmanager process's end of the process
// protocol. It is inline (spawnInline): each message is handled on the
// goroutine that sent or decoded it, under mu where it touches the peers.
func (j *JobManager) receive(msg any, sender *actor.PID) {
	switch m := msg.(type) {
	case *messages.JoinRequest:
		j.join(sender, m)
	case *joinChecked:
		j.admit(m)
	case *messages.Pong:
		j.mu.Lock()
		if p := j.from(sender); p != nil {
			p.lastPong = time.Now()
			if at, ok := j.pingAt[m.Seq]; ok && j.started && len(j.stats.RoundTrips) < maxRoundTrips {
				j.stats.RoundTrips = append(j.stats.RoundTrips, p.lastPong.Sub(at))
			}
		}
		j.mu.Unlock()
	case *messages.StepReply:
		j.reply(sender, m)
	case *messages.InspectReply:
		j.mu.Lock()
		s := j.scheduler
		j.mu.Unlock()
		if s != nil {
			j.engine.SendWithSender(s, m, j.self)
		}
	case *messages.Bye:
		select {
		case j.byes <- struct{}{}:
		default:
		}
	case hubTick:
		j.tick()
	case *unreachable:
		j.mu.Lock()
		j.lose(m.p, "the connection to it closed")
		j.mu.Unlock()
	case *lostBatch:
		j.mu.Lock()
		if m.p.adopted {
			j.deliverHere(m.p, m.f)
		} else {
			m.p.pending = append(m.p.pending, m.f)
			j.startRebuild()
		}
		j.mu.Unlock()
	case *rebuilt:
		j.rebuilt(m)
	}
}

// from is the live peer whose gateway is s (mu held).
func (j *JobManager) from(s *actor.PID) *peer {
	if s == nil {
		return nil
	}
	p := j.byAddr[s.Address]
	if p == nil || p.lost {
		return nil
	}
	return p
}

// join checks a request at once (version, name, number of processes), then
// dials the process back in a goroutine, so that an address the jobmanager
// cannot reach is refused here before any Hollywood send can stall on it.
func (j *JobManager) join(from *actor.PID, m *messages.JoinRequest) {
	if from == nil {
		return
	}
	refuse := func(reason string) {
		j.printf("refused the taskmanager process %s: %s", named(m.ResourceId, from.Address), reason)
		go func() {
			if e, err := senderEngine(j.bindHost(), j.cfg.TLS); err == nil {
				e.SendWithSender(from, &messages.JoinRefused{Reason: reason}, j.self)
			}
		}()
	}
	if m.Version != Version() {
		refuse(fmt.Sprintf("wrong program version: it runs %q, the jobmanager %q", m.Version, Version()))
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, p := range j.peers {
		if p.lost {
			continue
		}
		if p.id == m.ResourceId || p.addr == from.Address {
			refuse(fmt.Sprintf("duplicate name: a taskmanager process named %s already joined (taskmanager.resource-id must be unique)", p))
			return
		}
	}
	if j.pending[m.ResourceId] || j.pending[from.Address] {
		refuse(fmt.Sprintf("duplicate name: a taskmanager process named %s is joining already", m.ResourceId))
		return
	}
	if n, max := j.liveCount()+j.pendingN, j.cfg.TaskManagers+j.cfg.Spares; n >= max {
		refuse(fmt.Sprintf("too many processes: the run has %d TaskManagers and takes %d spare process(es) (--spare-taskmanagers), and %d joined",
			j.cfg.TaskManagers, j.cfg.Spares, n))
		return
	}
	j.pending[m.ResourceId], j.pending[from.Address] = true, true
	j.pendingN++
	self, tlsConf, host := j.self, j.cfg.TLS, j.bindHost()
	go func() {
		c := &joinChecked{req: m, from: from}
		if _, err := probe(from.Address, tlsConf); err != nil {
			c.err = err
		} else if c.engine, err = senderEngine(host, tlsConf); err != nil {
			c.err = err
		}
		j.engine.Send(self, c)
	}()
}

func (j *JobManager) bindHost() string {
	h, _, _ := net.SplitHostPort(j.cfg.Endpoint.bind())
	return h
}

func (j *JobManager) liveCount() int {
	n := 0
	for _, p := range j.peers {
		if !p.lost {
			n++
		}
	}
	return n
}

// admit accepts a checked join.
func (j *JobManager) admit(c *joinChecked) {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.pending, c.req.ResourceId)
	delete(j.pending, c.from.Address)
	j.pendingN--
	if c.err != nil {
		j.printf("cannot reach the taskmanager process %s at the address it gave, %s: %v (it must be reachable from the jobmanager: set its --taskmanager.host)",
			c.req.ResourceId, c.from.Address, c.err)
		return
	}
	p := &peer{id: c.req.ResourceId, addr: c.from.Address, position: len(j.peers) + 1, engine: c.engine,
		gateway: c.from, lastPong: time.Now(), names: map[string]bool{}, spare: j.started}
	j.peers = append(j.peers, p)
	j.byAddr[p.addr] = p
	// a closed connection to it is a loss at once; silence is one after the
	// watchdog timeout
	self := j.self
	w := c.engine.SpawnFunc(func(wc *actor.Context) {
		if ev, ok := wc.Message().(actor.RemoteUnreachableEvent); ok && ev.ListenAddr == p.addr {
			j.engine.Send(self, &unreachable{p: p})
		}
	}, "watch", actor.WithID(p.id))
	c.engine.Subscribe(w)
	c.engine.SendWithSender(p.gateway, &messages.JoinAccepted{Position: int32(p.position), Expected: int32(j.cfg.TaskManagers),
		Spare: p.spare, Header: j.cfg.Header, WatchdogTimeoutMs: j.cfg.WatchdogTimeout.Milliseconds()}, self)
	if p.spare {
		j.printf("spare taskmanager process %d joined: %s", p.position, p)
	} else {
		j.printf("taskmanager process %d of %d joined: %s", p.position, j.cfg.TaskManagers, p)
	}
	select {
	case j.joined <- struct{}{}:
	default:
	}
}

// tick is the watchdog: a Ping to every process, and a loss for one silent
// for longer than the timeout or sitting on a step for longer than the step
// timeout.
func (j *JobManager) tick() {
	j.mu.Lock()
	defer j.mu.Unlock()
	now := time.Now()
	j.pingSeq++
	j.pingAt[j.pingSeq] = now
	delete(j.pingAt, j.pingSeq-64)
	for _, p := range slices.Clone(j.peers) {
		if p.lost {
			continue
		}
		switch {
		case now.Sub(p.lastPong) > j.cfg.WatchdogTimeout:
			j.lose(p, fmt.Sprintf("no heartbeat for %s", now.Sub(p.lastPong).Round(time.Millisecond)))
		case p.inflight != nil && now.Sub(p.inflight.at) > j.cfg.StepTimeout:
			j.lose(p, fmt.Sprintf("no answer to step %d for %s", p.inflight.batch.Step, now.Sub(p.inflight.at).Round(time.Second)))
		default:
			p.engine.SendWithSender(p.gateway, &messages.Ping{Seq: j.pingSeq}, j.self)
		}
	}
}

// lose marks p lost (mu held). Before the run it just leaves; during the
// run its TaskManager is killed (a logged action, by the driver) and its
// actors are rebuilt here when a step needs them.
func (j *JobManager) lose(p *peer, cause string) {
	if p.lost {
		return
	}
	p.lost, p.cause = true, cause
	if !j.started {
		j.peers = slices.DeleteFunc(j.peers, func(q *peer) bool { return q == p })
		delete(j.byAddr, p.addr)
		for i, q := range j.peers {
			q.position = i + 1
		}
		j.printf("taskmanager process %s left before the run started: %s", p, cause)
		select {
		case j.joined <- struct{}{}:
		default:
		}
		return
	}
	j.printf("lost taskmanager process %d (%s): %s", p.position, p, cause)
	if p.inflight != nil {
		p.pending = append(p.pending, p.inflight)
		p.inflight = nil
	}
	l := &lossNote{p: p}
	if p.tm != "" && p.names[p.tm] {
		l.kill = p.tm
	}
	select {
	case j.losses <- l:
	default:
		go func() { j.losses <- l }()
	}
	j.startRebuild()
}

// startRebuild rebuilds the actors of lost processes once a step needs one
// of them (mu held). The re-run stops after the step before that step S:
// where the actors of a process stood if it answered no step from S on and
// received nothing after its last answer. Every lost process that meets
// this is rebuilt in the same re-run; one that answered step S itself (lost
// in the same step, after its answer) waits for a later re-run.
func (j *JobManager) startRebuild() {
	var step uint64
	for _, p := range j.peers {
		if p.lost && !p.adopted && p.rebuilds {
			return // one at a time; the next starts when it ends
		}
		if p.lost && !p.adopted && len(p.pending) > 0 && (step == 0 || p.pending[0].batch.Step < step) {
			step = p.pending[0].batch.Step
		}
	}
	if step == 0 || j.rebuild == nil {
		return
	}
	var todo []*peer
	var names []string
	for _, p := range j.peers {
		if p.lost && !p.adopted && p.answered < step {
			todo = append(todo, p)
			p.rebuilds = true
			for n := range p.names {
				names = append(names, n)
			}
		}
	}
	j.printf("rebuilding the actors of %d lost process(es) in this process: re-running the first %d steps", len(todo), step-1)
	rebuild, self := j.rebuild, j.self
	go func() {
		adopted, err := rebuild(step-1, names)
		j.engine.Send(self, &rebuilt{peers: todo, adopted: adopted, err: err})
	}()
}

func (j *JobManager) rebuilt(m *rebuilt) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, p := range m.peers {
		p.rebuilds = false
		if m.err != nil {
			for _, f := range p.pending {
				j.failBatch(f, "cannot rebuild the actors of the lost process "+p.id+": "+m.err.Error())
			}
			p.pending = nil
			continue
		}
		p.adopted = true
		for _, f := range p.pending {
			j.deliverHere(p, f)
		}
		p.pending = nil
	}
	if m.err == nil {
		j.printf("rebuilt %d actor(s) here: %s", len(m.adopted), strings.Join(m.adopted, " "))
	}
	j.startRebuild()
}

// deliverHere delivers a lost process's part of a step to its actors,
// rebuilt in this process (mu held).
func (j *JobManager) deliverHere(p *peer, f *inflight) {
	var g messages.DeliverBatch
	if err := proto.Unmarshal(f.batch.DeliverBatch, &g); err != nil {
		j.failBatch(f, err.Error())
		return
	}
	for _, d := range g.Deliveries {
		j.engine.SendWithSender(actors.NodePID(j.addr, d.To), &messages.Deliver{Step: g.Step, Now: g.Now, Envelopes: d.Envelopes}, j.scheduler)
	}
}

// failBatch ends the run: the step's Dones carry the failure (mu held).
func (j *JobManager) failBatch(f *inflight, why string) {
	var g messages.DeliverBatch
	_ = proto.Unmarshal(f.batch.DeliverBatch, &g)
	for _, d := range g.Deliveries {
		j.engine.SendWithSender(j.scheduler, &kernel.Done{Step: f.batch.Step, Actor: d.To, Failure: why}, j.self)
	}
}

// reply hands the scheduler a process's Dones of the step in flight.
func (j *JobManager) reply(sender *actor.PID, m *messages.StepReply) {
	j.mu.Lock()
	p := j.from(sender)
	if p == nil || p.inflight == nil || p.inflight.batch.Step != m.Step {
		j.mu.Unlock()
		return
	}
	var b messages.DoneBatch
	err := proto.Unmarshal(m.DoneBatch, &b)
	if err == nil && len(b.Dones) != p.inflight.n {
		err = fmt.Errorf("%d Dones for %d deliveries", len(b.Dones), p.inflight.n)
	}
	if err != nil {
		what := fmt.Sprintf("cannot decode the answer to step %d from taskmanager process %d (%s): %v", m.Step, p.position, p, err)
		j.problems = append(j.problems, what)
		j.printf("%s", what)
		j.lose(p, "it sent a message this program cannot decode")
		j.mu.Unlock()
		return
	}
	p.inflight, p.answered = nil, m.Step
	for _, d := range b.Dones {
		for _, sp := range d.Spawned {
			p.names[sp.Name] = true
		}
		for _, n := range d.Stopped {
			delete(p.names, n)
		}
	}
	s := j.scheduler
	j.mu.Unlock()
	for _, d := range b.Dones {
		j.engine.SendWithSender(s, kernel.DoneFromProto(d), j.self)
	}
}
