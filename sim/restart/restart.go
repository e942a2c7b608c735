// Package restart models Flink 1.20's restart strategies: the
// RestartBackoffTimeStrategy the scheduler asks, after every failure, whether
// the job may restart and how long to wait first.
//
// It follows org.apache.flink.runtime.executiongraph.failover
// (RestartBackoffTimeStrategyFactoryLoader, NoRestartBackoffTimeStrategy,
// FixedDelayRestartBackoffTimeStrategy, FailureRateRestartBackoffTimeStrategy,
// ExponentialDelayRestartBackoffTimeStrategy) and the option defaults of
// org.apache.flink.configuration.RestartStrategyOptions, release-1.20.
//
// Time is an argument: every instant is virtual milliseconds passed by the
// caller, and the exponential strategy's jitter is drawn from a *rand.Rand the
// caller seeds. Nothing here reads a clock or a global random source.
//
// The scheduler's use, as in Flink's ExecutionFailureHandler.handleFailure:
//
//	s.NotifyFailure(now)
//	if s.CanRestart() { restart after s.BackoffMs() } else { fail the job:
//	    "Recovery is suppressed by " + s.String() }
package restart

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Main names of the strategies, RestartStrategyOptions.RestartStrategyType's
// main values; Strategy.Name returns one of them.
const (
	NameNoRestart        = "disable"
	NameFixedDelay       = "fixed-delay"
	NameFailureRate      = "failure-rate"
	NameExponentialDelay = "exponential-delay"
)

// Flink 1.20's option defaults (RestartStrategyOptions). Durations in virtual
// milliseconds.
const (
	// restart-strategy.fixed-delay.attempts
	DefaultFixedDelayAttempts = 1
	// restart-strategy.fixed-delay.delay: 1 s
	DefaultFixedDelayMs int64 = 1000
	// restart-strategy.failure-rate.max-failures-per-interval
	DefaultFailureRateMaxFailures = 1
	// restart-strategy.failure-rate.failure-rate-interval: 1 min
	DefaultFailureRateIntervalMs int64 = 60_000
	// restart-strategy.failure-rate.delay: 1 s
	DefaultFailureRateDelayMs int64 = 1000
	// restart-strategy.exponential-delay.initial-backoff: 1 s
	DefaultInitialBackoffMs int64 = 1000
	// restart-strategy.exponential-delay.max-backoff: 1 min (5 min before 1.19)
	DefaultMaxBackoffMs int64 = 60_000
	// restart-strategy.exponential-delay.backoff-multiplier (2.0 before 1.19)
	DefaultBackoffMultiplier = 1.5
	// restart-strategy.exponential-delay.reset-backoff-threshold: 1 h
	DefaultResetBackoffThresholdMs int64 = 3_600_000
	// restart-strategy.exponential-delay.jitter-factor
	DefaultJitterFactor = 0.1
	// restart-strategy.exponential-delay.attempts-before-reset-backoff:
	// Integer.MAX_VALUE, shown as "infinite" in Flink's documentation.
	DefaultAttemptsBeforeReset = math.MaxInt32
)

