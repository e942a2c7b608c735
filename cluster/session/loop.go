package session

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/task"
	"github.com/flinksim/flinksim/sim/vt"
)

// Pacing and framing. Pacing is wall-clock and lives here, outside the
// simulation: the session is told to run until a virtual time, and nothing
// of the pace reaches the log.
const (
	tick          = 16 * time.Millisecond  // how often a paced session moves on
	frameEvery    = 50 * time.Millisecond  // stream frames while running at a pace (at most 20 a second)
	frameEveryMax = 100 * time.Millisecond // at max speed (10 a second: the machine's time goes to the run)
	outputEvery   = 500 * time.Millisecond // how often the sink's consumer view is recounted while running
	behindAtMost  = 250 * time.Millisecond // a paced session further behind than this is re-anchored (lagging)
	rerunProgress = 100 * time.Millisecond // progress frames while re-running to a jump target
)

// Speed is how fast the session runs: paused, a factor of real time, or as
// fast as the machine goes.
type Speed struct {
	Paused bool
	Max    bool
	Factor float64 // virtual seconds per wall second when neither paused nor max
}

// ParseSpeed reads a speed as POST /sim/speed takes it: pause, max, or a
// factor of real time (0.001 .. 1000, "x" suffix allowed).
func ParseSpeed(s string) (Speed, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "pause", "paused", "0":
		return Speed{Paused: true}, nil
	case "max":
		return Speed{Max: true}, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(s, "x"), 64)
	if err != nil || f < 0.001 || f > 1000 || math.IsNaN(f) {
		return Speed{}, fmt.Errorf("speed %q: want pause, step, max, or a factor of real time from 0.001 to 1000 (1, 10, 100)", s)
	}
	return Speed{Factor: f}, nil
}

func (s Speed) String() string {
	switch {
	case s.Paused:
		return "pause"
	case s.Max:
		return "max"
	}
	return strconv.FormatFloat(s.Factor, 'f', -1, 64)
}

// command is a request to the session loop; reply gets exactly one answer.
type command struct {
	kind     string // speed, step, act, seek, settings, download
	text     string
	at       vt.Time
	settings [][2]string
	reply    chan reply
}

type reply struct {
	err    error
	status int // HTTP status for err (400 when 0)
	body   any
	recipe Recipe
	cut    vt.Time
}

// seekJob is a jump to a virtual time under way: the loop moves the
// session towards it one slice at a time (seekSlice), taking commands in
// between, and answers the seek's command when it gets there, when the run
// ends first, or when another command interrupts it.
type seekJob struct {
	target vt.Time
	reply  chan reply // the seek command's
}

// errEnded is returned for an action given after the run ended.
var errEnded = errors.New("the run has ended: jump back with the slider, or apply settings to start a new one")

// loop owns the session: one goroutine runs it, HTTP handlers talk to it
// over cmds and read its last snapshot (an atomic pointer) without
// waiting. The session is never touched from another goroutine.
type loop struct {
	cfg  Config
	cmds chan *command
	quit chan struct{}
	done chan struct{}

	recipe   Recipe
	injected int // live actions of the recipe that are in the session (queued or delivered)
	sess     *cluster.Session
	finished bool // the summary is written
	gen      int
	obs      *observer
	ring     *ring
	traffic  *trafficTap // what the session delivered since the last frame (flights.go)
	scenario string      // the guided scenario the session was started from (scenario.go)
	mode     string
	tmsSeen  []string
	subCache map[string]*task.SubtaskView // rememberSubtasks
	tlMax    vt.Time                      // furthest point of this timeline
	replayTo vt.Time                      // --replay: the file's end

	speed      Speed
	anchorVT   vt.Time
	anchorWall time.Time
	rate       float64 // virtual µs per wall second at max
	lagging    bool
	rerun      *Rerun
	seek       *seekJob // a jump under way (nil: none)

	lastFrame  time.Time
	lastOutput time.Time
	output     cluster.OutputSummary

	hub    *hub
	latest atomic.Pointer[snapshot]
}

