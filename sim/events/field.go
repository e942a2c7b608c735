package events

import (
	"encoding/json"
	"slices"
	"strconv"
)

// NumericField returns the value of the top-level field of the JSON object
// value when it is a JSON number, as a float64. It returns false when value
// is not an object, the field is missing, or its value is not a number (a
// string holding digits is not a number). When the field appears more than
// once, the first occurrence counts. Cost: one pass over value up to the
// field, no allocation for plain field names. Never panics, whatever value
// holds.
func NumericField(value []byte, field string) (float64, bool) {
	raw, ok := rawField(value, field)
	if !ok || !isNumber(raw) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil { // out of float64 range
		return 0, false
	}
	return f, true
}

// StringField returns the top-level field of the JSON object value as text:
// a JSON string unescaped, a number as written, true or false. It returns
// false when value is not an object, the field is missing, or its value is
// null, an object or an array. The first occurrence of a repeated field
// counts. Never panics, whatever value holds.
func StringField(value []byte, field string) (string, bool) {
	raw, ok := rawField(value, field)
	if !ok {
		return "", false
	}
	switch {
	case raw[0] == '"':
		return unquote(raw), true
	case isNumber(raw), string(raw) == "true", string(raw) == "false":
		return string(raw), true
	}
	return "", false
}

// FieldNames returns the names of the top-level members of the JSON object
// value, in their order, each once; nil when value is not an object.
// Malformed input gives the names read up to the fault, never a panic.
func FieldNames(value []byte) []string {
	var names []string
	i := skipSpace(value, 0)
	if i >= len(value) || value[i] != '{' {
		return nil
	}
	i++
	for {
		i = skipSpace(value, i)
		if i < len(value) && value[i] == ',' {
			i = skipSpace(value, i+1)
		}
		if i >= len(value) || value[i] != '"' {
			return names
		}
		keyEnd := skipString(value, i)
		if keyEnd < 0 {
			return names
		}
		name := unquote(value[i:keyEnd])
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		i = skipSpace(value, keyEnd)
		if i >= len(value) || value[i] != ':' {
			return names
		}
		if i = skipValue(value, skipSpace(value, i+1)); i < 0 {
			return names
		}
	}
}

// rawField returns the raw text of the first top-level member named field of
// the JSON object obj (a string with its quotes, a number, a literal, or a
// whole nested object or array), and false when obj is not an object or has
// no such member. Malformed input gives false, never a panic.
func rawField(obj []byte, field string) ([]byte, bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, false
	}
	i++
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] == '}' {
			return nil, false
		}
		if obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
		if i >= len(obj) || obj[i] != '"' {
			return nil, false
		}
		keyEnd := skipString(obj, i)
		if keyEnd < 0 {
			return nil, false
		}
		key := obj[i:keyEnd]
		i = skipSpace(obj, keyEnd)
		if i >= len(obj) || obj[i] != ':' {
			return nil, false
		}
		i = skipSpace(obj, i+1)
		end := skipValue(obj, i)
		if end < 0 {
			return nil, false
		}
		if keyEquals(key, field) {
			return obj[i:end], true
		}
		i = end
	}
}

// keyEquals reports whether the quoted JSON string key names field.
func keyEquals(key []byte, field string) bool {
	inner := key[1 : len(key)-1]
	for _, b := range inner {
		if b == '\\' {
			return unquote(key) == field
		}
	}
	return string(inner) == field
}

// unquote decodes a quoted JSON string; "" when it is malformed.
func unquote(raw []byte) string {
	for _, b := range raw[1 : len(raw)-1] {
		if b == '\\' {
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return ""
			}
			return s
		}
	}
	return string(raw[1 : len(raw)-1])
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i] == '"',
// or -1 when it does not end.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index just past the JSON value starting at b[i], or
// -1 when there is none. Nested objects and arrays are skipped by counting
// brackets outside strings.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := skipString(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default: // number or literal: up to the next delimiter
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// duplicateField returns the first member name that appears twice in one
// object of the valid, compact JSON value v (at any depth), with where it
// is (" in field \"a\"" for a nested object, "" at the top level), or ""
// when no object repeats a name. encoding/json would keep the last value
// and rawField the first; neither is what the user meant. Cost: one pass,
// a small map per object with more than 8 members.
func duplicateField(v []byte) (string, string) {
	dup, where, _ := dupScan(v, 0, "")
	return dup, where
}

// dupScan scans the value starting at v[i] and returns a duplicate found
// in it and the index just past the value.
func dupScan(v []byte, i int, in string) (string, string, int) {
	if i >= len(v) {
		return "", "", i
	}
	switch v[i] {
	case '{':
		var names []string
		var seen map[string]bool
		i++
		for i < len(v) && v[i] != '}' {
			if v[i] == ',' {
				i++
			}
			end := skipString(v, i)
			if end < 0 {
				return "", "", len(v)
			}
			name := unquote(v[i:end])
			if seen != nil {
				if seen[name] {
					return name, in, len(v)
				}
				seen[name] = true
			} else {
				for _, n := range names {
					if n == name {
						return name, in, len(v)
					}
				}
				names = append(names, name)
				if len(names) > 8 {
					seen = make(map[string]bool, 16)
					for _, n := range names {
						seen[n] = true
					}
				}
			}
			i = end + 1 // past the ':'
			var dup, where string
			if dup, where, i = dupScan(v, i, " in field "+strconvQuote(name)); dup != "" {
				return dup, where, i
			}
		}
		return "", "", i + 1
	case '[':
		i++
		for i < len(v) && v[i] != ']' {
			if v[i] == ',' {
				i++
			}
			var dup, where string
			if dup, where, i = dupScan(v, i, in); dup != "" {
				return dup, where, i
			}
		}
		return "", "", i + 1
	default:
		end := skipValue(v, i)
		if end < 0 {
			return "", "", len(v)
		}
		return "", "", end
	}
}

func strconvQuote(s string) string { return strconv.Quote(s) }
