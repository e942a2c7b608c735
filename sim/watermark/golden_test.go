package watermark

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// goldenCase is one case of testdata/golden/watermarks.json, computed by Flink's own
// BoundedOutOfOrdernessWatermarks.
type goldenCase struct {
	CaseID                  string  `json:"case_id"`
	Kind                    string  `json:"kind"`
	MaxOutOfOrdernessISO    *string `json:"max_out_of_orderness_iso"`
	MaxOutOfOrdernessNanos  int64   `json:"max_out_of_orderness_nanos"`
	OutOfOrdernessMillis    int64   `json:"out_of_orderness_millis"`
	Events                  []int64 `json:"events"`
	InitialWatermark        int64   `json:"initial_watermark"`
	WatermarkAfterEachEvent []int64 `json:"watermark_after_each_event"`
	EmitsAfterLastEvent     []int64 `json:"emits_after_last_event"`
	Error                   *struct {
		Exception string `json:"exception"`
		Message   string `json:"message"`
	} `json:"error"`
}

func loadGolden(t *testing.T) []goldenCase {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "golden", "watermarks.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden vectors missing: %v", err)
	}
	var file struct {
		CaseCount int          `json:"case_count"`
		Cases     []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	if len(file.Cases) == 0 {
		t.Fatalf("%s has zero cases", path)
	}
	if file.CaseCount != len(file.Cases) {
		t.Fatalf("%s: case_count %d but %d cases", path, file.CaseCount, len(file.Cases))
	}
	return file.Cases
}

var isoSeconds = regexp.MustCompile(`^PT(?:(-?\d+)M)?(?:(-?\d+(?:\.\d+)?)S)?$`)

// isoNanos parses the PT[nM][n.nS] durations that appear in the golden file into
// nanoseconds, exactly (big.Rat, no float rounding).
func isoNanos(s string) (int64, error) {
	m := isoSeconds.FindStringSubmatch(s)
	if m == nil || (m[1] == "" && m[2] == "") {
		return 0, fmt.Errorf("unsupported ISO-8601 duration %q", s)
	}
	total := new(big.Rat)
	if m[1] != "" {
		minutes, _ := new(big.Rat).SetString(m[1])
		total.Add(total, minutes.Mul(minutes, big.NewRat(60, 1)))
	}
	if m[2] != "" {
		secs, _ := new(big.Rat).SetString(m[2])
		total.Add(total, secs)
	}
	total.Mul(total, big.NewRat(1e9, 1))
	if !total.IsInt() {
		return 0, fmt.Errorf("%q is not a whole number of nanoseconds", s)
	}
	return total.Num().Int64(), nil
}

func TestGoldenWatermarks(t *testing.T) {
	cases := loadGolden(t)
	ran := map[string]int{}
	for _, c := range cases {
		t.Run(c.CaseID, func(t *testing.T) {
			ran[c.Kind]++
			switch c.Kind {
			case "bounded_out_of_orderness":
				checkBoundedCase(t, c)
			case "repeated_emit":
				g, err := NewBoundedOutOfOrderness(c.OutOfOrdernessMillis)
				if err != nil {
					t.Fatal(err)
				}
				for _, ts := range c.Events {
					g.OnEvent(ts)
				}
				for i, want := range c.EmitsAfterLastEvent {
					if got := g.OnPeriodicEmit(); got != want {
						t.Errorf("emit %d: got %d, want %d", i, got, want)
					}
				}
			case "constructor_error":
				checkConstructorError(t, c)
			default:
				t.Fatalf("unknown case kind %q", c.Kind)
			}
		})
	}
	for _, kind := range []string{"bounded_out_of_orderness", "repeated_emit", "constructor_error"} {
		if ran[kind] == 0 {
			t.Errorf("no golden case of kind %s ran", kind)
		}
	}
}