// snapshot is what the loop last saw, for readers on other goroutines. It
// is never changed after it is stored.
type snapshot struct {
	state    *State // with keyed state
	frame    []byte // state without keyed state, as JSON
	views    *views
	settings config.Config
	obs      obsCopy
}

// obsCopy is the observer's data at the snapshot.
type obsCopy struct {
	statuses []JobStatusTime
	ckpts    []Checkpoint
	counts   struct{ triggered, completed, failed, declined, restored int64 }
	restored *Checkpoint
	restVT   vt.Time
	jobs     map[string]*jobCheckpoints // per job (deep copies)
}

func newLoop(cfg Config, r Recipe, h *hub) (*loop, error) {
	l := &loop{cfg: cfg, cmds: make(chan *command, 64), quit: make(chan struct{}), done: make(chan struct{}),
		mode: "live", hub: h, speed: Speed{Paused: true}, rate: 100_000_000}
	if cfg.ReplayEnd > 0 {
		l.mode, l.replayTo = "replay", cfg.ReplayEnd
	}
	if err := l.rebuild(r, 0); err != nil {
		return nil, err
	}
	l.publish()
	return l, nil
}

// rebuild starts a new session of r and runs it to t (a jump back or new
// settings), publishing progress; actions of r at or after t wait to be
// injected when the clock reaches them.
func (l *loop) rebuild(r Recipe, t vt.Time) error {
	gen := l.gen + 1
	rg := newRing(l.cfg.LogLines, gen)
	obs := newObserver(string(r.Settings.OutputIsolation))
	var log io.Writer = rg
	if l.cfg.SessionLog != nil {
		if w := l.cfg.SessionLog(gen); w != nil {
			log = io.MultiWriter(rg, w)
		}
	}
	tap := newTrafficTap()
	s, n, err := r.session(t, log, obs.observe, tap.observe)
	if err != nil {
		return err
	}
	l.gen, l.ring, l.obs, l.traffic = gen, rg, obs, tap
	l.recipe, l.sess, l.injected, l.finished = r, s, n, false
	l.tmsSeen, l.subCache = nil, map[string]*task.SubtaskView{}
	l.output = cluster.OutputSummary{Isolation: string(r.Settings.OutputIsolation)}
	l.lastOutput = time.Time{}
	l.tlMax = max(l.tlMax, s.Status().Now)
	l.reanchor()
	return nil
}

// startSeek begins a jump to t (the seek command c's): back re-runs the
// recipe from 0 on a new session, forward runs on. The loop carries it out
// between commands (seekSlice); c is answered when it ends.
func (l *loop) startSeek(c *command, t vt.Time) error {
	if t < l.sess.Status().Now {
		if err := l.rebuild(l.recipe, t); err != nil {
			return err
		}
	}
	l.seek = &seekJob{target: t, reply: c.reply}
	l.rerun = &Rerun{At: l.sess.Status().Now, Target: t}
	return nil
}

// seekSlice moves a jump on by one slice (at most rerunProgress of wall
// time at the measured rate) and publishes its progress; at the target, or
// when the run ends, it answers the seek.
func (l *loop) seekSlice() {
	j := l.seek
	now := l.sess.Status().Now
	if st := l.sess.Status(); !st.Ended && now < j.target {
		step := max(vt.Time(1000), min(j.target-now, vt.Time(l.rate*rerunProgress.Seconds())))
		start := time.Now()
		l.advance(now + step)
		l.measure(l.sess.Status().Now-now, time.Since(start))
		l.rerun.At = l.sess.Status().Now
	}
	if st := l.sess.Status(); st.Ended || st.Now >= j.target {
		l.endSeek("")
		return
	}
	l.publish()
}

