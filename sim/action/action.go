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
//	at=40s send-event key=user-7 ts=now-30s partition=1 amount=12.5
//	at=50s pause-partition 2
//	at=70s resume-partition 2
//	at=80s set execution.checkpointing.unaligned.enabled=true
//	at=85s partition-network tm-1 jobmanager for 10s
//	at=90s stall-taskmanager tm-2 for 12s
//	at=95s network-jitter 3ms for 10s
//	at=99s lose-rpc acknowledge-checkpoint within 5s
//	at=100s fail-checkpoint-storage for 4s
//	at=110s kafka-unavailable for 20s
//
// The time is a Flink duration (sim/config.ParseDuration) from the start of
// the run.
package action

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/input"
)

// Verb names what an action does; its values are the wire's
// messages.ActionVerb, its String the --action syntax's word.
type Verb int32

// The verbs.
const (
	KillTaskManager   = Verb(messages.ActionVerb_ACTION_KILL_TASKMANAGER)    // TaskManager: tm-N
	TriggerCheckpoint = Verb(messages.ActionVerb_ACTION_TRIGGER_CHECKPOINT)  // no argument
	TriggerSavepoint  = Verb(messages.ActionVerb_ACTION_TRIGGER_SAVEPOINT)   // no argument
	StopWithSavepoint = Verb(messages.ActionVerb_ACTION_STOP_WITH_SAVEPOINT) // no argument
	Rescale           = Verb(messages.ActionVerb_ACTION_RESCALE)             // Parallelism [max-parallelism=MaxParallelism]
	// SendEvent appends one record to the source topic (the broker does):
	// key=K ts=MS|now|now-D [partition=N] [field=value ...] (Event)
	SendEvent = Verb(messages.ActionVerb_ACTION_SEND_EVENT)
	// PausePartition and ResumePartition stop and restart the producer of a
	// source partition (the generator appends nothing to it meanwhile; an
	// events file's paced records wait): Partition, the partition number.
	PausePartition  = Verb(messages.ActionVerb_ACTION_PAUSE_PARTITION)
	ResumePartition = Verb(messages.ActionVerb_ACTION_RESUME_PARTITION)
	// Set changes one of SetKeys while the job runs: KEY=VALUE (Key, Value).
	Set = Verb(messages.ActionVerb_ACTION_SET)
	// PartitionNetwork cuts the network between two hosts for a while
	// (the scheduler drops every envelope between them): "A B for D"
	// (Cut), A and B each a task manager (tm-N) or jobmanager, D a duration.
	PartitionNetwork = Verb(messages.ActionVerb_ACTION_PARTITION_NETWORK)
	// StallTaskManager freezes a TaskManager's process for a while (a long
	// garbage collection, a suspended VM): "tm-N for D" (Stall). Nothing
	// reaches its actors meanwhile; then it wakes with everything held, a
	// zombie if its heartbeats timed out.
	StallTaskManager = Verb(messages.ActionVerb_ACTION_STALL_TASKMANAGER)
	// NetworkJitter delays every envelope between two hosts by up to a
	// maximum for a while, one connection's order kept: "MAX for D" (Jitter).
	NetworkJitter = Verb(messages.ActionVerb_ACTION_NETWORK_JITTER)
	// LoseRPC has the network lose the next RPC of a kind within a while
	// (Pekko delivers at most once): "RPC [on TASK] within D" (Lose), RPC
	// one of messages.LostRPCKinds, TASK a subtask it goes to or comes from.
	LoseRPC = Verb(messages.ActionVerb_ACTION_LOSE_RPC)
	// FailCheckpointStorage makes the checkpoint storage fail every write
	// for a while: "for D" (Outage). A task whose snapshot uploads then
	// declines the checkpoint (CHECKPOINT_ASYNC_EXCEPTION).
	FailCheckpointStorage = Verb(messages.ActionVerb_ACTION_FAIL_CHECKPOINT_STORAGE)
	// KafkaUnavailable makes the Kafka broker unreachable for a while: "for
	// D" (Outage). Fetches, produces and transaction requests wait for it
	// (the clients retry), the broker's own timers go on.
	KafkaUnavailable = Verb(messages.ActionVerb_ACTION_KAFKA_UNAVAILABLE)
)

