// Package campaign runs the fault swarm (sim/swarm): for each seed the
// scenario it draws, once without faults and once with them, on either
// driver, each run cut at a wall limit; then the checks, the seed's line,
// the tables by outcome and by fault kind, and the report of a failed seed
// with the commands that reproduce it. Seeds run on parallel workers and
// are reported in seed order, so the output depends on the seeds alone.
// It lives in wall time (the limit, the progress line), outside the
// simulation: nothing of it reaches a run's log.
package campaign

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/swarm"
)

// SeedResult is one seed's outcome and the lines it prints.
type SeedResult struct {
	Seed     uint64
	Scenario swarm.Scenario
	Verdict  swarm.Verdict
	Wall     time.Duration // what the seed's two runs and checks took (not in its line)
}

// Line is the seed's line of the swarm's output: its scenario in one line
// and its outcome.
func (r SeedResult) Line() string {
	out := "ok"
	for i, x := range r.Verdict.Expected {
		// an outcome Flink has too, not counted as a bug
		out += map[bool]string{true: " (expected: ", false: ", "}[i == 0] + x.Invariant
		if i == len(r.Verdict.Expected)-1 {
			out += ")"
		}
	}
	if r.Verdict.Class != swarm.ClassOK {
		out = "FAIL " + r.Verdict.Class.String() + " " + r.Verdict.Invariant()
	}
	return fmt.Sprintf("seed %d %s | %s", r.Seed, r.Scenario.Summary(), out)
}

// Campaign is how a swarm runs its seeds.
type Campaign struct {
	// Parallel is how many seeds run at once (at least 1).
	Parallel int
	// WallLimit is the wall time one run of a seed may take; a run cut
	// there fails the seed with the wall-limit class.
	WallLimit time.Duration
	// MaxFailures stops starting seeds after this many failed (0: no
	// limit).
	MaxFailures int
	// Run is the driver the scenarios run on: cluster.RunPlain (nil) or
	// cluster.Run (every component a Hollywood actor); both write the same
	// log.
	Run Runner
}

// Runner runs one job to its end: cluster.Run or cluster.RunPlain.
type Runner func(cfg config.Config, opt cluster.Options) (*cluster.Result, error)

func (c Campaign) runner() Runner {
	if c.Run == nil {
		return cluster.RunPlain
	}
	return c.Run
}

// RunSeeds runs the seeds of list (in increasing order) on c.Parallel
// workers and hands each result to emit in that order (a worker's result
// waits for the seeds before it), so the output does not depend on the
// workers; progress is told how far it got.
func (c Campaign) RunSeeds(list []uint64, progress io.Writer, emit func(SeedResult)) []SeedResult {
	f := c
	f.Parallel = max(1, f.Parallel)
	seeds := make(chan uint64)
	done := make(chan SeedResult)
	var wg sync.WaitGroup
	for w := 0; w < f.Parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range seeds {
				done <- f.RunSeed(s)
			}
		}()
	}
	var mu sync.Mutex
	failed := 0
	stop := false
	go func() {
		for _, s := range list {
			mu.Lock()
			halt := stop
			mu.Unlock()
			if halt {
				break
			}
			seeds <- s
		}
		close(seeds)
		wg.Wait()
		close(done)
	}()
	tty := isatty.IsTerminal(os.Stderr.Fd()) && progress == os.Stderr
	start := time.Now()
	pending := map[uint64]SeedResult{}
	next := 0 // index in list of the next seed to emit
	var results []SeedResult
	finished := 0
	for r := range done {
		finished++
		pending[r.Seed] = r
		for next < len(list) {
			x, ok := pending[list[next]]
			if !ok {
				break
			}
			delete(pending, list[next])
			next++
			results = append(results, x)
			if x.Verdict.Class != swarm.ClassOK {
				failed++
				if f.MaxFailures > 0 && failed >= f.MaxFailures {
					mu.Lock()
					stop = true
					mu.Unlock()
				}
			}
			emit(x)
		}
		showProgress(progress, tty, finished, len(list), failed, time.Since(start))
	}
	// seeds past a gap (stopped early) are not reported out of order
	if tty {
		fmt.Fprint(progress, "\r\033[K")
	}
	return results
}

