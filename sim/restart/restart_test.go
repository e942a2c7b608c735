package restart

import (
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"
)

func mustNew(t *testing.T, c Config, rng *rand.Rand) Strategy {
	t.Helper()
	s, err := New(c, rng)
	if err != nil {
		t.Fatalf("New(%+v): %v", c, err)
	}
	return s
}

func exponential(initial, maxMs int64, mult float64, jitter float64, attempts int) Config {
	c := DefaultConfig(true)
	c.Strategy = "exponential-delay"
	c.InitialBackoffMs, c.MaxBackoffMs, c.Multiplier = initial, maxMs, mult
	c.JitterFactor, c.AttemptsBeforeReset = jitter, attempts
	return c
}

// TestExponentialDefaultsNoJitter: Flink 1.20's defaults (1 s, x1.5, max
// 1 min) with jitter 0, each failure 1 ms after the restart it caused. By
// hand: (long)(1000 * 1.5^n) for n = 0.. is 1000, 1500, 2250, 3375,
// 5062 (5062.5), 7593 (7593.75), 11390 (11390.625), 17085 (17085.9375),
// 25628 (25628.90625), 38443 (38443.359375), 57665 (57665.0390625), then
// 86497 capped to 60000.
func TestExponentialDefaultsNoJitter(t *testing.T) {
	c := exponential(DefaultInitialBackoffMs, DefaultMaxBackoffMs, DefaultBackoffMultiplier, 0, DefaultAttemptsBeforeReset)
	s := mustNew(t, c, nil)
	want := []int64{1000, 1500, 2250, 3375, 5062, 7593, 11390, 17085, 25628, 38443, 57665, 60000, 60000, 60000}
	now := int64(0)
	for i, w := range want {
		if !s.NotifyFailure(now) {
			t.Fatalf("failure %d at %d merged, want a new attempt", i, now)
		}
		if !s.CanRestart() {
			t.Fatalf("failure %d: CanRestart false", i)
		}
		if got := s.BackoffMs(); got != w {
			t.Errorf("failure %d at %d: backoff %d, want %d", i, now, got, w)
		}
		now += s.BackoffMs() + 1
	}
}

// TestExponentialDocExample is the example of Flink 1.20's
// task_failure_recovery page: initial 1 s, multiplier 2, max 10 s, no jitter:
// 1, 2, 4, 8, 10, 10 s.
func TestExponentialDocExample(t *testing.T) {
	s := mustNew(t, exponential(1000, 10_000, 2, 0, DefaultAttemptsBeforeReset), nil)
	now := int64(5_000_000)
	for i, w := range []int64{1000, 2000, 4000, 8000, 10_000, 10_000} {
		s.NotifyFailure(now)
		if got := s.BackoffMs(); got != w {
			t.Errorf("retry %d: backoff %d, want %d", i+1, got, w)
		}
		now += s.BackoffMs() + 500
	}
}

