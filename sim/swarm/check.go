package swarm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/vt"
)

// Class is an outcome class; each failure class has its own exit code (as
// VOPR's correctness, liveness and crash).
type Class int

const (
	ClassOK Class = iota
	ClassSafety
	ClassLiveness
	ClassCrash
	ClassWallLimit
)

// Classes in the order the summary prints them.
var Classes = []Class{ClassOK, ClassSafety, ClassLiveness, ClassCrash, ClassWallLimit}

func (c Class) String() string {
	return [...]string{"ok", "safety", "liveness", "crash", "wall-limit"}[c]
}

// ExitCode is the exit code of a swarm whose worst outcome is c: 0 ok, 3
// safety (as `flinksim run` exits on a broken invariant), 5 liveness, 6
// crash, 7 wall limit.
func (c Class) ExitCode() int { return [...]int{0, 3, 5, 6, 7}[c] }

// Worse reports whether c is a worse outcome than d: safety, then crash,
// then liveness, then the wall limit.
func (c Class) Worse(d Class) bool {
	rank := [...]int{0, 4, 2, 3, 1}
	return rank[c] > rank[d]
}

// The invariants, by name (README.md, "The fault swarm").
const (
	InvExactlyOnce = "exactly_once_output"  // read_committed output = the reference's, result for result
	InvAtLeastOnce = "at_least_once_output" // nothing of the reference's output missing
	InvAccounted   = "records_accounted"    // every record counted, side-output or dropped
	InvWatermark   = "watermark_monotonic"  // no subtask's watermark goes back
	InvCredit      = "credit_non_negative"  // no credit or buffer count below zero
	// the network's bounds (the simulator checks them as it runs: buffers
	// per channel and subpartition, no data buffer without credit)
	InvNetworkBounds = "network_buffer_bounds"
	InvNoFenced      = "no_fenced_attempt"         // the JobMaster accepted nothing from an attempt no longer current
	InvCheckpointIDs = "checkpoint_ids_increase"   // every checkpoint triggered and completed has a larger id than the one before
	InvRestoreLatest = "restore_latest_checkpoint" // a restore uses the latest completed checkpoint (or a newer savepoint)
	InvLog           = "log_invariant"             // the simulator's own invariant ended the run (prefix of log_invariant:NAME)
	InvSameInput     = "same_input"                // both runs read the same source topic
	InvJobAlive      = "liveness_job_running"      // RUNNING (or FINISHED after stop-with-savepoint) at the deadline
	InvCheckpoint    = "liveness_checkpoint"       // a checkpoint completed after the heal
	InvSinkWatermark = "liveness_watermark"        // the sink's watermark passed the horizon
	InvStarved       = "starved_no_resources"      // a starved job reports NoResourceAvailableException and writes nothing
	InvWallLimit     = "wall_limit"                // the run ended within the wall limit
	InvCrash         = "no_crash"                  // the simulator did not panic or refuse the scenario
	// ExpTxnTimeoutLoss is no invariant but an expected outcome: results
	// missing from the exactly-once output because the broker aborted
	// their transaction for transaction.timeout.ms during a Kafka outage
	// (Flink's documented data-loss trap); the seed stays ok
	ExpTxnTimeoutLoss = "expected_transaction_timeout_loss"
)

// Run is what the checks read of one finished run.
type Run struct {
	JobStatus   string // the job's last status, or INTERRUPTED
	Interrupted bool   // cut short by the wall limit
	Invariant   string // the simulator's broken invariant, if any
	Failure     string
	FailedActor string
	FailureVT   vt.Time
	Err         error // the run could not start or panicked
	// Sink is the sink topic as read_committed reads it from offset 0.
	Sink []*messages.KafkaRecord
	// Source is the source topic, per partition in offset order.
	Source [][]*messages.KafkaRecord
	// Dropped is numLateRecordsDropped over the subtasks that reported
	// final counters.
	Dropped int64
	Obs     *Observer
}