// Config is the restart-strategy part of a job's configuration. Start from
// DefaultConfig and override: a zero field is a zero value, not "unset", and
// New refuses zeros where Flink does (an initial backoff of 0, say).
type Config struct {
	// Strategy is restart-strategy.type, matched case-insensitively like
	// Flink: "none", "off", "disable" (no restart); "fixed-delay",
	// "fixeddelay"; "failure-rate", "failurerate"; "exponential-delay",
	// "exponentialdelay". "" means unset: Flink's default, which is
	// exponential-delay with the *default* values of its options (the
	// Exponential fields below are ignored, as Flink ignores them) when
	// CheckpointingEnabled, else no restart.
	Strategy string
	// CheckpointingEnabled decides the default strategy (only read when
	// Strategy is "").
	CheckpointingEnabled bool

	// FixedDelayAttempts is restart-strategy.fixed-delay.attempts: the number
	// of restarts allowed; must be >= 0.
	FixedDelayAttempts int
	// FixedDelayMs is restart-strategy.fixed-delay.delay in virtual ms; >= 0.
	FixedDelayMs int64

	// FailureRateMaxFailures is
	// restart-strategy.failure-rate.max-failures-per-interval; must be > 0.
	FailureRateMaxFailures int
	// FailureRateIntervalMs is
	// restart-strategy.failure-rate.failure-rate-interval in virtual ms; > 0.
	FailureRateIntervalMs int64
	// FailureRateDelayMs is restart-strategy.failure-rate.delay; >= 0.
	FailureRateDelayMs int64

	// InitialBackoffMs is restart-strategy.exponential-delay.initial-backoff,
	// virtual ms; must be >= 1 and <= MaxBackoffMs.
	InitialBackoffMs int64
	// MaxBackoffMs is restart-strategy.exponential-delay.max-backoff; >= 1.
	MaxBackoffMs int64
	// Multiplier is restart-strategy.exponential-delay.backoff-multiplier;
	// must be > 1.
	Multiplier float64
	// ResetThresholdMs is
	// restart-strategy.exponential-delay.reset-backoff-threshold: a failure
	// this long after the previously scheduled restart resets the backoff and
	// the attempt count; >= 1.
	ResetThresholdMs int64
	// JitterFactor is restart-strategy.exponential-delay.jitter-factor, in
	// [0, 1]: each backoff moves by a uniform draw in
	// [-backoff*factor, +backoff*factor]. 0 draws nothing.
	JitterFactor float64
	// AttemptsBeforeReset is
	// restart-strategy.exponential-delay.attempts-before-reset-backoff: the
	// restarts allowed between two resets; >= 1.
	AttemptsBeforeReset int
}

// DefaultConfig is Flink 1.20's configuration with no restart option set:
// Strategy "" and every option at its default.
func DefaultConfig(checkpointing bool) Config {
	return Config{
		Strategy:               "",
		CheckpointingEnabled:   checkpointing,
		FixedDelayAttempts:     DefaultFixedDelayAttempts,
		FixedDelayMs:           DefaultFixedDelayMs,
		FailureRateMaxFailures: DefaultFailureRateMaxFailures,
		FailureRateIntervalMs:  DefaultFailureRateIntervalMs,
		FailureRateDelayMs:     DefaultFailureRateDelayMs,
		InitialBackoffMs:       DefaultInitialBackoffMs,
		MaxBackoffMs:           DefaultMaxBackoffMs,
		Multiplier:             DefaultBackoffMultiplier,
		ResetThresholdMs:       DefaultResetBackoffThresholdMs,
		JitterFactor:           DefaultJitterFactor,
		AttemptsBeforeReset:    DefaultAttemptsBeforeReset,
	}
}

// Strategy is Flink's RestartBackoffTimeStrategy with time passed in.
type Strategy interface {
	// NotifyFailure records a failure at nowMs (virtual ms). It reports
	// whether the failure counts as a new restart attempt: the exponential
	// strategy merges a failure that arrives while a restart is still
	// pending into that restart and returns false; the others always return
	// true (the no-restart strategy too, as its Java method is void).
	NotifyFailure(nowMs int64) bool
	// CanRestart reports whether the job may restart after the failures seen
	// so far; for the failure-rate strategy it is judged at the time of the
	// last NotifyFailure.
	CanRestart() bool
	// BackoffMs is the virtual time to wait before restarting, measured from
	// the last NotifyFailure (>= 0).
	BackoffMs() int64
	// Name is the strategy's main restart-strategy.type value (NameNoRestart
	// and so on).
	Name() string
	// String is the Java toString, which Flink puts in "Recovery is
	// suppressed by ..." when it gives up.
	String() string
}

// ErrNoRandom is returned by New for an exponential-delay strategy with a
// non-zero jitter factor and a nil random source (a Go-side error: Flink uses
// ThreadLocalRandom).
var ErrNoRandom = errors.New("restart: exponential-delay with a jitter factor needs a *rand.Rand")

