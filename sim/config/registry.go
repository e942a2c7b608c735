package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flinksim/flinksim/sim/input"
)

// Setting is one row of the registry: a configuration key, how its value is
// written, its defaults and its allowed range. Every field of Config has
// exactly one Setting.
type Setting struct {
	// Key is the configuration key: Flink's own key for Flink settings,
	// "job.*" for the shape of the simulated job, "sim.*" for the
	// simulator's knobs.
	Key string
	// Type is how the value is written: "int", "uint64", "float", "bool",
	// "duration" (TimeUtils.parseDuration), "memory" (MemorySize.parse),
	// "string" or "enum" (one of the words in Range, case-insensitive).
	Type string
	// FlinkDefault is Flink 1.20's default for the key as text; for a job.*
	// setting it is the default of the Flink API call the setting stands
	// for. "" when Flink has no such key or default.
	FlinkDefault string
	// SimDefault is the simulator's default as text (Default()).
	SimDefault string
	// Range is the allowed values as text, e.g. "1..32768", "-1 or 1..",
	// "0 ms..", "earliest|latest".
	Range string
	// Doc says what the setting does, its unit, and what zero means.
	Doc string
	// Means names what a special value stands for, e.g. "-1" ->
	// "parallelism.default" (nil: no such value).
	Means map[string]string
	// Input marks a setting that only feeds a derivation (Resolve): it is
	// accepted and listed, but the log header carries the settings it
	// derives instead of it (Values leaves it out).
	Input bool
	// OmitDefault leaves the setting out of the log header (Values) while
	// it and every other OmitDefault setting have their defaults, so that
	// logs written before they existed stay the same: the buffer
	// debloating keys, off by default, which all show once one is set.
	OmitDefault bool

	set func(c *Config, value string) error
	get func(c *Config) string
}

// KV is one setting's current value as text, with Flink's default beside it
// ("" when Flink has none), for the event log's header.
type KV struct {
	Key, Value, FlinkDefault string
}

// UnknownKeyError is returned by Set and LoadYAML for a key that is not in
// the registry. Suggestion is the nearest known key by edit distance, or ""
// when no key is near enough.
type UnknownKeyError struct {
	Key, Suggestion string
}

func (e *UnknownKeyError) Error() string {
	if e.Suggestion == "" {
		return fmt.Sprintf("unknown setting %q; run \"flinksim settings\" for the list", e.Key)
	}
	return fmt.Sprintf("unknown setting %q; did you mean %q?", e.Key, e.Suggestion)
}

// ValueError is returned by Set and LoadYAML for a value that cannot be
// parsed or is outside the setting's range. Message is the whole text: it
// names the key, the value and the allowed range, and uses Flink's own
// wording where Flink checks the same thing.
type ValueError struct {
	Key, Value, Range, Message string
}

func (e *ValueError) Error() string { return e.Message }

// parseError is Configuration.getOptional's wording for a value that does
// not parse, followed by the parser's reason and the allowed range.
func parseError(key, value, rng string, cause string) *ValueError {
	return &ValueError{Key: key, Value: value, Range: rng, Message: fmt.Sprintf(
		"Could not parse value '%s' for key '%s'. %s (allowed: %s)", input.Cut(value), key, cause, rng)}
}

// rangeError reports a parsed value outside the allowed range. flinkMsg is
// the message Flink gives for the same check, or "" when Flink has none.
func rangeError(key, value, rng, flinkMsg string) *ValueError {
	msg := flinkMsg
	if msg == "" {
		msg = input.Cut(value) + " is out of range"
	}
	if !strings.Contains(msg, key) {
		msg = key + ": " + msg
	}
	return &ValueError{Key: key, Value: value, Range: rng, Message: msg + " (allowed: " + rng + ")"}
}

// omitDefault marks s as left out of the header at its default
// (Setting.OmitDefault).
func omitDefault(s Setting) Setting {
	s.OmitDefault = true
	return s
}

// unbounded marks an int range without an upper bound (Java's int limit).
const unbounded = math.MaxInt32

// intRange is min..max plus single extra allowed values (such as -1), each
// with what it means when alsoMeans has an entry for it.
type intRange struct {
	min, max  int64
	also      []int64
	alsoMeans []string // "" or the meaning of also[i], e.g. "parallelism.default"
}

