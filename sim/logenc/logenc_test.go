package logenc

import (
	"bytes"
	"math"
	"testing"

	"github.com/rs/zerolog"
)

// zl is the line zerolog writes for one event with vt, actor, event and
// the fields add adds.
func zl(add func(e *zerolog.Event) *zerolog.Event) []byte {
	var buf bytes.Buffer
	l := zerolog.New(&buf)
	add(l.Log().Int64("vt", 7).Str("actor", "a").Str("event", "e")).Send()
	return buf.Bytes()
}

func ours(add func(b []byte) []byte) []byte {
	return append(add(Line(nil, 7, "a", "e")), '}', '\n')
}

func check(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestAgainstZerolog(t *testing.T) {
	strs := []string{"", "plain", "quote\"back\\slash", "\n\r\t\b\f", "\x00\x1f\x7f", "<&>", "é漢字", "bad\xffutf8\xc3", "\u2028\u2029"}
	for _, s := range strs {
		check(t, "Str "+s, ours(func(b []byte) []byte { return Str(b, s, s) }),
			zl(func(e *zerolog.Event) *zerolog.Event { return e.Str(s, s) }))
		var buf bytes.Buffer
		l := zerolog.New(&buf)
		l.Log().Int64("vt", -3).Str("actor", s).Str("event", s).Send()
		check(t, "Line "+s, append(Line(nil, -3, s, s), '}', '\n'), buf.Bytes())
	}
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.0 / 3, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 1.5e300, -2.5e-300,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1), math.Inf(-1), 123456789.125}
	for _, f := range floats {
		check(t, "Float", ours(func(b []byte) []byte { return Float(b, "v", f) }),
			zl(func(e *zerolog.Event) *zerolog.Event { return e.Float64("v", f) }))
	}
	for _, v := range []int64{0, 1, -1, math.MaxInt64, math.MinInt64} {
		check(t, "Int", ours(func(b []byte) []byte { return Int(b, "v", v) }),
			zl(func(e *zerolog.Event) *zerolog.Event { return e.Int64("v", v) }))
	}
	for _, v := range []bool{true, false} {
		check(t, "Bool", ours(func(b []byte) []byte { return Bool(b, "v", v) }),
			zl(func(e *zerolog.Event) *zerolog.Event { return e.Bool("v", v) }))
	}
	check(t, "Raw", ours(func(b []byte) []byte { return Raw(Raw(b, "r", `[1,{"a":2}]`), "s", `"x"`) }),
		zl(func(e *zerolog.Event) *zerolog.Event {
			return e.RawJSON("r", []byte(`[1,{"a":2}]`)).RawJSON("s", []byte(`"x"`))
		}))
}

// FuzzLine: for any actor, kind, key, string, integer and float, a line
// written here is the line zerolog writes.
func FuzzLine(f *testing.F) {
	f.Add("window-0", "window_fired", "key", "k\"\\\n\xff", int64(-5), 0.1)
	f.Add("", "", "", "", int64(0), math.Inf(1))
	f.Add("tm-1", "e\x7f", "ké", "<>&\u2028", int64(math.MinInt64), 1e-7)
	f.Fuzz(func(t *testing.T, actor, kind, key, s string, i int64, x float64) {
		var buf bytes.Buffer
		l := zerolog.New(&buf)
		l.Log().Int64("vt", i).Str("actor", actor).Str("event", kind).Str(key, s).Int64(key, i).Float64(key, x).Bool(key, i%2 == 0).Send()
		b := Line(nil, i, actor, kind)
		b = Bool(Float(Int(Str(b, key, s), key, i), key, x), key, i%2 == 0)
		b = append(b, '}', '\n')
		if !bytes.Equal(b, buf.Bytes()) {
			t.Fatalf("\n got %q\nwant %q", b, buf.Bytes())
		}
	})
}
