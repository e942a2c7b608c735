package config

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// durationUnit is one unit TimeUtils.parseDuration knows, with its labels in
// Flink's order (the first label is the one FormatDuration prints).
type durationUnit struct {
	name   string // Flink's enum constant, shown in the error message
	size   time.Duration
	labels []string
}

// durationUnits follows the private enum TimeUtils.TimeUnit of Flink 1.20:
// each unit has a short singular label and long labels that also take a
// plural "s". MINUTES accepts "m" since FLINK-24886 (Flink 1.15).
var durationUnits = []durationUnit{
	{"DAYS", 24 * time.Hour, []string{"d", "day", "days"}},
	{"HOURS", time.Hour, []string{"h", "hour", "hours"}},
	{"MINUTES", time.Minute, []string{"min", "m", "minute", "minutes"}},
	{"SECONDS", time.Second, []string{"s", "sec", "secs", "second", "seconds"}},
	{"MILLISECONDS", time.Millisecond, []string{"ms", "milli", "millis", "millisecond", "milliseconds"}},
	{"MICROSECONDS", time.Microsecond, []string{"µs", "micro", "micros", "microsecond", "microseconds"}},
	{"NANOSECONDS", time.Nanosecond, []string{"ns", "nano", "nanos", "nanosecond", "nanoseconds"}},
}

// allDurationUnits is TimeUnit.getAllUnits(): the list Flink prints when a
// label is unknown.
func allDurationUnits() string {
	parts := make([]string, len(durationUnits))
	for i, u := range durationUnits {
		parts[i] = u.name + ": (" + strings.Join(u.labels, " | ") + ")"
	}
	return strings.Join(parts, ", ")
}

// javaTrim removes what Java's String.trim removes: every char <= U+0020 at
// both ends.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// splitNumber splits text the way TimeUtils.parseDuration and
// MemorySize.parseBytes do: the trimmed text's leading ASCII digits, and the
// rest trimmed and lower-cased. It refuses what both refuse before looking
// at the unit, with Flink's messages.
func splitNumber(text string) (value int64, number, unit string, err error) {
	trimmed := javaTrim(text)
	if trimmed == "" {
		return 0, "", "", errors.New("argument is an empty- or whitespace-only string")
	}
	pos := 0
	for pos < len(trimmed) && trimmed[pos] >= '0' && trimmed[pos] <= '9' {
		pos++
	}
	number = trimmed[:pos]
	unit = strings.ToLower(javaTrim(trimmed[pos:]))
	if number == "" {
		return 0, "", "", errors.New("text does not start with a number")
	}
	value, perr := strconv.ParseInt(number, 10, 64)
	if perr != nil {
		return 0, "", "", errors.New("The value '" + number + "' cannot be re represented as 64bit number (numeric overflow).")
	}
	return value, number, unit, nil
}

// ParseDuration parses text as Flink's TimeUtils.parseDuration does: a
// non-negative integer, optional spaces, and an optional case-insensitive
// unit label (d, h, min or m, s, ms, µs, ns and the long forms day(s),
// hour(s), minute(s), sec(s), second(s), milli(s), millisecond(s), micro(s),
// microsecond(s), nano(s), nanosecond(s)). A plain number is milliseconds.
// "us" is not a Flink label and is refused. Negative values, fractions and
// ISO-8601 text are refused. Errors carry Flink's message; a value beyond
// Go's time.Duration (about 292 years) is refused as a numeric overflow.
func ParseDuration(s string) (time.Duration, error) {
	value, number, label, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	unit := time.Millisecond
	if label != "" {
		found := false
		for _, u := range durationUnits {
			for _, l := range u.labels {
				if l == label {
					unit, found = u.size, true
				}
			}
		}
		if !found {
			return 0, errors.New("Time interval unit label '" + label +
				"' does not match any of the recognized units: " + allDurationUnits())
		}
	}
	if value > math.MaxInt64/int64(unit) {
		return 0, errors.New("The value '" + number + "' cannot be represented as a duration of at most 292 years (numeric overflow).")
	}
	return time.Duration(value) * unit, nil
}

// FormatDuration prints d as Flink's TimeUtils.formatWithHighestUnit does:
// the count of the largest unit that divides d exactly, a space, and that
// unit's first label ("200 ms", "1 min", "90 s", "20 µs", "1 d"). Zero is
// "0 ms". A negative d is printed as "-" and the text of its magnitude.
// ParseDuration(FormatDuration(d)) == d for every d >= 0.
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0 ms"
	}
	if d < 0 {
		if d == math.MinInt64 {
			return "-" + strconv.FormatUint(uint64(1)<<63, 10) + " ns"
		}
		return "-" + FormatDuration(-d)
	}
	for _, u := range durationUnits { // largest first
		if d%u.size == 0 {
			return strconv.FormatInt(int64(d/u.size), 10) + " " + u.labels[0]
		}
	}
	return strconv.FormatInt(int64(d), 10) + " ns" // unreachable: ns divides all
}

// memoryUnit is one unit of MemorySize.MemoryUnit.
type memoryUnit struct {
	labels []string
	bytes  int64
}

// memoryUnits follows MemorySize.MemoryUnit in Flink 1.20 (binary multiples).
var memoryUnits = []memoryUnit{
	{[]string{"b", "bytes"}, 1},
	{[]string{"k", "kb", "kibibytes"}, 1 << 10},
	{[]string{"m", "mb", "mebibytes"}, 1 << 20},
	{[]string{"g", "gb", "gibibytes"}, 1 << 30},
	{[]string{"t", "tb", "tebibytes"}, 1 << 40},
}

// ParseMemorySize parses text as Flink's MemorySize.parse does: a
// non-negative integer, optional spaces, and an optional case-insensitive
// unit (b/bytes, k/kb/kibibytes, m/mb/mebibytes, g/gb/gibibytes,
// t/tb/tebibytes, each 1024 times the one before). A plain number is bytes.
// Returns the size in bytes; errors carry Flink's message.
func ParseMemorySize(s string) (int64, error) {
	value, _, label, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	multiplier := int64(1)
	if label != "" {
		found := false
		for _, u := range memoryUnits {
			for _, l := range u.labels {
				if l == label {
					multiplier, found = u.bytes, true
				}
			}
		}
		if !found {
			parts := make([]string, len(memoryUnits))
			for i, u := range memoryUnits {
				parts[i] = "(" + strings.Join(u.labels, " | ") + ")"
			}
			return 0, errors.New("Memory size unit '" + label +
				"' does not match any of the recognized units: " + strings.Join(parts, " / "))
		}
	}
	if value > math.MaxInt64/multiplier {
		return 0, errors.New("The value '" + s + "' cannot be re represented as 64bit number of bytes (numeric overflow).")
	}
	return value * multiplier, nil
}

// FormatMemorySize prints a byte count as Flink's MemorySize.toString does:
// the count of the unit just below the first unit that does not divide it
// exactly, with that unit's second label ("384 mb", "1 kb", "1025 bytes",
// "0 bytes"). Like Flink, a size that every unit divides (0, or a whole
// number of tebibytes) is printed in bytes. Negative sizes do not exist in
// Flink; they are printed as a plain byte count.
func FormatMemorySize(bytes int64) string {
	best := memoryUnits[0]
	if bytes > 0 {
		for i, u := range memoryUnits {
			if bytes%u.bytes != 0 {
				if i > 0 {
					best = memoryUnits[i-1]
				}
				break
			}
		}
	}
	return strconv.FormatInt(bytes/best.bytes, 10) + " " + best.labels[1]
}
