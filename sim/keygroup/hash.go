// Package keygroup reproduces how Flink 1.20 routes a key to a key group and a
// key group to a parallel subtask: Java's hashCode of the key, MathUtils.murmurHash,
// KeyGroupRangeAssignment and KeyGroupRange.
//
// Every function is pure and allocation-free unless stated otherwise; none
// reads a clock or a random source. Numbers that are Java ints in Flink are
// int32 here when their wrap-around matters (hash codes) and int otherwise
// (parallelism, key groups, subtask indices), which always fit in an int32 once
// the parallelism preconditions hold.
package keygroup

import (
	"math"
	"math/bits"
	"unicode/utf16"
)

// StringHashCode returns Java's String.hashCode of s:
// s[0]*31^(n-1) + ... + s[n-1] over the UTF-16 code units of s, in int32
// arithmetic that wraps on overflow. A rune above U+FFFF counts as its two
// surrogate code units, exactly as Java stores it. The empty string hashes to 0.
//
// s is read as UTF-8; each byte that is not part of valid UTF-8 counts as one
// U+FFFD (Go's decoding, which is also what Java's UTF-8 decoder produces for
// the usual malformed inputs). Cost: O(len(s)), no allocation.
func StringHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + hi
			h = 31*h + lo
			continue
		}
		h = 31*h + r
	}
	return h
}

// LongHashCode returns Java's Long.hashCode(v): the int32 made of the low 32
// bits of v XOR v>>>32 (an unsigned shift). 0 and -1 both hash to 0.
func LongHashCode(v int64) int32 {
	return int32(v ^ int64(uint64(v)>>32))
}

// IntHashCode returns Java's Integer.hashCode(v), which is v itself.
func IntHashCode(v int32) int32 {
	return v
}

func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// MurmurHash is MathUtils.murmurHash(int): the 32-bit MurmurHash3 (x86_32) of
// the 4 little-endian bytes of code with seed 0, then made non-negative: a
// negative result is negated, and Integer.MIN_VALUE (which has no positive
// counterpart) becomes 0. The result is in [0, 2^31-1].
func MurmurHash(code int32) int32 {
	const (
		c1 = 0xcc9e2d51
		c2 = 0x1b873593
	)
	k := uint32(code) * c1
	k = bits.RotateLeft32(k, 15)
	k *= c2

	// h starts as the seed 0, so h ^= k leaves k.
	h := bits.RotateLeft32(k, 13)
	h = h*5 + 0xe6546b64

	h ^= 4 // the length in bytes
	r := int32(fmix32(h))

	switch {
	case r >= 0:
		return r
	case r != math.MinInt32:
		return -r
	default:
		return 0
	}
}
