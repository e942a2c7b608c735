package remote

import (
	"crypto/hmac"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
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
// inline process that hands the taskmanager processes' answers to the
// scheduler and runs the watchdog and the losses (its PID is kind/ID).
const HubName = "hub"

// JobManagerConfig configures a jobmanager process.
type JobManagerConfig struct {
	Endpoint Endpoint
	TLS      *tls.Config // nil: plain TCP (LoadTLS with RoleJobManager)
	// JoinToken, when set, is the secret every joining process proves it
	// holds (HMAC-SHA256 over a fresh nonce, --join-token-file). Without it
	// and without TLS only loopback peers may join.
	JoinToken []byte
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
// Membership: a taskmanager process is a member once its join on its own
// connection was accepted; what it sends afterwards is taken as its, by the
// connection it came on, and only for the actors it hosts and the step it
// was asked. Everything else (a connection that did not join, a message
// out of the protocol, an answer to a step not asked) is dropped and
// counted (Stats.Dropped), said on stderr and never reaches the log.
//
// Concurrency: each connection has its reader goroutine; the scheduler's
// goroutine sends steps (transport) and the ResourceManager's places
// TaskManagers (Place); mu guards what they share.
type JobManager struct {
	cfg      JobManagerConfig
	engine   *actor.Engine
	listener net.Listener
	joining  chan struct{} // a slot per connection not joined yet
	done     chan struct{} // closed by Close: the watchdog's ticker stops
	doneOnce sync.Once
	self     *actor.PID // the hub
	addr     string     // this process's advertised address

	mu        sync.Mutex
	peers     []*peer          // accepted and not left before the run, in join order
	byAddr    map[string]*peer // by the address its connection comes from
	started   bool             // the run has started: later joins are spares
	closing   bool             // RunOver sent
	initial   []*peer          // tm-1.. in order, set when the run starts
	scheduler *actor.PID
	host      *actors.Host
	rebuild   func(steps uint64, names []string) ([]string, error)
	problems  []string          // protocol errors of members: the run goes on, the process exits non-zero
	dropShown map[string]int    // drops said on stderr, by source
	dropWhy   map[string]uint64 // drops by kind of reason
	// joiningFrom counts the connections not joined yet by host (at most
	// maxJoiningPerHost each), unjoined holds them (Close closes them)
	joiningFrom map[string]int
	unjoined    map[net.Conn]bool

	joined chan struct{} // a process joined or left before the run
	losses []*lossNote   // processes lost during the run, for the driver (takeLosses)

	liveMu sync.Mutex
	live   []action.Action // live actions given so far (the kills), in order

	byes    chan struct{}
	pingSeq uint64
	pingAt  map[uint64]time.Time // when each recent Ping left
	stats   Stats

	// the current YAWNS window of the estimate (Stats.Windows), on the
	// scheduler's goroutine
	winOpen   bool
	winStart  vt.Time
	winRemote bool
}

// Stats count the transport's traffic (for the README's figures).
type Stats struct {
	Batches, Bytes uint64 // StepBatches sent and their payload bytes
	// Waits are the steps that sent at least one StepBatch: each waits for
	// the answers, one network round trip (the processes' in parallel).
	Waits uint64
	// Windows estimates the round trips of conservative synchronization
	// with lookahead (YAWNS): every message between two hosts takes at
	// least Lookahead of virtual time (min of sim.network.latency and
	// sim.rpc.latency), so each host could run its own steps from the
	// earliest pending time T up to T+Lookahead without asking. Windows
	// counts the windows, formed greedily over this run's steps, that hold
	// at least one step delivering to a taskmanager process: the round
	// trips such a protocol would need instead of Waits.
	Windows   uint64
	Lookahead vt.Time
	// Crossed counts the envelopes delivered from an actor of one process
	// to an actor of another (the kernel's Start and EndOfRun and user
	// actions aside: the one kernel decides those), MinCross the least virtual time one took (-1: none), and
	// BelowLookahead those that took less than Lookahead: what would break
	// the estimate's premise (0 in every run measured).
	Crossed, BelowLookahead uint64
	MinCross                vt.Time
	// RoundTrips are heartbeat round trips (Ping out, Pong back: one
	// message each way between the processes), during the run.
	RoundTrips []time.Duration
	// Dropped counts the messages and connections refused as not a
	// member's (or not in the protocol).
	Dropped uint64
}

// maxRoundTrips bounds the samples kept.
const maxRoundTrips = 100_000

// maxDropsShown bounds the drops said on stderr per source (the count
// goes on).
const maxDropsShown = 10

// tlsHandshakeTimeout bounds a connection's TLS handshake, and
// joinRequestTimeout the wait for its JoinRequest after the Challenge left
// (an honest taskmanager answers at once): a connection that holds a
// joining slot without joining loses it within their sum.
const (
	tlsHandshakeTimeout = 5 * time.Second
	joinRequestTimeout  = 3 * time.Second
)

// maxJoining bounds the connections that have not joined yet, and
// maxJoiningPerHost those from one host (IP address): a flood of them is
// dropped at once instead of holding a goroutine each, and one host cannot
// hold every slot.
const (
	maxJoining        = 64
	maxJoiningPerHost = 8
)

type peer struct {
	id, addr string
	c        *conn
	position int  // 1-based join order (renumbered when one leaves before the run)
	spare    bool // joined beyond sim.taskmanagers
	lastPong time.Time
	lost     bool
	cause    string
	over     bool              // told RunOver: its Bye is expected
	tm       string            // the TaskManager it hosts ("": none yet)
	names    map[string]bool   // live actors it hosts
	inspects map[uint64]string // inspections asked of its actors: the actor by request id
	inflight *inflight         // the step it has not answered
	answered uint64            // the last step it answered
	pending  []*inflight       // steps waiting for the rebuild of its actors (lost)
	adopted  bool              // its actors live in this process now
	rebuilds bool              // a rebuild of its actors is under way
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
	to    []string // the receivers, in the batch's order
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
	lostBatch   struct {
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
	j := &JobManager{cfg: cfg, byAddr: map[string]*peer{}, pingAt: map[uint64]time.Time{},
		dropShown: map[string]int{}, dropWhy: map[string]uint64{}, joiningFrom: map[string]int{}, unjoined: map[net.Conn]bool{},
		joined: make(chan struct{}, 1), byes: make(chan struct{}, 64), done: make(chan struct{})}
	installLog(cfg.Stderr, "jobmanager")
	host, port, err := SplitAddress("listen address", cfg.Endpoint.Advertise)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", cfg.Endpoint.bind())
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %v", cfg.Endpoint.bind(), errors.Unwrap(err))
	}
	if port == 0 {
		port = l.Addr().(*net.TCPAddr).Port
	}
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		_ = l.Close() // the engine's error is the news
		return nil, err
	}
	j.engine, j.listener, j.addr = e, l, net.JoinHostPort(host, strconv.Itoa(port))
	j.self = spawnInline(e, HubName, j.receive)
	j.joining = make(chan struct{}, maxJoining)
	go j.serve()
	go func() {
		t := time.NewTicker(cfg.WatchdogInterval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				e.Send(j.self, hubTick{})
			case <-j.done:
				return
			}
		}
	}()
	return j, nil
}

