// Package filter is the optional filter chained to the source: a predicate
// over one field of the record, as a FilterFunction would be written, e.g.
// `amount > 100`, `key != user-3`, `page == /index`.
package filter

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/flinksim/flinksim/sim/events"
)

// Predicate is a parsed filter `FIELD OP VALUE`. OP is one of == (or =), !=,
// <, <=, >, >=. The field "key" is the record's key; any other name is a
// top-level field of the record's JSON payload. Numbers compare as numbers
// when both sides are numeric, otherwise as strings. A record without the
// field does not match.
//
// "Numeric" is what Java's Double.parseDouble reads (parseDouble): decimal
// and hexadecimal literals, Infinity and -Infinity, NaN. Comparisons follow
// Java's double operators, as a FilterFunction comparing doubles would: a
// record whose field reads as NaN (the text "NaN") matches only !=, and
// Infinity compares as the largest value. A VALUE of NaN is refused by
// Parse, since no record could be greater, smaller or equal to it.
type Predicate struct {
	Field string
	Op    string
	Value string
	num   float64
	isNum bool
}

var ops = []string{"==", "!=", "<=", ">=", "=", "<", ">"}

// Parse reads a predicate; the error names what is wrong.
func Parse(s string) (*Predicate, error) {
	for _, op := range ops {
		i := strings.Index(s, op)
		if i <= 0 {
			continue
		}
		field := strings.TrimSpace(s[:i])
		value := strings.TrimSpace(s[i+len(op):])
		if field == "" || value == "" || strings.ContainsAny(field, " \t") || strings.ContainsAny(value[:1], "=<>!") ||
			strings.ContainsAny(field[len(field)-1:], "=<>!") {
			// "a => 5", "a =< 5", "a >> 5", "a !> 5": not an operator
			break
		}
		if op == "=" {
			op = "=="
		}
		value = strings.Trim(value, `"'`)
		p := &Predicate{Field: field, Op: op, Value: value}
		if f, ok := parseDouble(value); ok {
			if math.IsNaN(f) {
				return nil, fmt.Errorf("filter %q: %s is not a number to compare with: in Java every comparison with NaN is false except != (which is always true), so this filter would pass no record or every record; compare with a number", s, value)
			}
			p.num, p.isNum = f, true
		}
		return p, nil
	}
	return nil, fmt.Errorf("filter %q: expected FIELD OP VALUE with OP one of == != < <= > >=", s)
}

// Match applies the predicate to a record with key and JSON payload value.
func (p *Predicate) Match(key string, value []byte) bool {
	var s string
	if p.Field == "key" {
		s = key
	} else if p.isNum {
		if f, ok := events.NumericField(value, p.Field); ok {
			return p.cmpNum(f)
		}
		var ok bool
		if s, ok = events.StringField(value, p.Field); !ok {
			return false
		}
	} else {
		var ok bool
		if s, ok = events.StringField(value, p.Field); !ok {
			if f, ok2 := events.NumericField(value, p.Field); ok2 {
				s = strconv.FormatFloat(f, 'f', -1, 64)
			} else {
				return false
			}
		}
	}
	if p.isNum {
		if f, ok := parseDouble(s); ok {
			return p.cmpNum(f)
		}
	}
	c := strings.Compare(s, p.Value)
	return p.cmp(c)
}

// cmpNum is Java's double comparison of f with the predicate's number: a
// NaN f is neither smaller, greater nor equal, so only != holds.
func (p *Predicate) cmpNum(f float64) bool {
	if math.IsNaN(f) {
		return p.Op == "!="
	}
	c := 0
	if f < p.num {
		c = -1
	} else if f > p.num {
		c = 1
	}
	return p.cmp(c)
}

func (p *Predicate) cmp(c int) bool {
	switch p.Op {
	case "==":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	default:
		return c >= 0
	}
}

// parseDouble reads s as Java's Double.parseDouble does, as far as the
// filter needs: a decimal or hexadecimal floating-point literal (one beyond
// the range of a double is Infinity, one too small 0), or NaN and Infinity
// with an optional sign, spelt as Java spells them. Go's other spellings
// ("inf", "nan", "INFINITY") are not numbers here: they compare as text.
func parseDouble(s string) (float64, bool) {
	unsigned := s
	if s != "" && (s[0] == '+' || s[0] == '-') {
		unsigned = s[1:]
	}
	switch unsigned {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		if s[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true // ±Inf, as Java reads it
		}
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false // "inf", "nan", "INFINITY": not Java's spelling
	}
	return f, true
}
