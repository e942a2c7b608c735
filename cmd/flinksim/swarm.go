package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/input"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/swarm"
)

type swarmFlags struct {
	seeds       int
	from        uint64
	seed        string
	parallel    int
	wallLimit   time.Duration
	keep        string
	maxFailures int
	driver      string
	shard       string
	json        string
}

func init() {
	var f swarmFlags
	cmd := &cobra.Command{
		Use:   "swarm",
		Short: "Run many seeded scenarios with random faults and check every invariant",
		Long: `Run the fault swarm: each seed draws a scenario (settings, workload, faults at
virtual times), runs it once without faults and once with them, and checks the
invariants (exactly-once and at-least-once output against the run without faults,
watermarks never go back, credits never negative, every record counted, no broken
invariant in the log, liveness after the faults heal, the wall limit).

One line per seed on stdout, in seed order whatever --parallel says; a table by
outcome and by fault kind at the end; for each failure its seed, scenario,
invariant and the flinksim run command that reproduces it. The swarm's exit code
is the worst class found: 0 all passed, 3 a safety invariant broke, 6 a crash,
5 liveness, 7 the wall limit (2 bad flags).

--shard K/N runs the K-th of N shards of the range (K from 1): the seeds s
with (s - from) mod N = K - 1, each seed's line as the whole range prints it.
--json FILE writes one JSON line per seed (seed, class, broken invariants,
fault kinds, the reproducing commands); 'flinksim swarm merge FILE...' prints
the table over every shard's file and exits with the worst class.`,
		Example: `  flinksim swarm --seeds 200 --parallel 2
  flinksim swarm --from 1000 --seeds 50 --keep /tmp/swarm
  flinksim swarm --seed 42
  flinksim swarm --from 1 --seeds 20000 --shard 3/8 --json shard-3.jsonl
  flinksim swarm merge shard-*.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return swarmMain(cmd, f) },
	}
	fl := cmd.Flags()
	fl.IntVar(&f.seeds, "seeds", 100, "number of seeds to run")
	fl.Uint64Var(&f.from, "from", 1, "first seed")
	fl.StringVar(&f.seed, "seed", "", "run this one seed, printing its scenario first")
	fl.IntVar(&f.parallel, "parallel", runtime.NumCPU(), "seeds run at once")
	fl.DurationVar(&f.wallLimit, "wall-limit", 30*time.Second, "wall time one run of a seed may take")
	fl.StringVar(&f.keep, "keep", "", "write the logs and scenarios (JSON) of failed seeds into this directory")
	fl.IntVar(&f.maxFailures, "max-failures", 0, "stop starting seeds after this many failed (0: no limit)")
	fl.StringVar(&f.driver, "driver", "plain", "plain (the plain loop, faster) or actors (every component a Hollywood actor); both write the same log")
	fl.StringVar(&f.shard, "shard", "", "K/N: run only the K-th of N shards of the range (K from 1): the seeds s with (s - from) mod N = K - 1")
	fl.StringVar(&f.json, "json", "", "write one JSON line per seed to this file (flinksim swarm merge reads them)")
	cmd.AddCommand(mergeCommand())
	rootCmd.AddCommand(cmd)
}

// seedResult is one seed's outcome and the lines it prints.
type seedResult struct {
	seed    uint64
	sc      swarm.Scenario
	verdict swarm.Verdict
	wall    time.Duration
}

func (r seedResult) line() string {
	out := "ok"
	if r.verdict.Class != swarm.ClassOK {
		out = "FAIL " + r.verdict.Class.String() + " " + r.verdict.Invariant()
	}
	return fmt.Sprintf("seed %d %s | %s", r.seed, r.sc.Summary(), out)
}

func swarmMain(cmd *cobra.Command, f swarmFlags) error {
	out := bufio.NewWriter(cmd.OutOrStdout())
	defer out.Flush()
	if f.keep != "" {
		if err := os.MkdirAll(f.keep, 0o755); err != nil {
			return badInput("--keep: %v", err)
		}
	}
	if f.wallLimit <= 0 {
		return badInput("--wall-limit must be positive")
	}
	switch f.driver {
	case "plain":
		runCluster = cluster.RunPlain
	case "actors":
		runCluster = cluster.Run
	default:
		return badInput("--driver %q: allowed values are plain, actors", f.driver)
	}
	if f.seed != "" {
		if f.shard != "" {
			return badInput("--shard %s: a shard is part of a range (--from, --seeds), not of --seed", input.Quote(f.shard))
		}
		seed, err := strconv.ParseUint(f.seed, 10, 64)
		if err != nil {
			return badInput("--seed %q: %v", f.seed, err)
		}
		sc := swarm.Generate(seed)
		fmt.Fprint(out, sc.Describe())
		out.Flush()
		var js *resultWriter
		if f.json != "" {
			if js, err = createResults(f.json); err != nil {
				return err
			}
		}
		r := runSeed(seed, f.wallLimit)
		fmt.Fprintln(out, r.line())
		if js != nil {
			js.write(r)
			if err := js.close(); err != nil {
				return err
			}
		}
		if r.verdict.Class != swarm.ClassOK {
			report(out, r, f.keep)
		}
		return exitFor(r.verdict.Class)
	}
	if f.seeds < 1 {
		return badInput("--seeds must be at least 1")
	}
	if f.parallel < 1 {
		f.parallel = 1
	}
	sh, err := parseShard(f.shard)
	if err != nil {
		return err
	}
	seeds := sh.seeds(f.from, f.seeds)
	if len(seeds) == 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "swarm: shard %s of %d seeds holds no seed\n", f.shard, f.seeds)
	}
	var js *resultWriter
	if f.json != "" {
		if js, err = createResults(f.json); err != nil {
			return err
		}
	}
	start := time.Now()
	results := runSwarm(f, seeds, cmd.ErrOrStderr(), func(r seedResult) {
		fmt.Fprintln(out, r.line())
		out.Flush()
		if js != nil {
			js.write(r)
		}
	})
	wall := time.Since(start)
	if js != nil {
		if err := js.close(); err != nil {
			return err
		}
	}
	rows := make([]tallyRow, len(results))
	for i, r := range results {
		rows[i] = r.tallyRow()
	}
	worst := summarize(out, rows)
	fmt.Fprintf(out, "\n%d seeds in %.1fs wall on %d workers: %.2f seeds/s\n", len(results), wall.Seconds(), f.parallel,
		float64(len(results))/wall.Seconds())
	for _, r := range results {
		if r.verdict.Class != swarm.ClassOK {
			report(out, r, f.keep)
		}
	}
	return exitFor(worst)
}

func exitFor(c swarm.Class) error {
	if c == swarm.ClassOK {
		return nil
	}
	return exitError{c.ExitCode(), fmt.Errorf("the swarm found a %s failure", c)}
}

// runSwarm runs seeds (in increasing order) on f.parallel workers and hands
// each result to emit in that order (a worker's result waits for the seeds
// before it), so the output does not depend on the workers.
func runSwarm(f swarmFlags, list []uint64, progress io.Writer, emit func(seedResult)) []seedResult {
	seeds := make(chan uint64)
	done := make(chan seedResult)
	var wg sync.WaitGroup
	for w := 0; w < f.parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range seeds {
				done <- runSeed(s, f.wallLimit)
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
	pending := map[uint64]seedResult{}
	next := 0 // index in list of the next seed to emit
	var results []seedResult
	finished := 0
	for r := range done {
		finished++
		pending[r.seed] = r
		for next < len(list) {
			x, ok := pending[list[next]]
			if !ok {
				break
			}
			delete(pending, list[next])
			next++
			results = append(results, x)
			if x.verdict.Class != swarm.ClassOK {
				failed++
				if f.maxFailures > 0 && failed >= f.maxFailures {
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

// runSeed runs one seed: the reference run and the faulty run, then the
// checks.
func runSeed(seed uint64, wallLimit time.Duration) seedResult {
	start := time.Now()
	sc := swarm.Generate(seed)
	r := seedResult{seed: seed, sc: sc}
	ref := runScenario(&sc, true, wallLimit, nil)
	run := runScenario(&sc, false, wallLimit, nil)
	r.verdict = swarm.Check(&sc, ref, run)
	r.wall = time.Since(start)
	return r
}

// runCluster is the driver the swarm runs scenarios on (--driver).
var runCluster = cluster.RunPlain

// runScenario runs the scenario's reference run or faulty run, writing the
// log to log when it is not nil.
func runScenario(sc *swarm.Scenario, reference bool, wallLimit time.Duration, log io.Writer) (out *swarm.Run) {
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
	res, err := runCluster(cfg, cluster.Options{Actions: sc.Actions(reference), Observe: obs.Observe, Log: log, Interrupt: interrupt})
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

// tallyRow is what the tables count of one seed: its class, its fault
// kinds, and, for a faulty run that had faults and no stop-with-savepoint,
// how long after the flush it converged and its slack to the deadline.
type tallyRow struct {
	class     swarm.Class
	kinds     []swarm.FaultKind
	counted   bool // converged and slack count in the convergence line
	converged time.Duration
	slack     time.Duration
}

// tallyRow is r's row of the tables.
func (r seedResult) tallyRow() tallyRow {
	row := tallyRow{class: r.verdict.Class, kinds: r.sc.Kinds()}
	if r.verdict.Converged >= 0 && len(r.sc.Faults) > 0 && !r.sc.Stopped() {
		row.counted, row.converged = true, r.verdict.Converged
		row.slack = r.sc.Deadline - r.sc.FlushAt - r.verdict.Converged
	}
	return row
}

// summarize prints the tables by outcome and by fault kind and the
// convergence line, and returns the worst outcome.
func summarize(w io.Writer, rows []tallyRow) swarm.Class {
	worst := swarm.ClassOK
	byClass := map[swarm.Class]int{}
	byKind := map[swarm.FaultKind]map[swarm.Class]int{}
	for _, r := range rows {
		c := r.class
		byClass[c]++
		if c.Worse(worst) {
			worst = c
		}
		kinds := r.kinds
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
		if r.counted {
			conv = append(conv, r.converged)
			if slack < 0 || r.slack < slack {
				slack = r.slack
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

// report prints a failed seed: the scenario, every broken invariant and
// the commands that reproduce it; with keep it writes both runs' logs.
func report(w io.Writer, r seedResult, keep string) {
	sc := &r.sc
	fmt.Fprintf(w, "\nFAIL seed=%d class=%s invariant=%s\n", r.seed, r.verdict.Class, r.verdict.Invariant())
	fmt.Fprint(w, indent(sc.Describe(), "  "))
	fmt.Fprintln(w, "  broken:")
	for _, v := range r.verdict.Violations {
		fmt.Fprintf(w, "    %s\n", v)
	}
	logArg := func(string) string { return "" }
	if keep != "" {
		path := filepath.Join(keep, fmt.Sprintf("seed-%d.scenario.json", r.seed))
		if b, err := json.MarshalIndent(sc, "", "  "); err == nil && os.WriteFile(path, append(b, '\n'), 0o644) == nil {
			fmt.Fprintf(w, "  scenario: %s (a regression test reads it back)\n", path)
		}
		for _, reference := range []bool{false, true} {
			name := fmt.Sprintf("seed-%d.log", r.seed)
			if reference {
				name = fmt.Sprintf("seed-%d.reference.log", r.seed)
			}
			path := filepath.Join(keep, name)
			if f, err := os.Create(path); err == nil {
				bw := bufio.NewWriterSize(f, 1<<16)
				runScenario(sc, reference, 10*time.Minute, bw)
				bw.Flush()
				f.Close()
				fmt.Fprintf(w, "  log: %s\n", path)
			} else {
				fmt.Fprintf(w, "  log: %v\n", err)
			}
		}
		logArg = func(name string) string { return " --log " + shellQuote(filepath.Join(keep, name)) }
	}
	fmt.Fprintf(w, "  reproduce with: %s%s\n", runCommand(sc, false), logArg(fmt.Sprintf("seed-%d.log", r.seed)))
	fmt.Fprintf(w, "  the run without faults: %s%s\n", runCommand(sc, true), logArg(fmt.Sprintf("seed-%d.reference.log", r.seed)))
	fmt.Fprintf(w, "  rerun the seed: %s swarm --seed %d\n", program(), r.seed)
}

// program is how to invoke the simulator built the way this one is.
func program() string {
	if kafka.BrokenBuild != "" {
		return "go run -tags " + kafka.BrokenBuild + " ./cmd/flinksim"
	}
	return "flinksim"
}

// runCommand is the flinksim run command line of one run of the scenario.
func runCommand(sc *swarm.Scenario, reference bool) string {
	var b strings.Builder
	b.WriteString(program() + " run")
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
