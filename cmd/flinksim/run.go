package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/events"
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
}

func init() {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the job and print its event log",
		Long: `Run the orders-per-minute job (or the job the settings describe) on a simulated
cluster and print the structured event log (JSON lines) while it runs.

Without --events the built-in generator fills the source topic for sim.duration of
virtual time. With --events FILE the topic holds the file's records and the source
is bounded (KafkaSource.setBounded(OffsetsInitializer.latest())): the job ends
FINISHED when every window has fired.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMain(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.events, "events", "", "events file: JSON lines or CSV with key,ts[,partition]")
	fl.StringVar(&f.output, "output", "", "write what a consumer of the sink topic sees to this file (JSON lines)")
	fl.StringArrayVar(&f.sets, "set", nil, "a setting key=value (repeatable); see 'flinksim settings'")
	fl.StringVar(&f.configFile, "config", "", "a YAML settings file, like Flink's config.yaml")
	fl.StringVar(&f.logFile, "log", "", "write the event log to this file instead of stdout")
	fl.StringVar(&f.logFormat, "log-format", "json", "json or console")
	fl.StringVar(&f.duration, "duration", "", "virtual run length (sets sim.duration), e.g. '10 min'")
	fl.StringVar(&f.seed, "seed", "", "random seed (sets sim.seed)")
	fl.BoolVar(&f.unbounded, "unbounded", false, "with --events: keep the job running until --duration")
	fl.StringArrayVar(&f.actions, "action", nil, "a user action, e.g. 'at=90s kill-taskmanager tm-1' (repeatable)")
	fl.StringVar(&f.actionsFile, "actions", "", "a file of actions, one per line")
	fl.BoolVar(&f.determinism, "check-determinism", false, "run twice in this process and fail if the logs differ")
	rootCmd.AddCommand(cmd)
}

// loadConfig applies --config, then each --set, then validates.
func loadConfig(configFile string, sets []string) (config.Config, error) {
	cfg := config.Default()
	if configFile != "" {
		if err := cfg.LoadYAML(configFile); err != nil {
			return cfg, badInput("%v", err)
		}
	}
	for _, kv := range sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return cfg, badInput("--set %q: expected key=value", kv)
		}
		if err := cfg.Set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return cfg, badInput("%v", err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, badInput("%v", err)
	}
	return cfg, nil
}

// runSpec is everything that determines a run's log.
type runSpec struct {
	cfg     config.Config
	opt     cluster.Options
	console bool
}

func prepare(f runFlags) (runSpec, error) {
	sets := f.sets
	if f.duration != "" {
		sets = append(sets, "sim.duration="+f.duration)
	}
	if f.seed != "" {
		sets = append(sets, "sim.seed="+f.seed)
	}
	cfg, err := loadConfig(f.configFile, sets)
	if err != nil {
		return runSpec{}, err
	}
	if f.logFormat != "json" && f.logFormat != "console" {
		return runSpec{}, badInput("--log-format %q: allowed values are json, console", f.logFormat)
	}
	spec := runSpec{cfg: cfg, console: f.logFormat == "console"}
	acts, err := parseActions(f.actions, f.actionsFile)
	if err != nil {
		return runSpec{}, err
	}
	spec.opt.Actions = acts
	if f.events != "" {
		recs, sum, err := readEvents(f.events, cfg)
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

func readEvents(path string, cfg config.Config) ([]events.Record, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", badInput("--events: %v", err)
	}
	recs, err := events.Read(bytes.NewReader(data), path, events.Options{KeyField: cfg.KeyField, TimeField: cfg.TimeField,
		Partitions: cfg.SourcePartitions})
	if err != nil {
		return nil, "", badInput("%v", err)
	}
	if len(recs) == 0 {
		return nil, "", badInput("%s: no records", path)
	}
	sum := sha256.Sum256(data)
	return recs, hex.EncodeToString(sum[:]), nil
}

// execute runs spec writing its log to w.
func execute(spec runSpec, w io.Writer) (*cluster.Result, error) {
	opt := spec.opt
	opt.Log = w
	opt.Console = spec.console
	if isatty.IsTerminal(os.Stderr.Fd()) {
		limit := spec.cfg.Duration.Microseconds()
		opt.Progress = func(us int64) {
			if opt.Bounded() {
				fmt.Fprintf(os.Stderr, "\r  virtual time %s ", eventlog.FormatVT(us))
			} else {
				fmt.Fprintf(os.Stderr, "\r  virtual time %s of %s ", eventlog.FormatVT(us), eventlog.FormatVT(limit))
			}
		}
	}
	res, err := cluster.Run(spec.cfg, opt)
	if opt.Progress != nil {
		fmt.Fprint(os.Stderr, "\r\033[K")
	}
	if err != nil {
		return nil, badInput("%v", err)
	}
	return res, nil
}

func runMain(cmd *cobra.Command, f runFlags) error {
	spec, err := prepare(f)
	if err != nil {
		return err
	}
	if f.output != "" {
		if f.output == f.logFile {
			return badInput("--output and --log name the same file %s", f.output)
		}
		// refuse an unwritable output before the run, not after it
		if err := os.WriteFile(f.output, nil, 0o644); err != nil {
			return badInput("--output: %v", err)
		}
	}
	var out io.Writer = cmd.OutOrStdout()
	if f.logFile != "" {
		file, err := os.Create(f.logFile)
		if err != nil {
			return badInput("--log: %v", err)
		}
		defer file.Close()
		out = file
	}
	bw := bufio.NewWriterSize(out, 1<<16)
	start := time.Now()
	var res *cluster.Result
	if f.determinism {
		var a, b bytes.Buffer
		if res, err = execute(spec, &a); err != nil {
			return err
		}
		if _, err = execute(spec, &b); err != nil {
			return err
		}
		if line, x, y, differ := firstDifference(a.Bytes(), b.Bytes()); differ {
			return exitError{exitInvariant, fmt.Errorf("FAIL seed=%d invariant=determinism: the two runs differ first at line %d\n  run 1: %s\n  run 2: %s",
				spec.cfg.Seed, line, x, y)}
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "determinism: two runs gave identical logs (%d bytes)\n", a.Len())
		bw.Write(a.Bytes())
	} else if res, err = execute(spec, bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	wall := time.Since(start)
	for _, a := range res.IgnoredActions {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: action not carried out: %s\n", a)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "job %s in %s virtual, %.2fs wall, %d records read, %d results written, %d visible to a %s consumer (%d duplicates, %d uncommitted)\n",
		res.JobStatus, res.EndVT, wall.Seconds(), res.Counters["records_read"], res.Counters["results_written"],
		len(res.Sink), res.OutputIsolation, res.Duplicates, res.Uncommitted)
	if f.output != "" {
		if err := writeOutput(f.output, res); err != nil {
			return err
		}
	}
	if res.Invariant != "" {
		replay := "flinksim run " + strings.Join(os.Args[2:], " ")
		if f.logFile != "" {
			replay = "flinksim replay " + f.logFile
		}
		return exitError{exitInvariant, fmt.Errorf("FAIL seed=%d vt=%d invariant=%s: %s (actor %s)\nreproduce with: %s",
			spec.cfg.Seed, res.FailureVT, res.Invariant, res.Failure, res.FailedActor, replay)}
	}
	if res.JobStatus == "FAILED" {
		return exitError{exitJobFailed, fmt.Errorf("the job FAILED: %s", res.FailureCause)}
	}
	return nil
}

// writeOutput writes the sink topic as a consumer sees it, one JSON record
// per line.
func writeOutput(path string, res *cluster.Result) error {
	var b bytes.Buffer
	for _, r := range res.Sink {
		b.Write(r.Value)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return badInput("%v", err)
	}
	return nil
}

// firstDifference compares two logs line by line: 1-based line number and
// the two lines where they first differ.
func firstDifference(a, b []byte) (line int, x, y string, differ bool) {
	la := bytes.Split(a, []byte("\n"))
	lb := bytes.Split(b, []byte("\n"))
	for i := 0; i < len(la) || i < len(lb); i++ {
		var sa, sb []byte
		if i < len(la) {
			sa = la[i]
		}
		if i < len(lb) {
			sb = lb[i]
		}
		if !bytes.Equal(sa, sb) {
			if i >= len(la) {
				return i + 1, "<end of log>", string(sb), true
			}
			if i >= len(lb) {
				return i + 1, string(sa), "<end of log>", true
			}
			return i + 1, string(sa), string(sb), true
		}
	}
	return 0, "", "", false
}

// parseActions reads --action flags and an --actions file, sorted by time.
func parseActions(flags []string, file string) ([]action.Action, error) {
	var out []action.Action
	for _, s := range flags {
		a, err := action.Parse(s)
		if err != nil {
			return nil, badInput("--action: %v", err)
		}
		out = append(out, a)
	}
	if file != "" {
		text, err := os.ReadFile(file)
		if err != nil {
			return nil, badInput("--actions: %v", err)
		}
		as, err := action.ParseScript(file, string(text))
		if err != nil {
			return nil, badInput("%v", err)
		}
		out = append(out, as...)
	}
	action.Sort(out)
	return out, nil
}
