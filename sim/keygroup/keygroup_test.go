package keygroup

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/spaolacci/murmur3"
	"pgregory.net/rapid"
)

func TestStringHashCode(t *testing.T) {
	tests := []struct {
		give string
		want int32
	}{
		{give: "", want: 0},
		{give: "a", want: 97},
		{give: "hello", want: 99162322}, // 104*31^4 + 101*31^3 + 108*31^2 + 108*31 + 111
		{give: "Aa", want: 2112},
		{give: "BB", want: 2112},
		{give: "polygenelubricants", want: math.MinInt32},
		{give: "\u00e9", want: 233},
		{give: "\U0001F600", want: 0xD83D*31 + 0xDE00}, // surrogate pair
		{give: "\xff", want: 0xFFFD},                   // invalid UTF-8 byte reads as U+FFFD
		{give: "\xff\xfe", want: 0xFFFD*31 + 0xFFFD},
	}
	for _, tt := range tests {
		if got := StringHashCode(tt.give); got != tt.want {
			t.Errorf("StringHashCode(%q) = %d, want %d", tt.give, got, tt.want)
		}
	}
}

func TestLongAndIntHashCode(t *testing.T) {
	longs := []struct {
		give int64
		want int32
	}{
		{give: 0, want: 0},
		{give: 1, want: 1},
		{give: -1, want: 0},
		{give: 1 << 32, want: 1},
		{give: 1<<32 + 1, want: 0},
		{give: math.MaxInt64, want: math.MinInt32},
		{give: math.MinInt64, want: math.MinInt32},
		{give: -42, want: 41}, // 0xFFFFFFFF_FFFFFFD6 -> 0xFFFFFFD6 ^ 0xFFFFFFFF = 0x29
	}
	for _, tt := range longs {
		if got := LongHashCode(tt.give); got != tt.want {
			t.Errorf("LongHashCode(%d) = %d, want %d", tt.give, got, tt.want)
		}
	}
	for _, v := range []int32{0, 1, -1, math.MaxInt32, math.MinInt32} {
		if got := IntHashCode(v); got != v {
			t.Errorf("IntHashCode(%d) = %d", v, got)
		}
	}
}

// javaMurmurFromLibrary computes MathUtils.murmurHash with an independent
// MurmurHash3 implementation: x86_32 of the 4 little-endian bytes, seed 0,
// then Flink's non-negative fold.
func javaMurmurFromLibrary(code int32) int32 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(code))
	r := int32(murmur3.Sum32WithSeed(b[:], 0))
	switch {
	case r >= 0:
		return r
	case r == math.MinInt32:
		return 0
	default:
		return -r
	}
}

func TestMurmurHashAgainstLibrary(t *testing.T) {
	for _, v := range []int32{0, 1, -1, 42, math.MaxInt32, math.MinInt32, -836031826} {
		if got, want := MurmurHash(v), javaMurmurFromLibrary(v); got != want {
			t.Errorf("MurmurHash(%d) = %d, murmur3 says %d", v, got, want)
		}
	}
}

func TestMurmurHashProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.Int32().Draw(t, "code")
		got := MurmurHash(v)
		if want := javaMurmurFromLibrary(v); got != want {
			t.Fatalf("MurmurHash(%d) = %d, murmur3 says %d", v, got, want)
		}
		if got < 0 {
			t.Fatalf("MurmurHash(%d) = %d is negative", v, got)
		}
	})
}

func TestRoundUpToPowerOfTwo(t *testing.T) {
	tests := []struct{ give, want int32 }{
		{give: 0, want: 0},
		{give: 1, want: 1},
		{give: 3, want: 4},
		{give: 17, want: 32},
		{give: 1 << 30, want: 1 << 30},
		{give: 1<<30 + 1, want: math.MinInt32},
		{give: -7, want: 0},
	}
	for _, tt := range tests {
		if got := RoundUpToPowerOfTwo(tt.give); got != tt.want {
			t.Errorf("RoundUpToPowerOfTwo(%d) = %d, want %d", tt.give, got, tt.want)
		}
	}
}