func (j *JobManager) printf(format string, args ...any) {
	fmt.Fprintf(j.cfg.Stderr, "jobmanager: "+format+"\n", args...)
}

// Problems are the protocol errors of members seen (a member's message
// that does not decode, an answer that does not match its step): the run
// went on, each member that caused one treated as lost, but the process
// should exit non-zero. What non-members send is never one.
func (j *JobManager) Problems() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.problems)
}

// drop counts a message or connection refused from source (mu not held)
// and says why on stderr, up to maxDropsShown times per source.
func (j *JobManager) drop(source, kind, why string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.dropLocked(source, kind, why)
}

func (j *JobManager) dropLocked(source, kind, why string) {
	j.stats.Dropped++
	j.dropWhy[kind]++
	host := hostOf(source) // a member's name, or the host of a connection's address
	j.dropShown[host]++
	switch n := j.dropShown[host]; {
	case n <= maxDropsShown:
		j.printf("dropped from %s: %s", source, why)
	case n == maxDropsShown+1:
		j.printf("dropped from %s: more; further drops from %s are counted, not shown", source, host)
	}
}

// serve accepts connections until the listener closes.
func (j *JobManager) serve() {
	for {
		c, err := j.listener.Accept()
		if err != nil {
			return
		}
		from := c.RemoteAddr().String()
		host := hostOf(from)
		j.mu.Lock()
		perHost := j.joiningFrom[host] < maxJoiningPerHost
		if perHost {
			select {
			case j.joining <- struct{}{}:
				j.joiningFrom[host]++
				j.unjoined[c] = true
			default:
				j.mu.Unlock()
				j.drop(from, "too many joining", fmt.Sprintf("a connection beyond the %d that may be joining at once", maxJoining))
				_ = c.Close() // dropped, and said so
				continue
			}
		}
		j.mu.Unlock()
		if !perHost {
			j.drop(from, "too many joining", fmt.Sprintf("a connection beyond the %d that one host may have joining at once", maxJoiningPerHost))
			_ = c.Close() // dropped, and said so
			continue
		}
		go j.handshake(c)
	}
}