// Verdict is the outcome of one seed.
type Verdict struct {
	Class      Class
	Violations []Violation // every broken invariant; the first decides the class
	Reference  bool        // the first violation is the reference run's
	// Converged is how long after the flush the faulty run's sink watermark
	// passed the horizon (-1: it did not); the liveness bound is
	// Deadline - FlushAt.
	Converged time.Duration
	// Expected are outcomes that look like a broken invariant but are what
	// Flink does too (ExpTxnTimeoutLoss); they do not change the class.
	Expected []Violation
}

// Invariant is the name of the first broken invariant ("" when ok).
func (v Verdict) Invariant() string {
	if len(v.Violations) == 0 {
		return ""
	}
	return v.Violations[0].Invariant
}

// result is one sink record as the checks see it.
type result struct {
	key        string
	start, end int64 // window bounds
	firing     int64
	value      float64
	ts         int64 // process function: the record's timestamp
	window     bool
}

type resultID struct {
	key        string
	start, end int64
	firing     int64
	ts         int64
	value      float64 // process function results are identified by their whole value
}

func (r result) id() resultID {
	if r.window {
		return resultID{key: r.key, start: r.start, end: r.end, firing: r.firing}
	}
	return resultID{key: r.key, ts: r.ts, value: r.value}
}

func (r result) String() string {
	if r.window {
		f := ""
		if r.firing > 0 {
			f = fmt.Sprintf(" firing %d", r.firing)
		}
		return fmt.Sprintf("%s [%d,%d)%s = %g", r.key, r.start, r.end, f, r.value)
	}
	return fmt.Sprintf("%s ts=%d count=%g", r.key, r.ts, r.value)
}

// decode reads sink records: window results {"key","window_start",
// "window_end","value","firing"} and the process function's
// {"key","value","timestamp"}, chained to the keyed operator or not (an
// unchained sink writes what the keyed operator rendered).
func (s *Scenario) decode(recs []*messages.KafkaRecord) []result {
	out := make([]result, 0, len(recs))
	for _, rec := range recs {
		var v struct {
			Key         string   `json:"key"`
			WindowStart *int64   `json:"window_start"`
			WindowEnd   *int64   `json:"window_end"`
			Firing      int64    `json:"firing"`
			Value       *float64 `json:"value"`
			Timestamp   *int64   `json:"timestamp"`
		}
		if json.Unmarshal(rec.Value, &v) != nil || v.Value == nil {
			continue
		}
		r := result{key: v.Key, value: *v.Value}
		switch {
		case v.WindowEnd != nil && v.WindowStart != nil:
			r.window, r.start, r.end, r.firing = true, *v.WindowStart, *v.WindowEnd, v.Firing
		case v.Timestamp != nil:
			r.ts = *v.Timestamp
		default:
			continue
		}
		out = append(out, r)
	}
	return out
}

// Horizon is the event time (ms) up to which every window of both runs must
// have closed: records produced well before the flush.
func (s *Scenario) Horizon() int64 {
	return GeneratorEpochMillis + s.FlushAt.Milliseconds() - s.DisorderMs - 1000
}

// exclusions are the windows whose results may differ between two correct
// runs: lateness depends on timing for a record produced late (behind its
// partition's newest by more than the disorder), for any record once
// idleness can mark splits idle (the side output then names them), and for
// windows that fired more than once (allowed lateness).
type exclusions struct {
	s       *Scenario
	records map[string][]int64    // key -> event times of the records that may have been late
	windows map[string][][2]int64 // key -> windows that fired late
}

