package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flinksim/flinksim/sim/keygroup"
)

// The explain commands are run through rootCmd with SetArgs, exactly as main
// runs them, and their output is checked against the golden vectors computed
// by Flink's own classes (testdata/golden). A missing golden file or one with
// no case fails.

const explainGoldenDir = "../../testdata/golden"

// resetExplainFlags puts every flag of the explain tree back to its default:
// cobra keeps flag values between Execute calls on the same commands.
func resetExplainFlags(c *cobra.Command) {
	reset := func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			_ = sv.Replace(nil) // Set would append the printed default "[]"
			f.Changed = false
			return
		}
		_ = f.Value.Set(f.DefValue)
		f.Changed = false
	}
	c.Flags().VisitAll(reset)
	c.PersistentFlags().VisitAll(reset)
	for _, sub := range c.Commands() {
		resetExplainFlags(sub)
	}
}

// runExplain executes "flinksim explain ARGS..." and returns what it wrote.
func runExplain(t *testing.T, args ...string) (string, error) {
	t.Helper()
	resetExplainFlags(explainCmd)
	t.Cleanup(func() {
		rootCmd.SetOut(nil)
		rootCmd.SetErr(nil)
		rootCmd.SetArgs(nil)
	})
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&out)
	rootCmd.SetArgs(append([]string{"explain"}, args...))
	err := rootCmd.Execute()
	return out.String(), err
}

// runExplainJSON runs with --json, fails on error, and decodes into v.
func runExplainJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	// --json goes right after the subcommand, before any "--".
	withJSON := append([]string{args[0], "--json"}, args[1:]...)
	out, err := runExplain(t, withJSON...)
	if err != nil {
		t.Fatalf("explain %q: %v", args, err)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("explain %q: output is not JSON: %v\n%s", args, err, out)
	}
}

func loadExplainGolden[T any](t *testing.T, file string) []T {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(explainGoldenDir, file))
	if err != nil {
		t.Fatalf("golden file: %v", err)
	}
	var doc struct {
		Cases []T `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(doc.Cases) == 0 {
		t.Fatalf("%s: no cases", file)
	}
	return doc.Cases
}

type keyJSON struct {
	HashCode              int32  `json:"hash_code"`
	MurmurHash            int32  `json:"murmur_hash"`
	KeyGroup              int    `json:"key_group"`
	Subtask               int    `json:"subtask"`
	KeyGroupRange         []int  `json:"key_group_range"`
	MaxParallelism        int    `json:"max_parallelism"`
	Key                   string `json:"key"`
	MaxParallelismDefault bool   `json:"max_parallelism_default"`
}

// keyArgs builds the arguments of "explain key"; the key goes after "--" so
// that negative numbers are not read as flags.
func keyArgs(key, keyType string, p, m int) []string {
	args := []string{"key", "--key-type", keyType, "--parallelism", strconv.Itoa(p)}
	if m > 0 {
		args = append(args, "--max-parallelism", strconv.Itoa(m))
	}
	return append(args, "--", key)
}

func TestExplainKeyGolden(t *testing.T) {
	type kgCase struct {
		CaseID        string                    `json:"case_id"`
		Type          string                    `json:"type"`
		Value         string                    `json:"value"`
		HashCode      int32                     `json:"hash_code"`
		MurmurHash    int32                     `json:"murmur_hash"`
		KeyGroup      map[string]int            `json:"key_group"`
		OperatorIndex map[string]map[string]int `json:"operator_index"`
	}
	cases := loadExplainGolden[kgCase](t, "keygroups.json")
	runs := 0
	for _, c := range cases {
		for ms, byP := range c.OperatorIndex {
			m, _ := strconv.Atoi(ms)
			for ps, wantSubtask := range byP {
				p, _ := strconv.Atoi(ps)
				var got keyJSON
				runExplainJSON(t, &got, keyArgs(c.Value, c.Type, p, m)...)
				runs++
				if got.Key != c.Value || got.HashCode != c.HashCode || got.MurmurHash != c.MurmurHash ||
					got.KeyGroup != c.KeyGroup[ms] || got.Subtask != wantSubtask || got.MaxParallelism != m ||
					got.MaxParallelismDefault {
					t.Errorf("%s M=%d p=%d: got %+v; want hash %d murmur %d key group %d subtask %d",
						c.CaseID, m, p, got, c.HashCode, c.MurmurHash, c.KeyGroup[ms], wantSubtask)
					continue
				}
				want, _ := keygroup.RangeForOperatorIndex(m, p, wantSubtask)
				if len(got.KeyGroupRange) != 2 || got.KeyGroupRange[0] != want.Start || got.KeyGroupRange[1] != want.End ||
					got.KeyGroup < want.Start || got.KeyGroup > want.End {
					t.Errorf("%s M=%d p=%d: key_group_range %v, want [%d %d] holding %d",
						c.CaseID, m, p, got.KeyGroupRange, want.Start, want.End, got.KeyGroup)
				}
			}
		}
		// Without --max-parallelism: Flink's default, 128 for every golden
		// parallelism (all <= 85), so the golden M=128 answers apply.
		for ps, wantSubtask := range c.OperatorIndex["128"] {
			p, _ := strconv.Atoi(ps)
			var got keyJSON
			runExplainJSON(t, &got, keyArgs(c.Value, c.Type, p, 0)...)
			runs++
			if got.MaxParallelism != 128 || !got.MaxParallelismDefault || got.Subtask != wantSubtask || got.KeyGroup != c.KeyGroup["128"] {
				t.Errorf("%s default M, p=%d: got %+v; want M 128 (default), key group %d, subtask %d",
					c.CaseID, p, got, c.KeyGroup["128"], wantSubtask)
			}
		}
	}
	t.Logf("%d cases, %d runs", len(cases), runs)
}

func TestExplainKeyJSONFields(t *testing.T) {
	out, err := runExplain(t, "key", "user-0", "--parallelism", "4", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"hash_code", "murmur_hash", "key_group", "subtask", "key_group_range", "max_parallelism"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, out)
		}
	}
	// Golden keygroups-0000: "user-0" hashes to -836031826, murmur 457503496,
	// key group 8 of 128, subtask 0 of 4, whose range is [0, 31].
	want := map[string]any{"hash_code": -836031826.0, "murmur_hash": 457503496.0, "key_group": 8.0,
		"subtask": 0.0, "max_parallelism": 128.0}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if r, ok := m["key_group_range"].([]any); !ok || len(r) != 2 || r[0] != 0.0 || r[1] != 31.0 {
		t.Errorf("key_group_range = %v, want [0 31]", m["key_group_range"])
	}
}

func TestExplainKeyTable(t *testing.T) {
	out, err := runExplain(t, "key", "user-0", "--parallelism", "4")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"user-0"`, "-836031826", "457503496", "457503496 % 128",
		"8 * 4 / 128", "0 of 4", "[0, 31]", "default: min(max(roundUpToPowerOfTwo(4 + 4/2), 128), 32768)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.HasPrefix(strings.TrimSpace(out), "{") {
		t.Errorf("table output is JSON:\n%s", out)
	}
}

