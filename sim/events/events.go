// Package events reads the user's events file: the records the simulated
// Kafka topic holds when a run replays recorded input instead of generating
// it. Two formats are accepted: JSON Lines (one JSON object per line) and CSV
// with a header. Each record becomes a Record whose payload is a compact JSON
// object, so the rest of the simulator sees one format.
package events

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flinksim/flinksim/sim/input"
)

// PartitionField is the field (JSON) or column (CSV) that names a record's
// Kafka partition. It is optional.
const PartitionField = "partition"

// ArrivalField is the field (JSON) or column (CSV) that says when a record
// reaches the topic with sim.events.pace=file-order: milliseconds of
// virtual time from the start of the run. It is optional; where it is
// missing the record arrives sim.events.gap after the one before.
const ArrivalField = "arrival"

// Record is one event read from an events file.
type Record struct {
	// Key is the key field's value: the text of a JSON string, or the
	// decimal text of a JSON number exactly as written ("42", "4.5").
	Key string
	// Timestamp is the event time in milliseconds since the epoch.
	Timestamp int64
	// Partition is the Kafka partition the line names, or -1 when it names
	// none (the producer then picks one).
	Partition int32
	// Value is the record's payload: the line as a compact JSON object, with
	// its fields in the order of the line (or of the CSV header).
	Value []byte
	// Line is the 1-based line of the file the record came from.
	Line int
	// Arrival is the line's arrival field in milliseconds, or -1 when it
	// has none.
	Arrival int64
}

// Options say which fields hold the key and the event time, and how many
// partitions the topic has.
type Options struct {
	// KeyField is the top-level field holding the key ("key" when empty).
	KeyField string
	// TimeField is the top-level field holding the event time, integer
	// milliseconds or an RFC 3339 string ("ts" when empty).
	TimeField string
	// Partitions is the number of partitions of the topic: a named partition
	// must be in [0, Partitions). 0 or less skips that check.
	Partitions int
	// NumberField, when not empty, names a field that must hold a JSON
	// number where a record has it (the field a sum, min, max or avg
	// aggregate reads): a string such as "12x", a boolean, an object or an
	// array is refused instead of counting as 0. null, and an empty CSV
	// cell, count as a missing field. A number beyond the range of a double
	// (such as 1e400) is refused too.
	NumberField string
	// FilterField, when not empty, names the field job.filter compares: a
	// JSON number in it beyond the range of a double is refused, since no
	// comparison could read it. Other values are left to the filter.
	FilterField string
	// Limits bound the input (input.EventsLimits when zero).
	Limits input.Limits
}

// Error is a problem in an events file, at File:Line.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string { return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Msg }

// Parse is Read on data already in memory (no size or line limits).
func Parse(data []byte, name string, opt Options) ([]Record, error) {
	if opt.KeyField == "" {
		opt.KeyField = "key"
	}
	if opt.TimeField == "" {
		opt.TimeField = "ts"
	}
	data = input.Clean(data)
	if line, col := input.CheckUTF8(data); line > 0 {
		return nil, &Error{name, line, fmt.Sprintf("invalid UTF-8 at byte %d of the line: an events file must be UTF-8 text", col)}
	}
	if line := input.BOMLine(data); line > 0 {
		return nil, &Error{name, line, input.BOMMessage(line)}
	}
	var recs []Record
	var err error
	text := bytes.TrimLeft(data, " \t\r\n")
	format := Format(name, data)
	switch {
	case len(text) == 0:
		return nil, nil
	case format == FormatJSONLines && text[0] == '[':
		line := 1 + bytes.Count(data[:len(data)-len(text)], []byte{'\n'})
		return nil, &Error{name, line, "a JSON array: an events file is JSON lines, one object per line, like {\"" + opt.KeyField +
			"\": \"user-1\", \"" + opt.TimeField + "\": 1700000000000} (jq -c '.[]' turns an array into JSON lines)"}
	case format == FormatJSONLines:
		recs, err = readJSONLines(data, name, opt)
	default:
		recs, err = readCSV(data, name, opt)
	}
	if err != nil {
		return nil, err
	}
	if err := checkArrivals(recs, name); err != nil {
		return nil, err
	}
	return recs, nil
}

// The formats of an events file (Format).
const (
	FormatJSONLines = "JSON lines"
	FormatCSV       = "CSV"
)

// jsonExtensions are the file name extensions that mean JSON lines.
var jsonExtensions = []string{".jsonl", ".ndjson", ".json"}

// Format says how an events file named name with content data (after
// input.Clean) is read: a name ending in .csv is CSV and one ending in
// .jsonl, .ndjson or .json is JSON lines (any case), whatever the content;
// any other name is JSON lines when the first character that is not a
// space is '{' or '[' (then refused as a JSON array), and CSV otherwise.
func Format(name string, data []byte) string {
	ext := strings.ToLower(filepath.Ext(name))
	switch {
	case ext == ".csv":
		return FormatCSV
	case slices.Contains(jsonExtensions, ext):
		return FormatJSONLines
	}
	text := bytes.TrimLeft(data, " \t\r\n")
	if len(text) > 0 && (text[0] == '{' || text[0] == '[') {
		return FormatJSONLines
	}
	return FormatCSV
}

