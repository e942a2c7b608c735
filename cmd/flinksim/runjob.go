package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/cluster/console"
	"github.com/flinksim/flinksim/cluster/inputs"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
)

func runMain(cmd *cobra.Command, f runFlags) error { return runJob(cmd, f, cluster.Run) }

// runJob is run's body with the runner given: prepare, write the log and
// the output, report, and choose the exit code.
func runJob(cmd *cobra.Command, f runFlags, run runner) error {
	if err := inputs.CheckOutputs(
		[]inputs.File{{Flag: "--events", Path: f.events}, {Flag: "--config", Path: f.configFile}, {Flag: "--actions", Path: f.actionsFile}},
		[]inputs.File{{Flag: "--output", Path: f.output}, {Flag: "--log", Path: f.logFile}}); err != nil {
		return badInput("%v", err)
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
	if len(spec.lc.NotSimulated) > 0 {
		fmt.Fprintf(stderr, "flinksim: not simulated (Flink keys accepted and ignored): %s\n", strings.Join(spec.lc.NotSimulated, ", "))
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
		defer func() {
			if logFile != nil {
				_ = logFile.Close() // an early return: the run's error is the news
			}
		}()
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
		_ = bw.Flush() // an error sticks: the run's last Flush reports it
		fmt.Fprintln(stderr, text)
		scr.Draw(true)
	}
	w := console.NewWarner(spec.cfg, warnLine)
	observers = append(observers, w.Observe)
	for _, text := range console.NoEffectWarnings(spec.cfg, spec.lc.Explicit, spec.opt.Bounded(), spec.opt.Events != nil) {
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
	if logFile != nil {
		err := logFile.Close()
		logFile = nil
		if err != nil {
			return fmt.Errorf("--log: %v", err)
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
		read := " read"
		if res.AttemptsLost {
			// a lost attempt's reads died with it, as its metrics do in Flink
			read = " read by the last attempts"
		}
		fmt.Fprintf(stderr, "job %s in %s virtual, %.2f s wall, %s%s, %s written, %d visible to a %s consumer (%s, %d uncommitted)\n",
			res.JobStatus, config.FormatDuration(time.Duration(res.EndVT/1000)*time.Millisecond), wall.Seconds(),
			console.Plural(res.Counters["records_read"], "record"), read, console.Plural(res.Counters["results_written"], "result"),
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
