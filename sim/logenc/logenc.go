// Package logenc appends the fields of a log line straight to its bytes, as
// zerolog v1.35 writes them (its internal/json Encoder: the same string
// escaping, the same float format, a comma before every key), so that a
// typed event writes the line zerolog wrote from its proto fields, byte for
// byte, with no field object on the way. It imports nothing of flinksim:
// the scheduler core (sim/kernel) and the log's schema (sim/eventlog) both
// use it. logenc_test.go checks every function against zerolog itself.
package logenc

import (
	"math"
	"strconv"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// plain[b]: byte b is written as it is inside a JSON string (zerolog's
// noEscapeTable: printable ASCII but the quote and the backslash; DEL is
// escaped).
var plain = func() (t [256]bool) {
	for i := 0x20; i <= 0x7e; i++ {
		t[i] = i != '\\' && i != '"'
	}
	return
}()

// String appends s as a JSON string: ", \\ and the short escapes, other
// control bytes and DEL as \u00XX, invalid UTF-8 as \ufffd, the rest as it
// is (no HTML escapes).
func String(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		if !plain[s[i]] {
			return append(stringComplex(dst, s, i), '"')
		}
	}
	dst = append(dst, s...)
	return append(dst, '"')
}

func stringComplex(dst []byte, s string, i int) []byte {
	start := 0
	for i < len(s) {
		b := s[i]
		if b >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
				i += size
				start = i
				continue
			}
			i += size
			continue
		}
		if plain[b] {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch b {
		case '"', '\\':
			dst = append(dst, '\\', b)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
		}
		i++
		start = i
	}
	return append(dst, s[start:]...)
}

// Key appends ,"key": (every field of an event line follows vt, actor and
// event, so a comma always comes first).
func Key(dst []byte, key string) []byte {
	return append(String(append(dst, ','), key), ':')
}

// Str appends the field key with the string v.
func Str(dst []byte, key, v string) []byte { return String(Key(dst, key), v) }

// Int appends the field key with the integer v.
func Int(dst []byte, key string, v int64) []byte { return strconv.AppendInt(Key(dst, key), v, 10) }

// Bool appends the field key with v.
func Bool(dst []byte, key string, v bool) []byte { return strconv.AppendBool(Key(dst, key), v) }

// Float appends the field key with v (Float64Value).
func Float(dst []byte, key string, v float64) []byte { return Float64Value(Key(dst, key), v) }

// Raw appends the field key with raw, already JSON, as it is.
func Raw(dst []byte, key, raw string) []byte { return append(Key(dst, key), raw...) }

// Float64Value appends v as zerolog writes a float64 at its default
// precision: the shortest decimal that reads back, in 'e' form below 1e-6
// or from 1e21 (as ES6 writes numbers, e-09 shortened to e-9), and the
// strings "NaN", "+Inf" and "-Inf" for the values JSON has no number for.
func Float64Value(dst []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(dst, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(dst, `"+Inf"`...)
	case math.IsInf(v, -1):
		return append(dst, `"-Inf"`...)
	}
	format := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, v, format, -1, 64)
	if format == 'e' {
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// Line appends the start of an event line, {"vt":..,"actor":..,"event":..,
// without the closing brace.
func Line(dst []byte, vt int64, actor, event string) []byte {
	dst = strconv.AppendInt(append(dst, `{"vt":`...), vt, 10)
	dst = String(append(dst, `,"actor":`...), actor)
	return String(append(dst, `,"event":`...), event)
}
