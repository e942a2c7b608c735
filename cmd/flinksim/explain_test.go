package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flinksim/flinksim/cluster/explain"
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

func TestExplainSplitGolden(t *testing.T) {
	type soCase struct {
		CaseID     string `json:"case_id"`
		Topic      string `json:"topic"`
		Partition  int    `json:"partition"`
		NumReaders int    `json:"num_readers"`
		Owner      int    `json:"owner"`
	}
	type group struct {
		topic   string
		readers int
	}
	byGroup := map[group][]soCase{}
	var groups []group
	for _, c := range loadExplainGolden[soCase](t, "split_owner.json") {
		g := group{c.Topic, c.NumReaders}
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], c)
	}
	checked := 0
	for _, g := range groups {
		cases := byGroup[g]
		partitions := 0
		for _, c := range cases {
			partitions = max(partitions, c.Partition+1)
		}
		args := []string{"split", "--topic", g.topic, "--partitions", strconv.Itoa(partitions),
			"--readers", strconv.Itoa(g.readers)}
		if g.topic == "" {
			// Kafka has no topic named "": the CLI refuses it (SplitOwner's own
			// test runs these cases).
			_, err := runExplain(t, args...)
			if !errors.As(err, new(usageError)) || err.Error() != "--topic \"\": Topic name is illegal, it can't be empty" {
				t.Errorf("%s: got %v", cases[0].CaseID, err)
			}
			continue
		}
		var got splitJSON
		runExplainJSON(t, &got, args...)
		if len(got.Assignments) != partitions {
			t.Fatalf("%q R=%d: %d assignments, want %d", g.topic, g.readers, len(got.Assignments), partitions)
		}
		for i, a := range got.Assignments {
			if a.Partition != i || a.Reader < 0 || a.Reader >= g.readers {
				t.Errorf("%q R=%d: assignment %d = %+v", g.topic, g.readers, i, a)
			}
		}
		for _, c := range cases {
			if r := got.Assignments[c.Partition].Reader; r != c.Owner {
				t.Errorf("%s: %q partition %d of %d readers: reader %d, want %d", c.CaseID, c.Topic, c.Partition, c.NumReaders, r, c.Owner)
			}
			checked++
		}
		// Idle readers are exactly the readers that own no partition.
		owns := make([]bool, g.readers)
		for _, a := range got.Assignments {
			owns[a.Reader] = true
		}
		idle := []int{}
		for r, o := range owns {
			if !o {
				idle = append(idle, r)
			}
		}
		if fmt.Sprint(idle) != fmt.Sprint(got.IdleReaders) {
			t.Errorf("%q R=%d: idle_readers %v, want %v", g.topic, g.readers, got.IdleReaders, idle)
		}
		if got.IdleReaders == nil {
			t.Errorf("%q R=%d: idle_readers is null, want a list", g.topic, g.readers)
		}
	}
	if checked == 0 {
		t.Fatal("no split_owner case checked")
	}
	t.Logf("%d cases checked in %d runs", checked, len(groups))
}

func TestExplainSplitIdleReaders(t *testing.T) {
	// Hand-checked: "orders".hashCode() = -1008770331; *31 wraps to -1207109189;
	// & 0x7FFFFFFF = 940374459; % 6 = 3. Partitions 0..3 go to readers 3, 4, 5, 0,
	// so readers 1 and 2 own no split.
	var got splitJSON
	runExplainJSON(t, &got, "split", "--topic", "orders", "--partitions", "4", "--readers", "6")
	var readers []int
	for _, a := range got.Assignments {
		readers = append(readers, a.Reader)
	}
	if fmt.Sprint(readers) != "[3 4 5 0]" || fmt.Sprint(got.IdleReaders) != "[1 2]" {
		t.Errorf("readers %v idle %v; want [3 4 5 0] idle [1 2]", readers, got.IdleReaders)
	}
	if !strings.Contains(got.Note, "Long.MIN_VALUE") || !strings.Contains(got.Note, "withIdleness") {
		t.Errorf("note %q does not explain the watermark trap", got.Note)
	}

	out, err := runExplain(t, "split", "--topic", "orders", "--partitions", "4", "--readers", "6")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"idle readers: 1, 2", "Long.MIN_VALUE", "withIdleness", "(none: idle)",
		"start index = ((-1008770331 * 31) & 0x7FFFFFFF) % 6 = 3"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}

	// As many readers as partitions: nobody is idle, and there is no note.
	runExplainJSON(t, &got, "split", "--topic", "orders", "--partitions", "6", "--readers", "6")
	if len(got.IdleReaders) != 0 || got.IdleReaders == nil {
		t.Errorf("idle_readers = %#v, want []", got.IdleReaders)
	}
}