// endSeek answers the jump under way: done, or interrupted by why (the
// command that stopped it where it was).
func (l *loop) endSeek(why string) {
	j := l.seek
	if j == nil {
		return
	}
	l.seek, l.rerun = nil, nil
	l.reanchor()
	body := map[string]any{"vt": l.sess.Status().Now}
	if why != "" {
		body["target"], body["interrupted"] = j.target, why
	}
	l.publish()
	j.reply <- reply{body: body}
}

// measure updates the speed estimate at max from one run of dv virtual µs
// that took d of wall time.
func (l *loop) measure(dv vt.Time, d time.Duration) {
	if d <= 0 || dv <= 0 {
		return
	}
	r := float64(dv) / d.Seconds()
	l.rate = 0.7*l.rate + 0.3*r
}

func (l *loop) reanchor() {
	l.anchorVT, l.anchorWall = l.sess.Status().Now, time.Now()
}

// run is the loop's goroutine.
func (l *loop) run() {
	defer close(l.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if l.seek != nil {
			l.seekSlice()
			yieldToHost()
			if l.poll() {
				return
			}
			continue
		}
		running := !l.speed.Paused && !l.sess.Status().Ended
		if running {
			l.slice()
			every := frameEvery
			if l.speed.Max {
				every = frameEveryMax
			}
			if time.Since(l.lastFrame) >= every || l.sess.Status().Ended {
				l.publish() // and once more when the run is over
			}
			if l.speed.Max {
				yieldToHost()
				if l.poll() {
					return
				}
				continue
			}
			timer.Reset(tick)
		} else {
			timer.Reset(time.Hour)
		}
		select {
		case c := <-l.cmds:
			l.handle(c)
		case <-l.quit:
			return
		case <-timer.C:
		}
	}
}

// poll handles a command that is waiting, without waiting for one, and
// reports whether the loop is told to quit.
func (l *loop) poll() bool {
	select {
	case c := <-l.cmds:
		l.handle(c)
	case <-l.quit:
		return true
	default:
	}
	return false
}

// slice moves the session on by one pacing slice.
func (l *loop) slice() {
	now := l.sess.Status().Now
	var target vt.Time
	if l.speed.Max {
		target = now + max(vt.Time(1000), vt.Time(l.rate*maxSlice.Seconds()))
	} else {
		target = l.anchorVT + vt.Time(l.speed.Factor*float64(time.Since(l.anchorWall).Microseconds()))
		if target <= now {
			return
		}
	}
	start := time.Now()
	l.advance(target)
	if l.speed.Max {
		l.measure(l.sess.Status().Now-now, time.Since(start))
		l.lagging = false
		return
	}
	behind := l.anchorVT + vt.Time(l.speed.Factor*float64(time.Since(l.anchorWall).Microseconds())) - l.sess.Status().Now
	if float64(behind) > l.speed.Factor*float64(behindAtMost.Microseconds()) {
		l.lagging = true
		l.reanchor()
	} else if behind <= 0 {
		l.lagging = false
	}
}

// advance runs the session to t, injecting the actions of the timeline
// that fall before t on the way.
func (l *loop) advance(t vt.Time) {
	l.injectFuture(t)
	st := l.sess.RunUntil(t)
	l.tlMax = max(l.tlMax, st.Now)
	l.ended()
}

// ended writes the summary once the run is over, so that the page's log
// and a session log end as `flinksim run`'s does.
func (l *loop) ended() {
	if l.sess.Status().Ended && !l.finished {
		l.finished = true
		l.sess.Finish()
	}
}

// injectFuture injects the timeline's actions due before t (after a jump
// back they wait outside the session so that a new action can drop them).
func (l *loop) injectFuture(t vt.Time) {
	for l.injected < len(l.recipe.Live) && vt.FromDuration(l.recipe.Live[l.injected].At) < t {
		if _, err := l.sess.Schedule(l.recipe.Live[l.injected]); err != nil {
			// cannot happen: the action is due at or after the clock
			l.obs.mu.Lock()
			l.obs.notice(l.sess.Status().Now, "action_ignored", err.Error())
			l.obs.mu.Unlock()
		}
		l.injected++
	}
}

