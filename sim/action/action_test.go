package action

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	cases := []struct {
		give string
		want Action
	}{
		{"at=90s kill-taskmanager tm-1", Action{90 * time.Second, KillTaskManager, "tm-1"}},
		{"at=2 min trigger-checkpoint", Action{2 * time.Minute, TriggerCheckpoint, ""}},
		{"at=3m stop-with-savepoint", Action{3 * time.Minute, StopWithSavepoint, ""}},
		{"at=0 trigger-savepoint", Action{0, TriggerSavepoint, ""}},
		{"  at=1500ms   rescale 3 ", Action{1500 * time.Millisecond, Rescale, "3"}},
	}
	for _, c := range cases {
		got, err := Parse(c.give)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.give, got, err, c.want)
		}
		again, err := Parse(got.String())
		if err != nil || again != got {
			t.Errorf("Parse(String()) of %q = %+v, %v", c.give, again, err)
		}
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
		if _, err := ParseEvent("key=a ts=now amount=" + v); err != nil {
			t.Errorf("amount=%s: %v", v, err)
		}
	}
}
