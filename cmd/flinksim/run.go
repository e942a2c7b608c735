package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/cluster/console"
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/filter"
	"github.com/flinksim/flinksim/sim/input"
)

type runFlags struct {
	events      string
	output      string
	sets        []string
	configFile  string
	logFile     string
	logFormat   string
	duration    string
	seed        string
	unbounded   bool
	determinism bool
	actions     []string
	actionsFile string
	only        []string
	exclude     []string
	quiet       bool
}

// Log formats of what run prints on stdout (--log FILE always gets JSON).
const (
	formatAuto    = "auto"    // human on a terminal, json otherwise
	formatJSON    = "json"    // the JSON event log, as replay reads it
	formatConsole = "console" // the same events, one zerolog console line each
	formatHuman   = "human"   // the person's view: notable events, status line, summary table
)

var actionVerbsHelp = `Actions (--action or one per line of an --actions file; # starts a comment):
  at=DURATION kill-taskmanager tm-N      the TaskManager dies; its heartbeat times out
  at=DURATION trigger-checkpoint          a checkpoint now (CheckpointCoordinator)
  at=DURATION trigger-savepoint           a savepoint now
  at=DURATION stop-with-savepoint         stop the job with a savepoint (no drain)
  at=DURATION rescale N [max-parallelism=M]   stop with a savepoint, start again at parallelism N
  at=DURATION send-event key=K ts=now|now-D|MS [partition=P] [FIELD=VALUE ...]   a record by hand
  at=DURATION pause-partition P           the producer of partition P stalls
  at=DURATION resume-partition P          ... and goes on
  at=DURATION set KEY=VALUE               change ` + strings.Join(action.SetKeys, ", ") + `
                                          (the job restarts from a savepoint with it; the isolation level only changes the view)
  at=DURATION partition-network A B for D  the network between A and B (tm-N or jobmanager) loses everything for D
DURATION is virtual time from the start, with a unit: 90s, 2 min, 500ms.`

func init() {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags]",
		Short: "Run the job on a simulated cluster and show what happens",
		Long: `Run the orders-per-minute job (or the job the settings describe) on a simulated
cluster.

On a terminal, run shows a person's view: one short line per notable event
(bring-up, job status, splits, checkpoints, failures, restores, rescale, a sample
of window firings), a live status line (virtual time, records/s, Kafka lag,
watermark, results) and a summary table at the end. Piped, or with
--log-format json, it prints the JSON event log, one event per line, which
'flinksim replay' reads. --log FILE always gets the full JSON log, and stdout
still shows what --log-format names (auto on a pipe: nothing more). Warnings
that name a trap (a reader without a split, a watermark that does not move,
late records dropped, the root cause of a FAILED job, a setting with no effect,
an action not carried out, a run that read or wrote nothing and why) go to
stderr, once each, with the setting that fixes it.

Without --events the built-in generator fills the source topic for sim.duration
of virtual time. With --events FILE the topic holds the file's records and the
source is bounded (KafkaSource.setBounded(OffsetsInitializer.latest())): the job
ends FINISHED when every window has fired.

` + actionVerbsHelp + `

--only and --exclude take event kinds (window_fired, checkpoint_completed, ...) or
groups (bring-up, checkpoints, failures, metrics, network, sink, source, windows),
comma-separated; they filter what is printed, never --log.`,
		Example: `  flinksim run
  flinksim run --events examples/data/playground-clicks.jsonl --set job.window.size=15s --output out.jsonl
  flinksim run --config examples/readers-without-splits/config.yaml
  flinksim run --duration 3min --set restart-strategy.type=fixed-delay --action 'at=90s kill-taskmanager tm-1'
  flinksim run --log run.log --log-format json --exclude metrics | head`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMain(cmd, f) },
	}
	f.register(cmd.Flags())
	rootCmd.AddCommand(cmd)
}