// lostRPCWords are the words of the RPCs lose-rpc can lose
// (messages.LostRPCKinds), for the help and the errors.
func lostRPCWords() string {
	var w []string
	for _, k := range messages.LostRPCKinds {
		w = append(w, k.Word)
	}
	return strings.Join(w, ", ")
}

var verbNames = map[Verb]string{
	KillTaskManager: "kill-taskmanager", TriggerCheckpoint: "trigger-checkpoint", TriggerSavepoint: "trigger-savepoint",
	StopWithSavepoint: "stop-with-savepoint", Rescale: "rescale", SendEvent: "send-event", PausePartition: "pause-partition",
	ResumePartition: "resume-partition", Set: "set", PartitionNetwork: "partition-network",
	StallTaskManager: "stall-taskmanager", NetworkJitter: "network-jitter", LoseRPC: "lose-rpc",
	FailCheckpointStorage: "fail-checkpoint-storage", KafkaUnavailable: "kafka-unavailable",
}

// String is the verb as the --action syntax spells it.
func (v Verb) String() string {
	if n, ok := verbNames[v]; ok {
		return n
	}
	return "verb-" + strconv.Itoa(int(v))
}

// verbNamed is the verb the --action syntax spells s.
func verbNamed(s string) (Verb, bool) {
	for _, v := range verbs {
		if verbNames[v] == s {
			return v, true
		}
	}
	return 0, false
}

// verbs are the action verbs, in the order the help lists them.
var verbs = []Verb{KillTaskManager, TriggerCheckpoint, TriggerSavepoint, StopWithSavepoint, Rescale,
	SendEvent, PausePartition, ResumePartition, Set, PartitionNetwork, StallTaskManager, NetworkJitter, LoseRPC,
	FailCheckpointStorage, KafkaUnavailable}

// SetKeys are the settings `set` may change during a run, and how each is
// applied (README.md, "Actions"): the first two are job configuration, which
// a running Flink job only takes through a restart, so the job stops with a
// savepoint and a new job starts from it with the new value; the consumer's
// isolation level only changes which records the output view shows.
var SetKeys = []string{"execution.checkpointing.unaligned.enabled", "job.watermark.idleness", "sim.output.isolation-level"}

// Action is one parsed action: the verb and, typed, what it names. Only the
// fields of its verb are set.
type Action struct {
	At   time.Duration // virtual time from the start of the run
	Verb Verb
	// TaskManager is the task manager kill-taskmanager names (tm-N).
	TaskManager string
	// Parallelism and MaxParallelism (0: not given) are rescale's.
	Parallelism, MaxParallelism int
	// Partition is the source partition pause-partition and
	// resume-partition name.
	Partition int
	// Key and Value are set's setting.
	Key, Value string
	// Event is send-event's record.
	Event Event
	// Cut is partition-network's cut.
	Cut Partition
	// Stall is stall-taskmanager's, Jitter network-jitter's, Lose lose-rpc's.
	Stall  Stall
	Jitter Jitter
	Lose   Lose
	// Outage is how long fail-checkpoint-storage and kafka-unavailable last.
	Outage time.Duration
}

// Arg renders the action's argument in the syntax Parse reads ("" for a
// verb without one): what follows the verb in String.
func (a Action) Arg() string {
	switch a.Verb {
	case KillTaskManager:
		return a.TaskManager
	case Rescale:
		s := strconv.Itoa(a.Parallelism)
		if a.MaxParallelism > 0 {
			s += " max-parallelism=" + strconv.Itoa(a.MaxParallelism)
		}
		return s
	case SendEvent:
		return a.Event.String()
	case PausePartition, ResumePartition:
		return strconv.Itoa(a.Partition)
	case Set:
		return a.Key + "=" + a.Value
	case PartitionNetwork:
		return a.Cut.String()
	case StallTaskManager:
		return a.Stall.String()
	case NetworkJitter:
		return a.Jitter.String()
	case LoseRPC:
		return a.Lose.String()
	case FailCheckpointStorage, KafkaUnavailable:
		return "for " + compact(a.Outage)
	}
	return ""
}