func (r intRange) String() string {
	var b strings.Builder
	for i, v := range r.also {
		b.WriteString(strconv.FormatInt(v, 10))
		if i < len(r.alsoMeans) && r.alsoMeans[i] != "" {
			b.WriteString(" (" + r.alsoMeans[i] + ")")
		}
		b.WriteString(" or ")
	}
	b.WriteString(strconv.FormatInt(r.min, 10) + "..")
	if r.max != unbounded {
		b.WriteString(strconv.FormatInt(r.max, 10))
	}
	return b.String()
}

func (r intRange) contains(v int64) bool {
	return slices.Contains(r.also, v) || (v >= r.min && v <= r.max)
}

// intSetting is an int setting parsed like Java's Integer.parseInt. refuse,
// when not nil, gives Flink's message for an out-of-range value.
func intSetting(key, flinkDefault string, r intRange, doc string, field func(*Config) *int, refuse func(v int64) string) Setting {
	rng := r.String()
	var means map[string]string
	for i, m := range r.alsoMeans {
		if m != "" {
			if means == nil {
				means = map[string]string{}
			}
			means[strconv.FormatInt(r.also[i], 10)] = m
		}
	}
	return Setting{Key: key, Type: "int", FlinkDefault: flinkDefault, Range: rng, Doc: doc, Means: means,
		set: func(c *Config, value string) error {
			v, err := strconv.ParseInt(javaTrim(value), 10, 32)
			if err != nil {
				return parseError(key, value, rng, "For input string: "+input.Quote(value))
			}
			if !r.contains(v) {
				msg := ""
				if refuse != nil {
					msg = refuse(v)
				}
				return rangeError(key, value, rng, msg)
			}
			*field(c) = int(v)
			return nil
		},
		get: func(c *Config) string { return strconv.Itoa(*field(c)) },
	}
}

func uint64Setting(key string, doc string, field func(*Config) *uint64) Setting {
	rng := "0.." + strconv.FormatUint(math.MaxUint64, 10)
	return Setting{Key: key, Type: "uint64", Range: rng, Doc: doc,
		set: func(c *Config, value string) error {
			v, err := strconv.ParseUint(javaTrim(value), 10, 64)
			if err != nil {
				return parseError(key, value, rng, "For input string: "+input.Quote(value))
			}
			*field(c) = v
			return nil
		},
		get: func(c *Config) string { return strconv.FormatUint(*field(c), 10) },
	}
}

// floatSetting is a float64 setting within [min, max]; NaN and infinities
// are refused.
func floatSetting(key, flinkDefault string, min, max float64, doc string, field func(*Config) *float64) Setting {
	rng := strconv.FormatFloat(min, 'f', -1, 64) + ".."
	if !math.IsInf(max, 1) {
		rng += strconv.FormatFloat(max, 'f', -1, 64)
	}
	return Setting{Key: key, Type: "float", FlinkDefault: flinkDefault, Range: rng, Doc: doc,
		set: func(c *Config, value string) error {
			v, err := strconv.ParseFloat(javaTrim(value), 64)
			if err != nil || strings.Contains(value, "_") {
				// Go's ParseFloat takes 1_000 as a Go literal; Java's
				// Double.parseDouble (Flink's convertToDouble) refuses it
				return parseError(key, value, rng, "For input string: "+input.Quote(value))
			}
			if math.IsNaN(v) || v < min || v > max || math.IsInf(v, 0) {
				return rangeError(key, value, rng, "")
			}
			*field(c) = v
			return nil
		},
		get: func(c *Config) string { return strconv.FormatFloat(*field(c), 'f', -1, 64) },
	}
}

// boolSetting is parsed like Flink's ConfigurationUtils.convertToBoolean:
// "true" or "false" in any case.
func boolSetting(key, flinkDefault, doc string, field func(*Config) *bool) Setting {
	const rng = "true|false"
	return Setting{Key: key, Type: "bool", FlinkDefault: flinkDefault, Range: rng, Doc: doc,
		set: func(c *Config, value string) error {
			switch strings.ToUpper(javaTrim(value)) {
			case "TRUE":
				*field(c) = true
			case "FALSE":
				*field(c) = false
			default:
				return parseError(key, value, rng, fmt.Sprintf(
					"Unrecognized option for boolean: %s. Expected either true or false(case insensitive)", value))
			}
			return nil
		},
		get: func(c *Config) string { return strconv.FormatBool(*field(c)) },
	}
}