// register defines run's flags on fl (shared with the jobmanager command).
func (f *runFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.events, "events", "", "events file: JSON lines or CSV with key,ts[,partition]")
	fl.StringVar(&f.output, "output", "", "write what a consumer of the sink topic sees to this file (JSON lines); - for stdout")
	fl.StringArrayVar(&f.sets, "set", nil, "a setting key=value (repeatable); see 'flinksim settings'")
	fl.StringVar(&f.configFile, "config", "", "a YAML settings file, like Flink's config.yaml (flat or nested)")
	fl.StringVar(&f.logFile, "log", "", "write the full JSON event log to this file; - for stdout")
	fl.StringVar(&f.logFormat, "log-format", formatAuto, "what stdout shows: auto (human on a terminal, else json; with --log FILE on a pipe nothing), json, console or human")
	fl.StringVar(&f.duration, "duration", "", "virtual run length (sets sim.duration), e.g. '10 min'")
	fl.StringVar(&f.seed, "seed", "", "random seed (sets sim.seed)")
	fl.BoolVar(&f.unbounded, "unbounded", false, "with --events: keep the job running until --duration")
	fl.StringArrayVar(&f.actions, "action", nil, "a user action, e.g. 'at=90s kill-taskmanager tm-1' (repeatable)")
	fl.StringVar(&f.actionsFile, "actions", "", "a file of actions, one per line")
	fl.BoolVar(&f.determinism, "check-determinism", false, "run twice in this process and fail if the logs differ")
	fl.StringArrayVar(&f.only, "only", nil, "print only these event kinds or groups (comma-separated, repeatable)")
	fl.StringArrayVar(&f.exclude, "exclude", nil, "do not print these event kinds or groups (comma-separated, repeatable)")
	fl.BoolVar(&f.quiet, "quiet", false, "print no events: only warnings and the closing summary")
}

// loadedConfig is a run's settings and what loading them told.
type loadedConfig struct {
	cfg config.Config
	// notSimulated are the Flink keys given that the simulator does not
	// model, in the order given, once each.
	notSimulated []string
	// explicit are the keys the user gave a value other than the default,
	// or named with --set.
	explicit map[string]bool
}

// loadConfig applies --config, then each --set, derives what Flink derives
// (Resolve), then validates.
func loadConfig(configFile string, sets []string) (loadedConfig, error) {
	lc := loadedConfig{cfg: config.Default(), explicit: map[string]bool{}}
	seen := map[string]bool{}
	noteKey := func(k string) {
		if !seen[k] {
			seen[k] = true
			lc.notSimulated = append(lc.notSimulated, k)
		}
	}
	if configFile != "" {
		notSim, err := lc.cfg.LoadYAML(configFile)
		if err != nil {
			return lc, badInput("--config %v", err)
		}
		for _, k := range notSim {
			noteKey(k)
		}
	}
	for _, kv := range sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return lc, badInput("--set %s: expected key=value", input.Quote(kv))
		}
		k = strings.TrimSpace(k)
		if err := lc.cfg.Set(k, strings.TrimSpace(v)); err != nil {
			var ns *config.NotSimulatedError
			if errors.As(err, &ns) {
				noteKey(k)
				continue
			}
			return lc, badInput("--set %v", err)
		}
		lc.explicit[k] = true
	}
	def := config.Default()
	for i, kv := range lc.cfg.Values() {
		if kv.Value != def.Values()[i].Value {
			lc.explicit[kv.Key] = true
		}
	}
	if err := lc.cfg.Resolve(); err != nil {
		return lc, badInput("%v", err)
	}
	if err := lc.cfg.Validate(); err != nil {
		return lc, badInput("%v", err)
	}
	return lc, nil
}

// runSpec is everything that determines a run's log.
type runSpec struct {
	cfg config.Config
	opt cluster.Options
	lc  loadedConfig
}

