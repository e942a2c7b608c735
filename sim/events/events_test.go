package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadJSONLines(t *testing.T) {
	in := `{"key": "user-7", "ts": 1699999998502, "partition": 0, "amount": 12.5}

{"ts":1699999998503,"key":42,"note":"a \"quoted\" word"}
  {"key":"k","ts":"2023-11-14T22:13:20.5Z","partition":3}
{"key":4.50,"ts":-5,"partition":null,"nested":{"key":"inner"}}
`
	got, err := Read(strings.NewReader(in), "x.jsonl", Options{Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{Key: "user-7", Timestamp: 1699999998502, Partition: 0, Value: []byte(`{"key":"user-7","ts":1699999998502,"partition":0,"amount":12.5}`), Line: 1},
		{Key: "42", Timestamp: 1699999998503, Partition: -1, Value: []byte(`{"ts":1699999998503,"key":42,"note":"a \"quoted\" word"}`), Line: 3},
		{Key: "k", Timestamp: 1700000000500, Partition: 3, Value: []byte(`{"key":"k","ts":"2023-11-14T22:13:20.5Z","partition":3}`), Line: 4},
		{Key: "4.50", Timestamp: -5, Partition: -1, Value: []byte(`{"key":4.50,"ts":-5,"partition":null,"nested":{"key":"inner"}}`), Line: 5},
	}
	checkRecords(t, got, want)
}

func TestReadCSV(t *testing.T) {
	in := "key, ts,partition,amount,city\nuser-1,1000,1,12.50,\"Paris, FR\"\n\n42,2000,,-3,007\n"
	got, err := Read(strings.NewReader(in), "orders.txt", Options{Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{Key: "user-1", Timestamp: 1000, Partition: 1, Value: []byte(`{"key":"user-1","ts":1000,"partition":1,"amount":12.50,"city":"Paris, FR"}`), Line: 2},
		{Key: "42", Timestamp: 2000, Partition: -1, Value: []byte(`{"key":42,"ts":2000,"partition":null,"amount":-3,"city":"007"}`), Line: 4},
	}
	checkRecords(t, got, want)
}

// The arrival field is read as milliseconds; a line without one has -1.
func TestReadArrival(t *testing.T) {
	recs, err := Parse([]byte("{\"key\":\"a\",\"ts\":1,\"arrival\":250}\n{\"key\":\"b\",\"ts\":2}\n{\"key\":\"c\",\"ts\":3,\"arrival\":250}\n"), "e.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Arrival != 250 || recs[1].Arrival != -1 || recs[2].Arrival != 250 {
		t.Fatalf("arrivals %v, want 250, -1, 250", recs)
	}
}

func TestReadCSVByExtension(t *testing.T) {
	// A .csv name is CSV even when the first cell starts with '{'.
	in := "{key},ts\nuser-1,5\n"
	got, err := Read(strings.NewReader(in), "odd.CSV", Options{KeyField: "{key}"})
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, []Record{{Key: "user-1", Timestamp: 5, Partition: -1, Value: []byte(`{"{key}":"user-1","ts":5}`), Line: 2}})
}

func TestReadOtherFields(t *testing.T) {
	in := `{"page":"/help","at":"1970-01-01T00:00:01+01:00"}` + "\n"
	got, err := Read(strings.NewReader(in), "clicks.jsonl", Options{KeyField: "page", TimeField: "at"})
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, []Record{{Key: "/help", Timestamp: -3599000, Partition: -1, Value: []byte(`{"page":"/help","at":"1970-01-01T00:00:01+01:00"}`), Line: 1}})
}

func TestReadEmpty(t *testing.T) {
	for _, in := range []string{"", "\n\n  \n", "\xef\xbb\xbf"} {
		for _, name := range []string{"a.jsonl", "a.csv"} {
			got, err := Read(strings.NewReader(in), name, Options{})
			if err != nil || len(got) != 0 {
				t.Errorf("Read(%q, %s) = %v, %v; want nothing", in, name, got, err)
			}
		}
	}
	// A CSV with only a header has no records.
	if got, err := Read(strings.NewReader("key,ts\n"), "a.csv", Options{}); err != nil || len(got) != 0 {
		t.Errorf("header only: %v, %v", got, err)
	}
}

