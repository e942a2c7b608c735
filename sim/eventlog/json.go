package eventlog

import (
	"encoding/json"
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