func TestExplainKeyDefaultMaxParallelismGolden(t *testing.T) {
	type rangesCase struct {
		CaseID      string `json:"case_id"`
		Kind        string `json:"kind"`
		Parallelism int    `json:"parallelism"`
		DefaultMaxP int    `json:"default_max_parallelism"`
		Error       *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	n := 0
	for _, c := range loadExplainGolden[rangesCase](t, "keygroup_ranges.json") {
		switch c.Kind {
		case "default_max_parallelism":
			var got keyJSON
			runExplainJSON(t, &got, keyArgs("k", "string", c.Parallelism, 0)...)
			if got.MaxParallelism != c.DefaultMaxP || !got.MaxParallelismDefault {
				t.Errorf("%s: p=%d: max parallelism %d, want default %d", c.CaseID, c.Parallelism, got.MaxParallelism, c.DefaultMaxP)
			}
			n++
		case "default_max_parallelism_error":
			_, err := runExplain(t, keyArgs("k", "string", c.Parallelism, 0)...)
			wantUsageError(t, c.CaseID, err, c.Error.Message)
			n++
		}
	}
	if n == 0 {
		t.Fatal("no default max parallelism case")
	}
}

func TestExplainKeyRangeErrorsGolden(t *testing.T) {
	type rangesCase struct {
		CaseID         string `json:"case_id"`
		Kind           string `json:"kind"`
		MaxParallelism int    `json:"max_parallelism"`
		Parallelism    int    `json:"parallelism"`
		Error          *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	n := 0
	for _, c := range loadExplainGolden[rangesCase](t, "keygroup_ranges.json") {
		if c.Kind != "range_error" {
			continue
		}
		args := []string{"key", "k", "--parallelism", strconv.Itoa(c.Parallelism),
			"--max-parallelism", strconv.Itoa(c.MaxParallelism)}
		_, err := runExplain(t, args...)
		wantUsageError(t, c.CaseID, err, c.Error.Message)
		n++
	}
	if n == 0 {
		t.Fatal("no range_error case")
	}
}

// wantUsageError checks that err is a usageError (exit code 2) whose text is want.
func wantUsageError(t *testing.T, id string, err error, want string) {
	t.Helper()
	var ue usageError
	if !errors.As(err, &ue) {
		t.Errorf("%s: got %v (%T), want a usageError %q", id, err, err, want)
		return
	}
	// the flag it is about, then Flink's own message, wrapped unchanged
	var iae *keygroup.IllegalArgumentError
	if !errors.As(err, &iae) || iae.Message != want || !strings.HasPrefix(err.Error(), "--") || !strings.HasSuffix(err.Error(), ": "+want) {
		t.Errorf("%s: got message %q, want \"--FLAG VALUE: %s\"", id, err.Error(), want)
	}
}

type splitJSON struct {
	Assignments []struct {
		Partition int `json:"partition"`
		Reader    int `json:"reader"`
	} `json:"assignments"`
	IdleReaders []int  `json:"idle_readers"`
	Note        string `json:"note"`
}

func TestExplainRefusals(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // the whole message, or a prefix ending in "..."
	}{
		{name: "parallelism above max", args: []string{"key", "k", "--parallelism", "200", "--max-parallelism", "128"},
			want: "--parallelism 200 above --max-parallelism 128: Maximum parallelism must not be smaller than parallelism."},
		{name: "max parallelism too large", args: []string{"key", "k", "--parallelism", "4", "--max-parallelism", "40000"},
			want: "--max-parallelism 40000: Operator parallelism not within bounds: 40000"},
		{name: "max parallelism zero", args: []string{"key", "k", "--parallelism", "4", "--max-parallelism", "0"},
			want: "--max-parallelism 0: Operator parallelism not within bounds: 0"},
		{name: "parallelism zero", args: []string{"key", "k", "--parallelism", "0"},
			want: "--parallelism 0: Operator parallelism not within bounds: 0"},
		{name: "parallelism too large for a default", args: []string{"key", "k", "--parallelism", "32769"},
			want: "--parallelism 32769: Operator parallelism not within bounds: 32769"},
		{name: "non-numeric long", args: []string{"key", "abc", "--key-type", "long", "--parallelism", "2"},
			want: `key is not a decimal Long (-9223372036854775808..9223372036854775807): For input string: "abc"`},
		{name: "int out of range", args: []string{"key", "2147483648", "--key-type", "int", "--parallelism", "2"},
			want: `key is not a decimal Integer (-2147483648..2147483647): For input string: "2147483648"`},
		{name: "unknown key type", args: []string{"key", "k", "--key-type", "double", "--parallelism", "2"},
			want: `--key-type: unknown key type "double": want string, long or int`},
		{name: "missing parallelism", args: []string{"key", "k"}, want: "--parallelism is required"},
		{name: "no key", args: []string{"key", "--parallelism", "2"}, want: "explain key takes exactly one KEY, got 0 arguments"},
		{name: "two keys", args: []string{"key", "a", "b", "--parallelism", "2"}, want: "explain key takes exactly one KEY, got 2 arguments"},
		{name: "negative key without --", args: []string{"key", "-42", "--key-type", "long", "--parallelism", "2"},
			want: "unknown shorthand flag: '4' in -42 ..."},
		{name: "bad flag value", args: []string{"key", "k", "--parallelism", "x"}, want: `invalid argument "x" for "--parallelism" flag...`},
		{name: "split without topic", args: []string{"split", "--partitions", "2", "--readers", "2"}, want: "--topic is required"},
		{name: "split empty topic", args: []string{"split", "--topic", "", "--partitions", "2", "--readers", "2"},
			want: `--topic "": Topic name is illegal, it can't be empty`},
		{name: "split zero partitions", args: []string{"split", "--topic", "t", "--partitions", "0", "--readers", "2"},
			want: "--partitions 0: Number of partitions was set to an invalid non-positive value."},
		{name: "split missing partitions", args: []string{"split", "--topic", "t", "--readers", "2"}, want: "--partitions is required"},
		{name: "split too many partitions", args: []string{"split", "--topic", "t", "--partitions", "2000000", "--readers", "2"},
			want: "--partitions 2000000 is above explain's limit of 1048576"},
		{name: "split zero readers", args: []string{"split", "--topic", "t", "--partitions", "2", "--readers", "0"},
			want: "--readers 0: Operator parallelism not within bounds: 0"},
		{name: "split too many readers", args: []string{"split", "--topic", "t", "--partitions", "2", "--readers", "32769"},
			want: "--readers 32769: Operator parallelism not within bounds: 32769"},
		{name: "split missing readers", args: []string{"split", "--topic", "t", "--partitions", "2"}, want: "--readers is required"},
		{name: "split with an argument", args: []string{"split", "x", "--topic", "t", "--partitions", "2", "--readers", "2"},
			want: `explain split takes no arguments, got ["x"]`},
		{name: "unknown subcommand", args: []string{"nope"}, want: `unknown explain subcommand "nope" (want one of: ...`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runExplain(t, tt.args...)
			var ue usageError
			if !errors.As(err, &ue) {
				t.Fatalf("got %v (%T), output %q; want a usageError", err, err, out)
			}
			if prefix, ok := strings.CutSuffix(tt.want, "..."); ok {
				if !strings.HasPrefix(err.Error(), prefix) {
					t.Errorf("message %q, want prefix %q", err.Error(), prefix)
				}
			} else if err.Error() != tt.want {
				t.Errorf("message %q, want %q", err.Error(), tt.want)
			}
		})
	}
}

func TestExplainRefusalKeepsFlinkError(t *testing.T) {
	_, err := runExplain(t, "key", "k", "--parallelism", "200", "--max-parallelism", "128")
	var iae *keygroup.IllegalArgumentError
	if !errors.As(err, &iae) {
		t.Fatalf("got %v, want it to wrap keygroup.IllegalArgumentError", err)
	}
	_, err = runExplain(t, "key", "abc", "--key-type", "long", "--parallelism", "2")
	var nfe *keygroup.NumberFormatError
	if !errors.As(err, &nfe) {
		t.Fatalf("got %v, want it to wrap keygroup.NumberFormatError", err)
	}
}
