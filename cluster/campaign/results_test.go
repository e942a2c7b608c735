package campaign

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The shards of a range are disjoint, in increasing order, and together
// the whole range: seed s is in shard (s - from) mod N + 1.
func TestShardsPartitionTheRange(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8} {
		var all []uint64
		for k := 1; k <= n; k++ {
			sh, err := ParseShard(fmt.Sprintf("%d/%d", k, n))
			if err != nil {
				t.Fatal(err)
			}
			seeds := sh.Seeds(100, 20)
			if !slices.IsSorted(seeds) {
				t.Errorf("shard %d/%d out of order: %v", k, n, seeds)
			}
			for _, s := range seeds {
				if int(s-100)%n != k-1 {
					t.Errorf("seed %d in shard %d/%d", s, k, n)
				}
			}
			all = append(all, seeds...)
		}
		slices.Sort(all)
		if len(all) != 20 || all[0] != 100 || all[19] != 119 || len(slices.Compact(all)) != 20 {
			t.Errorf("%d shards give %v", n, all)
		}
	}
	if sh, err := ParseShard(""); err != nil || sh != (Shard{K: 1, N: 1}) {
		t.Errorf(`ParseShard("") = %v, %v`, sh, err)
	}
	for give, want := range map[string]string{"2": "want K/N", "1/0": "N is the number of shards", "0/3": "JOB_COMPLETION_INDEX", "4/3": "K must be in 1..3"} {
		if _, err := ParseShard(give); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseShard(%q) = %v, want %q", give, err, want)
		}
	}
}

// A merge reads the records of every file in seed order and refuses a
// seed met twice or a line that is no result, naming the file and line.
func TestReadResults(t *testing.T) {
	dir := t.TempDir()
	line := func(seed int) string {
		return fmt.Sprintf(`{"format":%q,"seed":%d,"class":"ok","invariants":[],"violations":[],"faults":[],"summary":"s","reproduce":"r","reference_run":"r","rerun":"r"}`, ResultFormat, seed)
	}
	a := filepath.Join(dir, "a.jsonl")
	b := filepath.Join(dir, "b.jsonl")
	os.WriteFile(a, []byte(line(3)+"\n"+line(1)+"\n"), 0o644)
	os.WriteFile(b, []byte(line(2)+"\n"), 0o644)
	recs, err := ReadResults([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	var seeds []uint64
	for _, r := range recs {
		seeds = append(seeds, r.Seed)
	}
	if fmt.Sprint(seeds) != "[1 2 3]" {
		t.Errorf("seeds %v", seeds)
	}
	var out strings.Builder
	if c := PrintMerged(&out, recs, 2); c.String() != "ok" || !strings.HasPrefix(out.String(), "3 seeds from 2 files: 1-3\n") {
		t.Errorf("merged: %s\n%s", c, out.String())
	}
	dup := filepath.Join(dir, "dup.jsonl")
	os.WriteFile(dup, []byte(line(2)+"\n"), 0o644)
	if _, err := ReadResults([]string{b, dup}); err == nil || !strings.Contains(err.Error(), "dup.jsonl:1: seed 2 is also at "+b+":1") {
		t.Errorf("a seed twice: %v", err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(line(1)+"\nnot json\n"), 0o644)
	if _, err := ReadResults([]string{bad}); err == nil || !strings.Contains(err.Error(), "bad.jsonl:2: not a swarm result") {
		t.Errorf("a line that is no result: %v", err)
	}
}