func showProgress(w io.Writer, tty bool, done, total, failed int, elapsed time.Duration) {
	rate := float64(done) / elapsed.Seconds()
	if tty {
		const width = 30
		n := done * width / total
		fmt.Fprintf(w, "\r[%s%s] %d/%d seeds, %d failed, %.2f seeds/s ", strings.Repeat("=", n), strings.Repeat(" ", width-n),
			done, total, failed, rate)
		return
	}
	if step := max(1, total/10); done%step == 0 || done == total {
		fmt.Fprintf(w, "swarm: %d/%d seeds, %d failed, %.2f seeds/s\n", done, total, failed, rate)
	}
}

// RunSeed runs one seed: the reference run and the faulty run, then the
// checks.
func (c Campaign) RunSeed(seed uint64) SeedResult {
	start := time.Now()
	sc := swarm.Generate(seed)
	r := SeedResult{Seed: seed, Scenario: sc}
	ref := RunScenario(c.runner(), &sc, true, c.WallLimit, nil)
	run := RunScenario(c.runner(), &sc, false, c.WallLimit, nil)
	r.Verdict = swarm.Check(&sc, ref, run)
	r.Wall = time.Since(start)
	return r
}

// RunScenario runs the scenario's reference run or faulty run on run, cut
// after wallLimit of wall time, writing the log to log when it is not nil.
// A panic or an error becomes the run's Err.
func RunScenario(run Runner, sc *swarm.Scenario, reference bool, wallLimit time.Duration, log io.Writer) (out *swarm.Run) {
	out = &swarm.Run{}
	defer func() {
		if p := recover(); p != nil {
			out.Err = fmt.Errorf("panic: %v", p)
		}
	}()
	cfg, err := sc.Config()
	if err != nil {
		out.Err = err
		return out
	}
	obs := swarm.NewObserver(sc)
	interrupt := make(chan struct{})
	timer := time.AfterFunc(wallLimit, func() { close(interrupt) })
	defer timer.Stop()
	if log == nil {
		log = io.Discard
	}
	res, err := run(cfg, cluster.Options{Actions: sc.Actions(reference), Observe: obs.Observe, Log: log, Interrupt: interrupt})
	if err != nil {
		out.Err = err
		return out
	}
	*out = swarm.Run{JobStatus: res.JobStatus, Interrupted: res.Interrupted, Invariant: res.Invariant, Failure: res.Failure,
		FailedActor: res.FailedActor, FailureVT: res.FailureVT, Sink: res.SinkCommitted, Source: readAll(res.SourceTopic),
		Dropped: res.Counters["numLateRecordsDropped"], Obs: obs}
	return out
}

// readAll is every record of l, per partition in offset order.
func readAll(l kafka.Log) [][]*messages.KafkaRecord {
	if l == nil {
		return nil
	}
	out := make([][]*messages.KafkaRecord, l.NumPartitions())
	for p := range out {
		out[p] = kafka.Read(l, p, 0, int(l.EndOffset(p)))
	}
	return out
}

// TallyRow is what the tables count of one seed: its class, its fault
// kinds, and, for a faulty run that had faults and no stop-with-savepoint,
// how long after the flush it converged and its slack to the deadline.
type TallyRow struct {
	Class     swarm.Class
	Kinds     []swarm.FaultKind
	Counted   bool // Converged and Slack count in the convergence line
	Converged time.Duration
	Slack     time.Duration
}

// TallyRow is r's row of the tables.
func (r SeedResult) TallyRow() TallyRow {
	row := TallyRow{Class: r.Verdict.Class, Kinds: r.Scenario.Kinds()}
	if r.Verdict.Converged >= 0 && len(r.Scenario.Faults) > 0 && !r.Scenario.Stopped() {
		row.Counted, row.Converged = true, r.Verdict.Converged
		row.Slack = r.Scenario.Deadline - r.Scenario.FlushAt - r.Verdict.Converged
	}
	return row
}

