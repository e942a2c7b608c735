package actors

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/anthdm/hollywood/actor"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/vt"
)

// SchedulerName is the sender name of envelopes the scheduler injects.
const SchedulerName = "scheduler"

// Kickoff starts a run: the actors already spawned and the first envelopes.
// It is a local message (the scheduler never leaves its process).
type Kickoff struct {
	Spawned []*messages.Spawned
	Initial []*messages.Envelope
}

// RunResult is what the scheduler reports when the run ends.
type RunResult struct {
	JobStatus   string  // the last status the JobManager logged
	EndVT       vt.Time // virtual time of the last step (µs)
	Steps       uint64  // scheduler steps taken
	Deliveries  uint64  // envelopes delivered
	Invariant   string  // non-empty: a broken invariant ended the run
	Failure     string  // its description
	FailureVT   vt.Time
	FailedActor string
	Counters    map[string]int64 // sums of the final_counters fields over all actors
	// MaxBackPressure is the highest backPressuredTimeMsPerSecond any
	// subtask reported, and MaxBackPressureTask the first subtask that did.
	MaxBackPressure     int64
	MaxBackPressureTask string
	// FailureCause is the cause of the job's last FAILED status.
	FailureCause string
	// OutputViewFrom is the sink offset where the output view starts: 0, or
	// where the last job started from a savepoint began (output_view).
	OutputViewFrom int64
	// IgnoredActions are the user actions that were not carried out, each
	// "action: reason", in log order.
	IgnoredActions []string
}

// Scheduler is the virtual-time scheduler actor (ARCHITECTURE.md). It keeps
// every envelope in a queue ordered by (deliver_at, to, from, sender_seq),
// delivers one step (all envelopes with the smallest deliver_at) at a time,
// waits for every receiver's Done, writes the step's log events in the order
// (vt, actor, seq), queues what the receivers sent, and moves on. It is the
// only writer of the event log.
type Scheduler struct {
	q       vt.Queue
	pids    map[string]*actor.PID
	dead    map[string]bool
	log     *eventlog.Writer
	limit   vt.Time // virtual time after which the run ends (0: none)
	result  chan<- RunResult
	now     vt.Time
	step    uint64
	waiting int
	dones   []*messages.Done
	closing bool
	ended   bool
	res     RunResult
	buf     []*messages.Envelope
	self    *actor.PID
	// Progress, when set, is called every 1<<16 steps with the virtual time;
	// it only reports to a person (stderr) and never reaches the log.
	Progress func(vt.Time)
}

var _ actor.Receiver = (*Scheduler)(nil)

// NewScheduler returns a scheduler writing to log that ends the run at
// virtual time limit (0: only when the job reaches a terminal status or
// nothing is left to deliver) and reports on result.
func NewScheduler(log *eventlog.Writer, limit vt.Time, result chan<- RunResult) *Scheduler {
	return &Scheduler{pids: map[string]*actor.PID{}, dead: map[string]bool{}, log: log, limit: limit,
		result: result, res: RunResult{Counters: map[string]int64{}}}
}

// Receive implements actor.Receiver. A panic here would make Hollywood
// restart the scheduler with its state lost; it ends the run instead.
func (s *Scheduler) Receive(ctx *actor.Context) {
	defer func() {
		if r := recover(); r != nil && !s.ended {
			s.fail(SchedulerName, s.now, "no_panic", fmt.Sprintf("panic in the scheduler: %v", r))
		}
	}()
	switch m := ctx.Message().(type) {
	case *Kickoff:
		s.self = ctx.PID()
		s.register(m.Spawned)
		for _, e := range m.Initial {
			s.q.Push(e)
		}
		s.next(ctx)
	case *messages.Done:
		if m.Step != s.step || s.ended {
			return
		}
		s.dones = append(s.dones, m)
		s.waiting--
		if s.waiting == 0 {
			s.finishStep(ctx)
		}
	}
}