func readJSONLines(data []byte, name string, opt Options) ([]Record, error) {
	out := make([]Record, 0, bytes.Count(data, []byte{'\n'})+1)
	var compact bytes.Buffer
	for line := 1; len(data) > 0; line++ {
		raw := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		text := bytes.TrimSpace(raw)
		if len(text) > 0 {
			compact.Reset()
			if cerr := json.Compact(&compact, text); cerr != nil {
				return nil, &Error{name, line, "invalid JSON: " + jsonReason(text)}
			}
			if compact.Bytes()[0] != '{' {
				return nil, &Error{name, line, "a line must be a JSON object, like {\"" + opt.KeyField + "\": \"user-1\", \"" + opt.TimeField + "\": 1700000000000}"}
			}
			if dup, path := duplicateField(compact.Bytes()); dup != "" {
				return nil, &Error{name, line, "field " + input.Quote(dup) + " appears twice" + path + "; a record names each field once"}
			}
			rec, msg := record(bytes.Clone(compact.Bytes()), opt)
			if msg != "" {
				return nil, &Error{name, line, msg}
			}
			rec.Line = line
			out = append(out, rec)
		}
	}
	return out, nil
}

// jsonReason is encoding/json's description of why text is not JSON.
func jsonReason(text []byte) string {
	var v any
	err := json.Unmarshal(text, &v)
	if err == nil {
		return "not a single JSON value"
	}
	return err.Error()
}

// record extracts key, time and partition from a compact JSON object. It
// returns a message instead of a Record when a field is missing or wrong.
func record(value []byte, opt Options) (Record, string) {
	rec := Record{Value: value, Partition: -1, Arrival: -1}
	raw, ok := rawField(value, opt.KeyField)
	switch {
	case !ok:
		return rec, fmt.Sprintf("missing key field %q", opt.KeyField)
	case raw[0] == '"':
		rec.Key = unquote(raw)
	case isNumber(raw):
		rec.Key = string(raw)
	default:
		return rec, fmt.Sprintf("key field %q must be a string or a number, got %s", opt.KeyField, input.Cut(string(raw)))
	}
	if opt.NumberField != "" {
		if raw, ok := rawField(value, opt.NumberField); ok && !isNumber(raw) && string(raw) != "null" && string(raw) != `""` {
			return rec, fmt.Sprintf("field %q must be a number (the window aggregate reads it, job.window.aggregate-field), got %s",
				opt.NumberField, input.Cut(string(raw)))
		} else if ok && isNumber(raw) && overflows(raw) {
			return rec, overflowMessage(opt.NumberField, raw, "the window aggregate (job.window.aggregate-field)")
		}
	}
	if opt.FilterField != "" {
		if raw, ok := rawField(value, opt.FilterField); ok && isNumber(raw) && overflows(raw) {
			return rec, overflowMessage(opt.FilterField, raw, "job.filter")
		}
	}

	raw, ok = rawField(value, opt.TimeField)
	if !ok {
		return rec, fmt.Sprintf("missing time field %q", opt.TimeField)
	}
	ts, msg := timestamp(raw, opt.TimeField)
	if msg != "" {
		return rec, msg
	}
	rec.Timestamp = ts

	if raw, ok = rawField(value, PartitionField); ok && string(raw) != "null" {
		p, err := strconv.ParseInt(string(raw), 10, 32)
		if err != nil || !isInteger(raw) {
			return rec, fmt.Sprintf("partition must be an integer, got %s", input.Cut(string(raw)))
		}
		if p < 0 || (opt.Partitions > 0 && p >= int64(opt.Partitions)) {
			if opt.Partitions > 0 {
				return rec, fmt.Sprintf("partition %d is out of range [0, %d)", p, opt.Partitions)
			}
			return rec, fmt.Sprintf("partition %d is negative", p)
		}
		rec.Partition = int32(p)
	}
	if raw, ok = rawField(value, ArrivalField); ok && string(raw) != "null" && string(raw) != `""` {
		a, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || !isInteger(raw) || a < 0 {
			return rec, fmt.Sprintf("arrival must be a non-negative integer (milliseconds from the start of the run), got %s", input.Cut(string(raw)))
		}
		rec.Arrival = a
	}
	return rec, ""
}

// checkArrivals refuses arrival times that go back: records reach the
// topic in the file's order (sim.events.pace=file-order), so a line cannot
// arrive before a line above it.
func checkArrivals(recs []Record, name string) error {
	last, lastLine := int64(-1), 0
	for _, r := range recs {
		if r.Arrival < 0 {
			continue
		}
		if r.Arrival < last {
			return &Error{name, r.Line, fmt.Sprintf("arrival %d is before the arrival %d of line %d: records arrive in the order of the file, so arrival must not decrease",
				r.Arrival, last, lastLine)}
		}
		last, lastLine = r.Arrival, r.Line
	}
	return nil
}

