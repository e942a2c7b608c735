package events

import (
	"errors"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/sim/input"
)

// The refusals of issue 12, each with the line and a readable message.
func TestReadRefusesHostileInput(t *testing.T) {
	tests := []struct {
		name, file, give string
		opt              Options
		want             string
	}{
		{"a JSON array", "f.jsonl", "\n  [{\"key\":\"a\",\"ts\":1}]", Options{}, "f.jsonl:2: a JSON array: an events file is JSON lines"},
		{"a duplicate field", "f.jsonl", "{\"key\":\"a\",\"ts\":1}\n{\"key\":\"a\",\"ts\":1,\"key\":\"b\"}\n", Options{}, `f.jsonl:2: field "key" appears twice`},
		{"a nested duplicate", "f.jsonl", "{\"key\":\"a\",\"ts\":1,\"p\":[{\"x\":1,\"x\":2}]}\n", Options{}, `f.jsonl:1: field "x" appears twice in field "p"`},
		{"a duplicate in a big object", "f.jsonl", "{\"key\":\"a\",\"ts\":1,\"a1\":1,\"a2\":1,\"a3\":1,\"a4\":1,\"a5\":1,\"a6\":1,\"a7\":1,\"a8\":1,\"a9\":1,\"a3\":2}\n", Options{}, `field "a3" appears twice`},
		{"invalid UTF-8", "f.jsonl", "{\"key\":\"a\",\"ts\":1}\n{\"key\":\"a\xc3\",\"ts\":1}\n", Options{}, "f.jsonl:2: invalid UTF-8 at byte 10 of the line"},
		{"invalid UTF-8 in CSV", "f.csv", "key,ts\n\xff,1\n", Options{}, "f.csv:2: invalid UTF-8 at byte 1"},
		{"a non-numeric aggregate field", "f.jsonl", "{\"key\":\"a\",\"ts\":1,\"amount\":\"12x\"}\n", Options{NumberField: "amount"}, `f.jsonl:1: field "amount" must be a number`},
		{"a boolean aggregate field in CSV", "f.csv", "key,ts,amount\na,1,true\n", Options{NumberField: "amount"}, `f.csv:2: field "amount" must be a number`},
		{"a long key is cut", "f.jsonl", "{\"key\":[\"" + strings.Repeat("k", 5000) + "\"],\"ts\":1}\n", Options{}, "... (5004 bytes in all)"},
		{"a line over the limit", "f.jsonl", strings.Repeat(" ", 200) + "\n", Options{Limits: input.Limits{MaxLine: 100}}, "f.jsonl:1: line longer than 100 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, err := Read(strings.NewReader(tt.give), tt.file, tt.opt)
			if err == nil || !strings.Contains(err.Error(), tt.want) || recs != nil {
				t.Fatalf("Read = %v, %v; want %q", recs, err, tt.want)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
		})
	}
	var ie *input.Error
	if _, err := Read(endlessZeros{}, "zero", Options{}); !errors.As(err, &ie) || ie.Line != 1 {
		t.Errorf("endless zeros: %v", err)
	}
}

type endlessZeros struct{}

func (endlessZeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// What stays accepted: a missing or null aggregate field (counts as 0), an
// empty CSV cell, a BOM with CRLF, a number as text elsewhere.
func TestReadAcceptsAroundTheRefusals(t *testing.T) {
	for _, tt := range []struct{ file, give string }{
		{"f.jsonl", "{\"key\":\"a\",\"ts\":1}\n{\"key\":\"b\",\"ts\":2,\"amount\":null}\n{\"key\":\"c\",\"ts\":3,\"amount\":2.5,\"note\":\"12x\"}\n"},
		{"f.csv", "key,ts,amount\na,1,\nb,2,3\nc,3,4\n"},
		{"f.jsonl", "\xef\xbb\xbf{\"key\":\"a\",\"ts\":1}\r\n{\"key\":\"b\",\"ts\":2}\r\n{\"key\":\"c\",\"ts\":3}\r\n"},
	} {
		recs, err := Read(strings.NewReader(tt.give), tt.file, Options{NumberField: "amount"})
		if err != nil || len(recs) != 3 || recs[2].Key != "c" || recs[2].Line != strings.Count(tt.give, "\n") {
			t.Errorf("%q: %v %+v", tt.give, err, recs)
		}
	}
}
