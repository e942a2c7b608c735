// Package action parses the user actions of a run: an action happens at a
// virtual time and is written to the log, so a run with actions replays
// exactly. Syntax (one action per --action flag or per line of an --actions
// file; blank lines and lines starting with # are skipped):
//
//	at=90s kill-taskmanager tm-1
//	at=2 min trigger-checkpoint
//	at=3m trigger-savepoint
//	at=4m stop-with-savepoint
//	at=5m rescale 3
//
// The time is a Flink duration (sim/config.ParseDuration) from the start of
// the run.
package action

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flinksim/flinksim/sim/config"
)

// Verb names what an action does.
type Verb string

// The verbs.
const (
	KillTaskManager   Verb = "kill-taskmanager"    // arg: task manager name (tm-N)
	TriggerCheckpoint Verb = "trigger-checkpoint"  // no arg
	TriggerSavepoint  Verb = "trigger-savepoint"   // no arg
	StopWithSavepoint Verb = "stop-with-savepoint" // no arg
	Rescale           Verb = "rescale"             // arg: new parallelism [max-parallelism=N]
)

var verbs = []Verb{KillTaskManager, TriggerCheckpoint, TriggerSavepoint, StopWithSavepoint, Rescale}

// Action is one parsed action.
type Action struct {
	At   time.Duration // virtual time from the start of the run
	Verb Verb
	Arg  string // the task manager for kill-taskmanager, the parallelism for rescale
}

// String renders the action in the syntax Parse reads.
func (a Action) String() string {
	s := "at=" + strings.ReplaceAll(config.FormatDuration(a.At), " ", "") + " " + string(a.Verb)
	if a.Arg != "" {
		s += " " + a.Arg
	}
	return s
}

// Parse reads one action. Errors name what is wrong and the allowed forms.
func Parse(s string) (Action, error) {
	f := strings.Fields(s)
	if len(f) == 0 || !strings.HasPrefix(f[0], "at=") {
		return Action{}, fmt.Errorf("action %q: must start with at=DURATION, e.g. 'at=90s kill-taskmanager tm-1'", s)
	}
	at := strings.TrimPrefix(f[0], "at=")
	rest := f[1:]
	// "at=2 min verb": a unit separated by a space
	if len(rest) > 0 && !isVerb(rest[0]) && strings.Trim(at, "0123456789") == "" {
		at += " " + rest[0]
		rest = rest[1:]
	}
	if at != "" && strings.Trim(at, "0123456789") == "" && at != "0" {
		// Flink would read a bare number as milliseconds; in an action that
		// is more likely a slip
		return Action{}, fmt.Errorf("action %q: at=%s needs a unit, e.g. at=%ss or at=%sms", s, at, at, at)
	}
	d, err := config.ParseDuration(at)
	if err != nil {
		return Action{}, fmt.Errorf("action %q: at=%s: %v", s, at, err)
	}
	if d < 0 {
		return Action{}, fmt.Errorf("action %q: at must not be negative", s)
	}
	if len(rest) == 0 {
		return Action{}, fmt.Errorf("action %q: missing verb; one of %s", s, verbList())
	}
	a := Action{At: d, Verb: Verb(rest[0])}
	args := rest[1:]
	switch a.Verb {
	case KillTaskManager:
		if len(args) != 1 || !strings.HasPrefix(args[0], "tm-") {
			return Action{}, fmt.Errorf("action %q: kill-taskmanager needs one task manager name, e.g. tm-1", s)
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(args[0], "tm-")); err != nil || n < 1 {
			return Action{}, fmt.Errorf("action %q: %q is not a task manager name (tm-1, tm-2, ...)", s, args[0])
		}
		a.Arg = args[0]
	case Rescale:
		if len(args) != 1 && len(args) != 2 {
			return Action{}, fmt.Errorf("action %q: rescale needs the new parallelism, e.g. 'rescale 3' or 'rescale 3 max-parallelism=256'", s)
		}
		p, err := strconv.Atoi(args[0])
		if err != nil || p < 1 || p > 32768 {
			return Action{}, fmt.Errorf("action %q: Operator parallelism not within bounds: %s", s, args[0])
		}
		a.Arg = args[0]
		if len(args) == 2 {
			mp, err := strconv.Atoi(strings.TrimPrefix(args[1], "max-parallelism="))
			if !strings.HasPrefix(args[1], "max-parallelism=") || err != nil || mp < 1 || mp > 32768 {
				return Action{}, fmt.Errorf("action %q: %q: the second argument of rescale is max-parallelism=N, 1 <= N <= 32768", s, args[1])
			}
			a.Arg += " " + args[1]
		}
	case TriggerCheckpoint, TriggerSavepoint, StopWithSavepoint:
		if len(args) != 0 {
			return Action{}, fmt.Errorf("action %q: %s takes no argument", s, a.Verb)
		}
	default:
		return Action{}, fmt.Errorf("action %q: unknown verb %q; one of %s", s, rest[0], verbList())
	}
	return a, nil
}

// ParseScript reads an actions file: one action per line, blank lines and
// # comments (whole lines or after an action) skipped. Errors are FILE:LINE: what is wrong.
func ParseScript(name, text string) ([]Action, error) {
	var out []Action
	for i, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#") // a comment, whole-line or after the action
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		a, err := Parse(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, i+1, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// Sort orders actions by time, keeping the given order among equal times.
func Sort(as []Action) {
	slices.SortStableFunc(as, func(a, b Action) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
}

func isVerb(s string) bool { return slices.Contains(verbs, Verb(s)) }

func verbList() string {
	var s []string
	for _, v := range verbs {
		s = append(s, string(v))
	}
	return strings.Join(s, ", ")
}