func TestReadBOM(t *testing.T) {
	got, err := Read(strings.NewReader("\xef\xbb\xbf{\"key\":\"a\",\"ts\":1}\n"), "a.jsonl", Options{})
	if err != nil || len(got) != 1 || got[0].Key != "a" {
		t.Errorf("got %v, %v", got, err)
	}
	got, err = Read(strings.NewReader("\xef\xbb\xbfkey,ts\na,1\n"), "a.csv", Options{})
	if err != nil || len(got) != 1 || got[0].Key != "a" {
		t.Errorf("got %v, %v", got, err)
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		give string
		opt  Options
		want string
	}{
		{"bad JSON", "e.jsonl", "{\"key\":\"a\",\"ts\":1}\n{\"key\":\"a\",\"ts\":2\n", Options{},
			"e.jsonl:2: invalid JSON: unexpected end of JSON input"},
		{"trailing garbage", "e.jsonl", "{\"key\":\"a\",\"ts\":1} x\n", Options{},
			"e.jsonl:1: invalid JSON: invalid character 'x' after top-level value"},
		{"not an object", "e.jsonl", "{\"key\":\"a\",\"ts\":1}\n[1,2]\n", Options{},
			`e.jsonl:2: a line must be a JSON object, like {"key": "user-1", "ts": 1700000000000}`},
		{"missing key", "e.jsonl", "\n\n{\"user\":\"a\",\"ts\":1}\n", Options{},
			`e.jsonl:3: missing key field "key"`},
		{"missing other key field", "e.jsonl", "{\"key\":\"a\",\"ts\":1}\n", Options{KeyField: "user"},
			`e.jsonl:1: missing key field "user"`},
		{"key is null", "e.jsonl", "{\"key\":null,\"ts\":1}\n", Options{},
			`e.jsonl:1: key field "key" must be a string or a number, got null`},
		{"key is an object", "e.jsonl", "{\"key\":{\"a\":1},\"ts\":1}\n", Options{},
			`e.jsonl:1: key field "key" must be a string or a number, got {"a":1}`},
		{"missing time", "e.jsonl", "{\"key\":\"a\"}\n", Options{},
			`e.jsonl:1: missing time field "ts"`},
		{"fractional time", "e.jsonl", "{\"key\":\"a\",\"ts\":1.5}\n", Options{},
			`e.jsonl:1: time field "ts" must be an integer (milliseconds since the epoch) or an RFC 3339 time, got 1.5`},
		{"exponent time", "e.jsonl", "{\"key\":\"a\",\"ts\":1e3}\n", Options{},
			`time field "ts" must be an integer (milliseconds since the epoch) or an RFC 3339 time, got 1e3`},
		{"time too large", "e.jsonl", "{\"key\":\"a\",\"ts\":9223372036854775808}\n", Options{},
			`e.jsonl:1: time field "ts" is out of the range of a 64-bit millisecond timestamp: 9223372036854775808`},
		{"time not RFC 3339", "e.jsonl", "{\"key\":\"a\",\"ts\":\"01-01-1970 12:00:00:000\"}\n", Options{},
			`e.jsonl:1: time field "ts" must be an integer (milliseconds since the epoch) or an RFC 3339 time, got "01-01-1970 12:00:00:000"`},
		{"time is a boolean", "e.jsonl", "{\"key\":\"a\",\"ts\":true}\n", Options{},
			`got true`},
		{"partition out of range", "e.jsonl", "{\"key\":\"a\",\"ts\":1,\"partition\":3}\n{\"key\":\"a\",\"ts\":1,\"partition\":4}\n", Options{Partitions: 4},
			"e.jsonl:2: partition 4 is out of range [0, 4)"},
		{"negative partition", "e.jsonl", "{\"key\":\"a\",\"ts\":1,\"partition\":-1}\n", Options{Partitions: 4},
			"e.jsonl:1: partition -1 is out of range [0, 4)"},
		{"negative partition, no count", "e.jsonl", "{\"key\":\"a\",\"ts\":1,\"partition\":-1}\n", Options{},
			"e.jsonl:1: partition -1 is negative"},
		{"partition not an integer", "e.jsonl", "{\"key\":\"a\",\"ts\":1,\"partition\":\"0\"}\n", Options{Partitions: 4},
			`e.jsonl:1: partition must be an integer, got "0"`},
		{"partition fraction", "e.jsonl", "{\"key\":\"a\",\"ts\":1,\"partition\":1.0}\n", Options{Partitions: 4},
			`e.jsonl:1: partition must be an integer, got 1.0`},
		{"negative arrival", "e.jsonl", "{\"key\":\"a\",\"ts\":1,\"arrival\":-5}\n", Options{},
			"e.jsonl:1: arrival must be a non-negative integer (milliseconds from the start of the run), got -5"},
		{"arrival as text", "e.jsonl", "{\"key\":\"a\",\"ts\":1,\"arrival\":\"1s\"}\n", Options{},
			`e.jsonl:1: arrival must be a non-negative integer (milliseconds from the start of the run), got "1s"`},
		{"arrival going back", "e.jsonl", "{\"key\":\"a\",\"ts\":1,\"arrival\":500}\n{\"key\":\"a\",\"ts\":2}\n{\"key\":\"a\",\"ts\":3,\"arrival\":300}\n", Options{},
			"e.jsonl:3: arrival 300 is before the arrival 500 of line 1: records arrive in the order of the file, so arrival must not decrease"},
		{"CSV arrival going back", "e.csv", "key,ts,arrival\na,1,20\nb,2,10\n", Options{},
			"e.csv:3: arrival 10 is before the arrival 20 of line 2: records arrive in the order of the file, so arrival must not decrease"},
		{"CSV too few columns", "e.csv", "key,ts,amount\na,1,2\nb,2\n", Options{},
			"e.csv:3: expected 3 columns as in the header, got 2"},
		{"CSV too many columns", "e.csv", "key,ts\na,1,2\n", Options{},
			"e.csv:2: expected 2 columns as in the header, got 3"},
		{"CSV header without key", "e.csv", "user,ts\na,1\n", Options{},
			`e.csv:1: header has no column "key" (the header is user,ts)`},
		{"CSV header without time", "data", "key,time\na,1\n", Options{},
			`data:1: header has no column "ts" (the header is key,time)`},
		{"CSV duplicate column", "e.csv", "key,ts,key\na,1,b\n", Options{},
			`e.csv:1: header names column "key" twice`},
		{"CSV empty column name", "e.csv", "key,,ts\na,1,2\n", Options{},
			`e.csv:1: header column 2 has no name`},
		{"CSV bad quote", "e.csv", "key,ts\n\"a,1\n", Options{},
			`e.csv:2: invalid CSV: extraneous or missing " in quoted-field`},
		{"CSV bad time", "e.csv", "key,ts\na,soon\n", Options{},
			`e.csv:2: time field "ts" must be an integer (milliseconds since the epoch) or an RFC 3339 time, got "soon"`},
		{"CSV partition out of range", "e.csv", "key,ts,partition\na,1,9\n", Options{Partitions: 2},
			"e.csv:2: partition 9 is out of range [0, 2)"},
		{"CSV empty key is fine but missing time is not", "e.csv", "key,ts\n,\n", Options{},
			`e.csv:2: time field "ts" must be an integer`},
		{"a BOM on line 2 (two files joined)", "e.jsonl", "{\"key\":\"a\",\"ts\":1}\n\xef\xbb\xbf{\"key\":\"b\",\"ts\":2}\n", Options{},
			"e.jsonl:2: a UTF-8 byte order mark (bytes EF BB BF, U+FEFF) starts this line"},
		{"two BOMs at the start of a .jsonl file", "e.jsonl", "\xef\xbb\xbf\xef\xbb\xbf{\"key\":\"b\",\"ts\":2}\n", Options{},
			"e.jsonl:1: the file starts with two UTF-8 byte order marks"},
		{"a BOM on line 3 of a CSV file", "e.csv", "key,ts\na,1\n\xef\xbb\xbfb,2\n", Options{},
			"e.csv:3: a UTF-8 byte order mark"},
		{"a .jsonl file is JSON lines whatever it starts with", "e.jsonl", "key,ts\na,1\n", Options{},
			"e.jsonl:1: invalid JSON"},
		{"an aggregate field beyond a double", "e.jsonl", "{\"key\":\"a\",\"ts\":1,\"amount\":1}\n{\"key\":\"a\",\"ts\":2,\"amount\":1e400}\n", Options{NumberField: "amount"},
			`e.jsonl:2: field "amount" holds 1e400, beyond the range of a double (largest 1.7976931348623157E308)`},
		{"a negative aggregate field beyond a double", "e.csv", "key,ts,amount\na,1,-2e308\n", Options{NumberField: "amount"},
			`e.csv:2: field "amount" holds -2e308, beyond the range of a double`},
		{"a filter field beyond a double", "e.jsonl", "{\"key\":\"a\",\"ts\":1,\"price\":1E309}\n", Options{FilterField: "price"},
			`e.jsonl:1: field "price" holds 1E309, beyond the range of a double`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Read(strings.NewReader(tt.give), tt.file, tt.opt)
			if err == nil {
				t.Fatalf("Read = %d records, want error %q", len(got), tt.want)
			}
			if got != nil {
				t.Errorf("records returned with an error: %v", got)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n  got  %s\n  want %s", err, tt.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.File != tt.file || e.Line < 1 {
				t.Errorf("want an *Error naming %s:LINE, got %#v", tt.file, err)
			}
		})
	}
}