func prepare(f runFlags) (runSpec, error) {
	sets := f.sets
	for _, fl := range []struct{ flag, key, value string }{{"--duration", "sim.duration", f.duration}, {"--seed", "sim.seed", f.seed}} {
		if fl.value == "" {
			continue
		}
		// checked here so that the message names the flag the user gave
		scratch := config.Default()
		if err := scratch.Set(fl.key, fl.value); err != nil {
			return runSpec{}, badInput("%s %v", fl.flag, err)
		}
		sets = append(sets, fl.key+"="+fl.value)
	}
	lc, err := loadConfig(f.configFile, sets)
	if err != nil {
		return runSpec{}, err
	}
	switch f.logFormat {
	case formatAuto, formatJSON, formatConsole, formatHuman:
	default:
		return runSpec{}, badInput("--log-format %s: allowed values are auto, json, console, human", input.Quote(f.logFormat))
	}
	spec := runSpec{cfg: lc.cfg, lc: lc}
	acts, err := parseActionsFor(f.actions, f.actionsFile, func(a action.Action) error { return cluster.CheckAction(lc.cfg, a) })
	if err != nil {
		return runSpec{}, err
	}
	spec.opt.Actions = acts
	if f.events != "" {
		recs, sum, err := readEvents("--events ", f.events, lc.cfg)
		if err != nil {
			return runSpec{}, err
		}
		spec.opt.Events, spec.opt.EventsFile, spec.opt.EventsSHA256 = recs, f.events, sum
		spec.opt.Unbounded = f.unbounded
	} else if f.unbounded {
		return runSpec{}, badInput("--unbounded needs --events (the generator is always unbounded)")
	}
	return spec, nil
}

// readEvents reads an events file within its limits; what names where the
// path came from in errors ("--events ", or "LOG:1: events_file ").
func readEvents(what, path string, cfg config.Config) ([]events.Record, string, error) {
	data, err := input.ReadFile(path, input.EventsLimits)
	if err != nil {
		return nil, "", badInput("%s%v", what, err)
	}
	opt := events.Options{KeyField: cfg.KeyField, TimeField: cfg.TimeField, Partitions: cfg.SourcePartitions}
	if cfg.Operator == config.OperatorWindow && cfg.Aggregate != config.AggregateCount {
		opt.NumberField = cfg.AggregateField
	}
	if p, err := filter.Parse(cfg.Filter); cfg.Filter != "" && err == nil && p.Field != "key" {
		opt.FilterField = p.Field
	}
	recs, err := events.Parse(data, path, opt)
	if err != nil {
		return nil, "", badInput("%s%v", what, err)
	}
	if len(recs) == 0 {
		return nil, "", badInput("%s%s: no records", what, path)
	}
	if err := cluster.CheckEvents(cfg, path, recs); err != nil {
		return nil, "", badInput("%s%v", what, err)
	}
	sum := sha256.Sum256(data)
	return recs, hex.EncodeToString(sum[:]), nil
}

// execute runs spec, writing its JSON log to w (which may be io.Discard)
// and handing every event to the observers (cluster.Options.Observe);
// progress, when not nil, is told the virtual time now and then; closing
// interrupt cuts the run short (its summary then says INTERRUPTED).
func execute(spec runSpec, w io.Writer, progress func(int64), interrupt <-chan struct{}, observers ...console.Observer) (*cluster.Result, error) {
	return executeWith(cluster.Run, spec, w, progress, interrupt, observers...)
}

// runner runs one job writing its log to opt.Log: cluster.Run, or the
// jobmanager's run over taskmanager processes.
type runner func(cfg config.Config, opt cluster.Options) (*cluster.Result, error)

// executeWith is execute with another runner; an exitError from it keeps
// its code, any other error is bad input.
func executeWith(run runner, spec runSpec, w io.Writer, progress func(int64), interrupt <-chan struct{}, observers ...console.Observer) (*cluster.Result, error) {
	opt := spec.opt
	opt.Log = w
	adapt(&opt)
	if len(observers) > 0 {
		opt.Observe = func(ev *messages.LogEvent) {
			for _, o := range observers {
				o(ev)
			}
		}
	}
	opt.Progress = progress
	opt.Interrupt = interrupt
	res, err := run(spec.cfg, opt)
	if err != nil {
		if errors.As(err, new(exitError)) {
			return nil, err
		}
		return nil, badInput("%v", err)
	}
	return res, nil
}

// ioFile is one file flag of run, for the identity checks.
type ioFile struct{ flag, path string }

