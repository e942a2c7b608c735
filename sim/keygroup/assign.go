package keygroup

import (
	"fmt"
)

// Bounds of the max parallelism (the number of key groups), as in
// KeyGroupRangeAssignment and Transformation.
const (
	// DefaultLowerBoundMaxParallelism is the smallest max parallelism that
	// DefaultMaxParallelism picks (KeyGroupRangeAssignment.DEFAULT_LOWER_BOUND_MAX_PARALLELISM).
	DefaultLowerBoundMaxParallelism = 1 << 7
	// UpperBoundMaxParallelism is the inclusive upper bound of any parallelism
	// and max parallelism (Transformation.UPPER_BOUND_MAX_PARALLELISM).
	UpperBoundMaxParallelism = 1 << 15
)

// IllegalArgumentError is Flink's IllegalArgumentException: Message is Flink's
// own text, and Error returns it unchanged.
type IllegalArgumentError struct {
	Message string
}

func (e *IllegalArgumentError) Error() string { return e.Message }

func illegalArgument(format string, args ...any) error {
	return &IllegalArgumentError{Message: fmt.Sprintf(format, args...)}
}

// CheckParallelismBounds is KeyGroupRangeAssignment.checkParallelismPreconditions(int):
// it refuses a parallelism (or max parallelism) outside [1, UpperBoundMaxParallelism]
// with an *IllegalArgumentError "Operator parallelism not within bounds: <p>".
func CheckParallelismBounds(parallelism int) error {
	if parallelism <= 0 || parallelism > UpperBoundMaxParallelism {
		return illegalArgument("Operator parallelism not within bounds: %d", parallelism)
	}
	return nil
}

// CheckParallelismPreconditions runs, in Flink's order, the checks that
// KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex makes before it
// computes anything: parallelism within bounds, maxParallelism within bounds
// (both via CheckParallelismBounds), then maxParallelism >= parallelism
// ("Maximum parallelism must not be smaller than parallelism."). The first
// failing check is returned as an *IllegalArgumentError; nil means the pair is
// usable with every function of this package.
//
// For Flink's one-argument checkParallelismPreconditions use
// CheckParallelismBounds.
func CheckParallelismPreconditions(parallelism, maxParallelism int) error {
	if err := CheckParallelismBounds(parallelism); err != nil {
		return err
	}
	if err := CheckParallelismBounds(maxParallelism); err != nil {
		return err
	}
	if maxParallelism < parallelism {
		return illegalArgument("Maximum parallelism must not be smaller than parallelism.")
	}
	return nil
}

// RoundUpToPowerOfTwo is MathUtils.roundUpToPowerOfTwo in Java int arithmetic:
// the smallest power of two >= x for 1 <= x <= 2^30. Like Flink's, it returns 0
// for x <= 0 except math.MinInt32, and math.MinInt32 (the wrapped 2^31) for
// x > 2^30 and for math.MinInt32.
func RoundUpToPowerOfTwo(x int32) int32 {
	x--
	x |= x >> 1
	x |= x >> 2
	x |= x >> 4
	x |= x >> 8
	x |= x >> 16
	return x + 1
}

// DefaultMaxParallelism is KeyGroupRangeAssignment.computeDefaultMaxParallelism:
// the max parallelism Flink picks for an operator of the given parallelism when
// none is configured, min(max(roundUpToPowerOfTwo(p + p/2), 128), 32768).
// A parallelism outside [1, UpperBoundMaxParallelism] is refused with
// CheckParallelismBounds's error.
func DefaultMaxParallelism(parallelism int) (int, error) {
	if err := CheckParallelismBounds(parallelism); err != nil {
		return 0, err
	}
	m := int(RoundUpToPowerOfTwo(int32(parallelism + parallelism/2)))
	m = max(m, DefaultLowerBoundMaxParallelism)
	return min(m, UpperBoundMaxParallelism), nil
}

// AssignToKeyGroup is KeyGroupRangeAssignment.computeKeyGroupForKeyHash: the key
// group, in [0, maxParallelism), of a key whose Java hashCode is hashCode:
// MurmurHash(hashCode) % maxParallelism.
//
// maxParallelism must be >= 1 (Flink would divide by zero at 0); for
// maxParallelism <= 0 it returns -1, which is no key group.
func AssignToKeyGroup(hashCode int32, maxParallelism int) int {
	if maxParallelism <= 0 {
		return -1
	}
	return int(MurmurHash(hashCode)) % maxParallelism
}

// OperatorIndexForKeyGroup is KeyGroupRangeAssignment.computeOperatorIndexForKeyGroup:
// the subtask index, in [0, parallelism), that owns keyGroup, computed as
// keyGroup * parallelism / maxParallelism (integer division).
//
// Like Flink it does not check its arguments: it is meant for
// 0 <= keyGroup < maxParallelism and a pair accepted by
// CheckParallelismPreconditions. For maxParallelism <= 0 it returns -1 instead
// of dividing by zero.
func OperatorIndexForKeyGroup(maxParallelism, parallelism, keyGroup int) int {
	if maxParallelism <= 0 {
		return -1
	}
	return keyGroup * parallelism / maxParallelism
}
