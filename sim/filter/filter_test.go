package filter

import (
	"math"
	"strings"
	"testing"

	"github.com/flinksim/flinksim/sim/events"
)

func TestParse(t *testing.T) {
	tests := []struct {
		give                       string
		wantField, wantOp, wantVal string
	}{
		{give: "amount > 100", wantField: "amount", wantOp: ">", wantVal: "100"},
		{give: "key != user-3", wantField: "key", wantOp: "!=", wantVal: "user-3"},
		{give: "page == /index", wantField: "page", wantOp: "==", wantVal: "/index"},
		{give: "x = 5", wantField: "x", wantOp: "==", wantVal: "5"},
		{give: "amount>=10", wantField: "amount", wantOp: ">=", wantVal: "10"},
		{give: "amount<=10", wantField: "amount", wantOp: "<=", wantVal: "10"},
		{give: "amount<10", wantField: "amount", wantOp: "<", wantVal: "10"},
		{give: "  amount \t>  -2.5  ", wantField: "amount", wantOp: ">", wantVal: "-2.5"},
		{give: `name == "bob"`, wantField: "name", wantOp: "==", wantVal: "bob"},
		{give: `name == 'bob smith'`, wantField: "name", wantOp: "==", wantVal: "bob smith"},
		{give: `name == ""`, wantField: "name", wantOp: "==", wantVal: ""},
		{give: "url == /a?b=c", wantField: "url", wantOp: "==", wantVal: "/a?b=c"},
		{give: "title != x=y", wantField: "title", wantOp: "!=", wantVal: "x=y"},
		{give: "amount > 1e3", wantField: "amount", wantOp: ">", wantVal: "1e3"},
	}
	for _, tt := range tests {
		p, err := Parse(tt.give)
		if err != nil {
			t.Errorf("Parse(%q) error %v", tt.give, err)
			continue
		}
		if p.Field != tt.wantField || p.Op != tt.wantOp || p.Value != tt.wantVal {
			t.Errorf("Parse(%q) = {%q %q %q}, want {%q %q %q}", tt.give, p.Field, p.Op, p.Value, tt.wantField, tt.wantOp, tt.wantVal)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, give := range []string{
		"",
		"amount",
		"amount 100",
		"> 100",
		"== 3",
		"amount >",
		"amount >=   ",
		"my field > 3",
		"a\tb == 3",
		"=",
		"amount => 100",
		"amount =< 100",
		"amount >> 100",
		"amount !> 100",
		"amount === 100",
	} {
		p, err := Parse(give)
		if err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", give, *p)
			continue
		}
		if p != nil {
			t.Errorf("Parse(%q) returned a predicate with its error", give)
		}
		want := `filter "` + give + `": expected FIELD OP VALUE with OP one of == != < <= > >=`
		if give == "a\tb == 3" {
			want = `filter "a\tb == 3": expected FIELD OP VALUE with OP one of == != < <= > >=`
		}
		if err.Error() != want {
			t.Errorf("Parse(%q) error %q, want %q", give, err.Error(), want)
		}
	}
}

// A NaN to compare with would pass no record (or, with !=, every record):
// Parse refuses it, naming why.
func TestParseRefusesNaN(t *testing.T) {
	for _, give := range []string{"amount > NaN", "amount < NaN", "amount == -NaN", "amount != +NaN", `amount >= "NaN"`} {
		p, err := Parse(give)
		if err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", give, *p)
			continue
		}
		if !strings.Contains(err.Error(), "is not a number to compare with: in Java every comparison with NaN is false except !=") {
			t.Errorf("Parse(%q) error %q", give, err)
		}
	}
	// nan in another spelling is text, as Java's Double.parseDouble has it
	if p, err := Parse("name == nan"); err != nil || p.isNum {
		t.Errorf("Parse(name == nan) = %+v, %v; want a text predicate", p, err)
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		filter string
		key    string
		value  string
		want   bool
	}{
		// numbers against numbers
		{"amount > 100", "", `{"amount": 150}`, true},
		{"amount > 100", "", `{"amount": 100}`, false},
		{"amount > 100", "", `{"amount": 99.5}`, false},
		{"amount >= 100", "", `{"amount": 100}`, true},
		{"amount < 100", "", `{"amount": -1}`, true},
		{"amount <= 100", "", `{"amount": 100.0}`, true},
		{"amount == 100", "", `{"amount": 1e2}`, true},
		{"amount = 100", "", `{"amount": 100}`, true},
		{"amount != 100", "", `{"amount": 100}`, false},
		{"amount != 100", "", `{"amount": 101}`, true},
		{"amount < 9", "", `{"amount": 10}`, false}, // numeric, not "10" < "9"
		{"amount > 1e3", "", `{"amount": 1001}`, true},
		{"amount > -2.5", "", `{"amount": -2}`, true},
		// a numeric predicate against a string field holding a number
		{"amount > 100", "", `{"amount": "150"}`, true},
		{"amount == 7", "", `{"amount": "07"}`, true},
		// a numeric predicate against text compares as strings
		{"amount > 100", "", `{"amount": "abc"}`, true}, // "abc" > "100"
		{"amount < 100", "", `{"amount": "abc"}`, false},
		// strings
		{"page == /index", "", `{"page": "/index"}`, true},
		{"page == /index", "", `{"page": "/index.html"}`, false},
		{"page != /index", "", `{"page": "/cart"}`, true},
		{"page < b", "", `{"page": "a"}`, true},
		{"page < b", "", `{"page": "ba"}`, false},
		{"page >= B", "", `{"page": "a"}`, true}, // bytes: 'a' > 'B'
		{"name == bob", "", `{"name": "b\u006fb"}`, true},
		// a text predicate against a number or a literal compares the text as written
		{"code == 1.50", "", `{"code": 1.50}`, true},
		{"flag == true", "", `{"flag": true}`, true},
		{"flag == true", "", `{"flag": false}`, false},
		{"page == abc", "", `{"page": 5}`, false},
		// quoted values
		{`name == "bob"`, "", `{"name": "bob"}`, true},
		{`name == 'bob smith'`, "", `{"name": "bob smith"}`, true},
		{`name == ""`, "", `{"name": ""}`, true},
		{`name == ""`, "", `{"name": "x"}`, false},
		// the record key
		{"key == user-3", "user-3", `{"key": "other"}`, true},
		{"key != user-3", "user-3", `{}`, false},
		{"key != user-3", "user-4", `{}`, true},
		{"key > user-10", "user-2", `{}`, true}, // strings
		{"key > 9", "10", `{}`, true},           // numbers
		{"key == 7", "07", `{}`, true},
		{"key == 7", "seven", `{}`, false},
		{"key == user-3", "user-3", "", true}, // nil payload
		// missing, null, nested and malformed fields never match
		{"amount > 100", "", `{"price": 150}`, false},
		{"amount != 100", "", `{"price": 150}`, false},
		{"page != /index", "", `{}`, false},
		{"amount > 100", "", `{"amount": null}`, false},
		{"amount != 1", "", `{"amount": null}`, false},
		{"amount != 1", "", `{"amount": {"v": 2}}`, false},
		{"page != x", "", `{"page": [1, 2]}`, false},
		{"amount > 100", "", `{"a": {"amount": 150}}`, false},
		{"amount > 100", "", `not json`, false},
		{"amount > 100", "", ``, false},
		{"amount > 100", "", `{"amount": 150`, true}, // the field is read before the object ends
		{"amount > 100", "", `[{"amount": 150}]`, false},
		// the first occurrence of a repeated field counts
		{"amount > 100", "", `{"amount": 1, "amount": 150}`, false},
		// Java's double comparisons: NaN is unordered, Infinity is the largest
		{"amount > 100", "", `{"amount": "NaN"}`, false},
		{"amount < 100", "", `{"amount": "NaN"}`, false},
		{"amount == 100", "", `{"amount": "NaN"}`, false},
		{"amount >= 100", "", `{"amount": "-NaN"}`, false},
		{"amount != 100", "", `{"amount": "NaN"}`, true},
		{"amount > 100", "", `{"amount": "Infinity"}`, true},
		{"amount < 100", "", `{"amount": "-Infinity"}`, true},
		{"amount < Infinity", "", `{"amount": 1e308}`, true},
		{"amount == Infinity", "", `{"amount": "Infinity"}`, true},
		{"amount > -Infinity", "", `{"amount": -1e308}`, true},
		{"amount < 1e400", "", `{"amount": 5}`, true},     // 1e400 reads as Infinity
		{"amount > 100", "", `{"amount": "1e400"}`, true}, // so does a field holding it
		// Go's other spellings are text, as in Java
		{"amount > 100", "", `{"amount": "inf"}`, true}, // "inf" > "100" as strings
		{"amount < 100", "", `{"amount": "inf"}`, false},
		{"amount == inf", "", `{"amount": "inf"}`, true},
	}
	for _, tt := range tests {
		p, err := Parse(tt.filter)
		if err != nil {
			t.Errorf("Parse(%q) error %v", tt.filter, err)
			continue
		}
		var value []byte
		if tt.value != "" {
			value = []byte(tt.value)
		}
		if got := p.Match(tt.key, value); got != tt.want {
			t.Errorf("Parse(%q).Match(%q, %s) = %v, want %v", tt.filter, tt.key, tt.value, got, tt.want)
		}
	}
}