func TestDefaultMaxParallelism(t *testing.T) {
	tests := []struct {
		give    int
		want    int
		wantErr string
	}{
		{give: 1, want: 128},
		{give: 85, want: 128}, // 85+42 = 127 -> 128
		{give: 86, want: 256}, // 86+43 = 129 -> 256
		{give: 21845, want: 32768},
		{give: 21846, want: 32768}, // 32769 -> 65536, capped
		{give: 32768, want: 32768},
		{give: 0, wantErr: "Operator parallelism not within bounds: 0"},
		{give: 32769, wantErr: "Operator parallelism not within bounds: 32769"},
		{give: -3, wantErr: "Operator parallelism not within bounds: -3"},
	}
	for _, tt := range tests {
		got, err := DefaultMaxParallelism(tt.give)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("DefaultMaxParallelism(%d) = %d, %v; want error %q", tt.give, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("DefaultMaxParallelism(%d) = %d, %v; want %d", tt.give, got, err, tt.want)
		}
	}
}

func TestKeyGroupRange(t *testing.T) {
	if n := EmptyKeyGroupRange.NumberOfKeyGroups(); n != 0 {
		t.Errorf("empty range has %d key groups", n)
	}
	for _, kg := range []int{-1, 0, 1} {
		if EmptyKeyGroupRange.Contains(kg) {
			t.Errorf("empty range contains %d", kg)
		}
	}
	r := KeyGroupRange{Start: 64, End: 127}
	if n := r.NumberOfKeyGroups(); n != 64 {
		t.Errorf("%v has %d key groups, want 64", r, n)
	}
	for _, tt := range []struct {
		give int
		want bool
	}{{63, false}, {64, true}, {100, true}, {127, true}, {128, false}} {
		if got := r.Contains(tt.give); got != tt.want {
			t.Errorf("%v.Contains(%d) = %v", r, tt.give, got)
		}
	}
	if s := r.String(); s != "KeyGroupRange{startKeyGroup=64, endKeyGroup=127}" {
		t.Errorf("String() = %q", s)
	}
}

