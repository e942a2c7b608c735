package eventlog

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// FirstDifference compares two logs (or any texts) line by line and returns
// the 1-based number of the first line where they differ and the two lines
// there, "<end of log>" standing for a line one of them does not have;
// differ is false (and the rest zero) when they are byte-identical line for
// line. It is what replay, --check-determinism and the tests that compare
// two runs report. Cost: O(len(a) + len(b)).
func FirstDifference(a, b []byte) (line int, x, y string, differ bool) {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(la) || i < len(lb); i++ {
		sa, sb := "<end of log>", "<end of log>"
		if i < len(la) {
			sa = string(la[i])
		}
		if i < len(lb) {
			sb = string(lb[i])
		}
		if sa != sb {
			return i + 1, sa, sb, true
		}
	}
	return 0, "", "", false
}

// jsonField is one field of a log line, nested objects flattened with "."
// (settings.parallelism.default), with its value as compact JSON.
type jsonField struct{ path, value string }

// flattenLine returns the fields of the JSON object line in their order,
// or false when line is not a JSON object. Arrays are one value.
func flattenLine(line string) ([]jsonField, bool) {
	var out []jsonField
	var walk func(prefix string, raw json.RawMessage) bool
	walk = func(prefix string, raw json.RawMessage) bool {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return false
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return false
			}
			key, _ := tok.(string)
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return false
			}
			if len(v) > 0 && v[0] == '{' {
				if !walk(prefix+key+".", v) {
					return false
				}
				continue
			}
			var c bytes.Buffer
			if json.Compact(&c, v) != nil {
				return false
			}
			out = append(out, jsonField{prefix + key, c.String()})
		}
		_, err := dec.Token()
		return err == nil
	}
	if !walk("", json.RawMessage(line)) {
		return nil, false
	}
	return out, true
}

// FieldDifference describes how two log lines differ, field by field: the
// first field of want (in its order, nested objects flattened as
// settings.parallelism.default) whose value got does not have, or the
// first field only got has, as `field "vt": expected 1000, got 1001`, with
// how many more fields differ. It returns "" when either line is not a
// JSON object or they hold the same fields and values. cut shortens each
// value shown (input.Cut, say). Cost: O(len(want) + len(got)).
func FieldDifference(want, got string, cut func(string) string) string {
	wf, ok1 := flattenLine(want)
	gf, ok2 := flattenLine(got)
	if !ok1 || !ok2 {
		return ""
	}
	gv := make(map[string]string, len(gf))
	for _, f := range gf {
		gv[f.path] = f.value
	}
	wv := make(map[string]bool, len(wf))
	var diffs []string
	for _, f := range wf {
		wv[f.path] = true
		switch v, ok := gv[f.path]; {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("field %q: expected %s, missing", f.path, cut(f.value)))
		case v != f.value:
			diffs = append(diffs, fmt.Sprintf("field %q: expected %s, got %s", f.path, cut(f.value), cut(v)))
		}
	}
	for _, f := range gf {
		if !wv[f.path] {
			diffs = append(diffs, fmt.Sprintf("field %q: not expected, got %s", f.path, cut(f.value)))
		}
	}
	switch len(diffs) {
	case 0:
		return ""
	case 1:
		return diffs[0]
	case 2:
		return diffs[0] + " (and 1 more field)"
	}
	return fmt.Sprintf("%s (and %d more fields)", diffs[0], len(diffs)-1)
}
