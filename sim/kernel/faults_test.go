package kernel

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flinksim/flinksim/messages"
)

// testAction is the tests' spelling of a scheduler action: "cut A B MS",
// "stall HOST MS", "jitter MAX_US MS", "lose ack MS"; anything else is a
// trigger-checkpoint (not the scheduler's).
func testAction(text string) *messages.Action {
	var ha, hb string
	var x, y int64
	ns := func(ms int64) int64 { return int64(time.Duration(ms) * time.Millisecond) }
	switch {
	case scan(text, "cut %s %s %d", &ha, &hb, &x):
		return &messages.Action{Verb: messages.ActionVerb_ACTION_PARTITION_NETWORK, Cut: &messages.NetworkCut{HostA: ha, HostB: hb, DurationNanos: ns(x)}}
	case scan(text, "stall %s %d", &ha, &x):
		return &messages.Action{Verb: messages.ActionVerb_ACTION_STALL_TASKMANAGER, Stall: &messages.HostStall{Host: ha, DurationNanos: ns(x)}}
	case scan(text, "jitter %d %d", &x, &y):
		return &messages.Action{Verb: messages.ActionVerb_ACTION_NETWORK_JITTER, Jitter: &messages.NetworkJitter{MaxNanos: x * 1000, DurationNanos: ns(y)}}
	case scan(text, "lose ack %d", &x):
		return &messages.Action{Verb: messages.ActionVerb_ACTION_LOSE_RPC, Lose: &messages.LoseRPC{Rpc: messages.LostRPC_LOST_RPC_ACKNOWLEDGE_CHECKPOINT, WithinNanos: ns(x)}}
	}
	return &messages.Action{Verb: messages.ActionVerb_ACTION_TRIGGER_CHECKPOINT}
}

func scan(text, format string, args ...any) bool {
	n, err := fmt.Sscanf(text, format, args...)
	return err == nil && n == len(args)
}

// testActionText renders what testAction reads (Config.ActionText).
func testActionText(a *messages.Action) string {
	ms := func(ns int64) int64 { return time.Duration(ns).Milliseconds() }
	switch {
	case a.Cut != nil:
		return fmt.Sprintf("cut %s %s %d", a.Cut.HostA, a.Cut.HostB, ms(a.Cut.DurationNanos))
	case a.Stall != nil:
		return fmt.Sprintf("stall %s %d", a.Stall.Host, ms(a.Stall.DurationNanos))
	case a.Jitter != nil:
		return fmt.Sprintf("jitter %d %d", a.Jitter.MaxNanos/1000, ms(a.Jitter.DurationNanos))
	case a.Lose != nil:
		return fmt.Sprintf("lose ack %d", ms(a.Lose.WithinNanos))
	}
	return a.Verb.String()
}

// A stalled host receives nothing while it is frozen, its own timers
// included; it wakes with everything held, delivered at its end in the
// order it was due, and the scheduler logs both ends with the count.
func TestStallHoldsEverythingUntilTheHostWakes(t *testing.T) {
	r := runNet(t, "", "5000 stall B 3")
	for _, e := range r.got {
		if strings.HasPrefix(e, "b:") && (strings.HasSuffix(e, " at 5000") || strings.HasSuffix(e, " at 6000") || strings.HasSuffix(e, " at 7000")) {
			t.Errorf("b got something while stalled: %s", e)
		}
		if strings.HasPrefix(e, "a: ping from b at") && (strings.HasSuffix(e, " 6000") || strings.HasSuffix(e, " 7000")) {
			t.Errorf("b sent while stalled: %s", e)
		}
	}
	// a's pings of 5, 6 and 7 ms and a's of 8 ms, all at 8 ms
	n := 0
	for _, e := range r.got {
		if e == "b: ping from a at 8000" {
			n++
		}
	}
	if n != 4 {
		t.Errorf("b got %d pings at 8000, want 4 (three held, one due then): %v", n, r.got)
	}
	if !slices.Contains(r.got, "a: ping from b at 8000") {
		t.Errorf("b did not ping again once awake: %v", r.got)
	}
	want := []string{
		`5000 host_stalled host=B duration_ms=3 action=stall B 3`,
		// a's three pings and b's own timer of 5 ms
		`8000 host_resumed host=B held_envelopes=4`,
	}
	if !slices.Equal(r.events, want) {
		t.Errorf("scheduler events\n%s\nwant\n%s", strings.Join(r.events, "\n"), strings.Join(want, "\n"))
	}
}