func TestRangeForOperatorIndexHandChecked(t *testing.T) {
	tests := []struct {
		m, p, i int
		want    KeyGroupRange
		wantErr string
	}{
		{m: 128, p: 3, i: 0, want: KeyGroupRange{0, 42}},   // ceil(0)=0, floor(127/3)=42
		{m: 128, p: 3, i: 1, want: KeyGroupRange{43, 85}},  // ceil(128/3)=43, floor(255/3)=85
		{m: 128, p: 3, i: 2, want: KeyGroupRange{86, 127}}, // ceil(256/3)=86, floor(383/3)=127
		{m: 10, p: 10, i: 9, want: KeyGroupRange{9, 9}},
		{m: 1, p: 1, i: 0, want: KeyGroupRange{0, 0}},
		{m: 128, p: 3, i: 3, wantErr: "Operator index not within bounds: 3 (parallelism 3)"},
		{m: 128, p: 3, i: -1, wantErr: "Operator index not within bounds: -1 (parallelism 3)"},
		{m: 4, p: 5, i: 0, wantErr: "Maximum parallelism must not be smaller than parallelism."},
		{m: 0, p: 5, i: 0, wantErr: "Operator parallelism not within bounds: 0"},
	}
	for _, tt := range tests {
		got, err := RangeForOperatorIndex(tt.m, tt.p, tt.i)
		if tt.wantErr != "" {
			var iae *IllegalArgumentError
			if !errors.As(err, &iae) || err.Error() != tt.wantErr {
				t.Errorf("RangeForOperatorIndex(%d, %d, %d) = %v, %v; want error %q", tt.m, tt.p, tt.i, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("RangeForOperatorIndex(%d, %d, %d) = %v, %v; want %v", tt.m, tt.p, tt.i, got, err, tt.want)
		}
	}
}

func TestNoPanicOnBadArguments(t *testing.T) {
	if got := AssignToKeyGroup(42, 0); got != -1 {
		t.Errorf("AssignToKeyGroup(42, 0) = %d, want -1", got)
	}
	if got := AssignToKeyGroup(42, -5); got != -1 {
		t.Errorf("AssignToKeyGroup(42, -5) = %d, want -1", got)
	}
	if got := OperatorIndexForKeyGroup(0, 4, 3); got != -1 {
		t.Errorf("OperatorIndexForKeyGroup(0, 4, 3) = %d, want -1", got)
	}
	key := "k"
	if _, err := AssignKeyToParallelOperator(&key, KeyTypeString, 0, 0); err == nil {
		t.Error("AssignKeyToParallelOperator accepted max parallelism 0")
	}
	if _, err := AssignKeyToParallelOperator(&key, KeyType(0), 128, 1); !errors.Is(err, ErrUnknownKeyType) {
		t.Errorf("invalid key type: got %v", err)
	}
}

func TestHashCodeOf(t *testing.T) {
	tests := []struct {
		key     string
		kt      KeyType
		want    int32
		wantErr bool
	}{
		{key: "42", kt: KeyTypeString, want: 1662},
		{key: "42", kt: KeyTypeLong, want: 42},
		{key: "42", kt: KeyTypeInt, want: 42},
		{key: "+42", kt: KeyTypeLong, want: 42}, // Long.parseLong accepts a '+'
		{key: "-0", kt: KeyTypeInt, want: 0},
		{key: "-1", kt: KeyTypeLong, want: 0},
		{key: "-1", kt: KeyTypeInt, want: -1},
		{key: "4294967296", kt: KeyTypeLong, want: 1},
		{key: "9223372036854775807", kt: KeyTypeLong, want: math.MinInt32},
		{key: "-2147483648", kt: KeyTypeInt, want: math.MinInt32},
		{key: "abc", kt: KeyTypeLong, wantErr: true},
		{key: "", kt: KeyTypeLong, wantErr: true},
		{key: " 1", kt: KeyTypeLong, wantErr: true},
		{key: "1_000", kt: KeyTypeLong, wantErr: true},
		{key: "0x10", kt: KeyTypeLong, wantErr: true},
		{key: "1.0", kt: KeyTypeInt, wantErr: true},
		{key: "9223372036854775808", kt: KeyTypeLong, wantErr: true},
		{key: "2147483648", kt: KeyTypeInt, wantErr: true},
		{key: "-", kt: KeyTypeInt, wantErr: true},
	}
	for _, tt := range tests {
		got, err := HashCodeOf(tt.key, tt.kt)
		if tt.wantErr {
			var nfe *NumberFormatError
			if !errors.As(err, &nfe) || nfe.Key != tt.key || nfe.Type != tt.kt {
				t.Errorf("HashCodeOf(%q, %v) = %d, %v; want a NumberFormatError", tt.key, tt.kt, got, err)
			} else if want := `For input string: "` + tt.key + `"`; !strings.HasSuffix(err.Error(), want) {
				t.Errorf("error %q does not end in Java's %q", err, want)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("HashCodeOf(%q, %v) = %d, %v; want %d", tt.key, tt.kt, got, err, tt.want)
		}
	}
}

func TestParseKeyType(t *testing.T) {
	tests := []struct {
		give string
		want KeyType
	}{
		{"string", KeyTypeString}, {"String", KeyTypeString},
		{"long", KeyTypeLong}, {"LONG", KeyTypeLong},
		{"int", KeyTypeInt}, {"Integer", KeyTypeInt},
	}
	for _, tt := range tests {
		got, err := ParseKeyType(tt.give)
		if err != nil || got != tt.want {
			t.Errorf("ParseKeyType(%q) = %v, %v; want %v", tt.give, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "short", "double", "str"} {
		if _, err := ParseKeyType(bad); !errors.Is(err, ErrUnknownKeyType) {
			t.Errorf("ParseKeyType(%q) error = %v, want ErrUnknownKeyType", bad, err)
		}
	}
	for kt, want := range map[KeyType][2]string{
		KeyTypeString: {"string", "String"}, KeyTypeLong: {"long", "Long"}, KeyTypeInt: {"int", "Integer"},
	} {
		if kt.String() != want[0] || kt.JavaClass() != want[1] {
			t.Errorf("%d: String %q JavaClass %q, want %v", int(kt), kt.String(), kt.JavaClass(), want)
		}
	}
}

// checkRangesAgainstOracle brute-forces one (M, p): the ranges of subtasks
// 0..p-1 are non-empty, contiguous and cover [0, M), and for every key group
// the subtask found by scanning the ranges is OperatorIndexForKeyGroup's.
func checkRangesAgainstOracle(t testing.TB, m, p int) {
	ranges := make([]KeyGroupRange, p)
	next := 0
	for i := range p {
		r, err := RangeForOperatorIndex(m, p, i)
		if err != nil {
			t.Fatalf("M=%d p=%d i=%d: %v", m, p, i, err)
		}
		if r.Start != next || r.NumberOfKeyGroups() < 1 {
			t.Fatalf("M=%d p=%d: range %d = %v, want non-empty and starting at %d", m, p, i, r, next)
		}
		next = r.End + 1
		ranges[i] = r
	}
	if next != m {
		t.Fatalf("M=%d p=%d: ranges end at %d, want %d", m, p, next-1, m-1)
	}
	owner := 0
	for kg := range m {
		for !ranges[owner].Contains(kg) { // naive scan: the ranges are in order
			owner++
		}
		if got := OperatorIndexForKeyGroup(m, p, kg); got != owner {
			t.Fatalf("M=%d p=%d: key group %d: OperatorIndexForKeyGroup = %d, range owner %d", m, p, kg, got, owner)
		}
	}
}

func TestRangesOracle(t *testing.T) {
	for m := 1; m <= 260; m++ {
		for p := 1; p <= m; p++ {
			checkRangesAgainstOracle(t, m, p)
		}
	}
	for _, m := range []int{1000, 4096, 32767, 32768} {
		for _, p := range []int{1, 2, 3, 7, 127, 128, 129, 1000, m / 3, m - 1, m} {
			if p >= 1 && p <= m {
				checkRangesAgainstOracle(t, m, p)
			}
		}
	}
}

func TestRangesProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := rapid.IntRange(1, UpperBoundMaxParallelism).Draw(t, "maxParallelism")
		p := rapid.IntRange(1, m).Draw(t, "parallelism")
		kg := rapid.IntRange(0, m-1).Draw(t, "keyGroup")

		i := OperatorIndexForKeyGroup(m, p, kg)
		if i < 0 || i >= p {
			t.Fatalf("subtask %d outside [0, %d)", i, p)
		}
		r, err := RangeForOperatorIndex(m, p, i)
		if err != nil || !r.Contains(kg) {
			t.Fatalf("range of subtask %d = %v, %v; does not contain %d", i, r, err, kg)
		}
		if i > 0 {
			prev, _ := RangeForOperatorIndex(m, p, i-1)
			if prev.End+1 != r.Start {
				t.Fatalf("ranges %v and %v are not contiguous", prev, r)
			}
		} else if r.Start != 0 {
			t.Fatalf("first range %v does not start at 0", r)
		}
		if i == p-1 && r.End != m-1 {
			t.Fatalf("last range %v does not end at %d", r, m-1)
		}
		// Sizes differ by at most one key group.
		if n := r.NumberOfKeyGroups(); n != m/p && n != (m+p-1)/p {
			t.Fatalf("range %v has %d key groups, want %d or %d", r, n, m/p, (m+p-1)/p)
		}
	})
}

func TestAssignKeyProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.String().Draw(t, "key")
		m := rapid.IntRange(1, UpperBoundMaxParallelism).Draw(t, "maxParallelism")
		p := rapid.IntRange(1, m).Draw(t, "parallelism")
		i, err := AssignKeyToParallelOperator(&key, KeyTypeString, m, p)
		if err != nil {
			t.Fatal(err)
		}
		kg := AssignToKeyGroup(StringHashCode(key), m)
		if kg < 0 || kg >= m {
			t.Fatalf("key group %d outside [0, %d)", kg, m)
		}
		r, _ := RangeForOperatorIndex(m, p, i)
		if !r.Contains(kg) {
			t.Fatalf("subtask %d's range %v does not contain key group %d", i, r, kg)
		}
	})
}

func FuzzHashCodeOf(f *testing.F) {
	for _, s := range []string{"0", "-1", "+7", "9223372036854775807", "abc", "", "1_0",
		"-9223372036854775808", "9223372036854775808", "k\xffey", "\xef\xbb\xbfuser-1", strings.Repeat("9", 1000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, kt := range []KeyType{KeyTypeString, KeyTypeLong, KeyTypeInt} {
			h, err := HashCodeOf(s, kt)
			if kt == KeyTypeString && (err != nil || h != StringHashCode(s)) {
				t.Fatalf("string key %q: %d, %v", s, h, err)
			}
			if err != nil {
				var nfe *NumberFormatError
				if !errors.As(err, &nfe) {
					t.Fatalf("%v key %q: unexpected error %v", kt, s, err)
				}
			}
		}
	})
}