// Summarize prints the tables by outcome and by fault kind and the
// convergence line, and returns the worst outcome.
func Summarize(w io.Writer, rows []TallyRow) swarm.Class {
	worst := swarm.ClassOK
	byClass := map[swarm.Class]int{}
	byKind := map[swarm.FaultKind]map[swarm.Class]int{}
	for _, r := range rows {
		c := r.Class
		byClass[c]++
		if c.Worse(worst) {
			worst = c
		}
		kinds := r.Kinds
		if len(kinds) == 0 {
			kinds = []swarm.FaultKind{"(no faults)"}
		}
		for _, k := range kinds {
			if byKind[k] == nil {
				byKind[k] = map[swarm.Class]int{}
			}
			byKind[k][c]++
		}
	}
	fmt.Fprintf(w, "\n%-12s %6s\n", "outcome", "seeds")
	for _, c := range swarm.Classes {
		fmt.Fprintf(w, "%-12s %6d\n", c, byClass[c])
	}
	fmt.Fprintf(w, "\n%-16s %6s", "fault kind", "seeds")
	for _, c := range swarm.Classes {
		fmt.Fprintf(w, " %10s", c)
	}
	fmt.Fprintln(w)
	kinds := append(slices.Clone(swarm.FaultKinds), "(no faults)")
	for _, k := range kinds {
		m := byKind[k]
		if m == nil {
			continue
		}
		n := 0
		for _, v := range m {
			n += v
		}
		fmt.Fprintf(w, "%-16s %6d", k, n)
		for _, c := range swarm.Classes {
			fmt.Fprintf(w, " %10d", m[c])
		}
		fmt.Fprintln(w)
	}
	var conv []time.Duration
	var slack time.Duration = -1
	for _, r := range rows {
		if r.Counted {
			conv = append(conv, r.Converged)
			if slack < 0 || r.Slack < slack {
				slack = r.Slack
			}
		}
	}
	if len(conv) > 0 {
		slices.Sort(conv)
		fmt.Fprintf(w, "\nfaulty runs converged after the flush in %s (median), %s (90th percentile), %s (max); least slack to the deadline %s\n",
			short(conv[len(conv)/2]), short(conv[len(conv)*9/10]), short(conv[len(conv)-1]), short(slack))
	}
	return worst
}

// writeLog writes what run writes to the file at path, buffered.
func writeLog(path string, run func(io.Writer)) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	run(bw)
	err = bw.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Report prints a failed seed: the scenario, every broken invariant and