func (s *Scenario) exclusions(runs ...*Run) *exclusions {
	x := &exclusions{s: s, records: map[string][]int64{}, windows: map[string][][2]int64{}}
	for _, run := range runs {
		for _, part := range run.Source {
			newest := int64(-1 << 63)
			for _, r := range part {
				if r.Timestamp < newest-s.DisorderMs {
					x.records[r.Key] = append(x.records[r.Key], r.Timestamp)
				}
				newest = max(newest, r.Timestamp)
			}
		}
		if run.Obs == nil {
			continue
		}
		for _, l := range run.Obs.LateSide {
			x.records[l.Key] = append(x.records[l.Key], l.Ts)
		}
		for _, w := range run.Obs.LateFirings {
			x.windows[w.Key] = append(x.windows[w.Key], [2]int64{w.Start, w.End})
		}
	}
	return x
}

// excluded reports whether r's window may legitimately differ.
func (x *exclusions) excluded(r result) bool {
	if r.key == x.s.FlushKey {
		return true
	}
	if !r.window {
		return slices.Contains(x.records[r.key], r.ts)
	}
	margin := int64(0)
	if x.s.Window.Type == "session" {
		margin = x.s.Window.GapMs
	}
	for _, ts := range x.records[r.key] {
		if r.start-margin <= ts && ts < r.end+margin {
			return true
		}
	}
	for _, w := range x.windows[r.key] {
		if w[0] < r.end && r.start < w[1] {
			return true
		}
	}
	return false
}

// scope is the part of the output both runs must have produced: windows
// ending by the horizon, and a process function's results of the records
// produced before the flush (a record produced late can have an event time
// before the horizon and still come after the flush: by offset, not by
// event time).
type scope struct {
	horizon int64
	before  map[KeyTs]int  // records before their partition's flush record
	after   map[KeyTs]bool // records after it
}

func (s *Scenario) scope(src [][]*messages.KafkaRecord) *scope {
	sc := &scope{horizon: s.Horizon(), before: map[KeyTs]int{}, after: map[KeyTs]bool{}}
	for _, part := range src {
		flushed := false
		for _, r := range part {
			switch k := (KeyTs{r.Key, r.Timestamp}); {
			case r.Key == s.FlushKey:
				flushed = true
			case flushed:
				sc.after[k] = true
			default:
				sc.before[k]++
			}
		}
	}
	return sc
}

func (sc *scope) in(r result) bool {
	if r.window {
		return r.end <= sc.horizon
	}
	k := KeyTs{r.key, r.ts}
	return sc.before[k] > 0 && !sc.after[k]
}