// durRange bounds a duration setting. negative allows a leading "-".
type durRange struct {
	min, max time.Duration
	negative bool
}

func (r durRange) String() string {
	if r.negative {
		return "any duration, may be negative"
	}
	s := FormatDuration(r.min) + ".."
	if r.max != math.MaxInt64 {
		s += FormatDuration(r.max)
	}
	return s
}

const noMax = time.Duration(math.MaxInt64)

func durationSetting(key, flinkDefault string, r durRange, doc string, field func(*Config) *time.Duration) Setting {
	rng := r.String()
	return Setting{Key: key, Type: "duration", FlinkDefault: flinkDefault, Range: rng, Doc: doc,
		set: func(c *Config, value string) error {
			text, neg := javaTrim(value), false
			if r.negative && strings.HasPrefix(text, "-") {
				text, neg = text[1:], true
			}
			d, err := ParseDuration(text)
			if err != nil {
				return parseError(key, value, rng, err.Error())
			}
			if neg {
				d = -d
			}
			if !r.negative && (d < r.min || d > r.max) {
				return rangeError(key, value, rng, "")
			}
			*field(c) = d
			return nil
		},
		get: func(c *Config) string { return FormatDuration(*field(c)) },
	}
}

func memorySetting(key, flinkDefault string, min int64, doc string, field func(*Config) *int64) Setting {
	rng := FormatMemorySize(min) + ".."
	return Setting{Key: key, Type: "memory", FlinkDefault: flinkDefault, Range: rng, Doc: doc,
		set: func(c *Config, value string) error {
			b, err := ParseMemorySize(value)
			if err != nil {
				return parseError(key, value, rng, err.Error())
			}
			if b < min {
				return rangeError(key, value, rng, "")
			}
			*field(c) = b
			return nil
		},
		get: func(c *Config) string { return FormatMemorySize(*field(c)) },
	}
}

// stringSetting stores the text as given; required refuses "".
func stringSetting(key string, required bool, doc string, field func(*Config) *string) Setting {
	rng := "any text"
	if required {
		rng = "non-empty text"
	}
	return Setting{Key: key, Type: "string", Range: rng, Doc: doc,
		set: func(c *Config, value string) error {
			if required && javaTrim(value) == "" {
				return rangeError(key, value, rng, "must not be empty")
			}
			*field(c) = value
			return nil
		},
		get: func(c *Config) string { return *field(c) },
	}
}

// enumSetting accepts one of words in any case (as Flink's
// ConfigurationUtils.convertToEnum matches an enum constant's toString,
// upper-cased on both sides) and stores it lower-case. aliases maps other
// spellings Flink accepts for the same value (lower-case) to the word, such
// as the Java constant name exactly_once for exactly-once, or
// StateBackendLoader's fixeddelay for fixed-delay.
func enumSetting[E ~string](key, flinkDefault string, words []E, doc string, field func(*Config) *E, aliases ...string) Setting {
	names := make([]string, len(words))
	for i, w := range words {
		names[i] = string(w)
	}
	rng := strings.Join(names, "|")
	alias := map[string]string{}
	for i := 0; i+1 < len(aliases); i += 2 {
		alias[aliases[i]] = aliases[i+1]
	}
	return Setting{Key: key, Type: "enum", FlinkDefault: flinkDefault, Range: rng, Doc: doc,
		set: func(c *Config, value string) error {
			v := strings.ToLower(javaTrim(value))
			if w, ok := alias[v]; ok {
				v = w
			}
			if !slices.Contains(names, v) {
				return parseError(key, value, rng, "Expected one of: ["+strings.Join(names, ", ")+"]")
			}
			*field(c) = E(v)
			return nil
		},
		get: func(c *Config) string { return string(*field(c)) },
	}
}

// sortedFlinkKeys is FlinkKeys(), for suggestions.
var sortedFlinkKeys = FlinkKeys()

// registry holds every setting sorted by key; index maps a key to its row.
var registry, index = buildRegistry()

