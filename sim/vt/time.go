package vt

import (
	"strconv"
	"time"
)

// Time is virtual time: microseconds since the run started (ARCHITECTURE.md;
// per-record costs are far below a millisecond). Event time, watermarks and
// window bounds stay in milliseconds as Flink has them: Millis and
// FromMillis cross between the two, here and nowhere else. Envelopes and log
// events carry it as a plain int64 count of µs (Of, Micros).
type Time int64

// Units of virtual time.
const (
	Microsecond Time = 1
	Millisecond Time = 1000
	Second      Time = 1_000_000
)

// Of is the virtual time of a µs count carried in a message or log event.
func Of(us int64) Time { return Time(us) }

// Micros is t as the µs count messages and log events carry.
func (t Time) Micros() int64 { return int64(t) }

// FromDuration converts a Go duration to virtual time (truncating to µs).
func FromDuration(d time.Duration) Time { return Time(d / time.Microsecond) }

// Duration is t as a Go duration.
func (t Time) Duration() time.Duration { return time.Duration(t) * time.Microsecond }

// FromMillis converts milliseconds to virtual time.
func FromMillis(ms int64) Time { return Time(ms) * Millisecond }

// Millis converts virtual time to whole milliseconds (floor for
// non-negative times).
func Millis(t Time) int64 { return int64(t / Millisecond) }

// String renders t as seconds with 6 decimals, e.g. "90.000500s".
func (t Time) String() string {
	us := int64(t)
	neg := us < 0
	if neg {
		us = -us
	}
	frac := strconv.FormatInt(us%1_000_000, 10)
	for len(frac) < 6 {
		frac = "0" + frac
	}
	s := strconv.FormatInt(us/1_000_000, 10) + "." + frac + "s"
	if neg {
		return "-" + s
	}
	return s
}