// New builds the strategy c selects, as RestartBackoffTimeStrategyFactoryLoader
// does from a job configuration, and validates it as the strategy's
// constructor does. Errors carry Flink's messages: "<name> is an unknown value
// of RestartStrategyType." for an unknown Strategy, the constructor's
// checkArgument message for a value out of range, and "Could not parse value
// '<v>' for key '<key>'." for an integer option beyond Java's int. rng is only
// used by exponential-delay with a jitter factor above 0 (ErrNoRandom if nil
// there); the strategy keeps it and draws one number per counted failure.
func New(c Config, rng *rand.Rand) (Strategy, error) {
	name := strings.ToLower(c.Strategy)
	switch name {
	case "":
		if !c.CheckpointingEnabled {
			return NoRestart{}, nil
		}
		d := DefaultConfig(true)
		return newExponentialDelay(d.InitialBackoffMs, d.MaxBackoffMs, d.Multiplier,
			d.ResetThresholdMs, d.JitterFactor, d.AttemptsBeforeReset, rng)
	case "disable", "none", "off":
		return NoRestart{}, nil
	case "fixed-delay", "fixeddelay":
		if err := javaInt(c.FixedDelayAttempts, "restart-strategy.fixed-delay.attempts"); err != nil {
			return nil, err
		}
		return newFixedDelay(c.FixedDelayAttempts, c.FixedDelayMs)
	case "failure-rate", "failurerate":
		if err := javaInt(c.FailureRateMaxFailures, "restart-strategy.failure-rate.max-failures-per-interval"); err != nil {
			return nil, err
		}
		return newFailureRate(c.FailureRateMaxFailures, c.FailureRateIntervalMs, c.FailureRateDelayMs)
	case "exponential-delay", "exponentialdelay":
		if err := javaInt(c.AttemptsBeforeReset, "restart-strategy.exponential-delay.attempts-before-reset-backoff"); err != nil {
			return nil, err
		}
		return newExponentialDelay(c.InitialBackoffMs, c.MaxBackoffMs, c.Multiplier,
			c.ResetThresholdMs, c.JitterFactor, c.AttemptsBeforeReset, rng)
	default:
		return nil, fmt.Errorf("%s is an unknown value of RestartStrategyType.", name)
	}
}

// javaInt refuses an int option outside Java's int range, as Flink's
// configuration parser would.
func javaInt(v int, key string) error {
	if v < math.MinInt32 || v > math.MaxInt32 {
		return fmt.Errorf("Could not parse value '%d' for key '%s'.", v, key)
	}
	return nil
}

// NoRestart is NoRestartBackoffTimeStrategy: never restart.
type NoRestart struct{}

var _ Strategy = NoRestart{}

// NotifyFailure does nothing and returns true.
func (NoRestart) NotifyFailure(int64) bool { return true }

// CanRestart is always false.
func (NoRestart) CanRestart() bool { return false }

// BackoffMs is always 0.
func (NoRestart) BackoffMs() int64 { return 0 }

// Name is NameNoRestart.
func (NoRestart) Name() string { return NameNoRestart }

// String is "NoRestartBackoffTimeStrategy".
func (NoRestart) String() string { return "NoRestartBackoffTimeStrategy" }

// FixedDelay is FixedDelayRestartBackoffTimeStrategy: at most MaxAttempts
// restarts, each after the same delay.
type FixedDelay struct {
	maxAttempts int32
	backoffMs   int64
	attempt     int32
}

var _ Strategy = (*FixedDelay)(nil)

func newFixedDelay(maxAttempts int, backoffMs int64) (*FixedDelay, error) {
	if maxAttempts < 0 {
		return nil, errors.New("Maximum number of restart attempts must be at least 0.")
	}
	if backoffMs < 0 {
		return nil, errors.New("Backoff time between restart attempts must be at least 0 ms.")
	}
	return &FixedDelay{maxAttempts: int32(maxAttempts), backoffMs: backoffMs}, nil
}

// NotifyFailure counts one more attempt (a Java int: it wraps after 2^31-1)
// and returns true.
func (s *FixedDelay) NotifyFailure(int64) bool {
	s.attempt++
	return true
}

// CanRestart: attempts so far <= the configured attempts. With attempts 1, the
// first failure restarts and the second fails the job.
func (s *FixedDelay) CanRestart() bool { return s.attempt <= s.maxAttempts }

// BackoffMs is the fixed delay.
func (s *FixedDelay) BackoffMs() int64 { return s.backoffMs }

// Name is NameFixedDelay.
func (s *FixedDelay) Name() string { return NameFixedDelay }

// String is FixedDelayRestartBackoffTimeStrategy.toString.
func (s *FixedDelay) String() string {
	return fmt.Sprintf("FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=%d, backoffTimeMS=%d)",
		s.maxAttempts, s.backoffMs)
}