// checkOutputs refuses an output that is one of the inputs or the other
// output: the same file by identity (os.SameFile: also through a link or
// another spelling), or the same path when it does not exist yet. It runs
// before anything is created, so no input is ever truncated.
func checkOutputs(inputs, outputs []ioFile) error {
	stat := func(p string) os.FileInfo {
		st, err := os.Stat(p)
		if err != nil {
			return nil
		}
		return st
	}
	same := func(a, b string) bool {
		sa, sb := stat(a), stat(b)
		if sa != nil && sb != nil {
			return os.SameFile(sa, sb)
		}
		ca, _ := filepath.Abs(a)
		cb, _ := filepath.Abs(b)
		return ca == cb
	}
	for i, out := range outputs {
		if out.path == "" || out.path == "-" {
			continue
		}
		if st := stat(out.path); st != nil && st.IsDir() {
			return badInput("%s %s: is a directory", out.flag, out.path)
		}
		for _, in := range inputs {
			if in.path != "" && same(out.path, in.path) {
				return badInput("%s %s is the %s file: refusing to overwrite an input", out.flag, out.path, in.flag)
			}
		}
		for _, other := range outputs[i+1:] {
			if other.path != "" && other.path != "-" && same(out.path, other.path) {
				return badInput("%s and %s name the same file %s", out.flag, other.flag, out.path)
			}
		}
	}
	return nil
}

func runMain(cmd *cobra.Command, f runFlags) error { return runJob(cmd, f, cluster.Run) }

