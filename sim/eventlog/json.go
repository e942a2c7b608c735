package eventlog

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Helpers that render JSON values for log fields (messages.Raw) without
// reflection on the hot path.

// Itoa is strconv.FormatInt in base 10.
func Itoa(v int64) string { return strconv.FormatInt(v, 10) }

// Ftoa renders a float as the shortest decimal that reads back exactly.
func Ftoa(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// JSONStrings renders a JSON array of strings.
func JSONStrings(ss []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(AppendJSONString(nil, s))
	}
	b.WriteByte(']')
	return b.String()
}

// JSONInts renders a JSON array of integers.
func JSONInts(vs []int64) string {
	b := make([]byte, 0, 2+len(vs)*4)
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return string(append(b, ']'))
}

// AppendJSONString appends s as a JSON string. strconv.Quote is not JSON:
// it writes \x.. escapes for control bytes and invalid UTF-8, which a JSON
// reader refuses; a key from a user's events file may hold either.
func AppendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // marshalling a string cannot fail
	return append(dst, b...)
}

// JSONString is AppendJSONString as a string.
func JSONString(s string) string { return string(AppendJSONString(nil, s)) }

// JoinRaw joins already-encoded JSON values with commas (the inside of an
// array).
func JoinRaw(parts []string) string { return strings.Join(parts, ",") }

// AppendJSONDouble appends v as Flink's JSON format writes a DOUBLE:
// Jackson's JsonGenerator with its default JsonWriteFeature.WRITE_NAN_AS_STRINGS
// writes the three values JSON has no number for as strings, in
// Double.toString's words: "NaN", "Infinity", "-Infinity". A finite v is the
// shortest decimal that reads back exactly (Ftoa), so every record stays
// JSON.
func AppendJSONDouble(dst []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(dst, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(v, -1):
		return append(dst, `"-Infinity"`...)
	}
	return strconv.AppendFloat(dst, v, 'f', -1, 64)
}

// nonFinite are the texts strconv.AppendFloat writes for the values JSON
// has no number for, and what Jackson writes instead (AppendJSONDouble).
var nonFinite = [][2]string{{"NaN", `"NaN"`}, {"+Inf", `"Infinity"`}, {"-Inf", `"-Infinity"`}}

// QuoteNonFinite returns the JSON text v with every bare NaN, +Inf and -Inf
// outside a string (what strconv writes for a double JSON cannot hold, as
// in a sink record of a sum that overflowed) written as Jackson writes it
// (AppendJSONDouble), so that the text is JSON again. Text that has none
// is returned as it is, without a copy. Cost: one pass over v.
func QuoteNonFinite(v []byte) []byte {
	if !bytes.Contains(v, []byte("NaN")) && !bytes.Contains(v, []byte("Inf")) {
		return v
	}
	var out []byte
	last := 0
	inString := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			continue
		}
		for _, nf := range nonFinite {
			if bytes.HasPrefix(v[i:], []byte(nf[0])) {
				out = append(append(out, v[last:i]...), nf[1]...)
				i += len(nf[0]) - 1
				last = i + 1
				break
			}
		}
	}
	if out == nil {
		return v
	}
	return append(out, v[last:]...)
}
