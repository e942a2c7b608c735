package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/cluster/console"
	"github.com/flinksim/flinksim/cluster/inputs"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/events"
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
  at=DURATION stall-taskmanager tm-N for D  the TaskManager's process freezes for D (a long GC), then wakes with what it missed
  at=DURATION network-jitter MAX for D     every envelope between two hosts up to MAX late for D, one connection's order kept
  at=DURATION lose-rpc RPC [on TASK] within D  the network loses the next RPC (acknowledge-checkpoint, decline-checkpoint,
                                          notify-checkpoint-complete) within D, to or from subtask TASK (window-1) if given
  at=DURATION fail-checkpoint-storage for D  every checkpoint upload fails for D: the tasks decline (CHECKPOINT_ASYNC_EXCEPTION)
  at=DURATION kafka-unavailable for D     the Kafka broker is unreachable for D: fetches, produces, transactions wait
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
groups (actions, bring-up, checkpoints, failures, metrics, network, sink, source, windows;
actions: every event an action caused, such as taskmanager_killed),
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

// loadConfig is inputs.LoadSettings, its refusal bad input (exit 2).
func loadConfig(configFile string, sets []string) (inputs.Settings, error) {
	lc, err := inputs.LoadSettings(configFile, sets)
	if err != nil {
		return lc, badInput("%v", err)
	}
	return lc, nil
}

// readEvents is inputs.ReadEvents, its refusal bad input.
func readEvents(what, path string, cfg config.Config) ([]events.Record, string, error) {
	recs, sum, err := inputs.ReadEvents(what, path, cfg)
	if err != nil {
		return nil, "", badInput("%v", err)
	}
	return recs, sum, nil
}

// parseActions is inputs.ParseActions, its refusal bad input.
func parseActions(flags []string, file string, check func(action.Action) error) ([]action.Action, error) {
	acts, err := inputs.ParseActions(flags, file, check)
	if err != nil {
		return nil, badInput("%v", err)
	}
	return acts, nil
}

// runSpec is everything that determines a run's log.
type runSpec struct {
	cfg config.Config
	opt cluster.Options
	lc  inputs.Settings
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
	spec := runSpec{cfg: lc.Config, lc: lc}
	acts, err := parseActions(f.actions, f.actionsFile, func(a action.Action) error { return cluster.CheckAction(lc.Config, a) })
	if err != nil {
		return runSpec{}, err
	}
	spec.opt.Actions = acts
	if f.events != "" {
		recs, sum, err := readEvents("--events ", f.events, lc.Config)
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
		opt.Observe = func(ev *eventlog.LogEvent) {
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

// flushInto flushes w when a command returns, its error becoming the
// command's unless it already has one or the reader went away (a pipe
// closed early): defer flushInto(&err, out).
func flushInto(err *error, w *bufio.Writer) {
	if ferr := w.Flush(); *err == nil && ferr != nil && !isBrokenPipe(ferr) {
		*err = ferr
	}
}

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
