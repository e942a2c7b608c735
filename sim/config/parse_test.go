package config

import (
	"math"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

const durationUnitsText = "DAYS: (d | day | days), HOURS: (h | hour | hours), MINUTES: (min | m | minute | minutes), " +
	"SECONDS: (s | sec | secs | second | seconds), MILLISECONDS: (ms | milli | millis | millisecond | milliseconds), " +
	"MICROSECONDS: (µs | micro | micros | microsecond | microseconds), NANOSECONDS: (ns | nano | nanos | nanosecond | nanoseconds)"

func TestParseDuration(t *testing.T) {
	tests := []struct {
		give    string
		want    time.Duration
		wantErr string
	}{
		// TimeUtilsTest cases and the labels of TimeUtils.TimeUnit
		{give: "1234", want: 1234 * time.Millisecond},
		{give: "1234ms", want: 1234 * time.Millisecond},
		{give: "1234 ms", want: 1234 * time.Millisecond},
		{give: "667766s", want: 667766 * time.Second},
		{give: "667766 s", want: 667766 * time.Second},
		{give: "7657623min", want: 7657623 * time.Minute},
		{give: "7657623 min", want: 7657623 * time.Minute},
		{give: "15 m", want: 15 * time.Minute},
		{give: "987654h", want: 987654 * time.Hour},
		{give: "987654 h", want: 987654 * time.Hour},
		{give: "1 MS", want: time.Millisecond},
		{give: "1 S", want: time.Second},
		{give: "1 MIN", want: time.Minute},
		{give: "1 H", want: time.Hour},
		{give: "      155      ", want: 155 * time.Millisecond},
		{give: "      155      ms   ", want: 155 * time.Millisecond},
		{give: "\t2 s\n", want: 2 * time.Second},
		{give: "1 d", want: 24 * time.Hour},
		{give: "2 days", want: 48 * time.Hour},
		{give: "1 day", want: 24 * time.Hour},
		{give: "3 hours", want: 3 * time.Hour},
		{give: "1 minute", want: time.Minute},
		{give: "2 minutes", want: 2 * time.Minute},
		{give: "15 sec", want: 15 * time.Second},
		{give: "15 secs", want: 15 * time.Second},
		{give: "15 second", want: 15 * time.Second},
		{give: "15 seconds", want: 15 * time.Second},
		{give: "5 milli", want: 5 * time.Millisecond},
		{give: "5 millis", want: 5 * time.Millisecond},
		{give: "5 milliseconds", want: 5 * time.Millisecond},
		{give: "20µs", want: 20 * time.Microsecond},
		{give: "20 micro", want: 20 * time.Microsecond},
		{give: "20 micros", want: 20 * time.Microsecond},
		{give: "20 microseconds", want: 20 * time.Microsecond},
		{give: "7 ns", want: 7},
		{give: "7 nanos", want: 7},
		{give: "7 nanosecond", want: 7},
		{give: "0", want: 0},
		{give: "0 s", want: 0},
		{give: "007 s", want: 7 * time.Second},
		{give: "9223372036854775807 ns", want: math.MaxInt64},

		{give: "", wantErr: "argument is an empty- or whitespace-only string"},
		{give: "     ", wantErr: "argument is an empty- or whitespace-only string"},
		{give: "foobar or fubar or foo bazz", wantErr: "text does not start with a number"},
		{give: "-100 ms", wantErr: "text does not start with a number"},
		{give: "+1 s", wantErr: "text does not start with a number"},
		{give: "1.5 s", wantErr: "Time interval unit label '.5 s' does not match any of the recognized units: " + durationUnitsText},
		{give: "16 gjah", wantErr: "Time interval unit label 'gjah' does not match any of the recognized units: " + durationUnitsText},
		{give: "16 16 17 18 ms", wantErr: "Time interval unit label '16 17 18 ms' does not match"},
		{give: "100us", wantErr: "Time interval unit label 'us' does not match"},
		{give: "1 mins", wantErr: "Time interval unit label 'mins' does not match"},
		{give: "1 hrs", wantErr: "Time interval unit label 'hrs' does not match"},
		{give: "PT1S", wantErr: "text does not start with a number"},
		{give: "100000000000000000000000000000000 ms", wantErr: "The value '100000000000000000000000000000000' cannot be re represented as 64bit number (numeric overflow)."},
		{give: "100000000000000000 h", wantErr: "The value '100000000000000000' cannot be represented as a duration of at most 292 years (numeric overflow)."},
		{give: "9223372036854775808 ns", wantErr: "cannot be re represented as 64bit number"},
		{give: "9223372036855 s", wantErr: "cannot be represented as a duration"},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.give)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseDuration(%q) error = %v, want it to contain %q", tt.give, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.give, got, err, tt.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		give time.Duration
		want string
	}{
		{0, "0 ms"},
		{200 * time.Millisecond, "200 ms"},
		{time.Minute, "1 min"},
		{5 * time.Minute, "5 min"},
		{90 * time.Second, "90 s"},
		{time.Hour + time.Second, "3601 s"},
		{24 * time.Hour, "1 d"},
		{48 * time.Hour, "2 d"},
		{25 * time.Hour, "25 h"},
		{20 * time.Microsecond, "20 µs"},
		{1500 * time.Microsecond, "1500 µs"},
		{7, "7 ns"},
		{time.Second + 1, "1000000001 ns"},
		{-8 * time.Hour, "-8 h"},
		{math.MinInt64, "-9223372036854775808 ns"},
	}
	for _, tt := range tests {
		if got := FormatDuration(tt.give); got != tt.want {
			t.Errorf("FormatDuration(%d) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestDurationRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := time.Duration(rapid.Int64Range(0, math.MaxInt64).Draw(t, "d"))
		got, err := ParseDuration(FormatDuration(d))
		if err != nil || got != d {
			t.Fatalf("ParseDuration(FormatDuration(%d)) = %d, %v", d, got, err)
		}
	})
}

const memoryUnitsText = "(b | bytes) / (k | kb | kibibytes) / (m | mb | mebibytes) / (g | gb | gibibytes) / (t | tb | tebibytes)"

func TestParseMemorySize(t *testing.T) {
	tests := []struct {
		give    string
		want    int64
		wantErr string
	}{
		{give: "1234", want: 1234},
		{give: "1234b", want: 1234},
		{give: "1234 bytes", want: 1234},
		{give: "64 mb", want: 64 << 20},
		{give: "64m", want: 64 << 20},
		{give: "64 mebibytes", want: 64 << 20},
		{give: "1g", want: 1 << 30},
		{give: "1 GB", want: 1 << 30},
		{give: "2 gibibytes", want: 2 << 30},
		{give: "32kb", want: 32 << 10},
		{give: "32 K", want: 32 << 10},
		{give: "7 kibibytes", want: 7 << 10},
		{give: "1t", want: 1 << 40},
		{give: "1 tb", want: 1 << 40},
		{give: "1 tebibytes", want: 1 << 40},
		{give: "1728m", want: 1728 << 20},
		{give: "  12   ", want: 12},
		{give: "0", want: 0},
		{give: "8388607 t", want: 8388607 << 40},
		{give: "9223372036854775807", want: math.MaxInt64},

		{give: "", wantErr: "argument is an empty- or whitespace-only string"},
		{give: "   ", wantErr: "argument is an empty- or whitespace-only string"},
		{give: "mb", wantErr: "text does not start with a number"},
		{give: "-1 mb", wantErr: "text does not start with a number"},
		{give: "1.5 g", wantErr: "Memory size unit '.5 g' does not match any of the recognized units: " + memoryUnitsText},
		{give: "16 gjah", wantErr: "Memory size unit 'gjah' does not match any of the recognized units: " + memoryUnitsText},
		{give: "1 mib", wantErr: "Memory size unit 'mib' does not match"},
		{give: "100000000000000000000000 b", wantErr: "The value '100000000000000000000000' cannot be re represented as 64bit number (numeric overflow)."},
		{give: "8388608 t", wantErr: "The value '8388608 t' cannot be re represented as 64bit number of bytes (numeric overflow)."},
	}
	for _, tt := range tests {
		got, err := ParseMemorySize(tt.give)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseMemorySize(%q) error = %v, want it to contain %q", tt.give, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseMemorySize(%q) = %d, %v; want %d", tt.give, got, err, tt.want)
		}
	}
}