func TestExponentialMergeResetAndAttempts(t *testing.T) {
	s := mustNew(t, exponential(1000, 60_000, 2, 0, 3), nil)
	e := s.(*ExponentialDelay)
	steps := []struct {
		give        int64 // failure time
		wantNew     bool
		wantBackoff int64
		wantAttempt int
		wantRestart bool
	}{
		// First failure: now - MinInt32 >= 1 h, reset; restart at 10_000+1000.
		{give: 10_000, wantNew: true, wantBackoff: 1000, wantAttempt: 1, wantRestart: true},
		// Before the restart at 11_000: merged, the wait shrinks.
		{give: 10_400, wantNew: false, wantBackoff: 600, wantAttempt: 1, wantRestart: true},
		// Exactly at the restart time: still merged (now <= next).
		{give: 11_000, wantNew: false, wantBackoff: 0, wantAttempt: 1, wantRestart: true},
		// After: attempt 1 -> 2000, restart at 13_001.
		{give: 11_001, wantNew: true, wantBackoff: 2000, wantAttempt: 2, wantRestart: true},
		{give: 13_002, wantNew: true, wantBackoff: 4000, wantAttempt: 3, wantRestart: true},
		// Fourth attempt exceeds attemptsBeforeReset = 3.
		{give: 17_003, wantNew: true, wantBackoff: 8000, wantAttempt: 4, wantRestart: false},
		// 1 h after the scheduled restart (25_003): reset to the initial backoff
		// and the attempt count.
		{give: 25_003 + 3_600_000, wantNew: true, wantBackoff: 1000, wantAttempt: 1, wantRestart: true},
		// One ms short of the threshold after 3_626_003: no reset.
		{give: 3_626_003 + 3_599_999, wantNew: true, wantBackoff: 2000, wantAttempt: 2, wantRestart: true},
	}
	for i, st := range steps {
		if got := s.NotifyFailure(st.give); got != st.wantNew {
			t.Errorf("step %d (t=%d): new attempt %v, want %v", i, st.give, got, st.wantNew)
		}
		if got := s.BackoffMs(); got != st.wantBackoff {
			t.Errorf("step %d (t=%d): backoff %d, want %d", i, st.give, got, st.wantBackoff)
		}
		if got := e.Attempt(); got != st.wantAttempt {
			t.Errorf("step %d (t=%d): attempt %d, want %d", i, st.give, got, st.wantAttempt)
		}
		if got := s.CanRestart(); got != st.wantRestart {
			t.Errorf("step %d (t=%d): CanRestart %v, want %v", i, st.give, got, st.wantRestart)
		}
	}
}

// TestExponentialJitterSeeded checks the jittered backoffs of a fixed seed
// against the formula, drawing from a twin generator: offset =
// (long)(current * 0.1), jitter = Uint64N(2*offset+1) - offset.
func TestExponentialJitterSeeded(t *testing.T) {
	c := DefaultConfig(true) // "" + checkpointing: exponential with defaults, jitter 0.1
	s := mustNew(t, c, rand.New(rand.NewPCG(42, 7)))
	twin := rand.New(rand.NewPCG(42, 7))
	currents := []int64{1000, 1500, 2250, 3375, 5062, 7593, 11390, 17085, 25628, 38443, 57665, 86497, 129746}
	now := int64(0)
	for i, cur := range currents {
		s.NotifyFailure(now)
		off := cur / 10 // (long)(cur * 0.1) for these values
		j := int64(twin.Uint64N(uint64(2*off+1))) - off
		want := max(1000, min(cur+j, 60_000))
		got := s.BackoffMs()
		if got != want {
			t.Errorf("attempt %d: backoff %d, want %d (current %d, jitter %d)", i, got, want, cur, j)
		}
		if lo, hi := max(1000, min(cur-off, 60_000)), min(cur+off, 60_000); got < lo || got > hi {
			t.Errorf("attempt %d: backoff %d outside [%d, %d]", i, got, lo, hi)
		}
		now += got + 1
	}
	// The same seed gives the same sequence; another seed (almost surely) not.
	a := backoffs(t, 42, 7, 8)
	b := backoffs(t, 42, 7, 8)
	c2 := backoffs(t, 43, 7, 8)
	if a != b {
		t.Errorf("same seed, different backoffs: %v vs %v", a, b)
	}
	if a == c2 {
		t.Errorf("seeds 42 and 43 gave the same 8 jittered backoffs %v", a)
	}
}

func backoffs(t *testing.T, s1, s2 uint64, n int) [8]int64 {
	s := mustNew(t, DefaultConfig(true), rand.New(rand.NewPCG(s1, s2)))
	var out [8]int64
	now := int64(0)
	for i := 0; i < n; i++ {
		s.NotifyFailure(now)
		out[i] = s.BackoffMs()
		now += out[i] + 1
	}
	return out
}

