package console

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/flinksim/flinksim/sim/eventlog"
)

// Observer receives every event of a run, in log order, as it is logged
// (cluster.Options.Observe). The person's View and the warnings are
// observers; none of them may change what is logged, and none reads the
// JSON text: they read each event's typed payload (eventlog.Decode). The
// header and the summary are not observed events: the view takes them from
// the run's settings and its cluster.Result.
type Observer func(ev *eventlog.LogEvent)

// allKinds is every event kind the log has (sim/eventlog), for --only and
// --exclude.
var allKinds = []eventlog.Kind{
	eventlog.KindHeader, eventlog.KindSummary, eventlog.KindRegistrationResponse, eventlog.KindGeneratorStarted,
	eventlog.KindBackfill, eventlog.KindLateSideOutput, eventlog.KindActionIgnored, eventlog.KindRestartStrategy,
	eventlog.KindHeartbeatTimeout, eventlog.KindFailover, eventlog.KindTaskManagerKilled, eventlog.KindTaskManagerLost,
	eventlog.KindRestore, eventlog.KindFailure, eventlog.KindCheckpointTriggered, eventlog.KindCheckpointDeclined,
	eventlog.KindCheckpointCompleted, eventlog.KindCheckpointFailed, eventlog.KindCheckpointSnapshot,
	eventlog.KindCheckpointDeclinedByTask, eventlog.KindStateRestored, eventlog.KindOffsetsCommitted, eventlog.KindRescale,
	eventlog.KindBarrierTimedOut, eventlog.KindOutputView, eventlog.KindActorStarted, eventlog.KindTaskManagerStarted,
	eventlog.KindRegisterTaskExecutor, eventlog.KindTaskExecutorRegistered, eventlog.KindJobGraph, eventlog.KindJobStatus,
	eventlog.KindResourceRequirements, eventlog.KindRequestSlot, eventlog.KindOfferSlots, eventlog.KindNoResourceAvailable,
	eventlog.KindSubmitTask, eventlog.KindTaskState, eventlog.KindTopicCreated, eventlog.KindSplitsAssigned,
	eventlog.KindReaderNoSplits, eventlog.KindSplitFinished, eventlog.KindSplitPaused, eventlog.KindSplitResumed,
	eventlog.KindAlignment, eventlog.KindWatermarkStatus, eventlog.KindPartitionRequest, eventlog.KindNettyFrame,
	eventlog.KindBacklogAnnouncement, eventlog.KindChannelFinished, eventlog.KindWatermark, eventlog.KindWindowFired,
	eventlog.KindTaskMetrics, eventlog.KindKafkaMetrics, eventlog.KindFinal, eventlog.KindTransaction,
	eventlog.KindAbortLingering, eventlog.KindKafkaError, eventlog.KindAction, eventlog.KindCheckpointAckIgnored,
	eventlog.KindEventSent, eventlog.KindOutputIsolation, eventlog.KindPartitionPaused, eventlog.KindPartitionResumed,
	eventlog.KindReconfigure,
}

// kindGroups name sets of kinds for --only and --exclude, as an operator
// thinks of them.
var kindGroups = map[string][]eventlog.Kind{
	"bring-up": {eventlog.KindTopicCreated, eventlog.KindActorStarted, eventlog.KindTaskManagerStarted, eventlog.KindRegisterTaskExecutor,
		eventlog.KindTaskExecutorRegistered, eventlog.KindRegistrationResponse, eventlog.KindJobGraph, eventlog.KindResourceRequirements,
		eventlog.KindRequestSlot, eventlog.KindOfferSlots, eventlog.KindSubmitTask, eventlog.KindTaskState, eventlog.KindGeneratorStarted,
		eventlog.KindBackfill, eventlog.KindPartitionRequest},
	"checkpoints": {eventlog.KindCheckpointTriggered, eventlog.KindCheckpointDeclined, eventlog.KindCheckpointCompleted,
		eventlog.KindCheckpointFailed, eventlog.KindCheckpointSnapshot, eventlog.KindCheckpointDeclinedByTask, eventlog.KindOffsetsCommitted,
		eventlog.KindBarrierTimedOut},
	"failures": {eventlog.KindHeartbeatTimeout, eventlog.KindFailover, eventlog.KindTaskManagerKilled, eventlog.KindTaskManagerLost,
		eventlog.KindRestore, eventlog.KindFailure, eventlog.KindNoResourceAvailable, eventlog.KindStateRestored, eventlog.KindRestartStrategy},
	"metrics": {eventlog.KindTaskMetrics, eventlog.KindKafkaMetrics},
	"windows": {eventlog.KindWindowFired, eventlog.KindLateSideOutput},
	"source": {eventlog.KindSplitsAssigned, eventlog.KindReaderNoSplits, eventlog.KindSplitFinished, eventlog.KindSplitPaused,
		eventlog.KindSplitResumed, eventlog.KindAlignment, eventlog.KindWatermarkStatus},
	"actions": {eventlog.KindAction, eventlog.KindActionIgnored, eventlog.KindEventSent, eventlog.KindPartitionPaused,
		eventlog.KindPartitionResumed, eventlog.KindReconfigure, eventlog.KindOutputIsolation},
	"sink":    {eventlog.KindTransaction, eventlog.KindAbortLingering, eventlog.KindKafkaError, eventlog.KindOutputView},
	"network": {eventlog.KindNettyFrame, eventlog.KindBacklogAnnouncement, eventlog.KindChannelFinished, eventlog.KindPartitionRequest},
}