// FailureRate is FailureRateRestartBackoffTimeStrategy: restart unless more
// than MaxFailures failures fall within the interval. It keeps the timestamps
// of the last MaxFailures+1 failures.
type FailureRate struct {
	intervalMs  int64
	backoffMs   int64
	maxFailures int
	failures    []int64 // oldest first; at most maxFailures+1
	lastNowMs   int64
}

var _ Strategy = (*FailureRate)(nil)

func newFailureRate(maxFailures int, intervalMs, backoffMs int64) (*FailureRate, error) {
	if maxFailures <= 0 {
		return nil, errors.New("Maximum number of restart attempts per time unit must be greater than 0.")
	}
	if intervalMs <= 0 {
		return nil, errors.New("Failures interval must be greater than 0 ms.")
	}
	if backoffMs < 0 {
		return nil, errors.New("Backoff time must be at least 0 ms.")
	}
	return &FailureRate{intervalMs: intervalMs, backoffMs: backoffMs, maxFailures: maxFailures}, nil
}

// full is Java's isFailureTimestampsQueueFull: more than maxFailures stored.
func (s *FailureRate) full() bool { return len(s.failures) > s.maxFailures }

// NotifyFailure records a failure at nowMs, dropping the oldest when more
// than MaxFailures are stored; returns true.
func (s *FailureRate) NotifyFailure(nowMs int64) bool {
	if s.full() {
		s.failures = s.failures[1:]
	}
	s.failures = append(s.failures, nowMs)
	s.lastNowMs = nowMs
	return true
}

// CanRestart, judged at the last NotifyFailure: true unless MaxFailures+1
// failures are stored and the oldest is within the interval (now - oldest <=
// interval). With the defaults (1 per minute), a second failure within a
// minute of the first fails the job.
func (s *FailureRate) CanRestart() bool {
	if !s.full() {
		return true
	}
	return s.lastNowMs-s.failures[0] > s.intervalMs
}

// BackoffMs is the fixed delay.
func (s *FailureRate) BackoffMs() int64 { return s.backoffMs }

// Name is NameFailureRate.
func (s *FailureRate) Name() string { return NameFailureRate }

// String is FailureRateRestartBackoffTimeStrategy.toString, including Java's
// doubled class-name prefix.
func (s *FailureRate) String() string {
	return fmt.Sprintf("FailureRateRestartBackoffTimeStrategy(FailureRateRestartBackoffTimeStrategy(failuresIntervalMS=%d,backoffTimeMS=%d,maxFailuresPerInterval=%d)",
		s.intervalMs, s.backoffMs, s.maxFailures)
}

// noRestartScheduled is Java's DEFAULT_NEXT_RESTART_TIMESTAMP,
// Integer.MIN_VALUE widened to long.
const noRestartScheduled int64 = math.MinInt32

// ExponentialDelay is ExponentialDelayRestartBackoffTimeStrategy (Flink 1.19+,
// FLIP-364). For attempt n (0 after a reset) the backoff is
//
//	current = (long)(initial * pow(multiplier, n))
//	backoff = max(initial, min(current + jitter, max))
//	jitter  = uniform in [-(long)(current*factor), +(long)(current*factor)]
//
// and the restart is scheduled at next = now + backoff. A failure at
// now <= next merges into the pending restart (not a new attempt). A failure
// at now - next >= resetThreshold resets n to 0 first. CanRestart is
// attempts <= attemptsBeforeReset.
//
// Java's arithmetic is kept: the (long) cast saturates at 2^63-1, and
// current + jitter wraps like a Java long (so for a huge current a positive
// jitter wraps negative and the backoff falls back to initial, as in Flink).
// The attempt counter is a Java int. math.Pow may differ from Java's
// Math.pow in the last bit for non-exact powers, which matters only if the
// product lands within an ulp of an integer.
type ExponentialDelay struct {
	initialMs, maxMs    int64
	multiplier          float64
	resetThresholdMs    int64
	jitterFactor        float64
	attemptsBeforeReset int32
	rng                 *rand.Rand
	attempt             int32
	nextRestartMs       int64
	lastNowMs           int64
}

var _ Strategy = (*ExponentialDelay)(nil)