func TestExplainSplitJSONFields(t *testing.T) {
	out, err := runExplain(t, "split", "--topic", "orders", "--partitions", "2", "--readers", "3", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"assignments", "idle_readers"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, out)
		}
	}
	as, _ := m["assignments"].([]any)
	if len(as) != 2 {
		t.Fatalf("assignments = %v", m["assignments"])
	}
	a0, _ := as[0].(map[string]any)
	var keys []string
	for k := range a0 {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if fmt.Sprint(keys) != "[partition reader]" {
		t.Errorf("assignment fields %v, want [partition reader]", keys)
	}
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

// TestExplainJob checks explain job on source 2 / window 3 / sink 1 against
// values worked out by hand: keyBy is HASH (2 x 3 = 6 channels), window 3 ->
// sink 1 REBALANCE (3 channels); the key-group ranges of 128 key groups over 3
// subtasks are KeyGroupRangeAssignment's start = ceil(i*128/3), end =
// floor(((i+1)*128-1)/3): [0,42], [43,85], [86,127]; "orders" starts its
// splits at ((-1008770331 * 31) & 0x7FFFFFFF) % 2 = 1, so partitions 0..3 go
// to readers 1, 0, 1, 0; the job needs 3 slots, slot 2 holding window-2 alone.
func TestExplainJob(t *testing.T) {
	args := []string{"job", "--set", "job.source.parallelism=2", "--set", "job.window.parallelism=3", "--set", "job.sink.parallelism=1"}
	var got explain.Job
	runExplainJSON(t, &got, args...)
	var verts, edges, groups []string
	for _, v := range got.Vertices {
		verts = append(verts, fmt.Sprintf("%s/%d", v.ID, v.Parallelism))
	}
	for _, e := range got.Edges {
		edges = append(edges, fmt.Sprintf("%s->%s %s %d", e.From, e.To, e.ShipStrategy, e.Channels))
	}
	for _, k := range got.KeyGroups {
		groups = append(groups, fmt.Sprintf("%s[%d,%d]", k.Subtask, k.Start, k.End))
	}
	checks := []struct{ what, got, want string }{
		{"vertices", fmt.Sprint(verts), "[source/2 window/3 sink/1]"},
		{"edges", fmt.Sprint(edges), "[source->window HASH 6 window->sink REBALANCE 3]"},
		{"key groups", fmt.Sprint(groups), "[window-0[0,42] window-1[43,85] window-2[86,127]]"},
		{"slots", fmt.Sprint(got.Slots), "[[source-0 window-0 sink-0] [source-1 window-1] [window-2]]"},
		{"splits", fmt.Sprint(got.Splits), "[[1 3] [0 2]]"},
		{"slots needed", strconv.Itoa(got.SlotsNeeded), "3"},
		{"slots offered", strconv.Itoa(got.SlotsOffered), "2"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.what, c.got, c.want)
		}
	}

	// The default job: keyBy is never chainable, so two vertices, the sink
	// chained to the window at parallelism 2.
	runExplainJSON(t, &got, "job")
	verts = verts[:0]
	for _, v := range got.Vertices {
		verts = append(verts, fmt.Sprintf("%s/%d", v.ID, v.Parallelism))
	}
	if fmt.Sprint(verts) != "[source/2 window/2]" || len(got.Edges) != 1 || got.Edges[0].ShipStrategy != "HASH" {
		t.Errorf("default job graph: vertices %v edges %+v", verts, got.Edges)
	}

	out, err := runExplain(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"window -> sink    REBALANCE", "the cluster offers only 2 slots", "--set sim.taskmanagers=3", "window-2  [86, 127]", "2     window-2"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}

	// run's refusals, with Flink's message and the bad-input exit code.
	_, err = runExplain(t, "job", "--set", "job.sink.parallelism=0")
	if err == nil || !strings.Contains(err.Error(), "The parallelism of an operator must be at least 1") || errors.As(err, new(exitError)) {
		t.Errorf("job.sink.parallelism=0: %v, want a bad-input error (exit 2)", err)
	}
}