// String renders the action in the syntax Parse reads: the text the log's
// header and action events show.
func (a Action) String() string {
	s := "at=" + strings.ReplaceAll(config.FormatDuration(a.At), " ", "") + " " + a.Verb.String()
	if arg := a.Arg(); arg != "" {
		s += " " + arg
	}
	return s
}

// jsonAction is an action in JSON: its time in nanoseconds, the verb's word
// and the argument's text, as the swarm's kept scenarios
// (seed-S.scenario.json) hold it.
type jsonAction struct {
	At   time.Duration
	Verb string
	Arg  string
}

// MarshalJSON writes {"At": ns, "Verb": "word", "Arg": "argument"}.
func (a Action) MarshalJSON() ([]byte, error) {
	return json.Marshal(jsonAction{At: a.At, Verb: a.Verb.String(), Arg: a.Arg()})
}

// UnmarshalJSON reads what MarshalJSON writes, the argument through Parse.
func (a *Action) UnmarshalJSON(b []byte) error {
	var j jsonAction
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	text := "at=0 " + j.Verb
	if j.Arg != "" {
		text += " " + j.Arg
	}
	p, err := Parse(text)
	if err != nil {
		return err
	}
	p.At = j.At
	*a = p
	return nil
}

// NewEvent is the send-event of a record with key, event time ts (ms) and
// partition, given in that order.
func NewEvent(key string, ts int64, partition int) Event {
	return Event{Key: key, Ts: ts, Partition: partition,
		Given: [][2]string{{"key", key}, {"ts", strconv.FormatInt(ts, 10)}, {"partition", strconv.Itoa(partition)}}}
}

// Equal reports whether a and b are the same action.
func (a Action) Equal(b Action) bool { return a.String() == b.String() }

// Message is the action on the wire.
func (a Action) Message(live bool) *messages.Action {
	m := &messages.Action{Live: live, AtNanos: int64(a.At), Verb: messages.ActionVerb(a.Verb)}
	switch a.Verb {
	case KillTaskManager:
		m.TaskManager = a.TaskManager
	case Rescale:
		m.Parallelism, m.MaxParallelism = int32(a.Parallelism), int32(a.MaxParallelism)
	case PausePartition, ResumePartition:
		m.Partition = int32(a.Partition)
	case Set:
		m.Setting = &messages.Setting{Key: a.Key, Value: a.Value}
	case SendEvent:
		e := &messages.ActionEvent{Key: a.Event.Key, Ts: a.Event.Ts, TsNow: a.Event.Now, Partition: int32(a.Event.Partition)}
		for _, f := range a.Event.Given {
			e.Given = append(e.Given, &messages.ActionField{Name: f[0], Value: f[1]})
		}
		m.Event = e
	case PartitionNetwork:
		m.Cut = &messages.NetworkCut{HostA: a.Cut.A, HostB: a.Cut.B, DurationNanos: int64(a.Cut.Duration)}
	case StallTaskManager:
		m.Stall = &messages.HostStall{Host: a.Stall.TaskManager, DurationNanos: int64(a.Stall.Duration)}
	case NetworkJitter:
		m.Jitter = &messages.NetworkJitter{MaxNanos: int64(a.Jitter.Max), DurationNanos: int64(a.Jitter.Duration)}
	case LoseRPC:
		m.Lose = &messages.LoseRPC{Rpc: a.Lose.RPC, WithinNanos: int64(a.Lose.Within), Task: a.Lose.Task}
	case FailCheckpointStorage, KafkaUnavailable:
		m.DurationNanos = int64(a.Outage)
	}
	return m
}