// A number too small for a double reads as 0, as Java's Double.parseDouble
// reads it, and is not refused; one beyond it in a field the job does not
// read is carried in the payload untouched.
func TestReadNumbersInRange(t *testing.T) {
	in := "{\"key\":\"a\",\"ts\":1,\"amount\":1e-400,\"id\":1e400}\n{\"key\":\"b\",\"ts\":2,\"amount\":1.7976931348623157e308}\n"
	recs, err := Read(strings.NewReader(in), "e.jsonl", Options{NumberField: "amount", FilterField: "amount"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || !strings.Contains(string(recs[0].Value), `"id":1e400`) {
		t.Fatalf("records %v", recs)
	}
	if f, ok := NumericField(recs[1].Value, "amount"); !ok || f != math.MaxFloat64 {
		t.Errorf("amount = %v, %v; want the largest double", f, ok)
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"a.csv", "{\"key\":1}", FormatCSV},
		{"a.CSV", "", FormatCSV},
		{"a.jsonl", "key,ts", FormatJSONLines},
		{"a.NDJSON", "\xef\xbb\xbf{", FormatJSONLines},
		{"a.json", "[", FormatJSONLines},
		{"data", "  {\"key\":1}", FormatJSONLines},
		{"data", "[{}]", FormatJSONLines},
		{"data.txt", "key,ts", FormatCSV},
		{"data", "", FormatCSV},
	}
	for _, tt := range tests {
		if got := Format(tt.name, []byte(tt.data)); got != tt.want {
			t.Errorf("Format(%q, %q) = %s, want %s", tt.name, tt.data, got, tt.want)
		}
	}
}

func TestReadFileMissing(t *testing.T) {
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none.jsonl"), Options{}); err == nil {
		t.Error("ReadFile of a missing file: no error")
	}
}