// More sliding windows per record than the simulator holds are refused
// before any is made, as run refuses them (config.MaxSlidingWindowsPerRecord):
// 1 d sliding every 1 ms would be 86.4 million windows.
func TestExplainWindowRefusesTooManySlidingWindows(t *testing.T) {
	_, err := runExplain(t, "window", "--ts", "5", "--size", "10001ms", "--slide", "1ms")
	if !errors.As(err, new(usageError)) || err.Error() != "--size 10001 ms, --slide 1 ms: the record would belong to 10001 windows, more than the simulator holds (10000 per record)" {
		t.Errorf("10001 windows: %v (%T)", err, err)
	}
	out, err := runExplain(t, "window", "--ts", "5", "--size", "10000ms", "--slide", "1ms", "--json")
	if err != nil || strings.Count(out, `"start"`) != 10000 {
		t.Errorf("10000 windows: %v, %d windows", err, strings.Count(out, `"start"`))
	}
}

// explain netty decodes a frame given in hex (a golden vector of
// sim/netty, written by hand from NettyMessage.AddCredit's write), and the
// log's own dump of a frame; a bad frame exits 2 naming the byte at fault.
func TestExplainNetty(t *testing.T) {
	out, errOut, code := cli(t, "explain", "netty", "0000001d", "badc0ffe", "06", "00000003", "0102030405060708", "1112131415161718")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"frame 1 at byte 0: AddCredit (id 6), 29 bytes",
		"AddCredit(01020304050607081112131415161718 : 3)",
		"9       4     credit       3",
		"13      16    receiverId   01020304050607081112131415161718",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var doc struct {
		Bytes  int `json:"bytes"`
		Frames []struct {
			Offset, Length, ID int
			Message            string
			Fields             []struct {
				Offset, Size int
				Name, Value  string
			}
		} `json:"frames"`
	}
	runExplainJSON(t, &doc, "netty", "00000009badc0ffe05 0000001d badc0ffe 09 00000007 0102030405060708 1112131415161718")
	if doc.Bytes != 38 || len(doc.Frames) != 2 || doc.Frames[0].Message != "CloseRequest" || doc.Frames[1].Offset != 9 ||
		doc.Frames[1].Message != "BacklogAnnouncement" || doc.Frames[1].Fields[3].Name != "backlog" || doc.Frames[1].Fields[3].Value != "7" {
		t.Errorf("--json: %+v", doc)
	}
	out, errOut, code = cli(t, "explain", "netty", "len=29 magic=0xBADC0FFE id=6(AddCredit) body[20]=00000003 01020304 05060708 11121314 15161718")
	if code != 0 || !strings.Contains(out, "AddCredit(01020304050607081112131415161718 : 3)") {
		t.Errorf("the log's dump: exit %d, %s%s", code, out, errOut)
	}
	for _, c := range []struct{ give, want string }{
		{"0000001d badc0ffe 06 00000000 0102030405060708 1112131415161718", "explain netty: byte 9: The announced credit should be greater than 0"},
		{"00000009 deadbeef 05", "explain netty: byte 4: Network stream corrupted: received incorrect magic number."},
		{"00000009badc0ffe05 0000001d badc0ffe 06", "explain netty: byte 18 (frame 2, from byte 9): netty: incomplete frame"},
		{"0000 00x9", "explain netty: hex: character 8 ('x') is not a hex digit"},
	} {
		_, errOut, code := cli(t, "explain", "netty", c.give)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("explain netty %s: exit %d, %q; want 2 and %q", c.give, code, errOut, c.want)
		}
	}
}
