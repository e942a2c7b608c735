package kafka

import (
	"testing"

	"pgregory.net/rapid"
)

// The Murmur2 vectors are Kafka's own, from UtilsTest.testMurmur2
// (clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java).
var kafkaMurmur2Vectors = []struct {
	give []byte
	want int32
}{
	{give: []byte("21"), want: -973932308},
	{give: []byte("foobar"), want: -790332482},
	{give: []byte("a-little-bit-long-string"), want: -985981536},
	{give: []byte("a-little-bit-longer-string"), want: -1486304829},
	{give: []byte("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"), want: -58897971},
	{give: []byte{'a', 'b', 'c'}, want: 479470107},
}

func TestMurmur2KafkaVectors(t *testing.T) {
	for _, tt := range kafkaMurmur2Vectors {
		if got := Murmur2(tt.give); got != tt.want {
			t.Errorf("Murmur2(%q) = %d, want %d", tt.give, got, tt.want)
		}
	}
	if Murmur2(nil) != Murmur2([]byte{}) {
		t.Error("nil and empty keys hash differently")
	}
}

func TestDefaultPartition(t *testing.T) {
	// toPositive clears the sign bit: for "a-little-bit-long-string",
	// -985981536 & 0x7fffffff = 2^31 - 985981536 = 1161502112, and
	// 1161502112 % 12 = 8 (it is 0 mod 4 and 2 mod 3), % 6 = 2, % 3 = 2.
	tests := []struct {
		key  string
		n    int
		want int
	}{
		{key: "a-little-bit-long-string", n: 12, want: 8},
		{key: "a-little-bit-long-string", n: 6, want: 2},
		{key: "a-little-bit-long-string", n: 3, want: 2},
		{key: "21", n: 12, want: 0},                        // 1173551340 = 12 * 97795945
		{key: "foobar", n: 12, want: 6},                    // 1357151166 % 12
		{key: "abc", n: 6, want: 3},                        // 479470107 % 6 (positive hash: unchanged)
		{key: "a-little-bit-longer-string", n: 6, want: 5}, // 661178819 % 6
		{key: "foobar", n: 1, want: 0},
	}
	for _, tt := range tests {
		if got := DefaultPartition([]byte(tt.key), tt.n); got != tt.want {
			t.Errorf("DefaultPartition(%q, %d) = %d, want %d", tt.key, tt.n, got, tt.want)
		}
	}
	if got := DefaultPartition([]byte("21"), 0); got != -1 {
		t.Errorf("DefaultPartition with 0 partitions = %d, want -1", got)
	}
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.SliceOf(rapid.Byte()).Draw(t, "key")
		n := rapid.IntRange(1, 1000).Draw(t, "partitions")
		if p := DefaultPartition(key, n); p < 0 || p >= n {
			t.Fatalf("partition %d outside [0, %d)", p, n)
		}
	})
}