func (s *Scheduler) register(sp []*messages.Spawned) {
	for _, x := range sp {
		s.pids[x.Name] = actor.NewPID(x.Address, x.Id)
		delete(s.dead, x.Name)
	}
}

// next delivers steps until one needs replies.
func (s *Scheduler) next(ctx *actor.Context) {
	for !s.ended {
		t, ok := s.q.PeekTime()
		if !ok {
			if s.closing {
				s.end()
				return
			}
			s.beginClosing(s.now)
			continue
		}
		if !s.closing && s.limit > 0 && t > s.limit {
			s.beginClosing(s.limit)
			continue
		}
		s.now = t
		s.step++
		if s.Progress != nil && s.step&(1<<16-1) == 0 {
			s.Progress(t)
		}
		s.buf = s.q.PopStep(s.buf[:0])
		s.waiting = 0
		for i := 0; i < len(s.buf); {
			j := i + 1
			for j < len(s.buf) && s.buf[j].To == s.buf[i].To {
				j++
			}
			to := s.buf[i].To
			pid := s.pids[to]
			if pid != nil {
				envs := make([]*messages.Envelope, j-i)
				copy(envs, s.buf[i:j])
				s.res.Deliveries += uint64(j - i)
				s.waiting++
				ctx.Engine().SendWithSender(pid, &messages.Deliver{Step: s.step, Now: t, Envelopes: envs}, s.self)
			} else if act, ok := s.buf[i].Body.(*messages.Envelope_Action); ok {
				// a user action for an actor that is gone or never was
				s.log.Write(&messages.LogEvent{Vt: t, Actor: to, Kind: eventlog.KindActionIgnored,
					Fields: []*messages.Field{messages.Str("action", act.Action.Text), messages.Str("reason", "no such actor: "+to)}})
				s.res.IgnoredActions = append(s.res.IgnoredActions, act.Action.Text+": no such actor: "+to)
			} else if s.dead[to] {
				// lost as on a dead host; a task deployed to a dead
				// TaskManager never runs, nor do its input channels, so
				// what is sent to them is lost too
				for _, e := range s.buf[i:j] {
					if st, ok := e.Body.(*messages.Envelope_SubmitTask); ok {
						s.markNeverStarted(st.SubmitTask)
					}
				}
			} else {
				s.fail(to, t, "unknown_receiver", fmt.Sprintf("envelope from %s to unknown actor %q", s.buf[i].From, to))
				return
			}
			i = j
		}
		clear(s.buf)
		if s.waiting > 0 {
			return
		}
		if s.closing {
			s.end()
			return
		}
	}
}

// markNeverStarted counts a task submitted to a dead TaskManager, and its
// input channels, as dead actors.
func (s *Scheduler) markNeverStarted(st *messages.SubmitTask) {
	s.dead[st.ExecutionId] = true
	if g := st.InputGate; g != nil {
		for i := range g.Producers {
			s.dead[jobgraph.ChannelName(st.ExecutionId, i)] = true
		}
	}
}