// hostOf is the host of a host:port (the whole string when it is none).
func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// leftJoining gives back raw's joining slot (it joined, or it is gone).
func (j *JobManager) leftJoining(raw net.Conn) {
	j.mu.Lock()
	if j.unjoined[raw] {
		delete(j.unjoined, raw)
		host := hostOf(raw.RemoteAddr().String())
		if j.joiningFrom[host]--; j.joiningFrom[host] <= 0 {
			delete(j.joiningFrom, host)
		}
		<-j.joining
	}
	j.mu.Unlock()
}

// handshake admits a connection or drops it, then reads its member's
// messages until it closes. A connection is let in when TLS verified a
// taskmanager certificate, or it proves the join token, or (with neither
// configured) it comes from loopback.
func (j *JobManager) handshake(raw net.Conn) {
	defer j.leftJoining(raw) // a no-op once it joined
	from := raw.RemoteAddr().String()
	if j.cfg.TLS == nil && j.cfg.JoinToken == nil && !isLoopback(raw.RemoteAddr()) {
		j.drop(from, "not loopback", "a connection from outside loopback, and this jobmanager has neither TLS (--tls-cert, --tls-key, --tls-ca) nor a join token (--join-token-file)")
		if err := raw.SetDeadline(time.Now().Add(time.Second)); err != nil {
			_ = raw.Close() // no refusal can be sent without a bound on it
			return
		}
		c := newConn(raw)
		c.send(&messages.Frame{Body: &messages.Frame_JoinRefused{JoinRefused: &messages.JoinRefused{
			Reason: "the jobmanager has neither TLS nor a join token: only processes on its loopback may join"}}})
		c.flushClose(time.Second)
		return
	}
	nc := raw
	if j.cfg.TLS != nil {
		if err := raw.SetDeadline(time.Now().Add(tlsHandshakeTimeout)); err != nil {
			j.drop(from, "no deadline", "the handshake cannot be bounded in time: "+err.Error())
			_ = raw.Close() // dropped, and said so
			return
		}
		tc := tls.Server(raw, j.cfg.TLS)
		if err := tc.Handshake(); err != nil {
			// the only report of it: capped per host by drop
			j.drop(from, "TLS refused", "TLS handshake failed: "+err.Error())
			_ = raw.Close() // dropped, and said so
			return
		}
		nc = tc
	}
	if err := raw.SetDeadline(time.Now().Add(joinRequestTimeout)); err != nil {
		j.drop(from, "no deadline", "the handshake cannot be bounded in time: "+err.Error())
		_ = raw.Close() // dropped, and said so
		return
	}
	c := newConn(nc)
	jn := nonce()
	// nothing but the nonce before the peer proved anything (the build
	// fingerprint is named only in a refusal, after the proof)
	c.send(&messages.Frame{Body: &messages.Frame_Challenge{Challenge: &messages.Challenge{Nonce: jn}}})
	f, err := c.read()
	if err != nil {
		if errors.Is(err, errUndecodable) {
			j.drop(from, "undecodable", "before joining, a message this program cannot decode ("+err.Error()+")")
		} else {
			j.drop(from, "no join", "the connection ended before a join ("+err.Error()+")")
		}
		c.close()
		return
	}
	req := f.GetJoinRequest()
	if req == nil {
		j.drop(from, "not joined", fmt.Sprintf("a %s from a connection that has not joined", frameName(f)))
		c.close()
		return
	}
	if j.cfg.JoinToken != nil && !hmac.Equal(req.Mac, joinMAC(j.cfg.JoinToken, RoleTaskManager, jn, req.Nonce, req.ResourceId, req.Fingerprint, req.Version)) {
		j.drop(from, "bad token", "a join that does not prove the join token (a wrong --join-token-file, or a recorded join played again)")
		c.send(&messages.Frame{Body: &messages.Frame_JoinRefused{JoinRefused: &messages.JoinRefused{
			Reason: "the join token does not match the jobmanager's (--join-token-file)"}}})
		c.flushClose(time.Second)
		return
	}
	p := j.join(c, req, jn, from)
	if p == nil {
		return
	}
	if err := raw.SetDeadline(time.Time{}); err != nil {
		// the member would be lost when the handshake's bound passes
		j.printf("%s joined, but its connection keeps the handshake's deadline: %v", from, err)
	}
	c.member()
	j.leftJoining(raw)
	for {
		f, err := c.read()
		if err != nil {
			j.mu.Lock()
			switch {
			case j.closing:
				// the run is over: its connection closes
			case errors.Is(err, errUndecodable) && !p.lost:
				what := fmt.Sprintf("taskmanager process %d (%s) sent a message this program cannot decode: %v", p.position, p, err)
				j.problems = append(j.problems, what)
				j.printf("%s", what)
				j.lose(p, "it sent a message this program cannot decode")
			default:
				j.lose(p, "the connection to it closed")
			}
			j.mu.Unlock()
			c.close()
			return
		}
		j.fromMember(p, f)
	}
}