// TestExponentialJavaOverflow: with initial 1, multiplier 2 and max
// Long.MAX_VALUE, (long)(2^63) saturates to Long.MAX_VALUE, and the long
// sums wrap as in Java: next = 1 + MAX wraps to MIN, and the wait
// max(0, MIN - 1) wraps to MAX. With jitter factor 1, offset = MAX, the draw
// spans all of [-MAX, MAX]; a positive draw wraps current + jitter negative
// and the backoff falls back to the initial 1 ms.
func TestExponentialJavaOverflow(t *testing.T) {
	s := mustNew(t, exponential(1, math.MaxInt64, 2, 0, DefaultAttemptsBeforeReset), nil)
	e := s.(*ExponentialDelay)
	e.attempt, e.nextRestartMs = 63, 0
	e.NotifyFailure(1)
	if e.NextRestartMs() != math.MinInt64 || e.BackoffMs() != math.MaxInt64 {
		t.Errorf("next %d backoff %d, want MinInt64 and MaxInt64 (Java's wrap-around)", e.NextRestartMs(), e.BackoffMs())
	}

	s = mustNew(t, exponential(1, math.MaxInt64, 2, 1, DefaultAttemptsBeforeReset), rand.New(rand.NewPCG(9, 9)))
	e = s.(*ExponentialDelay)
	twin := rand.New(rand.NewPCG(9, 9))
	wrapped := 0
	for i := 0; i < 40; i++ {
		e.attempt = 64
		j := int64(twin.Uint64N(math.MaxUint64) - math.MaxInt64)
		sum := int64(math.MaxInt64) + j // wraps for j > 0
		want := max(1, min(sum, math.MaxInt64))
		if j > 0 {
			wrapped++
			if want != 1 {
				t.Fatalf("wrapped sum %d should fall back to 1", sum)
			}
		}
		if got := e.actualBackoff(); got != want {
			t.Errorf("draw %d: backoff %d, want %d (jitter %d)", i, got, want, j)
		}
	}
	if wrapped == 0 || wrapped == 40 {
		t.Errorf("%d of 40 draws wrapped; expected about half", wrapped)
	}
}

func TestJavaLong(t *testing.T) {
	tests := []struct {
		give float64
		want int64
	}{
		{give: 1.9, want: 1},
		{give: -1.9, want: -1},
		{give: 9.223372036854775807e18, want: math.MaxInt64},
		{give: 1e300, want: math.MaxInt64},
		{give: math.Inf(1), want: math.MaxInt64},
		{give: math.Inf(-1), want: math.MinInt64},
		{give: math.NaN(), want: 0},
		{give: 86497.55859375, want: 86497},
	}
	for _, tt := range tests {
		if got := javaLong(tt.give); got != tt.want {
			t.Errorf("javaLong(%v) = %d, want %d", tt.give, got, tt.want)
		}
	}
}

// TestExponentialBounds: whatever the seed and the failure times, a counted
// failure's backoff lies in [initial, max] and within the jitter band of
// (long)(initial * m^n).
func TestExponentialBounds(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		initial := rapid.Int64Range(1, 10_000).Draw(rt, "initial")
		maxMs := rapid.Int64Range(initial, 1_000_000).Draw(rt, "max")
		mult := rapid.Float64Range(1.01, 4).Draw(rt, "multiplier")
		jitter := rapid.Float64Range(0, 1).Draw(rt, "jitter")
		c := exponential(initial, maxMs, mult, jitter, DefaultAttemptsBeforeReset)
		c.ResetThresholdMs = rapid.Int64Range(1, 100_000).Draw(rt, "reset")
		s, err := New(c, rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "seed"), 0)))
		if err != nil {
			rt.Fatal(err)
		}
		e := s.(*ExponentialDelay)
		now := int64(0)
		for i := 0; i < 30; i++ {
			now += rapid.Int64Range(0, 200_000).Draw(rt, "gap")
			prevNext := e.NextRestartMs()
			attemptBefore := e.Attempt()
			counted := s.NotifyFailure(now)
			if counted != (now > prevNext) {
				rt.Fatalf("counted=%v at %d with restart at %d", counted, now, prevNext)
			}
			if !counted {
				if e.Attempt() != attemptBefore || s.BackoffMs() != prevNext-now {
					rt.Fatalf("a merged failure changed the state")
				}
				continue
			}
			n := attemptBefore
			if now-prevNext >= c.ResetThresholdMs {
				n = 0
			}
			if e.Attempt() != n+1 {
				rt.Fatalf("attempt %d, want %d", e.Attempt(), n+1)
			}
			cur := javaLong(float64(initial) * math.Pow(mult, float64(n)))
			off := javaLong(float64(cur) * jitter)
			b := s.BackoffMs()
			lo := max(initial, min(cur-off, maxMs))
			hi := max(initial, min(cur+off, maxMs))
			if b < lo || b > hi {
				rt.Fatalf("backoff %d outside [%d, %d] (current %d, offset %d)", b, lo, hi, cur, off)
			}
		}
	})
}