// beginClosing drops what is still queued and asks every live actor for its
// final counters at virtual time t.
func (s *Scheduler) beginClosing(t vt.Time) {
	s.closing = true
	// user actions still waiting: the run ended before their time
	var later []*messages.Envelope
	for s.q.Len() > 0 {
		later = s.q.PopStep(later)
	}
	for _, e := range later {
		if a, ok := e.Body.(*messages.Envelope_Action); ok && e.From == "user" {
			s.log.Write(&messages.LogEvent{Vt: t, Actor: SchedulerName, Kind: eventlog.KindActionIgnored,
				Fields: []*messages.Field{messages.Str("action", a.Action.Text), messages.Str("reason", "the run ended before its time")}})
			s.res.IgnoredActions = append(s.res.IgnoredActions, a.Action.Text+": the run ended before its time")
		}
	}
	s.q = vt.Queue{}
	if t > s.now {
		s.now = t
	}
	names := make([]string, 0, len(s.pids))
	for n := range s.pids {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, n := range names {
		s.q.Push(&messages.Envelope{DeliverAt: s.now, To: n, From: SchedulerName, SenderSeq: uint64(1<<40 + i),
			Body: &messages.Envelope_EndOfRun{EndOfRun: &messages.EndOfRun{}}})
	}
}

func (s *Scheduler) finishStep(ctx *actor.Context) {
	slices.SortFunc(s.dones, func(a, b *messages.Done) int { return cmp.Compare(a.Actor, b.Actor) })
	var events []*messages.LogEvent
	for _, d := range s.dones {
		s.register(d.Spawned)
		events = append(events, d.Events...)
	}
	slices.SortStableFunc(events, func(a, b *messages.LogEvent) int {
		if c := cmp.Compare(a.Vt, b.Vt); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Actor, b.Actor); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	for _, ev := range events {
		s.observe(ev)
		s.log.Write(ev)
	}
	for _, d := range s.dones {
		if d.Failure != "" {
			inv := d.Invariant
			if inv == "" {
				inv = "actor_failure"
			}
			s.fail(d.Actor, s.now, inv, d.Failure)
			return
		}
	}
	for _, d := range s.dones {
		for _, name := range d.Stopped {
			delete(s.pids, name)
			s.dead[name] = true
		}
		if !s.closing {
			for _, e := range d.Out {
				s.q.Push(e)
			}
		}
	}
	s.dones = s.dones[:0]
	if s.closing {
		s.end()
		return
	}
	if s.res.JobStatus == "FINISHED" || s.res.JobStatus == "FAILED" || s.res.JobStatus == "CANCELED" {
		s.beginClosing(s.now)
	}
	s.next(ctx)
}

// observe picks from the log what the summary needs.
func (s *Scheduler) observe(ev *messages.LogEvent) {
	switch ev.Kind {
	case eventlog.KindJobStatus:
		for _, f := range ev.Fields {
			if f.Key == "status" {
				s.res.JobStatus = f.GetStr()
			}
			if f.Key == "cause" && s.res.JobStatus == "FAILED" {
				s.res.FailureCause = f.GetStr()
			}
		}
	case eventlog.KindOutputView:
		for _, f := range ev.Fields {
			if f.Key == "from_offset" {
				s.res.OutputViewFrom = f.GetInt()
			}
		}
	case eventlog.KindActionIgnored:
		var text, reason string
		for _, f := range ev.Fields {
			switch f.Key {
			case "action":
				text = f.GetStr()
			case "reason":
				reason = f.GetStr()
			}
		}
		s.res.IgnoredActions = append(s.res.IgnoredActions, text+": "+reason)
	case eventlog.KindTaskMetrics:
		for _, f := range ev.Fields {
			if f.Key == "backPressuredTimeMsPerSecond" && f.GetInt() > s.res.MaxBackPressure {
				s.res.MaxBackPressure = f.GetInt()
				s.res.MaxBackPressureTask = ev.Actor
			}
		}
	case eventlog.KindFinal:
		for _, f := range ev.Fields {
			if v, ok := f.Value.(*messages.Field_Int); ok && f.Key != "windows_fired" {
				s.res.Counters[f.Key] += v.Int
			}
		}
	case eventlog.KindWindowFired:
		// counted from the events, so firings of tasks that died count too
		s.res.Counters["windows_fired"]++
	}
}

func (s *Scheduler) fail(actorName string, t vt.Time, invariant, what string) {
	s.res.Invariant = invariant
	s.res.Failure = what
	s.res.FailureVT = t
	s.res.FailedActor = actorName
	s.log.Write(&messages.LogEvent{Vt: t, Actor: actorName, Kind: eventlog.KindFailure,
		Fields: []*messages.Field{messages.Str("invariant", invariant), messages.Str("what", what)}})
	s.end()
}

func (s *Scheduler) end() {
	if s.ended {
		return
	}
	s.ended = true
	s.res.EndVT = s.now
	s.res.Steps = s.step
	s.result <- s.res
}
