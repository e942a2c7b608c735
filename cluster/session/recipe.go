package session

import (
	"bytes"
	"fmt"
	"io"
	"slices"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/vt"
)

// Recipe is everything a session's log is a function of (ARCHITECTURE.md,
// "time travel is a deterministic re-run of the recipe"): the settings
// (with the seed), the options that are not actions (an events file), the
// header's actions, and the live actions given so far on this timeline.
// Two sessions of one recipe write the same log, byte for byte.
type Recipe struct {
	Settings config.Config
	// Options holds Events, EventsFile, EventsSHA256, Unbounded and the
	// header's Actions; Log, Observe, LiveActions and StopAt are set per
	// session.
	Options cluster.Options
	// Live are the live actions, sorted by time; among equal times in the
	// order they were given (the order a replay reads them back in, since
	// the kernel delivers equal times to one actor in sender order).
	Live []action.Action
}

// clone is a copy that shares nothing mutable with r (the events are read
// only and shared).
func (r Recipe) clone() Recipe {
	r.Live = slices.Clone(r.Live)
	r.Options.Actions = slices.Clone(r.Options.Actions)
	return r
}

// before is the number of live actions due before t: those a session run
// to t has delivered.
func (r Recipe) before(t vt.Time) int {
	n := 0
	for n < len(r.Live) && vt.FromDuration(r.Live[n].At) < t {
		n++
	}
	return n
}

// insert adds a live action after every action due at or before it.
func (r *Recipe) insert(a action.Action) {
	i := len(r.Live)
	for i > 0 && r.Live[i-1].At > a.At {
		i--
	}
	r.Live = slices.Insert(r.Live, i, a)
}

// session builds a session of the recipe paused at virtual time 0 with the
// live actions before t queued (the others are injected when the clock
// reaches them, so that a later action can still fork the timeline), its
// log written to log, its events handed to observe and its deliveries shown
// to deliver (the page's traffic; nil: none).
func (r Recipe) session(t vt.Time, log io.Writer, observe func(*eventlog.LogEvent), deliver func(vt.Time, *messages.Envelope)) (*cluster.Session, int, error) {
	opt := r.Options
	n := r.before(t)
	opt.LiveActions = slices.Clone(r.Live[:n])
	opt.Log = log
	opt.Observe = observe
	opt.ObserveDelivery = deliver
	s, err := cluster.NewSession(r.Settings, opt)
	if err != nil {
		return nil, 0, err
	}
	return s, n, nil
}

// Download writes the log of the recipe cut at virtual time cut (0: run to
// the end), ending with its summary: INTERRUPTED at cut when the run was
// still going there. `flinksim replay` of it reports identical: the
// actions before the cut are action events, the cut is the summary's vt.
// It re-runs the recipe in the caller's goroutine, on its own cluster.
func (r Recipe) Download(cut vt.Time) ([]byte, error) {
	var buf bytes.Buffer
	opt := r.Options
	if cut > 0 {
		opt.LiveActions = slices.Clone(r.Live[:r.before(cut)])
	} else {
		opt.LiveActions = slices.Clone(r.Live)
	}
	opt.Log = &buf
	s, err := cluster.NewPlainSession(r.Settings, opt)
	if err != nil {
		return nil, fmt.Errorf("rebuilding the run: %w", err)
	}
	if cut > 0 {
		if st := s.RunUntil(cut); !st.Ended {
			s.Interrupt()
		}
	}
	s.Finish()
	return buf.Bytes(), nil
}