// frameName names a frame's message for stderr.
func frameName(f *messages.Frame) string {
	if f == nil || f.Body == nil {
		return "empty frame"
	}
	n := fmt.Sprintf("%T", f.Body)
	return strings.TrimPrefix(n, "*messages.Frame_")
}

// WaitForTaskManagers waits until sim.taskmanagers processes have joined,
// saying on stderr every few seconds what it waits for; it gives up after
// timeout or when interrupt closes. Once it returns nil the run has started:
// processes that join later are spares.
func (j *JobManager) WaitForTaskManagers(timeout time.Duration, interrupt <-chan struct{}) error {
	deadline := time.Now().Add(timeout)
	j.printf("listening on %s (%s; build %s); waiting up to %s for %d taskmanager processes: start each with\n  flinksim taskmanager --join %s",
		j.addr, Version(), Fingerprint(), timeout, j.cfg.TaskManagers, j.addr)
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
	p.c.send(&messages.Frame{Body: &messages.Frame_HostTaskManager{HostTaskManager: &messages.HostTaskManager{Name: name}}})
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
	j.stats.Lookahead = vt.FromDuration(min(cfg.NetworkLatency, cfg.RPCLatency()))
	j.stats.MinCross = -1
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
		for _, l := range j.takeLosses() {
			if st.Ended {
				break
			}
			j.kill(sess, l)
			st = sess.Status()
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
	vsec := float64(res.EndVT) / 1e6
	perV := 0.0
	if vsec > 0 {
		perV = float64(st.Waits) / vsec
	}
	winV := 0.0
	if vsec > 0 {
		winV = float64(st.Windows) / vsec
	}
	j.printf("the run took %.2fs wall: %d steps (%.0f per second), %d records read (%.0f per second); %d step batches to the processes, %.1f MB; %d round trips (steps waiting for a taskmanager process), %.0f per virtual second, %.2fs wall per virtual second; with a lookahead of %dµs (YAWNS) %d windows would need one, %.0f per virtual second (%d envelopes crossed processes, the quickest in %dµs, %d below the lookahead)%s; %s",
		sec, res.Steps, float64(res.Steps)/sec, res.Counters["records_read"], float64(res.Counters["records_read"])/sec,
		st.Batches, float64(st.Bytes)/1e6, st.Waits, perV, sec/max(vsec, 1e-6), st.Lookahead.Micros(), st.Windows, winV, st.Crossed, st.MinCross.Micros(), st.BelowLookahead, rtt, j.dropSummary())
}

// dropSummary says how many messages were dropped, by kind.
func (j *JobManager) dropSummary() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.stats.Dropped == 0 {
		return "0 messages dropped from non-members"
	}
	var kinds []string
	for k, n := range j.dropWhy {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(kinds)
	return fmt.Sprintf("%d messages dropped from non-members or out of the protocol (%s)", j.stats.Dropped, strings.Join(kinds, ", "))
}

// takeLosses returns the losses queued since the last call, in order.
func (j *JobManager) takeLosses() []*lossNote {
	j.mu.Lock()
	defer j.mu.Unlock()
	l := j.losses
	j.losses = nil
	return l
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
	j.doneOnce.Do(func() { close(j.done) })
	j.mu.Lock()
	j.closing = true
	for raw := range j.unjoined {
		_ = raw.Close() // shutting down: its handshake ends, its slot is given back
	}
	n := 0
	var conns []*conn
	for _, p := range j.peers {
		if !p.lost {
			p.over = true
			p.c.send(&messages.Frame{Body: &messages.Frame_RunOver{RunOver: &messages.RunOver{Reason: reason, Failed: failed}}})
			conns = append(conns, p.c)
			n++
		}
	}
	j.mu.Unlock()
	_ = j.listener.Close() // shutting down: no more joins either way
	deadline := time.After(2 * time.Second)
wait:
	for ; n > 0; n-- {
		select {
		case <-j.byes:
		case <-deadline:
			break wait
		}
	}
	for _, c := range conns {
		c.close()
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
	var to []string
	j.mu.Lock()
	j.crossings(st, pids, local)
	if L := j.stats.Lookahead; !j.winOpen || st.Now >= j.winStart+L && (L > 0 || st.Now > j.winStart) {
		j.winOpen, j.winStart, j.winRemote = true, st.Now, false
	}
	if len(groups) > 0 {
		j.stats.Waits++
		if !j.winRemote {
			j.winRemote = true
			j.stats.Windows++
		}
	}
	j.mu.Unlock()
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
		to = make([]string, len(g.Deliveries))
		for i, d := range g.Deliveries {
			to[i] = d.To
		}
		j.sendBatch(e, self, addrs[k], g, &inflight{batch: &messages.StepBatch{Step: st.N, DeliverBatch: b}, to: to})
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
		name := strings.TrimPrefix(pid.ID, "node/")
		p.inspects[req.Id] = name
		p.c.send(&messages.Frame{Body: &messages.Frame_Inspect{Inspect: &messages.InspectForward{To: name, Request: req}}})
	case p != nil && p.adopted:
		e.SendWithSender(actor.NewPID(e.Address(), pid.ID), req, self)
	default:
		// gone, or not rebuilt yet: an empty view, so that the query ends
		e.SendWithSender(self, &messages.InspectReply{Id: req.Id}, self)
	}
	j.mu.Unlock()
}

// crossings counts the step's envelopes that cross processes (mu held).
func (j *JobManager) crossings(st *kernel.Step, pids map[string]*actor.PID, local string) {
	where := func(name string) string {
		if p := pids[name]; p != nil {
			return p.Address
		}
		return local // the scheduler, the user
	}
	for i := range st.Deliveries {
		d := &st.Deliveries[i]
		to := where(d.To)
		for _, e := range d.Envelopes {
			// the kernel's own (Start, EndOfRun) and user actions are decided
			// by the one kernel, not sent by an actor
			if _, ok := e.Body.(*messages.Envelope_Action); ok || e.From == kernel.SchedulerName || e.From == kernel.UserName ||
				e.From == d.To || where(e.From) == to {
				continue
			}
			took := vt.Time(e.DeliverAt - e.SentAt)
			j.stats.Crossed++
			if j.stats.MinCross < 0 || took < j.stats.MinCross {
				j.stats.MinCross = took
			}
			if took < j.stats.Lookahead {
				j.stats.BelowLookahead++
			}
		}
	}
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
	p.c.send(&messages.Frame{Body: &messages.Frame_StepBatch{StepBatch: f.batch}})
	j.mu.Unlock()
}

// receive is the hub: the jobmanager process's own messages (the
// watchdog's tick, a loss, a lost process's step, a rebuild). It is inline
// (spawnInline): each is handled on the goroutine that sent it.
func (j *JobManager) receive(msg any, _ *actor.PID) {
	switch m := msg.(type) {
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

// fromMember handles a message of member p, read from its connection.
func (j *JobManager) fromMember(p *peer, f *messages.Frame) {
	switch b := f.Body.(type) {
	case *messages.Frame_Pong:
		j.mu.Lock()
		if !p.lost {
			p.lastPong = time.Now()
			if at, ok := j.pingAt[b.Pong.Seq]; ok && j.started && len(j.stats.RoundTrips) < maxRoundTrips {
				j.stats.RoundTrips = append(j.stats.RoundTrips, p.lastPong.Sub(at))
			}
		}
		j.mu.Unlock()
	case *messages.Frame_StepReply:
		j.reply(p, b.StepReply)
	case *messages.Frame_InspectReply:
		m := b.InspectReply
		j.mu.Lock()
		actor, asked := p.inspects[m.Id]
		if !asked || actor != m.Actor || p.lost {
			j.dropLocked(p.String(), "unasked", fmt.Sprintf("a view of %q that was not asked of it", m.Actor))
			j.mu.Unlock()
			return
		}
		delete(p.inspects, m.Id)
		s := j.scheduler
		j.mu.Unlock()
		if s != nil {
			j.engine.SendWithSender(s, m, j.self)
		}
	case *messages.Frame_Bye:
		j.mu.Lock()
		over := p.over
		p.over = false
		if !over {
			j.dropLocked(p.String(), "unasked", "a Bye before the run was over")
		}
		j.mu.Unlock()
		if over {
			select {
			case j.byes <- struct{}{}:
			default:
			}
		}
	default:
		j.drop(p.String(), "out of protocol", fmt.Sprintf("a %s, which no taskmanager process sends", frameName(f)))
	}
}

// join admits a process that proved it may join (TLS, token or loopback)
// when its version and build are this one's and there is room for it, or
// refuses it with the reason, on its connection. It returns the member.
func (j *JobManager) join(c *conn, m *messages.JoinRequest, jmNonce []byte, from string) *peer {
	refuse := func(reason string) *peer {
		j.printf("refused the taskmanager process %s: %s", named(m.ResourceId, from), reason)
		c.send(&messages.Frame{Body: &messages.Frame_JoinRefused{JoinRefused: &messages.JoinRefused{Reason: reason}}})
		go c.flushClose(2 * time.Second)
		return nil
	}
	if m.Version != Version() {
		return refuse(fmt.Sprintf("wrong program version: it runs %q, the jobmanager %q", m.Version, Version()))
	}
	if m.Fingerprint != Fingerprint() {
		return refuse(fmt.Sprintf("another build: its build fingerprint is %q, the jobmanager's %q (every process of a run must run the same build)", m.Fingerprint, Fingerprint()))
	}
	if m.ResourceId == "" || len(m.ResourceId) > 256 {
		return refuse("taskmanager.resource-id must be 1 to 256 bytes")
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closing {
		return refuse("the run is over")
	}
	for _, p := range j.peers {
		if p.addr == from && p.lost {
			// its actors' PIDs name the address: a newcomer there would get
			// the steps meant for the lost process's actors (rebuilt here)
			return refuse(fmt.Sprintf("the address %s is that of taskmanager process %d, lost in this run: join from another port", from, p.position))
		}
		if p.lost {
			continue
		}
		if p.id == m.ResourceId || p.addr == from {
			return refuse(fmt.Sprintf("duplicate name: a taskmanager process named %s already joined (taskmanager.resource-id must be unique)", p))
		}
	}
	if n, max := j.liveCount(), j.cfg.TaskManagers+j.cfg.Spares; n >= max {
		return refuse(fmt.Sprintf("too many processes: the run has %d TaskManagers and takes %d spare process(es) (--spare-taskmanagers), and %d joined",
			j.cfg.TaskManagers, j.cfg.Spares, n))
	}
	p := &peer{id: m.ResourceId, addr: from, c: c, position: len(j.peers) + 1, lastPong: time.Now(),
		names: map[string]bool{}, inspects: map[uint64]string{}, spare: j.started}
	j.peers = append(j.peers, p)
	j.byAddr[p.addr] = p
	a := &messages.JoinAccepted{Position: int32(p.position), Expected: int32(j.cfg.TaskManagers),
		Spare: p.spare, Header: j.cfg.Header, WatchdogTimeoutMs: j.cfg.WatchdogTimeout.Milliseconds()}
	if j.cfg.JoinToken != nil {
		a.Mac = acceptMAC(j.cfg.JoinToken, jmNonce, m.Nonce, m.ResourceId, a)
	}
	c.send(&messages.Frame{Body: &messages.Frame_JoinAccepted{JoinAccepted: a}})
	if p.spare {
		j.printf("spare taskmanager process %d joined: %s", p.position, p)
	} else {
		j.printf("taskmanager process %d of %d joined: %s", p.position, j.cfg.TaskManagers, p)
	}
	select {
	case j.joined <- struct{}{}:
	default:
	}
	return p
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
			p.c.send(&messages.Frame{Body: &messages.Frame_Ping{Ping: &messages.Ping{Seq: j.pingSeq}}})
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
	p.c.close()
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
	j.losses = append(j.losses, l) // the driver takes it between two slices
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
		j.engine.SendWithSender(actors.NodePID(j.engine.Address(), d.To), &messages.Deliver{Step: g.Step, Now: g.Now, Envelopes: d.Envelopes}, j.scheduler)
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

// reply hands the scheduler member p's Dones of the step in flight. An
// answer to a step it was not asked (late, or played again) is dropped;
// one that does not decode or does not answer for exactly the actors the
// step went to is a broken member: lost, its actors rebuilt here.
func (j *JobManager) reply(p *peer, m *messages.StepReply) {
	j.mu.Lock()
	if p.lost || p.inflight == nil || p.inflight.batch.Step != m.Step {
		j.dropLocked(p.String(), "unasked", fmt.Sprintf("an answer to step %d, which is not the step it was asked", m.Step))
		j.mu.Unlock()
		return
	}
	var b messages.DoneBatch
	err := proto.Unmarshal(m.DoneBatch, &b)
	if err == nil {
		err = matches(b.Dones, m.Step, p.inflight.to)
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
			// what it spawns lives in it, whatever the message says
			p.names[sp.Name] = true
			sp.Address, sp.Id = p.addr, actors.NodePID(p.addr, sp.Name).ID
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

// matches checks that dones answer step for exactly the receivers to, each
// once.
func matches(dones []*messages.Done, step uint64, to []string) error {
	if len(dones) != len(to) {
		return fmt.Errorf("%d Dones for %d deliveries", len(dones), len(to))
	}
	want := map[string]int{}
	for _, n := range to {
		want[n]++
	}
	for _, d := range dones {
		if d.Step != step {
			return fmt.Errorf("a Done of step %d in the answer to step %d", d.Step, step)
		}
		if want[d.Actor] == 0 {
			return fmt.Errorf("a Done for %q, which the step did not deliver to", d.Actor)
		}
		want[d.Actor]--
	}
	return nil
}
