package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/config"
)

// signalStop turns SIGINT and SIGTERM into a closed channel, the run's
// cluster.Options.Interrupt: the run ends after the current step, writes
// its log whole with an INTERRUPTED summary, and run exits 130 (SIGINT) or
// 143 (SIGTERM), as a shell reports a process killed by either. A second
// signal while the run winds down is left to the default (the process
// ends at once).
type signalStop struct {
	c    chan struct{}
	sigs chan os.Signal
	mu   sync.Mutex
	got  os.Signal
	once sync.Once
}

func catchSignals() *signalStop {
	s := &signalStop{c: make(chan struct{}), sigs: make(chan os.Signal, 2)}
	signal.Notify(s.sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig, ok := <-s.sigs
		if !ok {
			return
		}
		s.mu.Lock()
		s.got = sig
		s.mu.Unlock()
		signal.Reset(os.Interrupt, syscall.SIGTERM) // a second one ends the process
		close(s.c)
	}()
	return s
}

// signal is the signal that interrupted the run, or nil.
func (s *signalStop) signal() os.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got
}

// release stops catching signals (once the run is over).
func (s *signalStop) release() {
	s.once.Do(func() {
		signal.Stop(s.sigs)
		close(s.sigs)
	})
}

// interrupted reports an interrupted run on stderr (how far it got, where
// the log is, how to replay) and returns the exit code of the signal.
func interrupted(stderr io.Writer, stop *signalStop, res *cluster.Result, f runFlags, spec runSpec) error {
	code, name := exitInterrupted, "SIGINT"
	if stop.signal() == syscall.SIGTERM {
		code, name = exitTerminated, "SIGTERM"
	}
	reached := config.FormatDuration(time.Duration(res.EndVT/1000) * time.Millisecond)
	var b strings.Builder
	fmt.Fprintf(&b, "interrupted (%s) at %s of virtual time", name, reached)
	if spec.opt.Bounded() {
		fmt.Fprintf(&b, " (the bounded job had not finished)")
	} else {
		fmt.Fprintf(&b, " of %s", config.FormatDuration(spec.cfg.Duration))
	}
	b.WriteString(": the log so far ends with a summary whose job_status is INTERRUPTED")
	if f.output != "" && f.output != "-" {
		fmt.Fprintf(&b, "; %s holds the %d results a consumer saw so far", f.output, len(res.Sink))
	}
	if f.logFile != "" && f.logFile != "-" {
		fmt.Fprintf(&b, "\nreplay to that point with: flinksim replay %s", f.logFile)
	} else {
		b.WriteString("\nto replay it, run again with --log FILE (or keep the piped JSON log) and: flinksim replay FILE")
	}
	return exitError{code, fmt.Errorf("%s", b.String())}
}