// runJob is run's body with the runner given: prepare, write the log and
// the output, report, and choose the exit code.
func runJob(cmd *cobra.Command, f runFlags, run runner) error {
	if err := checkOutputs(
		[]ioFile{{"--events", f.events}, {"--config", f.configFile}, {"--actions", f.actionsFile}},
		[]ioFile{{"--output", f.output}, {"--log", f.logFile}}); err != nil {
		return err
	}
	if f.output == "-" && f.logFile == "-" {
		return badInput("--output - and --log - both want stdout: give one of them a file")
	}
	only, err := console.ParseKinds("--only", f.only)
	if err != nil {
		return badInput("%v", err)
	}
	exclude, err := console.ParseKinds("--exclude", f.exclude)
	if err != nil {
		return badInput("%v", err)
	}
	filter := console.NewKindFilter(only, exclude)
	spec, err := prepare(f)
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	if len(spec.lc.notSimulated) > 0 {
		fmt.Fprintf(stderr, "flinksim: not simulated (Flink keys accepted and ignored): %s\n", strings.Join(spec.lc.notSimulated, ", "))
	}
	if f.output != "" && f.output != "-" {
		// refuse an unwritable output before the run, not after it
		if err := os.WriteFile(f.output, nil, 0o644); err != nil {
			return badInput("--output: %v", err)
		}
	}

	// where the JSON log goes, and what stdout shows
	stdout := cmd.OutOrStdout()
	stdoutTerm := isTerminal(stdout)
	format := f.logFormat
	if format == formatAuto {
		format = formatJSON
		if stdoutTerm {
			format = formatHuman
		}
	}
	bw := bufio.NewWriterSize(stdout, 1<<16)
	var logSinks []io.Writer
	var logFile *os.File
	switch f.logFile {
	case "":
	case "-":
		logSinks = append(logSinks, bw)
	default:
		if logFile, err = os.Create(f.logFile); err != nil {
			return badInput("--log: %v", err)
		}
		defer logFile.Close()
		logSinks = append(logSinks, bufio.NewWriterSize(logFile, 1<<16))
	}
	// the person's view writes to stdout unbuffered, so that each line shows
	// when it happens; nothing else writes to stdout then
	scr := console.NewScreen(stdout, stderr, stdoutTerm && os.Getenv("NO_COLOR") == "")
	var v *console.View
	var observers []console.Observer
	stdoutFree := f.output != "-" && f.logFile != "-"
	if stdoutFree {
		switch format {
		case formatHuman:
			v = console.NewView(scr, spec.cfg, filter, f.quiet)
			scr.SetLive(stdoutTerm && !f.quiet)
			observers = append(observers, v.Observe)
		case formatConsole:
			if !f.quiet {
				logSinks = append(logSinks, console.Filtered(console.ConsoleWriter(bw), filter))
			}
		case formatJSON:
			if f.logFile == "" || f.logFormat == formatJSON {
				switch {
				case f.quiet:
					logSinks = append(logSinks, console.Filtered(bw, console.NewKindFilter(map[string]bool{string(eventlog.KindSummary): true}, nil)))
				case filter.Active():
					logSinks = append(logSinks, console.Filtered(bw, filter))
				default:
					logSinks = append(logSinks, bw)
				}
			}
		}
	}
	// warnings go to stderr, keeping a status line intact
	warnLine := func(text string) {
		scr.ClearStatus()
		bw.Flush()
		fmt.Fprintln(stderr, text)
		scr.Draw(true)
	}
	w := console.NewWarner(spec.cfg, warnLine)
	observers = append(observers, w.Observe)
	for _, text := range console.NoEffectWarnings(spec.cfg, spec.lc.explicit, spec.opt.Bounded(), spec.opt.Events != nil) {
		warnLine(text)
	}
	if spec.cfg.EventsPace != config.PaceFileOrder {
		for _, r := range spec.opt.Events {
			if r.Arrival >= 0 {
				warnLine(fmt.Sprintf("warning: the events file's arrival fields (line %d, ...) have no effect in this run: they pace the records only with --set sim.events.pace=file-order (the pace is %s)",
					r.Line, spec.cfg.EventsPace))
				break
			}
		}
	}
	var progress func(int64)
	if v == nil && isTerminal(stderr) {
		limit := spec.cfg.Duration.Microseconds()
		bounded := spec.opt.Bounded()
		progress = func(us int64) {
			if bounded {
				fmt.Fprintf(stderr, "\r  virtual time %s ", config.FormatDuration(time.Duration(us/1000)*time.Millisecond))
			} else {
				fmt.Fprintf(stderr, "\r  virtual time %s of %s ", config.FormatDuration(time.Duration(us/1000)*time.Millisecond),
					config.FormatDuration(time.Duration(limit/1000)*time.Millisecond))
			}
		}
		defer fmt.Fprint(stderr, "\r\033[K")
	}

	if v != nil {
		v.Start(spec.opt)
	}
	logOut := io.MultiWriter(logSinks...)
	stop := catchSignals()
	defer stop.release()
	start := time.Now()
	var res *cluster.Result
	if f.determinism {
		var a, b bytes.Buffer
		if res, err = execute(spec, io.MultiWriter(logOut, &a), progress, stop.c, observers...); err != nil {
			return err
		}
		if res.Interrupted {
			return interrupted(stderr, stop, res, f, spec)
		}
		if _, err = execute(spec, &b, nil, nil); err != nil {
			return err
		}
		if line, x, y, differ := eventlog.FirstDifference(a.Bytes(), b.Bytes()); differ {
			return exitError{exitInvariant, fmt.Errorf("FAIL seed=%d invariant=determinism: the two runs differ first at line %d%s",
				spec.cfg.Seed, line, lineDifference(x, y))}
		}
		fmt.Fprintf(stderr, "determinism: two runs gave identical logs (%d bytes)\n", a.Len())
	} else if res, err = executeWith(run, spec, logOut, progress, stop.c, observers...); err != nil {
		return err
	}
	stop.release()
	for _, s := range logSinks {
		if fl, ok := s.(interface{ Flush() error }); ok {
			if err := fl.Flush(); err != nil && !isBrokenPipe(err) {
				return err
			}
		}
	}
	wall := time.Since(start)
	w.Finish()
	if v != nil {
		v.Finish(res, fmt.Sprintf("%.2f s", wall.Seconds()))
	}
	if err := bw.Flush(); err != nil && !isBrokenPipe(err) {
		return err
	}
	if why := silence(spec, res, w); why != "" {
		fmt.Fprintln(stderr, "warning: "+why)
	}
	for _, a := range res.IgnoredActions {
		text := "warning: action not carried out: " + a
		if hint := console.ActionHint(a, spec.cfg); hint != "" {
			text += " (" + hint + ")"
		}
		fmt.Fprintln(stderr, text)
	}
	// the one-line summary, unless the person's view on the same terminal
	// has just said it (its last lines are the summary)
	if v == nil || !stdoutTerm || !isTerminal(stderr) {
		fmt.Fprintf(stderr, "job %s in %s virtual, %.2f s wall, %s read, %s written, %d visible to a %s consumer (%s, %d uncommitted)\n",
			res.JobStatus, config.FormatDuration(time.Duration(res.EndVT/1000)*time.Millisecond), wall.Seconds(),
			console.Plural(res.Counters["records_read"], "record"), console.Plural(res.Counters["results_written"], "result"),
			len(res.Sink), res.OutputIsolation, console.Plural(res.Duplicates, "duplicate"), res.Uncommitted)
	}
	if f.output != "" {
		if err := writeOutput(f.output, res, stdout); err != nil {
			return err
		}
	}
	if res.Interrupted {
		return interrupted(stderr, stop, res, f, spec)
	}
	if res.Invariant != "" {
		replay := "flinksim run " + strings.Join(os.Args[2:], " ")
		if f.logFile != "" && f.logFile != "-" {
			replay = "flinksim replay " + f.logFile
		}
		return exitError{exitInvariant, fmt.Errorf("FAIL seed=%d vt=%d invariant=%s: %s (actor %s)\nreproduce with: %s",
			spec.cfg.Seed, res.FailureVT, res.Invariant, res.Failure, res.FailedActor, replay)}
	}
	if res.JobStatus == "FAILED" {
		msg := "the job FAILED: " + res.FailureCause
		if w.LastCause() != "" && w.LastCause() != res.FailureCause {
			msg = "the job FAILED: " + w.LastCause() + " (then: " + res.FailureCause + ")"
		}
		return exitError{exitJobFailed, errors.New(msg)}
	}
	return nil
}