// FromMessage is the action a message carries (Message's inverse; nothing
// is parsed: the fields were checked where the action's text entered).
func FromMessage(m *messages.Action) Action {
	a := Action{At: time.Duration(m.GetAtNanos()), Verb: Verb(m.GetVerb()), TaskManager: m.GetTaskManager(),
		Parallelism: int(m.GetParallelism()), MaxParallelism: int(m.GetMaxParallelism()), Partition: int(m.GetPartition()),
		Key: m.GetSetting().GetKey(), Value: m.GetSetting().GetValue(), Outage: time.Duration(m.GetDurationNanos())}
	if e := m.GetEvent(); e != nil {
		a.Event = Event{Key: e.Key, Ts: e.Ts, Now: e.TsNow, Partition: int(e.Partition)}
		for _, f := range e.Given {
			a.Event.Given = append(a.Event.Given, [2]string{f.Name, f.Value})
			if f.Name != "key" && f.Name != "ts" && f.Name != "partition" {
				a.Event.Fields = append(a.Event.Fields, [2]string{f.Name, f.Value})
			}
		}
	}
	if c := m.GetCut(); c != nil {
		a.Cut = Partition{A: c.HostA, B: c.HostB, Duration: time.Duration(c.DurationNanos)}
	}
	if st := m.GetStall(); st != nil {
		a.Stall = Stall{TaskManager: st.Host, Duration: time.Duration(st.DurationNanos)}
	}
	if j := m.GetJitter(); j != nil {
		a.Jitter = Jitter{Max: time.Duration(j.MaxNanos), Duration: time.Duration(j.DurationNanos)}
	}
	if l := m.GetLose(); l != nil {
		a.Lose = Lose{RPC: l.Rpc, Task: l.Task, Within: time.Duration(l.WithinNanos)}
	}
	return a
}

// Text is the text of the action a message carries, as the log shows it.
func Text(m *messages.Action) string { return FromMessage(m).String() }

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
	if err != nil && strings.HasPrefix(at, "-") {
		return Action{}, fmt.Errorf("action %q: at=%s: an action's time cannot be negative (virtual time starts at 0; %v)", s, at, err)
	}
	if err != nil {
		return Action{}, fmt.Errorf("action %q: at=%s: %v", s, at, err)
	}
	if d < 0 {
		return Action{}, fmt.Errorf("action %q: at must not be negative", s)
	}
	if len(rest) == 0 {
		return Action{}, fmt.Errorf("action %q: missing verb; one of %s", s, verbList())
	}
	verb, ok := verbNamed(rest[0])
	if !ok {
		return Action{}, fmt.Errorf("action %q: unknown verb %q; one of %s", s, rest[0], verbList())
	}
	a := Action{At: d, Verb: verb}
	args := rest[1:]
	switch a.Verb {
	case KillTaskManager:
		if len(args) != 1 || !strings.HasPrefix(args[0], "tm-") {
			return Action{}, fmt.Errorf("action %q: kill-taskmanager needs one task manager name, e.g. tm-1", s)
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(args[0], "tm-")); err != nil || n < 1 {
			return Action{}, fmt.Errorf("action %q: %q is not a task manager name (tm-1, tm-2, ...)", s, args[0])
		}
		a.TaskManager = args[0]
	case Rescale:
		if len(args) != 1 && len(args) != 2 {
			return Action{}, fmt.Errorf("action %q: rescale needs the new parallelism, e.g. 'rescale 3' or 'rescale 3 max-parallelism=256'", s)
		}
		p, err := strconv.Atoi(args[0])
		if err != nil || p < 1 || p > 32768 {
			return Action{}, fmt.Errorf("action %q: Operator parallelism not within bounds: %s", s, args[0])
		}
		a.Parallelism = p
		if len(args) == 2 {
			mp, err := strconv.Atoi(strings.TrimPrefix(args[1], "max-parallelism="))
			if !strings.HasPrefix(args[1], "max-parallelism=") || err != nil || mp < 1 || mp > 32768 {
				return Action{}, fmt.Errorf("action %q: %q: the second argument of rescale is max-parallelism=N, 1 <= N <= 32768", s, args[1])
			}
			a.MaxParallelism = mp
		}
	case SendEvent:
		e, err := parseEvent(strings.Join(args, " "))
		if err != nil {
			return Action{}, fmt.Errorf("action %q: %v", s, err)
		}
		a.Event = e
	case PausePartition, ResumePartition:
		if len(args) != 1 {
			return Action{}, fmt.Errorf("action %q: %s needs one partition number, e.g. '%s 0'", s, a.Verb, a.Verb)
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 0 || n > math.MaxInt32 {
			return Action{}, fmt.Errorf("action %q: %q is not a partition number (0, 1, ...)", s, args[0])
		}
		a.Partition = n
	case Set:
		if len(args) != 1 || !strings.Contains(args[0], "=") {
			return Action{}, fmt.Errorf("action %q: set needs KEY=VALUE, KEY one of %s", s, strings.Join(SetKeys, ", "))
		}
		k, v, _ := strings.Cut(args[0], "=")
		if !slices.Contains(SetKeys, k) {
			return Action{}, fmt.Errorf("action %q: %s cannot be set while the job runs; set takes one of %s", s, k, strings.Join(SetKeys, ", "))
		}
		probe := config.Default()
		if err := probe.Set(k, v); err != nil {
			return Action{}, fmt.Errorf("action %q: %v", s, err)
		}
		a.Key, a.Value = k, v
	case PartitionNetwork:
		p, err := parsePartition(strings.Join(args, " "))
		if err != nil {
			return Action{}, fmt.Errorf("action %q: %v", s, err)
		}
		a.Cut = p
	case StallTaskManager:
		st, err := ParseStall(strings.Join(args, " "))
		if err != nil {
			return Action{}, fmt.Errorf("action %q: %v", s, err)
		}
		a.Stall = st
	case NetworkJitter:
		j, err := ParseJitter(strings.Join(args, " "))
		if err != nil {
			return Action{}, fmt.Errorf("action %q: %v", s, err)
		}
		a.Jitter = j
	case LoseRPC:
		l, err := ParseLose(strings.Join(args, " "))
		if err != nil {
			return Action{}, fmt.Errorf("action %q: %v", s, err)
		}
		a.Lose = l
	case FailCheckpointStorage, KafkaUnavailable:
		if len(args) < 2 || args[0] != "for" {
			return Action{}, fmt.Errorf("action %q: %s needs 'for DURATION', e.g. '%s for 5s'", s, a.Verb, a.Verb)
		}
		d, err := positive(a.Verb.String(), args[1:])
		if err != nil {
			return Action{}, fmt.Errorf("action %q: %v", s, err)
		}
		a.Outage = d
	case TriggerCheckpoint, TriggerSavepoint, StopWithSavepoint:
		if len(args) != 0 {
			return Action{}, fmt.Errorf("action %q: %s takes no argument", s, a.Verb)
		}
	}
	return a, nil
}