// complement is the operator whose result is the negation of op's.
var complement = map[string]string{"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}

// FuzzMatch checks that Parse and Match never panic, and that a predicate
// and its complement (== and !=, < and >=, > and <=) disagree on every
// record that has the field and both refuse a record without it.
func FuzzMatch(f *testing.F) {
	f.Add("amount > 100", "k", []byte(`{"amount": 150}`))
	f.Add("key != user-3", "user-3", []byte(`{}`))
	f.Add(`page == "/index"`, "", []byte(`{"page": "/index"}`))
	f.Add("x=1", "", []byte(`{"x": "1"}`))
	f.Add("amount > 12x", "k", []byte(`{"amount": "12x"}`))         // a non-numeric value
	f.Add("amount >= 1", "k", []byte(`{"amount": 1, "amount": 2}`)) // a duplicate field
	f.Add("k\xff == 1", "\xff", []byte("{\"k\xff\": 1}"))           // invalid UTF-8
	f.Add("amount > 1", "k", []byte(`[{"amount": 2}]`))             // a JSON array
	f.Fuzz(func(t *testing.T, filter, key string, value []byte) {
		p, err := Parse(filter)
		if err != nil {
			return
		}
		got := p.Match(key, value)
		q := *p
		q.Op = complement[p.Op]
		gotComplement := q.Match(key, value)
		present := p.Field == "key"
		text := key
		if !present {
			text, present = events.StringField(value, p.Field)
		}
		if f, ok := parseDouble(text); present && p.isNum && ok && math.IsNaN(f) {
			// Java: NaN is unordered, so < and >= (> and <=) are both false;
			// == and != still disagree
			if got != (p.Op == "!=") || gotComplement != (q.Op == "!=") {
				t.Errorf("%q on NaN: %v, complement %q: %v", filter, got, q.Op, gotComplement)
			}
			return
		}
		if present && got == gotComplement {
			t.Errorf("%q and its complement %q both give %v on key %q value %q", filter, q.Op, got, key, value)
		}
		if !present && (got || gotComplement) {
			t.Errorf("%q matched a record without the field: %q", filter, value)
		}
	})
}