func TestFixedDelay(t *testing.T) {
	c := DefaultConfig(true)
	c.Strategy = "fixed-delay" // attempts 1, delay 1 s
	s := mustNew(t, c, nil)
	if s.Name() != NameFixedDelay {
		t.Errorf("name %q", s.Name())
	}
	s.NotifyFailure(0)
	if !s.CanRestart() || s.BackoffMs() != 1000 {
		t.Errorf("first failure: CanRestart %v backoff %d, want true 1000", s.CanRestart(), s.BackoffMs())
	}
	s.NotifyFailure(5000)
	if s.CanRestart() {
		t.Error("second failure with attempts 1: CanRestart true")
	}
	if want := "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=1, backoffTimeMS=1000)"; s.String() != want {
		t.Errorf("String %q, want %q", s.String(), want)
	}

	c.FixedDelayAttempts, c.FixedDelayMs = 0, 0
	s = mustNew(t, c, nil)
	s.NotifyFailure(0)
	if s.CanRestart() {
		t.Error("attempts 0: the first failure may restart")
	}

	c.FixedDelayAttempts, c.FixedDelayMs = 3, 250
	s = mustNew(t, c, nil)
	for i, want := range []bool{true, true, true, false, false} {
		s.NotifyFailure(int64(i))
		if s.CanRestart() != want || s.BackoffMs() != 250 {
			t.Errorf("failure %d: CanRestart %v backoff %d, want %v 250", i+1, s.CanRestart(), s.BackoffMs(), want)
		}
	}
}

func TestFailureRate(t *testing.T) {
	c := DefaultConfig(true)
	c.Strategy = "failure-rate"
	c.FailureRateMaxFailures, c.FailureRateIntervalMs, c.FailureRateDelayMs = 2, 10_000, 300
	tests := []struct {
		name string
		give []int64
		want []bool
	}{
		// 2 per 10 s: the third failure within 10 s of the first fails.
		{name: "burst", give: []int64{0, 1000, 2000}, want: []bool{true, true, false}},
		// 10_001 - 0 > 10_000: allowed; then 12_000 - 5000 <= 10_000: not.
		{name: "spread", give: []int64{0, 5000, 10_001, 12_000}, want: []bool{true, true, true, false}},
		// Exactly the interval apart is still within it (> is strict).
		{name: "edge", give: []int64{0, 1, 10_000, 10_002}, want: []bool{true, true, false, true}},
	}
	for _, tt := range tests {
		s := mustNew(t, c, nil)
		for i, at := range tt.give {
			if !s.NotifyFailure(at) {
				t.Errorf("%s: NotifyFailure returned false", tt.name)
			}
			if got := s.CanRestart(); got != tt.want[i] {
				t.Errorf("%s: failure %d at %d: CanRestart %v, want %v", tt.name, i, at, got, tt.want[i])
			}
			if s.BackoffMs() != 300 {
				t.Errorf("%s: backoff %d", tt.name, s.BackoffMs())
			}
		}
	}
	// Defaults: 1 failure per minute.
	d := DefaultConfig(false)
	d.Strategy = "FailureRate"
	s := mustNew(t, d, nil)
	s.NotifyFailure(0)
	s.NotifyFailure(60_000)
	if s.CanRestart() {
		t.Error("default failure-rate: a second failure 60 s later may restart (60_000 is not > 60_000)")
	}
	s.NotifyFailure(60_001 + 60_000)
	if !s.CanRestart() {
		t.Error("default failure-rate: a failure 60_001 ms after the previous one may not restart")
	}
}