func buildRegistry() ([]Setting, map[string]int) {
	rows := settings()
	slices.SortFunc(rows, func(a, b Setting) int { return strings.Compare(a.Key, b.Key) })
	def := Default()
	idx := make(map[string]int, len(rows))
	for i := range rows {
		rows[i].SimDefault = rows[i].get(&def)
		idx[rows[i].Key] = i
	}
	return rows, idx
}

// Registry returns every setting, sorted by key. The slice is a copy.
func Registry() []Setting {
	return slices.Clone(registry)
}

// deprecatedKeys maps the older names of settings to their Flink 1.20 key,
// as the ConfigOptions' withDeprecatedKeys do.
var deprecatedKeys = map[string]string{
	"execution.checkpointing.checkpoints-after-tasks-finish.enabled": "execution.checkpointing.checkpoints-after-tasks-finish",
	"state.backend.fs.memory-threshold":                              "state.storage.fs.memory-threshold",
}

// CurrentKey is key, or the Flink 1.20 key of a deprecated one.
func CurrentKey(key string) string {
	if k, ok := deprecatedKeys[key]; ok {
		return k
	}
	return key
}

// Lookup returns the setting for key, and false when there is none.
func Lookup(key string) (Setting, bool) {
	i, ok := index[CurrentKey(key)]
	if !ok {
		return Setting{}, false
	}
	return registry[i], true
}

// Set parses value for the setting key and stores it in c. An unknown key
// gives an *UnknownKeyError that suggests the nearest known key; a value
// that does not parse or is out of range gives a *ValueError naming the
// key, the value and the allowed range. On error c is unchanged.
// Cross-field rules are checked by Validate, not here.
//
// A key Flink 1.20 documents that the simulator does not model
// (IsFlinkKey) gives a *NotSimulatedError and leaves c unchanged: callers
// accept it and tell the user once.
func (c *Config) Set(key, value string) error {
	key = CurrentKey(key)
	i, ok := index[key]
	if !ok {
		if IsFlinkKey(key) {
			return &NotSimulatedError{Key: key}
		}
		return &UnknownKeyError{Key: key, Suggestion: suggest(key)}
	}
	if err := registry[i].set(c, value); err != nil {
		return err
	}
	c.memSet |= memoryBit(key)
	return nil
}

// Get returns the current value of key as text, in the form Values uses.
func (c Config) Get(key string) (string, error) {
	key = CurrentKey(key)
	i, ok := index[key]
	if !ok {
		return "", &UnknownKeyError{Key: key, Suggestion: suggest(key)}
	}
	return registry[i].get(&c), nil
}

// Values returns every setting's current value as text, sorted by key, with
// Flink's default beside it. Setting each Value back with Set reproduces c.
// Input settings (Setting.Input) are left out: what they derive is in.
func (c Config) Values() []KV {
	out := make([]KV, 0, len(registry))
	omit := true // every OmitDefault setting at its default
	for _, s := range registry {
		if s.OmitDefault && s.get(&c) != s.SimDefault {
			omit = false
		}
	}
	for _, s := range registry {
		if !s.Input && !(s.OmitDefault && omit) {
			out = append(out, KV{Key: s.Key, Value: s.get(&c), FlinkDefault: s.FlinkDefault})
		}
	}
	return out
}

// suggest returns the known key nearest to key, among the simulator's
// settings and then Flink's other keys: an exact match ignoring case, or
// else the smallest edit distance if it is at most 2 or a third of the
// key's length. Ties go to the simulator's key, then the first in sorted
// order. "" when nothing is near.
func suggest(key string) string {
	best, bestDist := "", math.MaxInt
	consider := func(k string) bool {
		if strings.EqualFold(k, key) {
			best, bestDist = k, -1
			return true
		}
		if d := editDistance(key, k); d < bestDist {
			best, bestDist = k, d
		}
		return false
	}
	for _, s := range registry {
		if consider(s.Key) {
			return best
		}
	}
	for _, k := range sortedFlinkKeys {
		if consider(k) {
			return best
		}
	}
	if bestDist <= 2 || bestDist*3 <= len(best) {
		return best
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b in bytes:
// O(len(a)*len(b)) time, O(len(b)) space.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