func TestFormatMemorySize(t *testing.T) {
	tests := []struct {
		give int64
		want string
	}{
		{0, "0 bytes"},
		{1, "1 bytes"},
		{1025, "1025 bytes"},
		{1024, "1 kb"},
		{384 << 20, "384 mb"},
		{1728 << 20, "1728 mb"},
		{1 << 30, "1 gb"},
		{3 << 30, "3 gb"},
		{(1 << 30) + (1 << 20), "1025 mb"},
		// MemorySize.toString falls back to bytes when every unit divides.
		{1 << 40, "1099511627776 bytes"},
	}
	for _, tt := range tests {
		if got := FormatMemorySize(tt.give); got != tt.want {
			t.Errorf("FormatMemorySize(%d) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestMemoryRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.Int64Range(0, math.MaxInt64).Draw(t, "b")
		got, err := ParseMemorySize(FormatMemorySize(b))
		if err != nil || got != b {
			t.Fatalf("ParseMemorySize(FormatMemorySize(%d)) = %d, %v", b, got, err)
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"1 s", "200 ms", "15m", "", "-1", "9223372036854775807 ns", "1µs", "3 DAYS",
		"99999999999999999999 s", "1\xff s", "\xef\xbb\xbf1 s", strings.Repeat("9", 300) + " ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %d < 0", s, d)
		}
		if back, err := ParseDuration(FormatDuration(d)); err != nil || back != d {
			t.Fatalf("round trip of %q: %d -> %q -> %d, %v", s, d, FormatDuration(d), back, err)
		}
	})
}

func FuzzParseMemorySize(f *testing.F) {
	for _, s := range []string{"64 mb", "1g", "", "12", "1 tebibytes", "8388608 t",
		"1728m", "4096m", "99999999999999999999 b", "1\xff m", strings.Repeat("7", 300) + " kb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseMemorySize(s)
		if err != nil {
			return
		}
		if b < 0 {
			t.Fatalf("ParseMemorySize(%q) = %d < 0", s, b)
		}
		if back, err := ParseMemorySize(FormatMemorySize(b)); err != nil || back != b {
			t.Fatalf("round trip of %q: %d -> %q -> %d, %v", s, b, FormatMemorySize(b), back, err)
		}
	})
}
