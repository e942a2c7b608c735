package keygroup

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unicode/utf16"
)

// The golden vectors were computed by Flink 1.20's own classes (see each
// file's "source"). Every case of every file is run; a missing file or a file
// with no case fails the test, and so does a case kind this test does not know.

const goldenDir = "../../testdata/golden"

type javaError struct {
	Exception string `json:"exception"`
	Message   string `json:"message"`
}

// loadGolden reads file's "cases" into cases, failing the test if the file is
// missing, unreadable or has no case.
func loadGolden[T any](t *testing.T, file string) []T {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(goldenDir, file))
	if err != nil {
		t.Fatalf("golden file: %v", err)
	}
	var doc struct {
		CaseCount int `json:"case_count"`
		Cases     []T `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(doc.Cases) == 0 {
		t.Fatalf("%s: no cases", file)
	}
	if doc.CaseCount != len(doc.Cases) {
		t.Fatalf("%s: case_count %d but %d cases", file, doc.CaseCount, len(doc.Cases))
	}
	return doc.Cases
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("golden map key %q: %v", s, err)
	}
	return n
}

// wantIllegalArgument checks that err is an *IllegalArgumentError carrying
// Flink's message from the golden case.
func wantIllegalArgument(t *testing.T, id string, err error, want *javaError) {
	t.Helper()
	if want == nil {
		t.Fatalf("%s: golden case has no error", id)
	}
	if want.Exception != "java.lang.IllegalArgumentException" {
		t.Fatalf("%s: unexpected golden exception %s", id, want.Exception)
	}
	var iae *IllegalArgumentError
	if !errors.As(err, &iae) {
		t.Errorf("%s: got error %v (%T), want IllegalArgumentError %q", id, err, err, want.Message)
		return
	}
	if iae.Message != want.Message || err.Error() != want.Message {
		t.Errorf("%s: got message %q, want %q", id, err.Error(), want.Message)
	}
}

type keyGroupsCase struct {
	CaseID        string                    `json:"case_id"`
	Type          string                    `json:"type"`
	Value         string                    `json:"value"`
	UTF16         []uint16                  `json:"utf16_code_units"`
	HashCode      int32                     `json:"hash_code"`
	MurmurHash    int32                     `json:"murmur_hash"`
	KeyGroup      map[string]int            `json:"key_group"`
	OperatorIndex map[string]map[string]int `json:"operator_index"`
}

func TestGoldenKeyGroups(t *testing.T) {
	cases := loadGolden[keyGroupsCase](t, "keygroups.json")
	checked := 0
	for _, c := range cases {
		kt, err := ParseKeyType(c.Type)
		if err != nil {
			t.Fatalf("%s: %v", c.CaseID, err)
		}
		if kt == KeyTypeString {
			if got := utf16.Encode([]rune(c.Value)); !equalUnits(got, c.UTF16) {
				t.Errorf("%s: UTF-16 of %q = %v, want %v", c.CaseID, c.Value, got, c.UTF16)
			}
		}
		h, err := HashCodeOf(c.Value, kt)
		if err != nil {
			t.Errorf("%s: HashCodeOf(%q, %v): %v", c.CaseID, c.Value, kt, err)
			continue
		}
		if h != c.HashCode {
			t.Errorf("%s: HashCodeOf(%q, %v) = %d, want %d", c.CaseID, c.Value, kt, h, c.HashCode)
		}
		if got := MurmurHash(c.HashCode); got != c.MurmurHash {
			t.Errorf("%s: MurmurHash(%d) = %d, want %d", c.CaseID, c.HashCode, got, c.MurmurHash)
		}
		if len(c.KeyGroup) == 0 || len(c.OperatorIndex) == 0 {
			t.Fatalf("%s: case without key groups or operator indices", c.CaseID)
		}
		for ms, want := range c.KeyGroup {
			m := atoi(t, ms)
			if got := AssignToKeyGroup(c.HashCode, m); got != want {
				t.Errorf("%s: AssignToKeyGroup(%d, %d) = %d, want %d", c.CaseID, c.HashCode, m, got, want)
			}
			checked++
		}
		for ms, byP := range c.OperatorIndex {
			m := atoi(t, ms)
			for ps, want := range byP {
				p := atoi(t, ps)
				kg := AssignToKeyGroup(c.HashCode, m)
				if got := OperatorIndexForKeyGroup(m, p, kg); got != want {
					t.Errorf("%s: OperatorIndexForKeyGroup(%d, %d, %d) = %d, want %d", c.CaseID, m, p, kg, got, want)
				}
				key := c.Value
				got, err := AssignKeyToParallelOperator(&key, kt, m, p)
				if err != nil || got != want {
					t.Errorf("%s: AssignKeyToParallelOperator(%q, %v, %d, %d) = %d, %v; want %d", c.CaseID, key, kt, m, p, got, err, want)
				}
				r, err := RangeForOperatorIndex(m, p, want)
				if err != nil || !r.Contains(kg) {
					t.Errorf("%s: range of subtask %d (M=%d p=%d) = %v, %v; does not contain key group %d", c.CaseID, want, m, p, r, err, kg)
				}
				checked++
			}
		}
	}
	t.Logf("%d cases, %d key-group and operator-index values", len(cases), checked)
}

func equalUnits(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

type rangesCase struct {
	CaseID         string     `json:"case_id"`
	Kind           string     `json:"kind"`
	MaxParallelism int        `json:"max_parallelism"`
	Parallelism    int        `json:"parallelism"`
	OperatorIndex  int        `json:"operator_index"`
	Start          int        `json:"start"`
	End            int        `json:"end"`
	NumKeyGroups   int        `json:"num_key_groups"`
	DefaultMaxP    int        `json:"default_max_parallelism"`
	Error          *javaError `json:"error"`
}

func TestGoldenKeyGroupRanges(t *testing.T) {
	cases := loadGolden[rangesCase](t, "keygroup_ranges.json")
	kinds := map[string]int{}
	for _, c := range cases {
		kinds[c.Kind]++
		switch c.Kind {
		case "range":
			r, err := RangeForOperatorIndex(c.MaxParallelism, c.Parallelism, c.OperatorIndex)
			want := KeyGroupRange{Start: c.Start, End: c.End}
			if err != nil || r != want || r.NumberOfKeyGroups() != c.NumKeyGroups {
				t.Errorf("%s: RangeForOperatorIndex(%d, %d, %d) = %v (%d groups), %v; want %v (%d groups)",
					c.CaseID, c.MaxParallelism, c.Parallelism, c.OperatorIndex, r, r.NumberOfKeyGroups(), err, want, c.NumKeyGroups)
			}
		case "range_error":
			r, err := RangeForOperatorIndex(c.MaxParallelism, c.Parallelism, c.OperatorIndex)
			wantIllegalArgument(t, c.CaseID, err, c.Error)
			if r != EmptyKeyGroupRange {
				t.Errorf("%s: refused range should be empty, got %v", c.CaseID, r)
			}
			perr := CheckParallelismPreconditions(c.Parallelism, c.MaxParallelism)
			wantIllegalArgument(t, c.CaseID, perr, c.Error)
		case "default_max_parallelism":
			got, err := DefaultMaxParallelism(c.Parallelism)
			if err != nil || got != c.DefaultMaxP {
				t.Errorf("%s: DefaultMaxParallelism(%d) = %d, %v; want %d", c.CaseID, c.Parallelism, got, err, c.DefaultMaxP)
			}
		case "default_max_parallelism_error":
			_, err := DefaultMaxParallelism(c.Parallelism)
			wantIllegalArgument(t, c.CaseID, err, c.Error)
		default:
			t.Errorf("%s: unknown kind %q", c.CaseID, c.Kind)
		}
	}
	for _, k := range []string{"range", "range_error", "default_max_parallelism", "default_max_parallelism_error"} {
		if kinds[k] == 0 {
			t.Errorf("no case of kind %q", k)
		}
	}
	t.Logf("kinds: %v", kinds)
}

type miscCase struct {
	CaseID         string     `json:"case_id"`
	Kind           string     `json:"kind"`
	X              int32      `json:"x"`
	Result         int32      `json:"result"`
	BitMix         int32      `json:"bit_mix"`
	KeyHash        int32      `json:"key_hash"`
	MaxParallelism int        `json:"max_parallelism"`
	Parallelism    int        `json:"parallelism"`
	KeyGroup       int        `json:"key_group"`
	OK             *bool      `json:"ok"`
	Error          *javaError `json:"error"`
	LowerBound     int        `json:"DEFAULT_LOWER_BOUND_MAX_PARALLELISM"`
	UpperBound     int        `json:"UPPER_BOUND_MAX_PARALLELISM"`
}

func TestGoldenMisc(t *testing.T) {
	cases := loadGolden[miscCase](t, "misc.json")
	kinds := map[string]int{}
	for _, c := range cases {
		kinds[c.Kind]++
		switch c.Kind {
		case "round_up_to_power_of_two":
			if got := RoundUpToPowerOfTwo(c.X); got != c.Result {
				t.Errorf("%s: RoundUpToPowerOfTwo(%d) = %d, want %d", c.CaseID, c.X, got, c.Result)
			}
		case "murmur_hash":
			if got := BitMix(c.X); got != c.BitMix {
				t.Errorf("%s: BitMix(%d) = %d, want %d", c.CaseID, c.X, got, c.BitMix)
			}
			if got := MurmurHash(c.X); got != c.Result {
				t.Errorf("%s: MurmurHash(%d) = %d, want %d", c.CaseID, c.X, got, c.Result)
			}
		case "key_group_for_hash":
			if got := AssignToKeyGroup(c.KeyHash, c.MaxParallelism); got != c.KeyGroup {
				t.Errorf("%s: AssignToKeyGroup(%d, %d) = %d, want %d", c.CaseID, c.KeyHash, c.MaxParallelism, got, c.KeyGroup)
			}
		case "check_parallelism_preconditions":
			if c.OK == nil {
				t.Fatalf("%s: no ok field", c.CaseID)
			}
			// Flink's one-argument check, and the two-argument one with the
			// largest max parallelism, which then only checks the parallelism.
			for _, err := range []error{
				CheckParallelismBounds(c.Parallelism),
				CheckParallelismPreconditions(c.Parallelism, UpperBoundMaxParallelism),
			} {
				if *c.OK {
					if err != nil {
						t.Errorf("%s: parallelism %d refused: %v", c.CaseID, c.Parallelism, err)
					}
				} else {
					wantIllegalArgument(t, c.CaseID, err, c.Error)
				}
			}
		case "null_key":
			// Go analogue of Java's null key: a nil *string.
			_, err := AssignKeyToParallelOperator(nil, KeyTypeString, c.MaxParallelism, c.Parallelism)
			if !errors.Is(err, ErrNullKey) {
				t.Errorf("%s: got %v, want ErrNullKey", c.CaseID, err)
			}
			if c.Error == nil || c.Error.Exception != "java.lang.NullPointerException" || err == nil || err.Error() != c.Error.Message {
				t.Errorf("%s: got %v, want %+v", c.CaseID, err, c.Error)
			}
		case "constants":
			if c.LowerBound != DefaultLowerBoundMaxParallelism || c.UpperBound != UpperBoundMaxParallelism {
				t.Errorf("%s: constants %d, %d; want %d, %d", c.CaseID,
					DefaultLowerBoundMaxParallelism, UpperBoundMaxParallelism, c.LowerBound, c.UpperBound)
			}
		default:
			t.Errorf("%s: unknown kind %q", c.CaseID, c.Kind)
		}
	}
	for _, k := range []string{"round_up_to_power_of_two", "murmur_hash", "key_group_for_hash",
		"check_parallelism_preconditions", "null_key", "constants"} {
		if kinds[k] == 0 {
			t.Errorf("no case of kind %q", k)
		}
	}
	t.Logf("kinds: %v", kinds)
}
