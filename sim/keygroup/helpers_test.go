package keygroup

import (
	"errors"
	"fmt"
)

// Flink functions the simulator composes from the ones it uses, kept for
// the golden vectors that test them as Flink defines them.

// AssignKeyToParallelOperator is KeyGroupRangeAssignment.assignKeyToParallelOperator
// for a key given as text of type kt (see HashCodeOf): the subtask index that
// receives the key. A nil key is Java's null key and returns ErrNullKey, as
// Flink does before anything else. A key that HashCodeOf cannot read returns
// its *NumberFormatError. Flink does not check the parallelism pair here (its
// callers already did); this function does, with CheckParallelismPreconditions,
// so that it never divides by zero.
func AssignKeyToParallelOperator(key *string, kt KeyType, maxParallelism, parallelism int) (int, error) {
	if key == nil {
		return 0, ErrNullKey
	}
	h, err := HashCodeOf(*key, kt)
	if err != nil {
		return 0, err
	}
	if err := CheckParallelismPreconditions(parallelism, maxParallelism); err != nil {
		return 0, err
	}
	return OperatorIndexForKeyGroup(maxParallelism, parallelism, AssignToKeyGroup(h, maxParallelism)), nil
}

// BitMix is MathUtils.bitMix: the 32-bit finalizer of MurmurHash3 (fmix32),
// on the bits of in, returned as a Java int (may be negative).
func BitMix(in int32) int32 {
	return int32(fmix32(uint32(in)))
}

// NumberOfKeyGroups is KeyGroupRange.getNumberOfKeyGroups: 1 + End - Start,
// which is 0 for EmptyKeyGroupRange. Negative for a malformed range with
// End < Start - 1, as in Flink.
func (r KeyGroupRange) NumberOfKeyGroups() int {
	return 1 + r.End - r.Start
}

// Contains is KeyGroupRange.contains: Start <= kg <= End. Always false for an
// empty range.
func (r KeyGroupRange) Contains(kg int) bool {
	return kg >= r.Start && kg <= r.End
}

// String is KeyGroupRange.toString: "KeyGroupRange{startKeyGroup=0, endKeyGroup=63}".
func (r KeyGroupRange) String() string {
	return fmt.Sprintf("KeyGroupRange{startKeyGroup=%d, endKeyGroup=%d}", r.Start, r.End)
}

// ErrNullKey is what Flink throws (as a NullPointerException) when a record's
// key is null: KeyGroupRangeAssignment.assignKeyToParallelOperator and
// assignToKeyGroup check it first. The Go analogue of a null key is a nil *string
// given to AssignKeyToParallelOperator.
var ErrNullKey = errors.New("Assigned key must not be null!")