func checkBoundedCase(t *testing.T, c goldenCase) {
	t.Helper()
	if c.MaxOutOfOrdernessISO == nil {
		t.Fatal("bounded case without a duration")
	}
	nanos, err := isoNanos(*c.MaxOutOfOrdernessISO)
	if err != nil {
		t.Fatal(err)
	}
	if nanos != c.MaxOutOfOrdernessNanos {
		t.Fatalf("ISO %s parsed to %d ns, file says %d", *c.MaxOutOfOrdernessISO, nanos, c.MaxOutOfOrdernessNanos)
	}
	fromDuration, err := NewBoundedOutOfOrdernessFromDuration(time.Duration(nanos))
	if err != nil {
		t.Fatal(err)
	}
	if got := fromDuration.OutOfOrdernessMs(); got != c.OutOfOrdernessMillis {
		t.Fatalf("Duration.toMillis: got %d ms, want %d", got, c.OutOfOrdernessMillis)
	}
	fromMs, err := NewBoundedOutOfOrderness(c.OutOfOrdernessMillis)
	if err != nil {
		t.Fatal(err)
	}
	for name, g := range map[string]*BoundedOutOfOrderness{"duration": fromDuration, "millis": fromMs} {
		if got := g.OnPeriodicEmit(); got != c.InitialWatermark {
			t.Errorf("%s: initial watermark %d, want %d", name, got, c.InitialWatermark)
		}
		if len(c.Events) != len(c.WatermarkAfterEachEvent) {
			t.Fatalf("malformed case: %d events, %d watermarks", len(c.Events), len(c.WatermarkAfterEachEvent))
		}
		for i, ts := range c.Events {
			g.OnEvent(ts)
			if got := g.OnPeriodicEmit(); got != c.WatermarkAfterEachEvent[i] {
				t.Errorf("%s: after event %d (ts %d): got %d, want %d", name, i, ts, got, c.WatermarkAfterEachEvent[i])
			}
		}
	}
}

func checkConstructorError(t *testing.T, c goldenCase) {
	t.Helper()
	if c.Error == nil {
		t.Fatal("constructor_error case without an error")
	}
	if c.MaxOutOfOrdernessISO == nil {
		// Flink's checkNotNull(maxOutOfOrderness, "maxOutOfOrderness"): a null Duration.
		// Go's value types cannot be null, so this refusal cannot be reached through the
		// API; assert the case is the one we think it is.
		if c.Error.Exception != "java.lang.NullPointerException" || c.Error.Message != "maxOutOfOrderness" {
			t.Fatalf("unexpected null-duration case: %+v", *c.Error)
		}
		t.Logf("%s: null Duration is not representable in Go (value parameter); nothing to refuse", c.CaseID)
		return
	}
	nanos, err := isoNanos(*c.MaxOutOfOrdernessISO)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewBoundedOutOfOrdernessFromDuration(time.Duration(nanos))
	if err == nil {
		t.Fatalf("accepted %s (got bound %d ms), Flink throws %s", *c.MaxOutOfOrdernessISO, g.OutOfOrdernessMs(), c.Error.Exception)
	}
	if err.Error() != c.Error.Message {
		t.Errorf("message %q, want Flink's %q", err.Error(), c.Error.Message)
	}
	if !errors.Is(err, ErrNegativeOutOfOrderness) {
		t.Errorf("error %v is not ErrNegativeOutOfOrderness", err)
	}
	// Java's Duration.toMillis floors, so any negative duration is a negative number
	// of milliseconds; the millisecond constructor refuses it with the same message.
	ms := nanos / 1e6
	if nanos%1e6 != 0 && nanos < 0 {
		ms--
	}
	if _, err := NewBoundedOutOfOrderness(ms); err == nil || err.Error() != c.Error.Message {
		t.Errorf("NewBoundedOutOfOrderness(%d): err %v, want %q", ms, err, c.Error.Message)
	}
}

func TestIsoNanos(t *testing.T) {
	tests := []struct {
		give string
		want int64
	}{
		{"PT0S", 0},
		{"PT0.001S", 1_000_000},
		{"PT0.0015S", 1_500_000},
		{"PT0.000999999S", 999_999},
		{"PT1M", 60_000_000_000},
		{"PT-0.000000001S", -1},
		{"PT5S", 5_000_000_000},
	}
	for _, tt := range tests {
		got, err := isoNanos(tt.give)
		if err != nil || got != tt.want {
			t.Errorf("isoNanos(%q) = %d, %v; want %d", tt.give, got, err, tt.want)
		}
	}
}
