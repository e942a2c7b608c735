//go:build !js

// (A GOOS=js build of the CLI has neither `ui` nor `site`: the session
// package leaves its HTTP server out of that build.)

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/cluster/inputs"
	"github.com/flinksim/flinksim/cluster/session"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/vt"
)

// uiFlags are run's flags that make sense for a live session, and the
// server's own.
type uiFlags struct {
	run    runFlags
	listen string
	replay string
}

// uiDuration is sim.duration of a UI session whose input is generated (or
// an unbounded events file) and whose length nobody gave: it runs until the
// user stops it, and the header records it so that a replay reproduces it.
const uiDuration = "365 d"

func init() {
	var f uiFlags
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the live diagram of a simulated run in the browser",
		Long: `Start the job (the one 'flinksim run' would run with the same flags) paused at
virtual time 0 and serve the live diagram on http://127.0.0.1:8081/ (Flink's REST
port): watch it at a chosen speed, act on it, jump back in time, change settings,
and download the log, which 'flinksim replay' reports identical. Flink's REST API
paths answer in Flink's shapes (curl http://127.0.0.1:8081/jobs/overview).

A generated input runs until you stop it (--duration still ends it where given).
--replay FILE opens a recorded log (from 'run --log' or downloaded from the page)
to scrub through. Everything is served from the binary: no network, no build step.

Ctrl-C stops the server at once, also during a long jump through time, and ui
exits 130 (143 for SIGTERM); with --log it first writes the session's log (a
re-run of the session so far), which a second Ctrl-C skips, writing nothing.`,
		Example: `  flinksim ui
  flinksim ui --set parallelism.default=3 --set sim.taskmanagers=3
  flinksim ui --replay run.jsonl
  flinksim ui --listen 127.0.0.1:9090`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sigs)
			return serveUI(cmd.Context(), sigs, cmd, f, nil)
		},
	}
	fl := cmd.Flags()
	r := &f.run
	r.logFormat = "json"
	fl.StringVar(&r.events, "events", "", "events file: JSON lines or CSV with key,ts[,partition]")
	fl.StringArrayVar(&r.sets, "set", nil, "a setting key=value (repeatable); see 'flinksim settings'")
	fl.StringVar(&r.configFile, "config", "", "a YAML settings file, like Flink's config.yaml")
	fl.StringVar(&r.logFile, "log", "", "when the server stops, write the session's log to this file (whole or not at all)")
	fl.StringVar(&r.duration, "duration", "", "virtual run length (sets sim.duration); default: until stopped")
	fl.StringVar(&r.seed, "seed", "", "random seed (sets sim.seed)")
	fl.BoolVar(&r.unbounded, "unbounded", false, "with --events: keep the job running")
	fl.StringArrayVar(&r.actions, "action", nil, "a user action, e.g. 'at=90s kill-taskmanager tm-1' (repeatable)")
	fl.StringVar(&r.actionsFile, "actions", "", "a file of actions, one per line")
	fl.StringVar(&f.listen, "listen", "127.0.0.1:8081", "address to serve on; anything but a loopback address is reachable from other machines")
	fl.StringVar(&f.replay, "replay", "", "open a recorded JSON event log instead of starting a new run")
	rootCmd.AddCommand(cmd)
}

// uiRecipe builds the first session's recipe from run's flags: the
// settings of `flinksim run` with the same flags, sim.duration set to run
// until stopped when the input is unbounded and no length was given.
func uiRecipe(f runFlags) (session.Recipe, error) {
	if f.duration == "" && f.events == "" || f.duration == "" && f.unbounded {
		if !durationGiven(f) {
			f.sets = append([]string{"sim.duration=" + uiDuration}, f.sets...)
		}
	}
	spec, err := prepare(f)
	if err != nil {
		return session.Recipe{}, err
	}
	return session.Recipe{Settings: spec.cfg, Options: spec.opt}, nil
}

// durationGiven reports whether --set or --config gives sim.duration.
func durationGiven(f runFlags) bool {
	for _, kv := range f.sets {
		if k, _, _ := strings.Cut(kv, "="); strings.TrimSpace(k) == "sim.duration" {
			return true
		}
	}
	if f.configFile != "" {
		probe := config.Default()
		probe.Duration = 1 // a value no file gives
		if _, err := probe.LoadYAML(f.configFile); err == nil && probe.Duration != 1 {
			return true
		}
	}
	return false
}