// burster sends n envelopes to each of its peers at 1, 2, 3 and 4 ms, and
// records what it receives with the time.
type burster struct {
	peers []string
	n     int
	got   *[]string
}

func (b *burster) Step(o *Out, e *messages.Envelope) {
	switch e.Body.(type) {
	case *messages.Envelope_Start:
		o.Timer(1000, messages.TimerKind_TIMER_KIND_UNSPECIFIED, 0)
	case *messages.Envelope_Timer:
		if o.Now() < 4000 {
			o.Timer(1000, messages.TimerKind_TIMER_KIND_UNSPECIFIED, 0)
		}
		for i := 0; i < b.n; i++ {
			for _, p := range b.peers {
				o.Send(p, 10, &messages.Envelope_HeartbeatRequest{HeartbeatRequest: &messages.HeartbeatRequest{}})
			}
		}
	case *messages.Envelope_HeartbeatRequest:
		*b.got = append(*b.got, fmt.Sprintf("%s %d", e.From, o.Now()))
	}
}

// runBurst has a (host A) and c (host C) each send 5 envelopes to b (host
// B) at 1, 2, 3 and 4 ms, 10 µs on the way, with the given scheduler actions; it
// returns what b got ("sender time"), in order, and the scheduler's events.
func runBurst(t *testing.T, actions ...string) (got, events []string) {
	t.Helper()
	k := New(Config{
		Log: func(ev *Event) {
			if ev.Actor == SchedulerName {
				events = append(events, fmt.Sprintf("%d %s %s", ev.Vt, ev.Kind(), strings.Join(keyValues(t, ev.Body), " ")))
			}
		},
		HostOf:     func(actor, _ string) string { return strings.ToUpper(actor) },
		ActionText: testActionText,
	})
	l := NewLoop(k, 1, nil)
	k.Register([]*messages.Spawned{l.Host("a", &burster{peers: []string{"b"}, n: 5}), l.Host("b", &burster{got: &got}),
		l.Host("c", &burster{peers: []string{"b"}, n: 5})})
	for i, to := range []string{"a", "b", "c"} {
		k.Push(&messages.Envelope{To: to, From: SchedulerName, SenderSeq: uint64(i + 1), Body: &messages.Envelope_Start{Start: &messages.Start{}}})
	}
	for i, text := range actions {
		var at int64
		fmt.Sscanf(text, "%d", &at)
		text = text[strings.Index(text, " ")+1:]
		k.Push(&messages.Envelope{DeliverAt: at, To: SchedulerName, From: UserName, SenderSeq: uint64(i + 1),
			Body: &messages.Envelope_Action{Action: testAction(text)}})
	}
	if st := l.Run(Forever, 0); st != StateEnded {
		t.Fatalf("state %v", st)
	}
	return got, events
}