// step takes one scheduler step, injecting a timeline action due at it.
func (l *loop) step() {
	if l.injected < len(l.recipe.Live) {
		next := vt.Time(math.MaxInt64)
		for _, e := range l.sess.InFlight() {
			next = min(next, vt.Of(e.DeliverAt))
		}
		l.injectFuture(next + 1)
	}
	st := l.sess.Step()
	l.tlMax = max(l.tlMax, st.Now)
	l.ended()
}

// fork drops the actions ahead of the clock: a new action after a jump
// back starts a new future, as RaftScope's "fork playback" does.
func (l *loop) fork() {
	if l.injected < len(l.recipe.Live) {
		l.recipe.Live = l.recipe.Live[:l.injected]
	}
	l.tlMax = l.sess.Status().Now
	if l.mode == "replay" {
		l.mode, l.replayTo = "live", 0
	}
}

func (l *loop) handle(c *command) {
	var r reply
	if l.seek != nil && c.kind != "download" {
		// any change (a pause, a step, an action, another jump, new
		// settings) stops the jump where it is; the download of the log so
		// far does not
		l.endSeek(interruptedBy(c))
	}
	switch c.kind {
	case "speed":
		sp, err := ParseSpeed(c.text)
		if err != nil {
			r.err = err
			break
		}
		l.speed = sp
		l.reanchor()
		r.body = map[string]any{"speed": sp.String(), "vt": l.sess.Status().Now}
	case "step":
		l.speed = Speed{Paused: true}
		l.step()
		r.body = map[string]any{"speed": "pause", "vt": l.sess.Status().Now, "steps": l.sess.Status().Steps}
	case "act":
		if _, err := action.Parse(withAt(c.text)); err != nil { // the CLI's message
			r.err = err
			break
		}
		if l.sess.Status().Ended {
			r.err, r.status = errEnded, 409
			break
		}
		a, err := l.sess.Act(c.text)
		if err != nil {
			r.err = err // nothing changed
			break
		}
		dropped := len(l.recipe.Live) - l.injected
		l.fork()
		l.recipe.insert(a)
		l.injected = len(l.recipe.Live)
		r.body = map[string]any{"action": a.String(), "vt": vt.FromDuration(a.At), "dropped": dropped}
	case "seek":
		if err := l.startSeek(c, max(0, c.at)); err != nil {
			r.err = err
			break
		}
		l.publish()
		return // answered when the jump ends (endSeek)
	case "settings":
		cfg := l.recipe.Settings
		if err := applySettings(&cfg, c.settings); err != nil {
			r.err = err
			break
		}
		nr := Recipe{Settings: cfg, Options: l.recipe.Options}
		nr = nr.clone()
		if _, err := jobgraph.Build(cfg); err != nil {
			r.err = err
			break
		}
		if err := l.rebuild(nr, 0); err != nil {
			r.err = err
			break
		}
		l.mode, l.replayTo, l.tlMax = "live", 0, 0
		l.scenario = ""
		r.body = map[string]any{"generation": l.gen, "vt": 0}
	case "scenario":
		r = l.startScenario(c.text, c.settings)
	case "download":
		r.recipe = l.recipe.clone()
		if st := l.sess.Status(); !st.Ended {
			r.cut = st.Now
		}
	default:
		r.err = fmt.Errorf("unknown command %q", c.kind)
	}
	l.publish()
	c.reply <- r
}

// interruptedBy says which command stopped a jump.
func interruptedBy(c *command) string {
	switch c.kind {
	case "speed":
		return "speed " + c.text
	case "act":
		return "action " + c.text
	case "seek":
		return "a jump to " + c.at.String()
	}
	return c.kind
}

