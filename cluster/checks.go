package cluster

import (
	"fmt"

	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/task"
)

// CheckTimestamp refuses an event time the configured job cannot window:
// one so close to Long.MIN_VALUE or Long.MAX_VALUE that the event-time
// window assigner's long arithmetic wraps (window.Config.CheckTimestamp,
// window.TimestampRangeError). Jobs without a window, and processing-time
// windows, take every event time.
func CheckTimestamp(cfg config.Config, ts int64) error {
	if cfg.Operator != config.OperatorWindow {
		return nil
	}
	return task.WindowConfig(&cfg).CheckTimestamp(ts)
}

// CheckEvents runs CheckTimestamp on every record of an events file read
// from file, and returns the first refusal as an *events.Error naming
// file:line. Cost: a comparison per record.
func CheckEvents(cfg config.Config, file string, recs []events.Record) error {
	for _, r := range recs {
		if err := CheckTimestamp(cfg, r.Timestamp); err != nil {
			return &events.Error{File: file, Line: r.Line, Msg: err.Error()}
		}
	}
	return nil
}

// CheckAction is the settings' check of one action before a run: a
// send-event's event time given in milliseconds (not relative to now)
// must pass CheckTimestamp.
func CheckAction(cfg config.Config, a action.Action) error {
	if a.Verb != action.SendEvent {
		return nil
	}
	e := a.Event
	if e.Now {
		return nil // a relative time is known only then
	}
	if err := CheckTimestamp(cfg, e.Ts); err != nil {
		return fmt.Errorf("action %q: ts=%d: %v", a.String(), e.Ts, err)
	}
	return nil
}
