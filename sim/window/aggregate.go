package window

import "fmt"

// AggregateKind names the AggregateFunction a window operator applies to the
// values of each window. The zero value means Count (see Config).
type AggregateKind int

const (
	// Count is the number of elements (the element value is ignored).
	Count AggregateKind = 1 + iota
	// Sum is the sum of the element values.
	Sum
	// Min is the smallest element value.
	Min
	// Max is the largest element value.
	Max
	// Avg is the mean of the element values, kept as sum and count.
	Avg
)

// String is the lower-case name used by the scenario language.
func (k AggregateKind) String() string {
	switch k {
	case Count:
		return "count"
	case Sum:
		return "sum"
	case Min:
		return "min"
	case Max:
		return "max"
	case Avg:
		return "avg"
	}
	return fmt.Sprintf("AggregateKind(%d)", int(k))
}

// Accumulator is the per-window state of every aggregate (the ACC of an
// AggregateFunction held in AggregatingState): the element count, the sum,
// and the smallest and largest value. A stored accumulator always has
// Count >= 1; Min and Max are meaningful only then.
type Accumulator struct {
	Count int64
	Sum   float64
	Min   float64
	Max   float64
}

// add is AggregateFunction.add: it folds one element value into acc.
func (acc Accumulator) add(v float64) Accumulator {
	if acc.Count == 0 {
		return Accumulator{Count: 1, Sum: v, Min: v, Max: v}
	}
	acc.Count++
	acc.Sum += v
	acc.Min = min(acc.Min, v)
	acc.Max = max(acc.Max, v)
	return acc
}

// merge is AggregateFunction.merge(a, b): the accumulator of the union of
// both windows' elements. Sums are added a first, as Flink's merging state
// does.
func (acc Accumulator) merge(b Accumulator) Accumulator {
	switch {
	case b.Count == 0:
		return acc
	case acc.Count == 0:
		return b
	}
	return Accumulator{
		Count: acc.Count + b.Count,
		Sum:   acc.Sum + b.Sum,
		Min:   min(acc.Min, b.Min),
		Max:   max(acc.Max, b.Max),
	}
}

// Result is AggregateFunction.getResult for kind k.
func (acc Accumulator) Result(k AggregateKind) float64 {
	switch k {
	case Sum:
		return acc.Sum
	case Min:
		return acc.Min
	case Max:
		return acc.Max
	case Avg:
		if acc.Count == 0 {
			return 0
		}
		return acc.Sum / float64(acc.Count)
	}
	return float64(acc.Count)
}
