package kafka

// Murmur2 is Kafka's org.apache.kafka.common.utils.Utils.murmur2: the 32-bit
// MurmurHash2 of data with seed 0x9747b28c, returned as a Java int (may be
// negative). Blocks of 4 bytes are read little-endian; the 1..3 trailing bytes
// are mixed in as in the reference MurmurHash2. A nil or empty data hashes the
// zero-length input. Cost: O(len(data)), no allocation.
func Murmur2(data []byte) int32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	n := len(data)
	h := uint32(seed) ^ uint32(n)

	i := 0
	for ; i+4 <= n; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}

	switch n - i { // the trailing bytes; each case falls through to the next
	case 3:
		h ^= uint32(data[i+2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[i+1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[i])
		h *= m
	}

	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// DefaultPartition is the partition Kafka's default partitioner picks for a
// record with a key (BuiltInPartitioner.partitionForKey, also the keyed path of
// the older DefaultPartitioner): Utils.toPositive(Murmur2(key)) % numPartitions,
// where toPositive clears the sign bit (it is not the absolute value). key is
// the serialized key; a record with no key at all takes Kafka's sticky
// partitioner instead, which this function does not model, so a nil key is
// hashed like an empty one.
//
// numPartitions must be >= 1; for numPartitions <= 0 it returns -1 (no
// partition).
func DefaultPartition(key []byte, numPartitions int) int {
	if numPartitions <= 0 {
		return -1
	}
	return int(Murmur2(key)&0x7fffffff) % numPartitions
}