// KindFilter decides which events are printed: --only (nil: all) minus
// --exclude.
type KindFilter struct {
	only, exclude map[string]bool
}

// NewKindFilter passes the kinds of only (nil: every kind) that exclude
// does not name (ParseKinds reads both).
func NewKindFilter(only, exclude map[string]bool) KindFilter {
	return KindFilter{only: only, exclude: exclude}
}

// ParseKinds reads a comma-separated list of kinds and group names; an
// unknown name is an error naming the nearest kind or group.
func ParseKinds(flag string, lists []string) (map[string]bool, error) {
	if len(lists) == 0 {
		return nil, nil
	}
	out := map[string]bool{}
	for _, list := range lists {
		for _, name := range strings.Split(list, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if g, ok := kindGroups[name]; ok {
				for _, k := range g {
					out[string(k)] = true
				}
				if name == "actions" {
					out[byAction] = true
				}
				continue
			}
			if !slices.Contains(allKinds, eventlog.Kind(name)) {
				return nil, fmt.Errorf("%s %s: no such event kind or group%s; groups: %s", flag, strconvQuote(name), nearestKind(name), groupNames())
			}
			out[name] = true
		}
	}
	return out, nil
}

func strconvQuote(s string) string {
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return strconv.Quote(s)
}

func groupNames() string {
	var names []string
	for g := range kindGroups {
		names = append(names, g)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// nearestKind is ` (did you mean "x"?)` for the kind or group nearest to
// name by edit distance, or "" when none is near.
func nearestKind(name string) string {
	best, bestD := "", math.MaxInt
	var cands []string
	for _, k := range allKinds {
		cands = append(cands, string(k))
	}
	for g := range kindGroups {
		cands = append(cands, g)
	}
	slices.Sort(cands)
	for _, k := range cands {
		if d := levenshtein(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	if bestD <= 3 || bestD*3 <= len(best) {
		return ` (did you mean "` + best + `"?)`
	}
	return ""
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// byAction stands in a kind set for every event a user action caused: a
// line with an "action" member (taskmanager_killed, network_partition,
// checkpoint_triggered, ...), for the actions given on the command line log
// no "action" event of their own. No kind has this name.
const byAction = "(action)"

// byActionAsked reports whether the filter names the actions group.
func (f KindFilter) byActionAsked() bool { return f.only[byAction] || f.exclude[byAction] }

// actedOn reports whether a log line's fields (the JSON members after the
// event's kind) carry the user action that caused the event.
func actedOn(fields []byte) bool { return bytes.Contains(fields, []byte(`"action":"`)) }

// passEvent reports whether a typed event is printed.
func (f KindFilter) passEvent(ev *eventlog.LogEvent) bool {
	return f.pass(string(ev.Kind()), f.byActionAsked() && actedOn(ev.Body.AppendJSON(nil)))
}

// pass reports whether an event of kind is printed; acted tells whether a
// user action caused it (asked only when byActionAsked).
func (f KindFilter) pass(kind string, acted bool) bool {
	if f.only != nil && !f.only[kind] && !(acted && f.only[byAction]) {
		return false
	}
	return !f.exclude[kind] && !(acted && f.exclude[byAction])
}

// active reports whether the filter removes anything.
func (f KindFilter) Active() bool { return f.only != nil || len(f.exclude) > 0 }

// filterWriter passes on the JSON lines whose event kind the filter lets
// through; a line's kind is read from its "event" member. Used only for
// what is printed, never for --log.
type filterWriter struct {
	w       func([]byte) error
	f       KindFilter
	pending []byte
}

func (fw *filterWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			fw.pending = append(fw.pending, p...)
			break
		}
		line := p[:i+1]
		if len(fw.pending) > 0 {
			line = append(fw.pending, line...)
			fw.pending = fw.pending[:0]
		}
		if fw.f.pass(lineKind(line), fw.f.byActionAsked() && actedOn(line)) {
			if err := fw.w(line); err != nil {
				return 0, err
			}
		}
		p = p[i+1:]
	}
	return n, nil
}

// lineKind finds the "event" member of a JSON log line (every line has
// `"event":"KIND"` after vt and actor).
func lineKind(line []byte) string {
	i := bytes.Index(line, []byte(`"event":"`))
	if i < 0 {
		return ""
	}
	rest := line[i+len(`"event":"`):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}