// ParseScript reads an actions file: one action per line, blank lines and
// # comments (whole lines or after an action) skipped. Errors are FILE:LINE: what is wrong.
func ParseScript(name, text string) ([]Action, error) {
	return ParseScriptChecked(name, text, nil)
}

// ParseScriptChecked is ParseScript with check, when not nil, run on every
// action parsed: its error is reported as a parse error, at the action's
// FILE:LINE (the settings' checks of an action, such as a send-event's
// event time against the window, cluster.CheckAction).
func ParseScriptChecked(name, text string, check func(Action) error) ([]Action, error) {
	var out []Action
	for i, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#") // a comment, whole-line or after the action
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		a, err := Parse(line)
		if err == nil && check != nil {
			err = check(a)
		}
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

// Event is a parsed send-event argument.
type Event struct {
	Key string
	// Ts is the event time in ms; with Now set it is an offset from "now"
	// (the newest event time in the source topic, see README.md).
	Ts        int64
	Now       bool
	Partition int // -1: Kafka's default partitioner picks one
	// Fields are the record's other fields, in the given order, each value
	// a JSON number when it parses as one, else a JSON string.
	Fields [][2]string
	// Given is every field=value as given, key, ts and partition among
	// them, in order: the text String renders.
	Given [][2]string
}

// String renders the event's fields as given, the send-event argument.
func (e Event) String() string {
	var b strings.Builder
	for i, f := range e.Given {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f[0] + "=" + f[1])
	}
	return b.String()
}