// isTerminal reports whether w is a terminal (an *os.File on a tty).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// isBrokenPipe reports a write to a pipe whose reader went away (| head).
func isBrokenPipe(err error) bool {
	return err != nil && (errors.Is(err, errBrokenPipe) || strings.Contains(err.Error(), "broken pipe"))
}

var errBrokenPipe = errors.New("broken pipe")

// writeOutput writes the sink topic as a consumer sees it, one JSON record
// per line, to path ("-": stdout). A double the sink wrote as +Inf, -Inf or
// NaN (a sum beyond the range of a double) is written as Flink's JSON
// format writes it, as a string (eventlog.QuoteNonFinite), so that every
// line is JSON.
func writeOutput(path string, res *cluster.Result, stdout io.Writer) error {
	var b bytes.Buffer
	for _, r := range res.Sink {
		b.Write(eventlog.QuoteNonFinite(r.Value))
		b.WriteByte('\n')
	}
	if path == "-" {
		if _, err := stdout.Write(b.Bytes()); err != nil && !isBrokenPipe(err) {
			return err
		}
		return nil
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return badInput("%v", err)
	}
	return nil
}

// parseActions reads --action flags and an --actions file, sorted by time.
func parseActions(flags []string, file string) ([]action.Action, error) {
	return parseActionsFor(flags, file, nil)
}

// parseActionsFor is parseActions with check, when not nil, run on every
// action (cluster.CheckAction: what the settings refuse of an action), its
// refusal at the flag or at the file's line.
func parseActionsFor(flags []string, file string, check func(action.Action) error) ([]action.Action, error) {
	var out []action.Action
	for _, s := range flags {
		a, err := action.Parse(s)
		if err == nil && check != nil {
			err = check(a)
		}
		if err != nil {
			return nil, badInput("--action: %v", err)
		}
		out = append(out, a)
	}
	if file != "" {
		data, err := input.ReadFile(file, input.ActionsLimits)
		if err != nil {
			return nil, badInput("--actions %v", err)
		}
		data = input.Clean(data)
		if line, col := input.CheckUTF8(data); line > 0 {
			return nil, badInput("--actions %s:%d: invalid UTF-8 at byte %d of the line", file, line, col)
		}
		if line := input.BOMLine(data); line > 0 {
			return nil, badInput("--actions %s:%d: %s", file, line, input.BOMMessage(line))
		}
		as, err := action.ParseScriptChecked(file, string(data), check)
		if err != nil {
			return nil, badInput("--actions %v", err)
		}
		out = append(out, as...)
	}
	action.Sort(out)
	return out, nil
}

// silence is the warning for a run that ends well (not FAILED, not cut
// short, no broken invariant) with no record read or no result written
// (cluster.Silence), unless a warning given during the run already named
// why.
func silence(spec runSpec, res *cluster.Result, w *console.Warner) string {
	if res.Interrupted || res.Invariant != "" || res.JobStatus == "FAILED" || w.ExplainedSilence() {
		return ""
	}
	return cluster.Silence(spec.cfg, spec.opt, res)
}