// replayRecipe reads the recipe of a recorded log as `flinksim replay`
// does (header, events file, live actions) and the virtual time it ends at.
func replayRecipe(path string) (session.Recipe, vt.Time, error) {
	data, h, err := inputs.ReadLog(path)
	if err != nil {
		return session.Recipe{}, 0, badInput("%v", err)
	}
	cfg, err := config.FromSettings(h.Settings)
	if err != nil {
		return session.Recipe{}, 0, badInput("%s:1: %v", path, err)
	}
	acts, err := parseActions(h.Actions, "", nil)
	if err != nil {
		return session.Recipe{}, 0, err
	}
	r := session.Recipe{Settings: cfg}
	if h.EventsFile != "" {
		recs, sum, err := readEvents(path+":1: events_file ", h.EventsFile, cfg)
		if err != nil {
			return session.Recipe{}, 0, err
		}
		if sum != h.EventsSHA256 {
			return session.Recipe{}, 0, badInput("%s: the events file %s changed since the run (sha256 %s, recorded %s)", path, h.EventsFile, sum, h.EventsSHA256)
		}
		r.Options = cluster.Options{Events: recs, EventsFile: h.EventsFile, EventsSHA256: sum, Unbounded: !h.Bounded}
	}
	r.Options.Actions = acts
	if r.Live, err = inputs.LiveActions(path, data); err != nil {
		return session.Recipe{}, 0, badInput("%v", err)
	}
	// the end: the last line's vt (the summary's, or the last event of a
	// log cut short)
	end := vt.Time(0)
	trimmed := bytes.TrimRight(data, "\n")
	var last struct {
		VT int64 `json:"vt"`
	}
	if err := json.Unmarshal(trimmed[bytes.LastIndexByte(trimmed, '\n')+1:], &last); err == nil {
		end = vt.Of(last.VT)
	}
	return r, max(end, 1), nil
}

// isLoopback reports whether a listen address binds only the loopback
// interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveUI runs the ui command until ctx is done or a signal arrives on
// sigs; ready, when set, is told the address served (tests listen on port
// 0). A signal ends it at once, whatever the session is doing (a long jump
// included), with 130 for SIGINT and 143 for SIGTERM as a shell reports
// them; with --log it first writes the session's log (a re-run of the
// recipe), which a second signal skips, writing nothing.
func serveUI(ctx context.Context, sigs <-chan os.Signal, cmd *cobra.Command, f uiFlags, ready func(addr string)) error {
	var (
		r   session.Recipe
		end vt.Time
		err error
	)
	if f.replay != "" {
		r, end, err = replayRecipe(f.replay)
	} else {
		r, err = uiRecipe(f.run)
	}
	if err != nil {
		return err
	}
	loopback := isLoopback(f.listen)
	adapt(&r.Options)
	// a long-lived server keeps Go's own GC percent: the raised one of a run
	// (actors/workers.go) would let the heap grow to three times what is
	// live; and it has a soft memory limit, so that the collector works
	// harder as the heap nears it rather than let the process grow to twice
	// what is live (README, "A long session at max speed")
	r.Options.AdaptGC = false
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(session.MemoryLimit)
	}
	srv, err := session.New(session.Config{Recipe: r, ReplayEnd: end, Loopback: loopback})
	if err != nil {
		return badInput("%v", err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return badInput("--listen %s: %v", f.listen, err)
	}
	stderr := cmd.ErrOrStderr()
	if !loopback {
		fmt.Fprintf(stderr, "warning: --listen %s is not a loopback address: anyone who can reach it can watch and steer this simulation\n", f.listen)
	}
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(cmd.OutOrStdout(), "flinksim ui: %s  (Ctrl-C to stop)\n", url)
	if ready != nil {
		ready(ln.Addr().String())
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	var sig os.Signal
	select {
	case <-ctx.Done():
	case sig = <-sigs:
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	// the recipe of the log so far, then the session stops: nothing it
	// still does (a jump, a pace) delays the end
	recipe, cut, rerr := srv.LogRecipe()
	srv.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	if f.run.logFile != "" && rerr == nil {
		if sig != nil {
			fmt.Fprintf(stderr, "writing the session's log to %s (a re-run to %s of virtual time; %s again to skip it)\n",
				f.run.logFile, cutText(cut), signalName(sig))
		}
		if second, err := writeUILog(f.run.logFile, recipe, cut, sigs); err != nil {
			return err
		} else if second != nil {
			fmt.Fprintf(stderr, "%s: the session's log was not written\n", signalName(second))
			return interruptedUI(second)
		}
		fmt.Fprintf(stderr, "wrote the session's log to %s\n", f.run.logFile)
	}
	if sig != nil {
		return interruptedUI(sig)
	}
	return nil
}

// writeUILog writes the log of recipe cut at cut to path, through a file
// beside it that it renames, so that a log is written whole or not at all.
// A signal on sigs while it re-runs stops the writing: it is returned, and
// nothing is written.
func writeUILog(path string, recipe session.Recipe, cut vt.Time, sigs <-chan os.Signal) (os.Signal, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := recipe.Download(cut)
		done <- result{b, err}
	}()
	var res result
	select {
	case res = <-done:
	case sig := <-sigs:
		return sig, nil // the re-run goes with the process
	}
	if res.err != nil {
		return nil, res.err
	}
	tmp := path + ".partial"
	if err := os.WriteFile(tmp, res.b, 0o644); err != nil {
		return nil, badInput("--log: %v", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return nil, badInput("--log: %v", err)
	}
	return nil, nil
}

// interruptedUI is the exit of a ui stopped by sig: 130 for SIGINT, 143 for
// SIGTERM.
func interruptedUI(sig os.Signal) error {
	code := exitInterrupted
	if sig == syscall.SIGTERM {
		code = exitTerminated
	}
	return exitError{code, fmt.Errorf("stopped by %s", signalName(sig))}
}

func signalName(sig os.Signal) string {
	if sig == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// cutText is where a log is cut, for a person ("the end" for 0).
func cutText(cut vt.Time) string {
	if cut == 0 {
		return "the end"
	}
	return config.FormatDuration(time.Duration(cut) * time.Microsecond)
}
