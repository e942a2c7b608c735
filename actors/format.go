package actors

import (
	"encoding/json"
	"strconv"
	"strings"
)

func itoa(v int64) string   { return strconv.FormatInt(v, 10) }
func ftoa(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// jsonStrings renders a JSON array of strings.
func jsonStrings(ss []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(appendJSONString(nil, s))
	}
	b.WriteByte(']')
	return b.String()
}

// jsonInts renders a JSON array of integers.
func jsonInts(vs []int64) string {
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

// appendJSONString appends s as a JSON string. strconv.Quote is not JSON:
// it writes \x.. escapes for control bytes and invalid UTF-8, which a JSON
// reader refuses; a key from a user's events file may hold either.
func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // marshalling a string cannot fail
	return append(dst, b...)
}

// jsonString is appendJSONString as a string.
func jsonString(s string) string { return string(appendJSONString(nil, s)) }