// the commands that reproduce it; with keep it writes both runs' logs (run
// again on c's driver).
func (c Campaign) Report(w io.Writer, r SeedResult, keep string) {
	sc := &r.Scenario
	fmt.Fprintf(w, "\nFAIL seed=%d class=%s invariant=%s\n", r.Seed, r.Verdict.Class, r.Verdict.Invariant())
	fmt.Fprint(w, indent(sc.Describe(), "  "))
	fmt.Fprintln(w, "  broken:")
	for _, v := range r.Verdict.Violations {
		fmt.Fprintf(w, "    %s\n", v)
	}
	logArg := func(string) string { return "" }
	if keep != "" {
		path := filepath.Join(keep, fmt.Sprintf("seed-%d.scenario.json", r.Seed))
		b, err := json.MarshalIndent(sc, "", "  ")
		if err == nil {
			err = os.WriteFile(path, append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(w, "  scenario: %v\n", err)
		} else {
			fmt.Fprintf(w, "  scenario: %s (a regression test reads it back)\n", path)
		}
		for _, reference := range []bool{false, true} {
			name := fmt.Sprintf("seed-%d.log", r.Seed)
			if reference {
				name = fmt.Sprintf("seed-%d.reference.log", r.Seed)
			}
			path := filepath.Join(keep, name)
			if err := writeLog(path, func(bw io.Writer) { RunScenario(c.runner(), sc, reference, 10*time.Minute, bw) }); err != nil {
				fmt.Fprintf(w, "  log: %v\n", err)
			} else {
				fmt.Fprintf(w, "  log: %s\n", path)
			}
		}
		logArg = func(name string) string { return " --log " + shellQuote(filepath.Join(keep, name)) }
	}
	fmt.Fprintf(w, "  reproduce with: %s%s\n", RunCommand(sc, false), logArg(fmt.Sprintf("seed-%d.log", r.Seed)))
	fmt.Fprintf(w, "  the run without faults: %s%s\n", RunCommand(sc, true), logArg(fmt.Sprintf("seed-%d.reference.log", r.Seed)))
	fmt.Fprintf(w, "  rerun the seed: %s swarm --seed %d\n", Program(), r.Seed)
}

// Program is how to invoke the simulator built the way this one is.
func Program() string {
	if kafka.BrokenBuild != "" {
		return "go run -tags " + kafka.BrokenBuild + " ./cmd/flinksim"
	}
	if jobgraph.NoFenceBuild != "" {
		return "go run -tags " + jobgraph.NoFenceBuild + " ./cmd/flinksim"
	}
	return "flinksim"
}

// RunCommand is the flinksim run command line of one run of the scenario.
func RunCommand(sc *swarm.Scenario, reference bool) string {
	var b strings.Builder
	b.WriteString(Program() + " run")
	for _, kv := range sc.Settings {
		b.WriteString(" --set " + shellQuote(kv.Key+"="+kv.Value))
	}
	for _, a := range sc.Actions(reference) {
		b.WriteString(" --action " + shellQuote(a.String()))
	}
	return b.String()
}

func shellQuote(s string) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '=' || r == '/' || r == ':' || r == '+' || r == ',' ||
			'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func short(d time.Duration) string { return d.Round(time.Millisecond).String() }

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

// ResultFormat marks every line of a --json file.
const ResultFormat = "flinksim-swarm/1"

// Record is one seed's result as --json writes it, one JSON object a
// line. Nothing in it depends on the machine or the workers (no wall
// time), so shards' lines are the whole range's lines.
type Record struct {
	Format string `json:"format"` // ResultFormat
	Seed   uint64 `json:"seed"`
	Class  string `json:"class"` // ok, safety, liveness, crash, wall-limit
	// Invariants are the names of the broken invariants, the one that
	// decides the class first; Violations say what broke, in the same order.
	Invariants []string `json:"invariants"`
	Violations []string `json:"violations"`
	Faults     []string `json:"faults"`  // the scenario's fault kinds, in the table's order
	Summary    string   `json:"summary"` // the scenario in one line, as the seed's line has it
	// ConvergedMs is how long after the flush the faulty run converged,
	// SlackMs what was left to the deadline then (ms, rounded to the
	// nearest); both only for a faulty run that had faults and no
	// stop-with-savepoint and converged.
	ConvergedMs *int64 `json:"converged_ms,omitempty"`
	SlackMs     *int64 `json:"slack_ms,omitempty"`
	// Expected are the outcomes Flink has too that the seed met, not
	// counted as bugs (expected_transaction_timeout_loss: what).
	Expected  []string `json:"expected,omitempty"`
	Reproduce string   `json:"reproduce"`     // the flinksim run command of the faulty run
	Reference string   `json:"reference_run"` // ... and of the run without faults
	Rerun     string   `json:"rerun"`         // flinksim swarm --seed S
}

// RecordOf is r as --json writes it.
func RecordOf(r SeedResult) Record {
	rec := Record{Format: ResultFormat, Seed: r.Seed, Class: r.Verdict.Class.String(), Invariants: []string{}, Violations: []string{},
		Faults: []string{}, Summary: r.Scenario.Summary(), Reproduce: RunCommand(&r.Scenario, false), Reference: RunCommand(&r.Scenario, true),
		Rerun: fmt.Sprintf("%s swarm --seed %d", Program(), r.Seed)}
	for _, v := range r.Verdict.Violations {
		if !slices.Contains(rec.Invariants, v.Invariant) {
			rec.Invariants = append(rec.Invariants, v.Invariant)
		}
		rec.Violations = append(rec.Violations, v.String())
	}
	for _, k := range r.Scenario.Kinds() {
		rec.Faults = append(rec.Faults, string(k))
	}
	for _, x := range r.Verdict.Expected {
		rec.Expected = append(rec.Expected, x.Invariant+": "+x.What)
	}
	if row := r.TallyRow(); row.Counted {
		// rounded as the convergence line rounds them, so merge prints it
		// as the swarm does
		c, s := row.Converged.Round(time.Millisecond).Milliseconds(), row.Slack.Round(time.Millisecond).Milliseconds()
		rec.ConvergedMs, rec.SlackMs = &c, &s
	}
	return rec
}
