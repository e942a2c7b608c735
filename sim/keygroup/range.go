package keygroup

// KeyGroupRange is Flink's KeyGroupRange: the key groups Start..End, both
// inclusive, that one subtask owns. The empty range is {Start: 0, End: -1}
// (EmptyKeyGroupRange), as Flink's EMPTY_KEY_GROUP_RANGE; any range with
// End < Start holds no key group.
type KeyGroupRange struct {
	Start, End int
}

// EmptyKeyGroupRange is KeyGroupRange.EMPTY_KEY_GROUP_RANGE: {0, -1}, zero key groups.
var EmptyKeyGroupRange = KeyGroupRange{Start: 0, End: -1}

// RangeForOperatorIndex is KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex:
// the key groups that subtask operatorIndex owns when maxParallelism key groups
// are spread over parallelism subtasks,
//
//	start = ceil(i*M/p)          = (i*M + p - 1) / p
//	end   = floor(((i+1)*M - 1)/p) = ((i+1)*M - 1) / p
//
// The ranges of subtasks 0..p-1 are contiguous, non-empty and cover [0, M), and
// they agree with OperatorIndexForKeyGroup.
//
// Errors, each an *IllegalArgumentError with Flink's text, checked in Flink's
// order by CheckParallelismPreconditions: a parallelism or max parallelism
// outside [1, 32768] ("Operator parallelism not within bounds: <n>"), a max
// parallelism below the parallelism ("Maximum parallelism must not be smaller
// than parallelism."). Then, where Flink checks nothing and would compute a
// range outside [0, M) or fail in KeyGroupRange's constructor, an operatorIndex
// outside [0, parallelism) is refused with "Operator index not within bounds:
// <i> (parallelism <p>)"; that message is the simulator's own.
func RangeForOperatorIndex(maxParallelism, parallelism, operatorIndex int) (KeyGroupRange, error) {
	if err := CheckParallelismPreconditions(parallelism, maxParallelism); err != nil {
		return EmptyKeyGroupRange, err
	}
	if operatorIndex < 0 || operatorIndex >= parallelism {
		return EmptyKeyGroupRange, illegalArgument(
			"Operator index not within bounds: %d (parallelism %d)", operatorIndex, parallelism)
	}
	start := (operatorIndex*maxParallelism + parallelism - 1) / parallelism
	end := ((operatorIndex+1)*maxParallelism - 1) / parallelism
	return KeyGroupRange{Start: start, End: end}, nil
}