func newExponentialDelay(initialMs, maxMs int64, multiplier float64, resetMs int64,
	jitter float64, attempts int, rng *rand.Rand) (*ExponentialDelay, error) {
	switch {
	case initialMs < 1:
		return nil, errors.New("Initial backoff must be at least 1.")
	case maxMs < 1:
		return nil, errors.New("Maximum backoff must be at least 1.")
	case initialMs > maxMs:
		return nil, errors.New("Initial backoff cannot be higher than maximum backoff.")
	case !(multiplier > 1):
		return nil, errors.New("Backoff multiplier must be greater than 1.")
	case resetMs < 1:
		return nil, errors.New("Threshold duration for exponential backoff reset must be at least 1.")
	case !(0 <= jitter && jitter <= 1):
		return nil, errors.New("Jitter factor must be >= 0 and <= 1.")
	case attempts < 1:
		return nil, errors.New("The attemptsBeforeResetBackoff must be at least 1.")
	case jitter != 0 && rng == nil:
		return nil, ErrNoRandom
	}
	return &ExponentialDelay{
		initialMs:           initialMs,
		maxMs:               maxMs,
		multiplier:          multiplier,
		resetThresholdMs:    resetMs,
		jitterFactor:        jitter,
		attemptsBeforeReset: int32(attempts),
		rng:                 rng,
		nextRestartMs:       noRestartScheduled,
	}, nil
}

// NotifyFailure applies a failure at nowMs; see the type's formula. Returns
// false when the failure merges into an already scheduled restart.
func (s *ExponentialDelay) NotifyFailure(nowMs int64) bool {
	s.lastNowMs = nowMs
	if nowMs <= s.nextRestartMs {
		return false
	}
	if nowMs-s.nextRestartMs >= s.resetThresholdMs {
		s.attempt = 0
	}
	s.nextRestartMs = nowMs + s.actualBackoff()
	s.attempt++
	return true
}

func (s *ExponentialDelay) actualBackoff() int64 {
	current := javaLong(float64(s.initialMs) * math.Pow(s.multiplier, float64(s.attempt)))
	return max(s.initialMs, min(current+s.jitter(current), s.maxMs))
}

// jitter is ThreadLocalRandom.nextLong(-offset, offset+1) with offset =
// (long)(current*factor); drawn only when the factor is non-zero.
func (s *ExponentialDelay) jitter(current int64) int64 {
	if s.jitterFactor == 0 {
		return 0
	}
	offset := uint64(javaLong(float64(current) * s.jitterFactor)) // >= 0
	return int64(s.rng.Uint64N(2*offset+1) - offset)
}

// CanRestart: attempts since the last reset <= attemptsBeforeReset.
func (s *ExponentialDelay) CanRestart() bool { return s.attempt <= s.attemptsBeforeReset }

// BackoffMs is Java's getBackoffTime read at the last NotifyFailure:
// max(0, nextRestart - now). Before any failure it is 0 (Flink throws
// "Please call notifyFailure first.").
func (s *ExponentialDelay) BackoffMs() int64 {
	if s.nextRestartMs == noRestartScheduled {
		return 0
	}
	return max(0, s.nextRestartMs-s.lastNowMs)
}

// NextRestartMs is the virtual time of the scheduled restart, or
// math.MinInt32 before the first failure.
func (s *ExponentialDelay) NextRestartMs() int64 { return s.nextRestartMs }

// Attempt is the attempt count since the last reset.
func (s *ExponentialDelay) Attempt() int { return int(s.attempt) }

// Name is NameExponentialDelay.
func (s *ExponentialDelay) Name() string { return NameExponentialDelay }

// String is ExponentialDelayRestartBackoffTimeStrategy.toString, doubles in
// Java's Double.toString form.
func (s *ExponentialDelay) String() string {
	return fmt.Sprintf("ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS=%d, maxBackoffMS=%d, backoffMultiplier=%s, resetBackoffThresholdMS=%d, jitterFactor=%s, attemptsBeforeResetBackoff=%d, currentRestartAttempt=%d, nextRestartTimestamp=%d)",
		s.initialMs, s.maxMs, javaDouble(s.multiplier), s.resetThresholdMs, javaDouble(s.jitterFactor),
		s.attemptsBeforeReset, s.attempt, s.nextRestartMs)
}

// javaLong is Java's (long) cast of a double: truncation toward zero,
// saturating at the int64 bounds, NaN to 0.
func javaLong(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= 9.223372036854775807e18:
		return math.MaxInt64
	case f <= -9.223372036854775808e18:
		return math.MinInt64
	}
	return int64(f)
}