// parseEvent reads the argument of a send-event action.
func parseEvent(arg string) (Event, error) {
	e := Event{Partition: -1}
	haveKey, haveTs := false, false
	for _, f := range strings.Fields(arg) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return e, fmt.Errorf("send-event: %q is not field=value", f)
		}
		e.Given = append(e.Given, [2]string{k, v})
		switch k {
		case "key":
			if v == "" {
				return e, fmt.Errorf("send-event: key= must not be empty")
			}
			e.Key, haveKey = v, true
		case "ts":
			haveTs = true
			if v == "now" || strings.HasPrefix(v, "now-") || strings.HasPrefix(v, "now+") {
				e.Now = true
				if v == "now" {
					continue
				}
				d, err := config.ParseDuration(v[4:])
				if err != nil {
					return e, fmt.Errorf("send-event: ts=%s: %v", v, err)
				}
				e.Ts = d.Milliseconds()
				if v[3] == '-' {
					e.Ts = -e.Ts
				}
				continue
			}
			ts, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return e, fmt.Errorf("send-event: ts=%s: expected event time in ms, now, or now-DURATION (e.g. now-30s)", v)
			}
			if ts == math.MinInt64 {
				return e, fmt.Errorf("send-event: ts=%s: Long.MIN_VALUE is no timestamp", v)
			}
			e.Ts = ts
		case "partition":
			p, err := strconv.Atoi(v)
			if err != nil || p < 0 || p > math.MaxInt32 {
				return e, fmt.Errorf("send-event: partition=%s: expected a partition number (0, 1, ...)", v)
			}
			e.Partition = p
		default:
			if _, err := strconv.ParseFloat(v, 64); errors.Is(err, strconv.ErrRange) && json.Valid([]byte(v)) {
				return e, fmt.Errorf("send-event: %s=%s: beyond the range of a double (largest 1.7976931348623157E308); a number in a record must be one", k, input.Cut(v))
			}
			e.Fields = append(e.Fields, [2]string{k, v})
		}
	}
	if !haveKey || !haveTs {
		return e, fmt.Errorf("send-event needs key=K and ts=MS|now|now-DURATION, e.g. 'send-event key=user-7 ts=now-30s'")
	}
	return e, nil
}

func isVerb(s string) bool { _, ok := verbNamed(s); return ok }

func verbList() string {
	var s []string
	for _, v := range verbs {
		s = append(s, v.String())
	}
	return strings.Join(s, ", ")
}

// JobManagerHost is the host partition-network names for the JobManager's
// process (its other hosts are the TaskManagers, tm-N).
const JobManagerHost = "jobmanager"

// Partition is a parsed partition-network argument.
type Partition struct {
	A, B     string        // jobmanager or tm-N, A != B
	Duration time.Duration // > 0
}

// parsePartition reads the argument of a partition-network action.
func parsePartition(arg string) (Partition, error) {
	f := strings.Fields(arg)
	if len(f) < 4 || f[2] != "for" {
		return Partition{}, fmt.Errorf("partition-network needs 'A B for DURATION', A and B each jobmanager or a task manager (tm-N), e.g. 'partition-network tm-1 jobmanager for 10s'")
	}
	for _, h := range f[:2] {
		if h == JobManagerHost {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(h, "tm-")); !strings.HasPrefix(h, "tm-") || err != nil || n < 1 {
			return Partition{}, fmt.Errorf("partition-network: %q is neither jobmanager nor a task manager name (tm-1, tm-2, ...)", h)
		}
	}
	if f[0] == f[1] {
		return Partition{}, fmt.Errorf("partition-network: %s cannot be cut off from itself", f[0])
	}
	d, err := config.ParseDuration(strings.Join(f[3:], " "))
	if err != nil {
		return Partition{}, fmt.Errorf("partition-network: for %s: %v", strings.Join(f[3:], " "), err)
	}
	if d <= 0 {
		return Partition{}, fmt.Errorf("partition-network: the cut must last more than 0 ms")
	}
	return Partition{A: f[0], B: f[1], Duration: d}, nil
}

// String renders the cut as partition-network's argument: "A B for D".
func (p Partition) String() string {
	return p.A + " " + p.B + " for " + strings.ReplaceAll(config.FormatDuration(p.Duration), " ", "")
}

// Stall is a parsed stall-taskmanager argument.
type Stall struct {
	TaskManager string        // tm-N
	Duration    time.Duration // > 0
}

