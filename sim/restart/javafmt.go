package restart

import (
	"math"
	"strconv"
	"strings"
)

// javaDouble formats f as Java's Double.toString does, with the shortest
// digits that round-trip (Java 19+; older JDKs occasionally print one more
// digit): "1.5", "2.0", "0.1", "1.0E7", "1.0E-4", "NaN", "Infinity".
func javaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	// Scientific: d.dddE[-]n, at least one digit after the point.
	s := strconv.FormatFloat(f, 'e', -1, 64) // e.g. "1e+07", "1.5e-05"
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
