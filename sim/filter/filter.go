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
		if f, err := strconv.ParseFloat(value, 64); err == nil && finite(f) {
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
		if f, err := strconv.ParseFloat(s, 64); err == nil && finite(f) {
			return p.cmpNum(f)
		}
	}
	c := strings.Compare(s, p.Value)
	return p.cmp(c)
}

func (p *Predicate) cmpNum(f float64) bool {
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

// finite reports whether f is a real number: "NaN" and "Inf" texts compare
// as strings, never as numbers.
func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