// ParseStall reads the argument of a stall-taskmanager action.
func ParseStall(arg string) (Stall, error) {
	f := strings.Fields(arg)
	if len(f) < 3 || f[1] != "for" {
		return Stall{}, fmt.Errorf("stall-taskmanager needs 'tm-N for DURATION', e.g. 'stall-taskmanager tm-1 for 12s'")
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(f[0], "tm-")); !strings.HasPrefix(f[0], "tm-") || err != nil || n < 1 {
		return Stall{}, fmt.Errorf("stall-taskmanager: %q is not a task manager name (tm-1, tm-2, ...)", f[0])
	}
	d, err := positive("stall-taskmanager", f[2:])
	if err != nil {
		return Stall{}, err
	}
	return Stall{TaskManager: f[0], Duration: d}, nil
}

// String renders the argument in the form ParseStall reads.
func (s Stall) String() string { return s.TaskManager + " for " + compact(s.Duration) }

// Jitter is a parsed network-jitter argument.
type Jitter struct {
	Max, Duration time.Duration // both > 0
}

// ParseJitter reads the argument of a network-jitter action.
func ParseJitter(arg string) (Jitter, error) {
	f := strings.Fields(arg)
	i := slices.Index(f, "for")
	if i < 1 || i == len(f)-1 {
		return Jitter{}, fmt.Errorf("network-jitter needs 'MAX for DURATION', e.g. 'network-jitter 3ms for 10s'")
	}
	m, err := positive("network-jitter", f[:i])
	if err != nil {
		return Jitter{}, err
	}
	if m > time.Second {
		return Jitter{}, fmt.Errorf("network-jitter: a jitter of %s is more than 1 s; that is an outage (partition-network)", compact(m))
	}
	d, err := positive("network-jitter", f[i+1:])
	if err != nil {
		return Jitter{}, err
	}
	return Jitter{Max: m, Duration: d}, nil
}

// String renders the argument in the form ParseJitter reads.
func (j Jitter) String() string { return compact(j.Max) + " for " + compact(j.Duration) }

// Lose is a parsed lose-rpc argument.
type Lose struct {
	RPC messages.LostRPC // one of messages.LostRPCKinds
	// Task, when set, is the subtask (VERTEX-INDEX: window-1, any attempt)
	// the RPC goes to or comes from
	Task   string
	Within time.Duration // > 0
}

// ParseLose reads the argument of a lose-rpc action: "RPC [on TASK] within D".
func ParseLose(arg string) (Lose, error) {
	f := strings.Fields(arg)
	var l Lose
	if len(f) >= 5 && f[1] == "on" {
		l.Task = f[2]
		if n := strings.LastIndex(l.Task, "-"); n < 1 || strings.Contains(l.Task, "#") || strings.Trim(l.Task[n+1:], "0123456789") != "" || n == len(l.Task)-1 {
			return Lose{}, fmt.Errorf("lose-rpc: on %s: a subtask is VERTEX-INDEX, e.g. window-1 (any attempt)", l.Task)
		}
		f = append(f[:1], f[3:]...)
	}
	if len(f) < 3 || f[1] != "within" {
		return Lose{}, fmt.Errorf("lose-rpc needs 'RPC [on TASK] within DURATION', RPC one of %s, e.g. 'lose-rpc acknowledge-checkpoint within 5s' or 'lose-rpc notify-checkpoint-complete on window-1 within 5s'", lostRPCWords())
	}
	rpc, ok := messages.LostRPCNamed(f[0])
	if !ok {
		return Lose{}, fmt.Errorf("lose-rpc: %q is not an RPC it can lose; one of %s", f[0], lostRPCWords())
	}
	d, err := positive("lose-rpc", f[2:])
	if err != nil {
		return Lose{}, err
	}
	l.RPC, l.Within = rpc, d
	return l, nil
}

// String renders the argument in the form ParseLose reads.
func (l Lose) String() string {
	on := ""
	if l.Task != "" {
		on = " on " + l.Task
	}
	return l.RPC.Word() + on + " within " + compact(l.Within)
}

// positive reads a duration of a verb's argument that must be above 0.
func positive(verb string, f []string) (time.Duration, error) {
	text := strings.Join(f, " ")
	d, err := config.ParseDuration(text)
	if err != nil {
		return 0, fmt.Errorf("%s: %s: %v", verb, text, err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s: %s: must be more than 0 ms", verb, text)
	}
	return d, nil
}

func compact(d time.Duration) string {
	return strings.ReplaceAll(config.FormatDuration(d), " ", "")
}