func TestDefaultSelection(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := mustNew(t, DefaultConfig(false), rng)
	if s.Name() != NameNoRestart || s.String() != "NoRestartBackoffTimeStrategy" {
		t.Errorf("checkpointing off: %s %s, want no restart", s.Name(), s)
	}
	s.NotifyFailure(0)
	if s.CanRestart() || s.BackoffMs() != 0 {
		t.Error("no-restart strategy restarts")
	}

	s = mustNew(t, DefaultConfig(true), rng)
	if s.Name() != NameExponentialDelay {
		t.Fatalf("checkpointing on: %s, want exponential-delay", s.Name())
	}
	want := "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS=1000, maxBackoffMS=60000, backoffMultiplier=1.5, resetBackoffThresholdMS=3600000, jitterFactor=0.1, attemptsBeforeResetBackoff=2147483647, currentRestartAttempt=0, nextRestartTimestamp=-2147483648)"
	if s.String() != want {
		t.Errorf("String\n got %s\nwant %s", s, want)
	}

	// With no strategy named, Flink uses the options' *defaults*: the
	// configured exponential values are ignored.
	c := DefaultConfig(true)
	c.InitialBackoffMs, c.MaxBackoffMs, c.JitterFactor = 5, 7, 0
	s = mustNew(t, c, rng)
	s.NotifyFailure(0)
	if b := s.BackoffMs(); b < 900 || b > 1100 {
		t.Errorf("default strategy backoff %d, want 1000 +- 10%% (configured values ignored)", b)
	}
	c.Strategy = "exponential-delay" // named: now they apply
	s = mustNew(t, c, nil)
	s.NotifyFailure(0)
	if s.BackoffMs() != 5 {
		t.Errorf("named exponential-delay backoff %d, want 5", s.BackoffMs())
	}

	names := []struct {
		give string
		want string
	}{
		{give: "none", want: NameNoRestart},
		{give: "OFF", want: NameNoRestart},
		{give: "Disable", want: NameNoRestart},
		{give: "fixeddelay", want: NameFixedDelay},
		{give: "Fixed-Delay", want: NameFixedDelay},
		{give: "failurerate", want: NameFailureRate},
		{give: "exponentialdelay", want: NameExponentialDelay},
		{give: "EXPONENTIAL-DELAY", want: NameExponentialDelay},
	}
	for _, tt := range names {
		c := DefaultConfig(false)
		c.Strategy = tt.give
		if s := mustNew(t, c, rng); s.Name() != tt.want {
			t.Errorf("Strategy %q: %s, want %s", tt.give, s.Name(), tt.want)
		}
	}
}