// Check judges one seed from its reference run and its faulty run.
func Check(s *Scenario, ref, run *Run) Verdict {
	v := Verdict{Converged: -1}
	if run.Obs != nil {
		if at, ok := run.Obs.ConvergedAt(); ok {
			v.Converged = max(0, at.Duration()-s.FlushAt)
		}
	}
	add := func(reference bool, c Class, inv, what string) {
		if len(v.Violations) == 0 || c.Worse(v.Class) {
			v.Class, v.Reference = c, reference
			if len(v.Violations) > 0 {
				// the worst class leads
				v.Violations = append([]Violation{{Invariant: inv, What: what}}, v.Violations...)
				return
			}
		}
		v.Violations = append(v.Violations, Violation{Invariant: inv, What: what})
	}
	addV := func(reference bool, c Class, x Violation) {
		add(reference, c, x.Invariant, x.What)
		for i := range v.Violations {
			if v.Violations[i].Invariant == x.Invariant && v.Violations[i].What == x.What {
				v.Violations[i].Actor, v.Violations[i].VT = x.Actor, x.VT
			}
		}
	}
	for _, pr := range []struct {
		reference bool
		r         *Run
	}{{true, ref}, {false, run}} {
		name := "the faulty run"
		if pr.reference {
			name = "the reference run"
		}
		r := pr.r
		switch {
		case r.Err != nil:
			add(pr.reference, ClassCrash, InvCrash, name+": "+r.Err.Error())
			continue
		case r.Interrupted:
			add(pr.reference, ClassWallLimit, InvWallLimit, name+" did not end within the wall limit")
			continue
		case r.Invariant == "no_panic":
			addV(pr.reference, ClassCrash, Violation{Invariant: InvCrash, Actor: r.FailedActor, VT: r.FailureVT, What: name + ": " + r.Failure})
			continue
		case r.Invariant == InvNetworkBounds:
			addV(pr.reference, ClassSafety, Violation{Invariant: InvNetworkBounds, Actor: r.FailedActor, VT: r.FailureVT,
				What: name + ": " + r.Failure})
			continue
		case r.Invariant != "":
			addV(pr.reference, ClassSafety, Violation{Invariant: InvLog + ":" + r.Invariant, Actor: r.FailedActor, VT: r.FailureVT,
				What: name + ": " + r.Failure})
			continue
		}
		for _, x := range r.Obs.Violations() {
			x.What = name + ": " + x.What
			addV(pr.reference, ClassSafety, x)
		}
	}
	if len(v.Violations) > 0 && (ref.Err != nil || run.Err != nil || ref.Obs == nil || run.Obs == nil) {
		return v
	}
	if v.Class == ClassWallLimit || v.Class == ClassCrash {
		return v
	}
	if !sameSource(ref.Source, run.Source) {
		add(false, ClassSafety, InvSameInput, "the two runs' source topics differ: the comparison's premise broke")
		return v
	}
	if s.Starved {
		for _, pr := range []*Run{ref, run} {
			if !pr.Obs.NoResource || len(pr.Sink) > 0 {
				add(pr == ref, ClassSafety, InvStarved, fmt.Sprintf("starved job: NoResourceAvailableException %v, %d results written", pr.Obs.NoResource, len(pr.Sink)))
			}
		}
		return v
	}
	// liveness, both runs. A stop-with-savepoint that failed (a
	// TaskManager lost meanwhile: Flink's job goes on) leaves a run that
	// must converge like any other.
	h := s.Horizon()
	runStopped := s.Stopped() && run.JobStatus == "FINISHED"
	for _, pr := range []*Run{ref, run} {
		name, stopped := "the faulty run", runStopped && pr == run
		if pr == ref {
			name = "the reference run"
		}
		switch {
		case stopped && !pr.Obs.StopSavepointDone:
			add(pr == ref, ClassLiveness, InvJobAlive, fmt.Sprintf("%s: job %s after stop-with-savepoint (savepoint completed: %v)", name, pr.JobStatus, pr.Obs.StopSavepointDone))
		case !stopped && pr.JobStatus != "RUNNING":
			add(pr == ref, ClassLiveness, InvJobAlive, fmt.Sprintf("%s: job %s at the deadline %s", name, pr.JobStatus, short(s.Deadline)))
		}
		if stopped {
			continue
		}
		if s.Checkpointing && pr.Obs.CheckpointsAfter == 0 {
			add(pr == ref, ClassLiveness, InvCheckpoint, fmt.Sprintf("%s: no checkpoint completed after the heal at %s", name, short(s.HealAt)))
		}
		if w := pr.Obs.SinkWatermark(); w < h {
			add(pr == ref, ClassLiveness, InvSinkWatermark, fmt.Sprintf("%s: the sink's watermark is %d at the deadline, short of the horizon %d (%s behind)",
				name, w, h, behind(h, w)))
		}
	}
	if v.Class == ClassLiveness {
		// the output is incomplete: nothing more to compare
		return v
	}
	ex := s.exclusions(ref, run)
	sc := s.scope(ref.Source)
	want, got := s.decode(ref.Sink), s.decode(run.Sink)
	// with stop-with-savepoint the faulty run's output ends at the
	// savepoint: compare up to what its keyed subtasks had seen
	complete := h
	if runStopped {
		complete = min(h, run.Obs.SnapshotWatermark()+1)
	}
	switch s.Guarantee {
	case "exactly-once":
		diffs, onlyMissing := compare(want, got, ex, sc, complete, true)
		if lost := run.Obs.TimedOutInOutage; len(diffs) > 0 && onlyMissing && len(lost) > 0 {
			// the broker aborted a transaction before Flink committed it:
			// what it held is gone, as in Flink (nothing else may differ)
			v.Expected = append(v.Expected, Violation{Invariant: ExpTxnTimeoutLoss,
				What: fmt.Sprintf("the broker aborted %s for transaction.timeout.ms during the Kafka outage: %s", strings.Join(lost, ", "), strings.Join(diffs, "; "))})
			break
		}
		for _, what := range diffs {
			add(false, ClassSafety, InvExactlyOnce, what)
		}
	case "at-least-once":
		diffs, _ := compare(want, got, ex, sc, complete, false)
		for _, what := range diffs {
			add(false, ClassSafety, InvAtLeastOnce, what)
		}
	}
	for _, pr := range []*Run{ref, run} {
		if pr == run && (run.Obs.Failovers > 0 || runStopped || len(v.Expected) > 0) {
			break // a failed attempt's counters died with it
		}
		if what := s.accounted(pr, sc); what != "" {
			name := "the faulty run"
			if pr == ref {
				name = "the reference run"
			}
			add(pr == ref, ClassSafety, InvAccounted, name+": "+what)
		}
	}
	return v
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

func behind(h, w int64) string {
	if w == -1<<63 {
		return "no watermark"
	}
	return short(msDuration(h - w))
}

// sameSource reports whether the two runs read the same source topic: one
// is a prefix of the other, partition by partition (a run that ended early,
// after a stop-with-savepoint, has fewer records).
func sameSource(a, b [][]*messages.KafkaRecord) bool {
	if len(a) != len(b) {
		return false
	}
	for p := range a {
		for i := range min(len(a[p]), len(b[p])) {
			x, y := a[p][i], b[p][i]
			if x.Key != y.Key || x.Timestamp != y.Timestamp || string(x.Value) != string(y.Value) {
				return false
			}
		}
	}
	return true
}

// maxReport bounds the differences one check lists.
const maxReport = 5

// compare holds the faulty run's output (got) to the reference's (want) on
// the results in scope that no exclusion covers: every wanted result ending
// by complete must be there with its value; with exact, no result may be
// there twice or be one the reference never wrote. onlyMissing reports
// that every difference (also those past the ones listed) is a missing
// result.
func compare(want, got []result, ex *exclusions, sc *scope, complete int64, exact bool) (out []string, onlyMissing bool) {
	count := func(rs []result) (map[resultID]int, map[resultID]result, []resultID) {
		n, byID := map[resultID]int{}, map[resultID]result{}
		var order []resultID
		for _, r := range rs {
			if !sc.in(r) || ex.excluded(r) {
				continue
			}
			id := r.id()
			if n[id] == 0 {
				order = append(order, id)
			}
			n[id]++
			byID[id] = r
		}
		return n, byID, order
	}
	wn, wr, worder := count(want)
	gn, gr, gorder := count(got)
	onlyMissing = true
	report := func(format string, args ...any) {
		if len(out) < maxReport {
			out = append(out, fmt.Sprintf(format, args...))
		} else if len(out) == maxReport {
			out = append(out, "...")
		}
	}
	for _, id := range worder {
		r := wr[id]
		if r.window && r.end > complete || !r.window && r.ts >= complete {
			continue
		}
		g, ok := gr[id]
		switch {
		case !ok:
			report("missing %s (written by the reference run)", r)
		case g.value != r.value:
			onlyMissing = false
			report("%s, the reference run wrote %g", g, r.value)
		}
	}
	if exact {
		for _, id := range gorder {
			if gn[id] > 1 {
				onlyMissing = false
				report("%s written %d times", gr[id], gn[id])
			}
			if wn[id] == 0 {
				onlyMissing = false
				report("extra %s (not written by the reference run)", gr[id])
			}
		}
	}
	return out, onlyMissing
}

// accounted checks that every record is counted once, sent to the late
// side output or dropped: for a count over tumbling or sliding windows, the
// last firings of the windows up to the horizon count each record produced
// before the flush once per window it falls into, less those late; a
// process function writes one result per record produced before the flush.
func (s *Scenario) accounted(r *Run, sc *scope) string {
	horizon := sc.horizon
	results := s.decode(r.Sink)
	if s.Operator == "process" {
		var want, got []KeyTs
		for k, n := range sc.before {
			for ; n > 0 && !sc.after[k]; n-- {
				want = append(want, k)
			}
		}
		for _, x := range results {
			if x.key != s.FlushKey && sc.in(x) {
				got = append(got, KeyTs{x.key, x.ts})
			}
		}
		if s.Guarantee != "exactly-once" {
			got = dedupe(got, want)
		}
		cmp := func(a, b KeyTs) int {
			if c := strings.Compare(a.Key, b.Key); c != 0 {
				return c
			}
			return int(a.Ts - b.Ts)
		}
		slices.SortFunc(want, cmp)
		slices.SortFunc(got, cmp)
		if !slices.Equal(want, got) {
			return fmt.Sprintf("%d records produced before the flush, %d results for them", len(want), len(got))
		}
		return ""
	}
	w := s.Window
	if w.Aggregate != "count" || w.Type == "session" {
		return ""
	}
	slide := w.SizeMs
	if w.Type == "sliding" {
		slide = w.SlideMs
	}
	// windows ending by the horizon: ends at multiples of the slide
	last := horizon - horizon%slide
	// a window's results in sink order: its firings, the last of each
	// instance counting; an instance ends where the firing number starts
	// over (a window purged and made again, e.g. by a record that the
	// watermark, starting from Long.MIN_VALUE after a restore, no longer
	// finds late)
	type wk struct {
		key        string
		start, end int64
	}
	current := map[wk]result{}
	var counted int64
	for _, x := range results {
		if !x.window || x.key == s.FlushKey || x.end > last {
			continue
		}
		k := wk{x.key, x.start, x.end}
		if prev, ok := current[k]; ok && x.firing <= prev.firing {
			counted += int64(prev.value)
		}
		current[k] = x
	}
	for _, x := range current {
		counted += int64(x.value)
	}
	// each record falls into size/slide windows; those ending after the
	// horizon do not count here
	// the records produced before the flush must all be there; a late one
	// produced after it may be too (when a reader that has read its
	// partition's flush runs ahead of one that has not, the watermark is
	// still behind), or still be on its way when the run ends
	inWindows := func(ts int64) (n int64) {
		for end := ts - ts%slide + slide; end-w.SizeMs <= ts; end += slide {
			if end <= last {
				n++
			}
		}
		return n
	}
	var before, all, side int64
	for k, n := range sc.before {
		before += int64(n) * inWindows(k.Ts)
	}
	for _, part := range r.Source {
		for _, x := range part {
			if x.Key != s.FlushKey {
				all += inWindows(x.Timestamp)
			}
		}
	}
	for _, l := range r.Obs.LateSide {
		if l.Key != s.FlushKey {
			side += inWindows(l.Ts)
		}
	}
	seen := counted + side
	exact := s.LateFraction == 0 && s.IdlenessMs == 0 // no record can be late
	if seen > all || (exact && seen != before) {
		return fmt.Sprintf("records in windows up to %d: %d produced before the flush (%d in all), %d counted in the last firings, %d to the side output",
			last, before, all, counted, side)
	}
	if missing := before - seen; w.Type == "tumbling" && missing > r.Dropped {
		return fmt.Sprintf("%d records neither counted nor sent to the side output, %d dropped as late", missing, r.Dropped)
	}
	return ""
}

// dedupe keeps each (key, ts) of got at most as often as want has it (an
// at-least-once sink writes some results again).
func dedupe(got, want []KeyTs) []KeyTs {
	n := map[KeyTs]int{}
	for _, x := range want {
		n[x]++
	}
	var out []KeyTs
	for _, x := range got {
		if n[x] > 0 {
			n[x]--
			out = append(out, x)
		}
	}
	return out
}