func checkRecords(t *testing.T, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Key != w.Key || g.Timestamp != w.Timestamp || g.Partition != w.Partition || string(g.Value) != string(w.Value) || g.Line != w.Line {
			t.Errorf("record %d:\n got  {%q %d %d %s line %d}\n want {%q %d %d %s line %d}",
				i, g.Key, g.Timestamp, g.Partition, g.Value, g.Line, w.Key, w.Timestamp, w.Partition, w.Value, w.Line)
		}
	}
}

func TestNumericField(t *testing.T) {
	obj := []byte(`{"a":1,"amount":252.61,"neg":-3e2,"s":"12","n":null,"o":{"amount":5},"arr":[1,{"x":"}"}],"esc\"k":7,"amount2":1,"big":1e400,"b":true}`)
	tests := []struct {
		field string
		want  float64
		ok    bool
	}{
		{"a", 1, true},
		{"amount", 252.61, true},
		{"neg", -300, true},
		{"esc\"k", 7, true},
		{"amount2", 1, true},
		{"s", 0, false},
		{"n", 0, false},
		{"o", 0, false},
		{"arr", 0, false},
		{"b", 0, false},
		{"x", 0, false},
		{"big", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := NumericField(obj, tt.field)
		if got != tt.want || ok != tt.ok {
			t.Errorf("NumericField(%q) = %v, %v; want %v, %v", tt.field, got, ok, tt.want, tt.ok)
		}
	}
	// Spaced JSON works too; the first of a repeated field counts.
	if got, ok := NumericField([]byte(` { "x" : 1 , "x" : 2 } `), "x"); !ok || got != 1 {
		t.Errorf("spaced = %v, %v", got, ok)
	}
	for _, bad := range []string{"", "[]", `{"a":`, `{"a" 1}`, `{"a":1`, `{a:1}`, `"x"`, `{"a":"unterminated`, `{"a":[1,2}`} {
		if _, ok := NumericField([]byte(bad), "a"); ok && bad != `{"a":1` {
			t.Errorf("NumericField(%q) found a value", bad)
		}
	}
}

func TestStringField(t *testing.T) {
	obj := []byte(`{"key":"user-3","n":42,"f":-1.5,"t":true,"u":"caf\u00e9 \"x\"","nul":null,"o":{},"a":[]}`)
	tests := []struct {
		field, want string
		ok          bool
	}{
		{"key", "user-3", true},
		{"n", "42", true},
		{"f", "-1.5", true},
		{"t", "true", true},
		{"u", `café "x"`, true},
		{"nul", "", false},
		{"o", "", false},
		{"a", "", false},
		{"missing", "", false},
	}
	for _, tt := range tests {
		got, ok := StringField(obj, tt.field)
		if got != tt.want || ok != tt.ok {
			t.Errorf("StringField(%q) = %q, %v; want %q, %v", tt.field, got, ok, tt.want, tt.ok)
		}
	}
}

// TestPlaygroundClicks reads the Flink operations playground's click events
// and checks, computing it from the records, that each of the 6 pages has
// exactly 1000 clicks in every 15 s tumbling window.
func TestPlaygroundClicks(t *testing.T) {
	recs, err := ReadFile(filepath.Join("..", "..", "examples", "data", "playground-clicks.jsonl"), Options{Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 48000 {
		t.Fatalf("read %d records, want 48000", len(recs))
	}
	const size = 15000
	counts := map[string]map[int64]int{} // page -> window start -> clicks
	minW, maxW := int64(math.MaxInt64), int64(math.MinInt64)
	for _, r := range recs {
		page, ok := StringField(r.Value, "page")
		if !ok || page != r.Key {
			t.Fatalf("line %d: page %q, key %q", r.Line, page, r.Key)
		}
		if r.Partition < 0 {
			t.Fatalf("line %d: no partition", r.Line)
		}
		start := r.Timestamp - ((r.Timestamp%size)+size)%size
		if counts[page] == nil {
			counts[page] = map[int64]int{}
		}
		counts[page][start]++
		minW, maxW = min(minW, start), max(maxW, start)
	}
	if len(counts) != 6 {
		t.Fatalf("%d pages, want 6", len(counts))
	}
	windows := 0
	for w := minW; w <= maxW; w += size {
		windows++
		for page, byWindow := range counts {
			if byWindow[w] != 1000 {
				t.Errorf("page %s window [%d, %d): %d clicks, want 1000", page, w, w+size, byWindow[w])
			}
		}
	}
	if windows*6*1000 != len(recs) {
		t.Errorf("%d windows x 6 pages x 1000 != %d records", windows, len(recs))
	}
}

func TestOrdersSample(t *testing.T) {
	recs, err := ReadFile(filepath.Join("..", "..", "examples", "data", "orders-sample.jsonl"), Options{Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 12000 {
		t.Fatalf("read %d records, want 12000", len(recs))
	}
	for i, r := range recs {
		if r.Line != i+1 || !strings.HasPrefix(r.Key, "user-") || r.Timestamp < 1_600_000_000_000 {
			t.Fatalf("record %d: %+v", i, r)
		}
		if _, ok := NumericField(r.Value, "amount"); !ok {
			t.Fatalf("line %d: no numeric amount in %s", r.Line, r.Value)
		}
	}
}

func FuzzRead(f *testing.F) {
	for _, s := range []string{
		"{\"key\":\"a\",\"ts\":1}\n", "key,ts\na,1\n", "{\"key\":1,\"ts\":\"2020-01-01T00:00:00Z\",\"partition\":0}",
		"key,ts,partition\n\"a\",2,\n", "{", "key\n", "\n{\"ts\":1}",
		// hostile inputs (issue 12): a JSON array, duplicate fields at any
		// depth, invalid UTF-8, a BOM with CRLF, Long.MIN_VALUE, a non-numeric
		// aggregate field, a long garbage line
		"[{\"key\":\"a\",\"ts\":1}]", "{\"key\":\"a\",\"ts\":1,\"ts\":2}", "{\"key\":\"a\",\"ts\":1,\"p\":{\"x\":1,\"x\":2}}",
		"{\"k\xffey\":\"a\",\"ts\":1}", "\xef\xbb\xbf{\"key\":\"a\",\"ts\":1}\r\n{\"key\":\"b\",\"ts\":2}\r\n",
		"\xef\xbb\xbfkey,ts\r\na,1\r\n", "{\"key\":\"a\",\"ts\":-9223372036854775808}", "{\"key\":\"a\",\"ts\":1,\"amount\":\"12x\"}",
		strings.Repeat("x", 5000) + "\n1,2\n",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, csvName bool) {
		name := "f.jsonl"
		if csvName {
			name = "f.csv"
		}
		recs, err := Read(strings.NewReader(string(data)), name, Options{Partitions: 3, NumberField: "amount"})
		if err != nil {
			if !strings.HasPrefix(err.Error(), name+":") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, r := range recs {
			if r.Partition < -1 || r.Partition >= 3 || r.Line < 1 {
				t.Fatalf("bad record %+v", r)
			}
			raw, ok := rawField(r.Value, "ts")
			if !ok || len(raw) == 0 {
				t.Fatalf("record value %s lost its time field", r.Value)
			}
			if s, ok := StringField(r.Value, "key"); !ok || s != r.Key {
				t.Fatalf("StringField(key) = %q, %v; Key %q", s, ok, r.Key)
			}
		}
	})
}

func FuzzFields(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":"x"}`), "a")
	f.Add([]byte(`{"a":[{"}":"]"}],"b":2}`), "b")
	f.Add([]byte(`{"a\\"":1}`), `a"`)
	f.Add([]byte(`{"a":1,"a":"x"}`), "a")              // a duplicate field
	f.Add([]byte("{\"a\xff\":1}"), "a\xff")            // invalid UTF-8
	f.Add([]byte(`{"amount":"12x"}`), "amount")        // not a number
	f.Add([]byte(`{"ts":-9223372036854775808}`), "ts") // Long.MIN_VALUE
	f.Fuzz(func(t *testing.T, value []byte, field string) {
		n, okN := NumericField(value, field)
		s, okS := StringField(value, field)
		if okN && (!okS || fmt.Sprint(n) == "") {
			t.Fatalf("a numeric field must also read as a string: %q %q", value, field)
		}
		_ = s
		// every field a value reads as is among its names, in a valid object
		names := FieldNames(value)
		if _, ok := rawField(value, field); ok && json.Valid(value) && !slices.Contains(names, field) {
			t.Fatalf("FieldNames(%q) = %q lacks %q", value, names, field)
		}
	})
}

func TestFieldNames(t *testing.T) {
	tests := []struct {
		give string
		want []string
	}{
		{`{"order_id":"o-1","amount":2.5}`, []string{"order_id", "amount"}},
		{` { "a" : {"x":1} , "b":[1,{"c":2}], "a":3, "d\u0041":null }`, []string{"a", "b", "dA"}},
		{`{}`, nil},
		{`[1]`, nil},
		{`{"a":1,"b`, []string{"a"}},
		{``, nil},
	}
	for _, tt := range tests {
		if got := FieldNames([]byte(tt.give)); !slices.Equal(got, tt.want) {
			t.Errorf("FieldNames(%s) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
