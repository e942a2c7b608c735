package eventlog

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestFirstDifference(t *testing.T) {
	tests := []struct {
		a, b   string
		line   int
		x, y   string
		differ bool
	}{
		{"a\nb\n", "a\nb\n", 0, "", "", false},
		{"a\nb\nc", "a\nB\nc", 2, "b", "B", true},
		{"a\nb", "a\nb\nc", 3, "<end of log>", "c", true},
		{"a\nb\nc", "a", 2, "b", "<end of log>", true},
		{"", "x", 1, "", "x", true},
	}
	for _, tt := range tests {
		line, x, y, differ := FirstDifference([]byte(tt.a), []byte(tt.b))
		if line != tt.line || x != tt.x || y != tt.y || differ != tt.differ {
			t.Errorf("FirstDifference(%q, %q) = %d %q %q %v, want %d %q %q %v", tt.a, tt.b, line, x, y, differ, tt.line, tt.x, tt.y, tt.differ)
		}
	}
}

func TestFieldDifference(t *testing.T) {
	same := func(s string) string { return s }
	tests := []struct {
		want, got, diff string
	}{
		{`{"vt":1000,"actor":"a","event":"x"}`, `{"vt":1001,"actor":"a","event":"x"}`, `field "vt": expected 1000, got 1001`},
		{`{"vt":0,"settings":{"parallelism.default":"2","sim.seed":"1"}}`, `{"vt":0,"settings":{"parallelism.default":"3","sim.seed":"1"}}`,
			`field "settings.parallelism.default": expected "2", got "3"`},
		{`{"a":1,"b":2,"c":3}`, `{"a":1,"b":5,"c":4,"d":[1, 2]}`, `field "b": expected 2, got 5 (and 2 more fields)`},
		{`{"a":1,"b":2}`, `{"a":1}`, `field "b": expected 2, missing`},
		{`{"a":1}`, `{"a":1,"b":{"c":true}}`, `field "b.c": not expected, got true`},
		{`{"a":[1,2]}`, `{"a":[1, 3]}`, `field "a": expected [1,2], got [1,3]`},
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, ``}, // the same fields in another order
		{`{"a":1}`, `not json`, ``},
		{`{"a":1}`, `<end of log>`, ``},
		{`[1]`, `[2]`, ``},
	}
	for _, tt := range tests {
		if got := FieldDifference(tt.want, tt.got, same); got != tt.diff {
			t.Errorf("FieldDifference(%s, %s) = %q, want %q", tt.want, tt.got, got, tt.diff)
		}
	}
	long := `{"a":"` + strings.Repeat("x", 200) + `"}`
	cut := func(s string) string {
		if len(s) > 10 {
			return s[:10] + "..."
		}
		return s
	}
	if got := FieldDifference(long, `{"a":"y"}`, cut); got != `field "a": expected "xxxxxxxxx..., got "y"` {
		t.Errorf("cut: %q", got)
	}
}

func TestJacksonDoubles(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{{math.Inf(1), `"Infinity"`}, {math.Inf(-1), `"-Infinity"`}, {math.NaN(), `"NaN"`}, {1.5, "1.5"}, {1e21, "1000000000000000000000"}, {-0.25, "-0.25"}} {
		if got := string(AppendJSONDouble(nil, tt.v)); got != tt.want {
			t.Errorf("AppendJSONDouble(%v) = %s, want %s", tt.v, got, tt.want)
		}
	}
	for _, tt := range []struct{ give, want string }{
		{`{"key":"a","value":+Inf,"firing":1}`, `{"key":"a","value":"Infinity","firing":1}`},
		{`{"value":-Inf}`, `{"value":"-Infinity"}`},
		{`{"value":NaN,"x":[NaN]}`, `{"value":"NaN","x":["NaN"]}`},
		{`{"key":"+Inf NaN","value":1}`, `{"key":"+Inf NaN","value":1}`}, // inside a string: text
		{`{"key":"a\"+Inf","value":+Inf}`, `{"key":"a\"+Inf","value":"Infinity"}`},
		{`{"value":1}`, `{"value":1}`},
	} {
		got := QuoteNonFinite([]byte(tt.give))
		if string(got) != tt.want {
			t.Errorf("QuoteNonFinite(%s) = %s, want %s", tt.give, got, tt.want)
		}
		if !json.Valid(got) {
			t.Errorf("QuoteNonFinite(%s) = %s is not JSON", tt.give, got)
		}
	}
}