func TestInvalidConfigs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	mod := func(strategy string, f func(*Config)) Config {
		c := DefaultConfig(true)
		c.Strategy = strategy
		f(&c)
		return c
	}
	tests := []struct {
		give Config
		rng  *rand.Rand
		want string
	}{
		{give: mod("Bogus", func(*Config) {}), want: "bogus is an unknown value of RestartStrategyType."},
		{give: mod("fixed delay", func(*Config) {}), want: "fixed delay is an unknown value of RestartStrategyType."},
		{give: mod("fixed-delay", func(c *Config) { c.FixedDelayAttempts = -1 }), want: "Maximum number of restart attempts must be at least 0."},
		{give: mod("fixed-delay", func(c *Config) { c.FixedDelayMs = -1 }), want: "Backoff time between restart attempts must be at least 0 ms."},
		{give: mod("fixed-delay", func(c *Config) { c.FixedDelayAttempts = math.MaxInt32 + 1 }), want: "Could not parse value '2147483648' for key 'restart-strategy.fixed-delay.attempts'."},
		{give: mod("failure-rate", func(c *Config) { c.FailureRateMaxFailures = 0 }), want: "Maximum number of restart attempts per time unit must be greater than 0."},
		{give: mod("failure-rate", func(c *Config) { c.FailureRateIntervalMs = 0 }), want: "Failures interval must be greater than 0 ms."},
		{give: mod("failure-rate", func(c *Config) { c.FailureRateDelayMs = -5 }), want: "Backoff time must be at least 0 ms."},
		{give: mod("exponential-delay", func(c *Config) { c.InitialBackoffMs = 0 }), want: "Initial backoff must be at least 1."},
		{give: mod("exponential-delay", func(c *Config) { c.MaxBackoffMs = 0 }), want: "Maximum backoff must be at least 1."},
		{give: mod("exponential-delay", func(c *Config) { c.InitialBackoffMs = 60_001 }), want: "Initial backoff cannot be higher than maximum backoff."},
		{give: mod("exponential-delay", func(c *Config) { c.Multiplier = 1 }), want: "Backoff multiplier must be greater than 1."},
		{give: mod("exponential-delay", func(c *Config) { c.Multiplier = math.NaN() }), want: "Backoff multiplier must be greater than 1."},
		{give: mod("exponential-delay", func(c *Config) { c.ResetThresholdMs = 0 }), want: "Threshold duration for exponential backoff reset must be at least 1."},
		{give: mod("exponential-delay", func(c *Config) { c.JitterFactor = 1.01 }), want: "Jitter factor must be >= 0 and <= 1."},
		{give: mod("exponential-delay", func(c *Config) { c.JitterFactor = -0.1 }), want: "Jitter factor must be >= 0 and <= 1."},
		{give: mod("exponential-delay", func(c *Config) { c.AttemptsBeforeReset = 0 }), want: "The attemptsBeforeResetBackoff must be at least 1."},
		{give: mod("exponential-delay", func(*Config) {}), rng: nil, want: ErrNoRandom.Error()},
		{give: mod("", func(*Config) {}), rng: nil, want: ErrNoRandom.Error()},
	}
	for _, tt := range tests {
		r := tt.rng
		if r == nil && tt.want != ErrNoRandom.Error() {
			r = rng
		}
		_, err := New(tt.give, r)
		if err == nil || err.Error() != tt.want {
			t.Errorf("New(%q ...) error %v, want %q", tt.give.Strategy, err, tt.want)
		}
	}
	// Invalid exponential values do not matter to another strategy.
	c := mod("fixed-delay", func(c *Config) { c.InitialBackoffMs = -3; c.Multiplier = 0 })
	if _, err := New(c, nil); err != nil {
		t.Errorf("fixed-delay refused for an exponential option: %v", err)
	}
	// Jitter 0 needs no random source.
	c = mod("exponential-delay", func(c *Config) { c.JitterFactor = 0 })
	if _, err := New(c, nil); err != nil {
		t.Errorf("jitter 0 with nil rng: %v", err)
	}
}

func TestJavaDouble(t *testing.T) {
	tests := []struct {
		give float64
		want string
	}{
		{give: 1.5, want: "1.5"},
		{give: 2, want: "2.0"},
		{give: 0.1, want: "0.1"},
		{give: 0, want: "0.0"},
		{give: 1, want: "1.0"},
		{give: 0.001, want: "0.001"},
		{give: 0.0001, want: "1.0E-4"},
		{give: 1e7, want: "1.0E7"},
		{give: 12345678.9, want: "1.23456789E7"},
		{give: 9999999, want: "9999999.0"},
		{give: math.Inf(1), want: "Infinity"},
	}
	for _, tt := range tests {
		if got := javaDouble(tt.give); got != tt.want {
			t.Errorf("javaDouble(%v) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
