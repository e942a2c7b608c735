package action

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flinksim/flinksim/messages"
)

func TestParse(t *testing.T) {
	cases := []struct {
		give string
		want Action
	}{
		{"at=90s kill-taskmanager tm-1", Action{At: 90 * time.Second, Verb: KillTaskManager, TaskManager: "tm-1"}},
		{"at=2 min trigger-checkpoint", Action{At: 2 * time.Minute, Verb: TriggerCheckpoint}},
		{"at=3m stop-with-savepoint", Action{At: 3 * time.Minute, Verb: StopWithSavepoint}},
		{"at=0 trigger-savepoint", Action{Verb: TriggerSavepoint}},
		{"  at=1500ms   rescale 3 ", Action{At: 1500 * time.Millisecond, Verb: Rescale, Parallelism: 3}},
		{"at=1s rescale 4 max-parallelism=256", Action{At: time.Second, Verb: Rescale, Parallelism: 4, MaxParallelism: 256}},
		{"at=2s pause-partition 2", Action{At: 2 * time.Second, Verb: PausePartition, Partition: 2}},
		{"at=3s resume-partition 0", Action{At: 3 * time.Second, Verb: ResumePartition}},
		{"at=4s set job.watermark.idleness=5s", Action{At: 4 * time.Second, Verb: Set, Key: "job.watermark.idleness", Value: "5s"}},
	}
	for _, c := range cases {
		got, err := Parse(c.give)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.give, got, err, c.want)
		}
		again, err := Parse(got.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("Parse(String()) of %q = %+v, %v", c.give, again, err)
		}
		if back := FromMessage(got.Message(true)); !reflect.DeepEqual(back, got) {
			t.Errorf("FromMessage(Message()) of %q = %+v", c.give, back)
		}
	}
}

// A send-event keeps its fields as given, in order, for the log; the
// broker's view of them is typed.
func TestParseSendEvent(t *testing.T) {
	a, err := Parse("at=40s send-event  ts=now-30s key=user-7 amount=12.5 partition=1 page=/x")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := a.String(), "at=40s send-event ts=now-30s key=user-7 amount=12.5 partition=1 page=/x"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	want := Event{Key: "user-7", Ts: -30000, Now: true, Partition: 1, Fields: [][2]string{{"amount", "12.5"}, {"page", "/x"}},
		Given: [][2]string{{"ts", "now-30s"}, {"key", "user-7"}, {"amount", "12.5"}, {"partition", "1"}, {"page", "/x"}}}
	if !reflect.DeepEqual(a.Event, want) {
		t.Errorf("Event = %+v, want %+v", a.Event, want)
	}
	m := a.Message(false)
	if m.Verb != messages.ActionVerb_ACTION_SEND_EVENT || m.Event.Key != "user-7" || m.Event.Ts != -30000 || !m.Event.TsNow || m.Event.Partition != 1 {
		t.Errorf("Message() = %v", m)
	}
	if back := FromMessage(m); !reflect.DeepEqual(back, a) || Text(m) != a.String() {
		t.Errorf("FromMessage(Message()) = %+v (%q)", back, Text(m))
	}
	b, err := Parse("at=1s send-event key=a ts=17")
	if err != nil || b.Event.Partition != -1 || b.Event.Ts != 17 || b.Event.Now {
		t.Errorf("Parse without partition = %+v, %v", b.Event, err)
	}
}

// Every verb reads back from its word, and its wire number is the
// proto's.
func TestVerbs(t *testing.T) {
	for _, v := range verbs {
		got, ok := verbNamed(v.String())
		if !ok || got != v {
			t.Errorf("verbNamed(%q) = %v, %v", v.String(), got, ok)
		}
		if _, ok := messages.ActionVerb_name[int32(v)]; !ok || v == 0 {
			t.Errorf("verb %s has no messages.ActionVerb", v)
		}
	}
	if len(verbs) != len(messages.ActionVerb_name)-1 {
		t.Errorf("%d verbs, %d on the wire (besides UNSPECIFIED)", len(verbs), len(messages.ActionVerb_name)-1)
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]string{
		"kill-taskmanager tm-1":                       "must start with at=",
		"at=90s":                                      "missing verb",
		"at=90x kill-taskmanager tm-1":                "at=90x",
		"at=90s explode":                              `unknown verb "explode"`,
		"at=90s kill-taskmanager":                     "needs one task manager name",
		"at=90s kill-taskmanager worker1":             "needs one task manager name",
		"at=90s kill-taskmanager tm-0":                "is not a task manager name",
		"at=90s rescale":                              "needs the new parallelism",
		"at=90s rescale 0":                            "Operator parallelism not within bounds: 0",
		"at=90s trigger-checkpoint now":               "takes no argument",
		"at=90 kill-taskmanager tm-1":                 "at=90 needs a unit, e.g. at=90s or at=90ms",
		"at=-5s trigger-checkpoint":                   "an action's time cannot be negative",
		"at=90s rescale 3 max=4":                      "the second argument of rescale is max-parallelism=N",
		"at=90s rescale 3 max-parallelism=0":          "the second argument of rescale is max-parallelism=N",
		"at=5s send-event key=a ts=now amount=1e400":  "send-event: amount=1e400: beyond the range of a double",
		"at=5s send-event key=a ts=now amount=-2E308": "send-event: amount=-2E308: beyond the range of a double",
	}
	for give, want := range cases {
		_, err := Parse(give)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error %v, want it to contain %q", give, err, want)
		}
	}
}

func TestParseScript(t *testing.T) {
	as, err := ParseScript("a.txt", "# failures\n\nat=2m kill-taskmanager tm-2 # the second one\nat=1m trigger-checkpoint\n")
	if err != nil || len(as) != 2 {
		t.Fatalf("%v %v", as, err)
	}
	Sort(as)
	if as[0].Verb != TriggerCheckpoint || as[1].Verb != KillTaskManager {
		t.Fatalf("not sorted by time: %v", as)
	}
	_, err = ParseScript("a.txt", "at=1m trigger-checkpoint\nat=oops rescale 2\n")
	if err == nil || !strings.HasPrefix(err.Error(), "a.txt:2: ") {
		t.Fatalf("error %v, want a.txt:2:", err)
	}
	// a check's refusal is reported at the action's line
	check := func(a Action) error {
		if a.Verb == Rescale {
			return errors.New("no rescale today")
		}
		return nil
	}
	_, err = ParseScriptChecked("a.txt", "at=1m trigger-checkpoint\n\n# x\nat=2m rescale 2\n", check)
	if err == nil || err.Error() != "a.txt:4: no rescale today" {
		t.Fatalf("error %v, want a.txt:4: no rescale today", err)
	}
	// a number within the range of a double, or text, is fine
	for _, v := range []string{"1e308", "1e-400", "12x", "Infinity"} {
		if _, err := parseEvent("key=a ts=now amount=" + v); err != nil {
			t.Errorf("amount=%s: %v", v, err)
		}
	}
}