// withAt prefixes at=0s to an action without a time, so that it parses.
func withAt(text string) string {
	text = strings.TrimSpace(text)
	if strings.HasPrefix(text, "at=") {
		return text
	}
	return "at=0s " + text
}

// applySettings applies key=value changes as --set does and validates the
// result with the CLI's messages.
func applySettings(cfg *config.Config, kvs [][2]string) error {
	var errs []error
	for _, kv := range kvs {
		if err := cfg.Set(strings.TrimSpace(kv[0]), strings.TrimSpace(kv[1])); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return cfg.Validate()
}

// publish takes a snapshot of the session and hands it to the readers.
func (l *loop) publish() {
	l.lastFrame = time.Now()
	st := l.sess.Status()
	v := decodeViews(l.sess.Inspect())
	if prev := l.latest.Load(); st.Ended && v.jm == nil && prev != nil && prev.views != nil && prev.state.Generation == l.gen {
		v = prev.views // no final views (the session ended before anyone looked): keep the last picture
	}
	l.rememberSubtasks(v)
	fl, more := flights(l.sess.InFlight())
	running := !l.speed.Paused && !st.Ended
	if !running || time.Since(l.lastOutput) >= outputEvery {
		iso := l.isolation()
		l.output = l.sess.Output(iso)
		l.lastOutput = time.Now()
	}
	cfg := l.sess.Settings()
	for name := range v.tms {
		if !slices.Contains(l.tmsSeen, name) {
			l.tmsSeen = append(l.tmsSeen, name)
		}
	}
	sort.Slice(l.tmsSeen, func(i, j int) bool { return tmLess(l.tmsSeen[i], l.tmsSeen[j]) })

	full := &State{VT: st.Now, Steps: st.Steps, Speed: l.speed.String(), Ended: st.Ended, Lagging: l.lagging && running,
		Mode: l.mode, Generation: l.gen, Seed: cfg.Seed, Rerun: l.rerun, Flights: fl, FlightsMore: more}
	full.Timeline = Timeline{Max: max(l.tlMax, l.replayTo, st.Now), Future: len(l.recipe.Live) - l.injected}
	full.Settings = ViewSettings{Isolation: l.isolation(), Unaligned: cfg.UnalignedCheckpoints,
		Idleness: config.FormatDuration(cfg.Idleness), Guarantee: string(cfg.DeliveryGuarantee), Backend: string(cfg.StateBackend),
		Interval: config.FormatDuration(cfg.CheckpointInterval), SourceTopic: cfg.SourceTopic, SinkTopic: cfg.SinkTopic,
		Operator: string(cfg.Operator), TimeChar: string(cfg.TimeCharacteristic), Slots: cfg.Slots(), BufferRecords: cfg.BufferRecords,
		MaxBuffersPerChannel: cfg.MaxBuffersPerChannel}
	full.Scenario = l.scenario
	l.obs.mu.Lock()
	if val, ok := l.obs.reconfigured["execution.checkpointing.unaligned.enabled"]; ok {
		full.Settings.Unaligned = val == "true"
	}
	if val, ok := l.obs.reconfigured["job.watermark.idleness"]; ok {
		full.Settings.Idleness = val
	}
	l.obs.mu.Unlock()
	full.Vertices = buildVertices(v, true)
	full.TMs = buildTMs(v, l.tmsSeen)
	full.Kafka = buildKafka(v, full.Vertices)

	o := l.obs
	o.mu.Lock()
	// the live views add what a running attempt counted since its last
	// log line, without being stored: what an ended attempt counts comes
	// from the log alone, so the totals do not depend on when someone
	// looked (a re-run after a jump back polls at other moments)
	tot := o.totals()
	for _, vx := range full.Vertices {
		for _, s := range vx.Subtasks {
			var read, late int64
			if a := o.attempts[s.Name]; a != nil {
				read, late = a.recordsRead, a.lateDropped
			}
			if (len(s.Splits) > 0 || vx.ID == jobgraph.VertexSource) && s.RecordsIn > read {
				tot.recordsRead += s.RecordsIn - read
			}
			if s.LateDropped > late {
				tot.lateDropped += s.LateDropped - late
			}
		}
	}
	if v.coord != nil {
		// the CheckpointCoordinator's own counts of acknowledgements, before
		// any checkpoint is copied: every copy of this snapshot shows the
		// same counts, whatever snapshots were taken before (a checkpoint
		// no longer in the coordinator's history keeps the counts its
		// completion gave it, see observer)
		for _, h := range v.coord.History {
			if c := o.checkpoint(h.ID); c != nil {
				c.Acknowledged, c.Tasks = h.NumAcknowledged, h.NumTasks
			}
		}
	}
	var cp *Checkpoint
	if n := len(o.checkpoints); n > 0 {
		c := o.checkpoints[n-1].clone()
		cp = &c
	}
	var lastDone *Checkpoint
	for i := len(o.checkpoints) - 1; i >= 0; i-- {
		if o.checkpoints[i].Status != "IN_PROGRESS" {
			c := o.checkpoints[i].clone()
			lastDone = &c
			break
		}
	}
	accumulated(full.Vertices, o)
	ck := make([]*Checkpoint, 0, len(o.checkpoints))
	oc := obsCopy{statuses: slices.Clone(o.statuses), counts: o.counts, restVT: o.restoredVT, jobs: map[string]*jobCheckpoints{}}
	for _, c := range o.checkpoints {
		cc := c.clone()
		ck = append(ck, &cc)
		oc.ckpts = append(oc.ckpts, c.clone())
	}
	if o.restored != nil {
		rc := o.restored.clone()
		oc.restored = &rc
	}
	for id, j := range o.jobs { // a copy: order does not matter
		oc.jobs[id] = j.clone()
	}
	full.Ckpts = ck
	full.Notices = slices.Clone(o.notices)
	full.Stats = Stats{JobStatus: o.jobStatus, RecordsRead: tot.recordsRead, WindowsFired: o.windowsFired,
		ResultsVisible: l.output.Visible, ResultsUncommited: l.output.Uncommitted, Duplicates: l.output.Duplicates,
		LateDropped: tot.lateDropped, LateSideOutput: o.lateCount, ExpiredState: tot.expired,
		Checkpoints: o.counts.completed, CheckpointsFailed: o.counts.failed, LastCheckpoint: lastDone,
		MaxBackPressure: o.maxBP, MaxBPTask: o.maxBPTask}
	full.Output = Output{OutputSummary: l.output, Late: slices.Clone(o.late), LateCount: o.lateCount}
	o.mu.Unlock()

	for _, vx := range full.Vertices {
		for _, s := range vx.Subtasks {
			if s.BackPressured > full.Stats.BackPressureNow {
				full.Stats.BackPressureNow, full.Stats.BPNowTask = s.BackPressured, s.Name
			}
		}
	}
	if v.jm != nil {
		full.Job = JobState{ID: v.jm.JobID, Name: v.jm.JobName, Status: v.jm.Status, Attempt: v.jm.Attempt,
			Restarts: v.jm.Restarts, Checkpoint: cp, SlotsNeeded: v.jm.Graph.SlotsNeeded}
		full.Settings.MaxParallelism = v.jm.Graph.MaxParallelism
		full.Stats.Restarts = v.jm.Restarts
		if full.Stats.JobStatus == "" {
			full.Stats.JobStatus = v.jm.Status
		}
	} else if st.Ended {
		full.Job.Status = full.Stats.JobStatus
	}
	if full.Job.Status == "" {
		// submitted, its JobMaster not running yet (or a JobMaster that has
		// not reported a status): Flink's Dispatcher lists such a job as
		// INITIALIZING (JobStatus.INITIALIZING), as the REST paths do
		full.Job.Status = "INITIALIZING"
	}
	if full.Stats.JobStatus == "" {
		full.Stats.JobStatus = full.Job.Status
	}
	if v.kafka != nil {
		k := v.kafka
		full.Output.Open, full.Output.PreCommitted, full.Output.Committed = k.SinkOpen, k.SinkPreCommitted, k.SinkCommitted
		full.Output.Aborted, full.Output.Plain, full.Output.LastStableOffset = k.SinkAborted, k.SinkPlain, k.LastStableOffset
		full.Output.Recent = k.Recent
	}

	frame := *full
	frame.Vertices = buildVertices(v, false)
	o.mu.Lock()
	accumulated(frame.Vertices, o)
	o.mu.Unlock()
	b, err := jsonMarshal(&frame)
	if err != nil {
		b = []byte(`{"error":` + strconv.Quote(err.Error()) + `}`)
	}
	v.last = nil // the loop's own map: readers of the snapshot must not see it change
	snap := &snapshot{state: full, frame: b, views: v, settings: cfg, obs: oc}
	l.latest.Store(snap)
	fm := &frameMsg{gen: l.gen, state: b, ring: l.ring}
	if tb := l.traffic.take(st.Now); l.rerun == nil { // a re-run's traffic is not drawn
		fm.traffic = tb
	}
	l.hub.publish(fm)
}

// accumulated sets each subtask's accumulated times from the observer's
// counters of its execution; the caller holds o.mu.
func accumulated(vertices []Vertex, o *observer) {
	for _, vx := range vertices {
		for i := range vx.Subtasks {
			s := &vx.Subtasks[i]
			if a := o.attempts[s.Name]; a != nil && !s.Planned {
				s.AccBusyMs, s.AccBackPressuredMs, s.AccIdleMs = a.accBusy, a.accBP, a.accIdle
			}
		}
	}
}

// rememberSubtasks keeps the last view of each execution of the current
// attempt, so that one whose actor is gone (its TaskManager was killed)
// still shows what it last reported while the JobManager believes it runs;
// views of executions the JobManager no longer lists are dropped, so the
// cache holds at most one view per subtask of the job.
func (l *loop) rememberSubtasks(v *views) {
	v.last = l.subCache
	if v.jm == nil {
		return
	}
	current := make(map[string]bool, len(v.jm.Tasks))
	for _, t := range v.jm.Tasks {
		current[t.Name] = true
		if sv, ok := v.subtasks[t.Name]; ok {
			l.subCache[t.Name] = sv
		}
	}
	for name := range l.subCache {
		if !current[name] {
			delete(l.subCache, name)
		}
	}
}

// isolation is the consumer's isolation level now: the setting, or the
// last `set sim.output.isolation-level=...` action.
func (l *loop) isolation() string {
	l.obs.mu.Lock()
	defer l.obs.mu.Unlock()
	if l.obs.isolation != "" {
		return l.obs.isolation
	}
	return string(l.sess.Settings().OutputIsolation)
}

// tmLess orders tm-2 before tm-10.
func tmLess(a, b string) bool {
	x, errA := strconv.Atoi(strings.TrimPrefix(a, "tm-"))
	y, errB := strconv.Atoi(strings.TrimPrefix(b, "tm-"))
	if errA == nil && errB == nil {
		return x < y
	}
	return a < b
}

// do sends a command to the loop and waits for its reply.
func (l *loop) do(c *command) reply {
	c.reply = make(chan reply, 1)
	select {
	case l.cmds <- c:
	case <-l.done:
		return reply{err: errors.New("the session is closed"), status: 503}
	}
	select {
	case r := <-c.reply:
		return r
	case <-l.done:
		return reply{err: errors.New("the session is closed"), status: 503}
	}
}

func (l *loop) stop() {
	select {
	case <-l.quit:
	default:
		close(l.quit)
	}
	<-l.done
}