// Jitter delays each envelope between two hosts by up to its maximum, the
// same way in every run, the latency of a link varying from one
// millisecond to the next; one sender's envelopes to one receiver keep
// their order, two senders' envelopes come in another order than sent.
func TestJitterKeepsOneConnectionsOrderOnly(t *testing.T) {
	plain, _ := runBurst(t)
	got, events := runBurst(t, "500 jitter 400 3")
	again, _ := runBurst(t, "500 jitter 400 3")
	if !slices.Equal(got, again) {
		t.Fatalf("jitter differs between two runs:\n%v\n%v", got, again)
	}
	// a jitter's delays are its own: a cut before it (between A and C,
	// which exchange nothing) changes none of them
	if afterCut, _ := runBurst(t, "100 cut A C 100", "500 jitter 400 3"); !slices.Equal(got, afterCut) {
		t.Fatalf("a cut before the jitter changed its delays:\n%v\n%v", got, afterCut)
	}
	if len(got) != 40 || len(plain) != 40 {
		t.Fatalf("got %d and %d envelopes, want 40", len(got), len(plain))
	}
	// without jitter each burst is due 10 µs after it was sent, a's before c's
	for i, e := range plain {
		want := fmt.Sprintf("%s %d", map[bool]string{true: "a", false: "c"}[i%10 < 5], 1010+1000*(i/10))
		if e != want {
			t.Fatalf("without jitter envelope %d is %q, want %q: %v", i, e, want, plain)
		}
	}
	extra := map[int64]bool{}
	last := map[string]int64{}
	crossed := false
	for i, e := range got {
		var from string
		var at int64
		fmt.Sscanf(e, "%s %d", &from, &at)
		sent := (at - 10) / 1000 * 1000
		if i >= 30 { // the burst of 4 ms, after the jitter: none
			if at != 4010 {
				t.Errorf("%s: after the jitter, want due at 4010", e)
			}
			continue
		}
		if at < sent+10 || at > sent+410 {
			t.Errorf("%s: due outside [%d, %d] µs", e, sent+10, sent+410)
		}
		extra[at-sent-10] = true
		// within one connection times never go back
		if at < last[from] {
			t.Errorf("%s came after an envelope of %s due at %d", e, from, last[from])
		}
		last[from] = at
		if from == "c" && i%10 < 5 || from == "a" && i%10 >= 5 {
			crossed = true
		}
	}
	if len(extra) < 3 {
		t.Errorf("only %d distinct delays: the jitter did not vary: %v", len(extra), got)
	}
	if !crossed {
		t.Errorf("the two connections kept their relative order: %v", got)
	}
	want := []string{
		`500 network_jitter duration_ms=3 max_jitter_us=400 action=jitter 400 3`,
		`3500 network_jitter_ended jittered_envelopes=30`,
	}
	if !slices.Equal(events, want) {
		t.Errorf("scheduler events\n%s\nwant\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
}

// A lost RPC drops exactly one matching envelope between two hosts, the
// first after the action; a loss that finds nothing to drop within its
// time is logged as unused.
func TestLoseDropsOneRPC(t *testing.T) {
	r := runNetWith(t, "", true, "5000 lose ack 2", "11500 lose ack 100")
	lost := 0
	for _, want := range []string{"a: ping from b at 5000", "b: ping from a at 5000"} {
		if !slices.Contains(r.got, want) {
			lost++
		}
	}
	if lost != 1 {
		t.Errorf("%d pings at 5000 lost, want 1: %v", lost, r.got)
	}
	if !slices.Contains(r.got, "a: ping from b at 6000") || !slices.Contains(r.got, "b: ping from a at 6000") {
		t.Errorf("a ping after the loss was lost too: %v", r.got)
	}
	want := []string{
		`5000 rpc_lost rpc=acknowledge-checkpoint from=b to=a`,
		`12000 rpc_loss_unused rpc=acknowledge-checkpoint run_ended=true`,
	}
	if !slices.Equal(r.events, want) {
		t.Errorf("scheduler events\n%s\nwant\n%s", strings.Join(r.events, "\n"), strings.Join(want, "\n"))
	}
}

// lateSpawner starts the subtask a SubmitTask names on its host, and its
// input channel (as a TaskExecutor does).
type lateSpawner struct{ got *[]string }

func (s *lateSpawner) Step(o *Out, e *messages.Envelope) {
	if sub, ok := e.Body.(*messages.Envelope_SubmitTask); ok {
		o.Spawn(sub.SubmitTask.ExecutionId, recorderSpec{got: s.got})
		o.Spawn(sub.SubmitTask.ExecutionId+"/ch-0", recorderSpec{got: s.got})
	}
}

// recorder notes every heartbeat request and user action it gets.
type recorder struct{ got *[]string }

func (r *recorder) Step(o *Out, e *messages.Envelope) {
	switch e.Body.(type) {
	case *messages.Envelope_HeartbeatRequest, *messages.Envelope_Action:
		*r.got = append(*r.got, fmt.Sprintf("%s got from %s at %d", o.Name(), e.From, o.Now()))
	}
}

// A user action to an actor on a stalled host (kill-taskmanager) reaches
// it at once: killing a frozen process needs nothing of it. Everything
// else to the host waits.
func TestStallLetsUserActionsThrough(t *testing.T) {
	var got []string
	k := New(Config{HostOf: func(actor, _ string) string { return strings.ToUpper(actor) }, ActionText: testActionText})
	l := NewLoop(k, 1, nil)
	k.Register([]*messages.Spawned{l.Host("a", sendTo{to: "b"}), l.Host("b", &recorder{got: &got})})
	k.Push(&messages.Envelope{To: "a", From: SchedulerName, SenderSeq: 1, Body: &messages.Envelope_Start{Start: &messages.Start{}}})
	k.Push(&messages.Envelope{DeliverAt: 1000, To: SchedulerName, From: UserName, SenderSeq: 1, Body: &messages.Envelope_Action{Action: testAction("stall B 4")}})
	k.Push(&messages.Envelope{DeliverAt: 2000, To: "b", From: UserName, SenderSeq: 2, Body: &messages.Envelope_Action{Action: &messages.Action{
		Verb: messages.ActionVerb_ACTION_KILL_TASKMANAGER, TaskManager: "b"}}})
	l.Run(Forever, 0)
	if want := []string{"b got from user at 2000", "b got from a at 5000"}; !slices.Equal(got, want) {
		t.Fatalf("b got %v, want %v (the action at once, a's request of 3 ms when B wakes)", got, want)
	}
}

// sendTo sends to one heartbeat request due at 3 ms.
type sendTo struct{ to string }

func (s sendTo) Step(o *Out, e *messages.Envelope) {
	if _, ok := e.Body.(*messages.Envelope_Start); ok {
		o.Send(s.to, 3000, &messages.Envelope_HeartbeatRequest{HeartbeatRequest: &messages.HeartbeatRequest{}})
	}
}

type recorderSpec struct{ got *[]string }

func (recorderSpec) Component() string { return "recorder" }

// sendOnce submits c to b, due at 4.5 ms, and sends a heartbeat request to
// each of to, due at 5 ms.
type sendOnce struct{ to []string }

func (s sendOnce) Step(o *Out, e *messages.Envelope) {
	if _, ok := e.Body.(*messages.Envelope_Start); ok {
		o.Send("b", 4500, &messages.Envelope_SubmitTask{SubmitTask: &messages.SubmitTask{ExecutionId: "c"}})
		for _, to := range s.to {
			o.Send(to, 5000, &messages.Envelope_HeartbeatRequest{HeartbeatRequest: &messages.HeartbeatRequest{}})
		}
	}
}

// An envelope to an actor not started yet that a stalled host starts as
// it wakes waits until just after the host wakes: b (host B, stalled from
// 4 to 8 ms) gets the submission of c, due at 4.5 ms, at 8 ms and starts c
// then; a's request to c, due at 5 ms, reaches c at 8 ms + 1 µs (its input
// channel c/ch-0 too). Without the stall c would exist by 5 ms. An envelope
// to an actor no stalled host starts (d) is not held: it goes to an unknown
// receiver at once, as without a stall.
func TestStallHoldsEnvelopesToActorsNotStartedYet(t *testing.T) {
	run := func(to []string, actions ...string) ([]string, Result) {
		var got []string
		k := New(Config{
			HostOf: func(actor, spawnerHost string) string {
				if spawnerHost != "" {
					return spawnerHost
				}
				return strings.ToUpper(actor)
			},
			ActionText: testActionText,
		})
		l := NewLoop(k, 1, func(_ string, s Spec) (Component, error) {
			if r, ok := s.(recorderSpec); ok {
				return &recorder{got: r.got}, nil
			}
			return nil, fmt.Errorf("no component for %T", s)
		})
		k.Register([]*messages.Spawned{l.Host("a", sendOnce{to: to}), l.Host("b", &lateSpawner{got: &got})})
		k.Push(&messages.Envelope{To: "a", From: SchedulerName, SenderSeq: 1, Body: &messages.Envelope_Start{Start: &messages.Start{}}})
		k.Push(&messages.Envelope{To: "b", From: SchedulerName, SenderSeq: 2, Body: &messages.Envelope_Start{Start: &messages.Start{}}})
		for i, text := range actions {
			var at int64
			fmt.Sscanf(text, "%d", &at)
			k.Push(&messages.Envelope{DeliverAt: at, To: SchedulerName, From: UserName, SenderSeq: uint64(i + 1),
				Body: &messages.Envelope_Action{Action: testAction(text[strings.Index(text, " ")+1:])}})
		}
		l.Run(Forever, 0)
		return got, k.Result()
	}
	got, res := run([]string{"c", "c/ch-0"}, "4000 stall B 4")
	if res.Invariant != "" || !slices.Equal(got, []string{"c got from a at 8001", "c/ch-0 got from a at 8001"}) {
		t.Fatalf("with the stall: %v, invariant %q (%s); want c to get a's request at 8001", got, res.Invariant, res.Failure)
	}
	if got, res := run([]string{"c"}); res.Invariant != "" || !slices.Equal(got, []string{"c got from a at 5000"}) {
		t.Fatalf("without the stall: %v, invariant %q (%s); want c to get a's request at 5000", got, res.Invariant, res.Failure)
	}
	_, res = run([]string{"d"}, "4000 stall B 4")
	if res.Invariant != "unknown_receiver" || res.FailureVT != 5000 || !strings.Contains(res.Failure, `"d"`) {
		t.Fatalf("to d during the stall: invariant %q at %d (%s), want unknown_receiver at 5000 for d", res.Invariant, res.FailureVT, res.Failure)
	}
}