// timestamp reads an event time: a JSON integer (milliseconds since the
// epoch) or a string holding an RFC 3339 time, converted to milliseconds
// (finer digits are truncated toward negative infinity).
func timestamp(raw []byte, field string) (int64, string) {
	if raw[0] == '"' {
		s := unquote(raw)
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return 0, fmt.Sprintf("time field %q must be an integer (milliseconds since the epoch) or an RFC 3339 time, got %s", field, input.Cut(string(raw)))
		}
		return t.UnixMilli(), "" // floors: Go's nanoseconds of a second are never negative
	}
	if isInteger(raw) {
		if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return v, ""
		}
		return 0, fmt.Sprintf("time field %q is out of the range of a 64-bit millisecond timestamp: %s", field, input.Cut(string(raw)))
	}
	return 0, fmt.Sprintf("time field %q must be an integer (milliseconds since the epoch) or an RFC 3339 time, got %s", field, input.Cut(string(raw)))
}

// overflows reports whether the JSON number raw is beyond the range of a
// double: Java's Double.parseDouble would read it as Infinity, Go's
// strconv.ParseFloat refuses it. A number too small to represent reads as
// 0 in both, and is not refused.
func overflows(raw []byte) bool {
	_, err := strconv.ParseFloat(string(raw), 64)
	return err != nil
}

// overflowMessage refuses the number raw in field, which reader reads as a
// double.
func overflowMessage(field string, raw []byte, reader string) string {
	return fmt.Sprintf("field %q holds %s, beyond the range of a double (largest 1.7976931348623157E308), and %s reads it as one",
		field, input.Cut(string(raw)), reader)
}

// isNumber reports whether raw is a JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? (RFC 8259 section 6), scanned
// by hand because it runs once per record on the hot path.
func isNumber(raw []byte) bool {
	i := scanInteger(raw)
	if i < 0 {
		return false
	}
	if i < len(raw) && raw[i] == '.' {
		j := scanDigits(raw, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			i++
		}
		j := scanDigits(raw, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(raw)
}

// isInteger reports whether raw is a JSON integer: -?(0|[1-9][0-9]*).
func isInteger(raw []byte) bool { return scanInteger(raw) == len(raw) }

// scanInteger returns the end of a leading -?(0|[1-9][0-9]*) in raw, or -1.
func scanInteger(raw []byte) int {
	i := 0
	if i < len(raw) && raw[i] == '-' {
		i++
	}
	if i >= len(raw) || raw[i] < '0' || raw[i] > '9' {
		return -1
	}
	if raw[i] == '0' {
		return i + 1
	}
	return scanDigits(raw, i)
}

func scanDigits(raw []byte, i int) int {
	for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
		i++
	}
	return i
}

func readCSV(data []byte, name string, opt Options) ([]Record, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1 // counted below, with our own message
	cr.TrimLeadingSpace = true

	// A line of only spaces reads as one empty field: skip it as a blank line.
	blank := func(row []string) bool { return len(row) == 1 && strings.TrimSpace(row[0]) == "" }
	header, err := cr.Read()
	for err == nil && blank(header) {
		header, err = cr.Read()
	}
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	headerLine, _ := cr.FieldPos(0)
	cols := make([]string, len(header))
	seen := make(map[string]bool, len(header))
	for i, h := range header {
		h = strings.TrimSpace(h)
		if h == "" {
			return nil, &Error{name, headerLine, fmt.Sprintf("header column %d has no name", i+1)}
		}
		if seen[h] {
			return nil, &Error{name, headerLine, fmt.Sprintf("header names column %s twice", input.Quote(h))}
		}
		seen[h] = true
		cols[i] = h
	}
	for _, need := range []string{opt.KeyField, opt.TimeField} {
		if !seen[need] {
			return nil, &Error{name, headerLine, fmt.Sprintf("header has no column %q (the header is %s)", need, input.Cut(strings.Join(cols, ",")))}
		}
	}

	var out []Record
	var buf bytes.Buffer
	for {
		row, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		if blank(row) {
			continue
		}
		line, _ := cr.FieldPos(0)
		if len(row) != len(cols) {
			return nil, &Error{name, line, fmt.Sprintf("expected %d columns as in the header, got %d", len(cols), len(row))}
		}
		buf.Reset()
		buf.WriteByte('{')
		for i, cell := range row {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeJSONString(&buf, cols[i])
			buf.WriteByte(':')
			switch {
			case cols[i] == PartitionField && strings.TrimSpace(cell) == "":
				buf.WriteString("null")
			case isNumber([]byte(cell)):
				buf.WriteString(cell)
			default:
				writeJSONString(&buf, cell)
			}
		}
		buf.WriteByte('}')
		rec, msg := record(bytes.Clone(buf.Bytes()), opt)
		if msg != "" {
			return nil, &Error{name, line, msg}
		}
		rec.Line = line
		out = append(out, rec)
	}
}

func writeJSONString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a Go string always marshals
	buf.Write(b)
}

// csvError turns an encoding/csv error into an *Error with its line.
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{name, pe.Line, "invalid CSV: " + pe.Err.Error()}
	}
	return err
}
