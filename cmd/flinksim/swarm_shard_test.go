package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// seedLines are the per-seed lines of a swarm's stdout.
func seedLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "seed ") {
			lines = append(lines, l)
		}
	}
	return lines
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// lineSeed is the seed of a per-seed line ("seed 7 ...") or of a --json
// line ({"format":...,"seed":7,...}).
func lineSeed(t *testing.T, l string) int {
	t.Helper()
	rest := l
	if i := strings.Index(l, `"seed":`); i >= 0 {
		rest = l[i+len(`"seed":`):]
	} else {
		rest = strings.TrimPrefix(l, "seed ")
	}
	end := strings.IndexAny(rest, " ,")
	n, err := strconv.Atoi(rest[:end])
	if err != nil {
		t.Fatalf("no seed in %q", l)
	}
	return n
}

// Seeds 1-12 in three shards: each shard runs the seeds s with (s - 1) mod 3
// = K - 1, in order; together their per-seed lines and their --json lines
// are the whole range's, byte for byte; merge prints the whole range's
// table and exits 0.
func TestSwarmShardsEqualTheRange(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 24 scenarios")
	}
	dir := t.TempDir()
	all := filepath.Join(dir, "all.jsonl")
	out, errOut, code := cli(t, "swarm", "--from", "1", "--seeds", "12", "--parallel", "2", "--json", all)
	if code != 0 {
		t.Fatalf("the whole range: exit %d\n%s%s", code, out, errOut)
	}
	wantLines, wantJSON := seedLines(out), readLines(t, all)
	if len(wantLines) != 12 || len(wantJSON) != 12 {
		t.Fatalf("the whole range printed %d lines and wrote %d results, want 12 each", len(wantLines), len(wantJSON))
	}
	var gotLines, gotJSON, files []string
	for k := 1; k <= 3; k++ {
		file := filepath.Join(dir, "shard-"+strconv.Itoa(k)+".jsonl")
		files = append(files, file)
		sout, serr, code := cli(t, "swarm", "--from", "1", "--seeds", "12", "--parallel", "1", "--shard", strconv.Itoa(k)+"/3", "--json", file)
		if code != 0 {
			t.Fatalf("shard %d/3: exit %d\n%s%s", k, code, sout, serr)
		}
		lines, js := seedLines(sout), readLines(t, file)
		var want []int
		for s := k; s <= 12; s += 3 {
			want = append(want, s)
		}
		for i, l := range lines {
			if i >= len(want) || lineSeed(t, l) != want[i] || lineSeed(t, js[i]) != want[i] {
				t.Fatalf("shard %d/3 ran\n%s\nwrote\n%s\nwant seeds %v in order", k, strings.Join(lines, "\n"), strings.Join(js, "\n"), want)
			}
		}
		if len(lines) != len(want) || len(js) != len(want) {
			t.Fatalf("shard %d/3: %d lines, %d results, want %d", k, len(lines), len(js), len(want))
		}
		gotLines, gotJSON = append(gotLines, lines...), append(gotJSON, js...)
	}
	bySeed := func(a, b string) int { return lineSeed(t, a) - lineSeed(t, b) }
	slices.SortFunc(gotLines, bySeed)
	slices.SortFunc(gotJSON, bySeed)
	if strings.Join(gotLines, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("the shards' lines:\n%s\nthe whole range's:\n%s", strings.Join(gotLines, "\n"), strings.Join(wantLines, "\n"))
	}
	if strings.Join(gotJSON, "\n") != strings.Join(wantJSON, "\n") {
		t.Errorf("the shards' results:\n%s\nthe whole range's:\n%s", strings.Join(gotJSON, "\n"), strings.Join(wantJSON, "\n"))
	}
	// merge: the whole range's table, from "outcome" to the convergence
	// line (the wall-time line is the swarm's own)
	mout, merr, code := cli(t, append([]string{"swarm", "merge"}, files...)...)
	table := out[strings.Index(out, "\noutcome"):strings.LastIndex(out, "\n\n12 seeds in ")]
	if want := "12 seeds from 3 files: 1-12\n" + table + "\n"; code != 0 || mout != want {
		t.Errorf("merge: exit %d, printed\n%s%s\nwant\n%s", code, mout, merr, want)
	}
}

// swarmResult is a --json line for merge's tests.
func swarmResult(seed int, class string, invariants []string, faults []string, converged, slack int) string {
	q := func(ss []string) string {
		if len(ss) == 0 {
			return "[]"
		}
		return `["` + strings.Join(ss, `","`) + `"]`
	}
	var viol []string
	for _, inv := range invariants {
		viol = append(viol, inv+": what broke")
	}
	conv := ""
	if converged >= 0 {
		conv = `,"converged_ms":` + strconv.Itoa(converged) + `,"slack_ms":` + strconv.Itoa(slack)
	}
	s := strconv.Itoa(seed)
	return `{"format":"flinksim-swarm/1","seed":` + s + `,"class":"` + class + `","invariants":` + q(invariants) + `,"violations":` + q(viol) +
		`,"faults":` + q(faults) + `,"summary":"scenario ` + s + `"` + conv + `,"reproduce":"flinksim run ` + s + `","reference_run":"flinksim run ref ` + s +
		`","rerun":"flinksim swarm --seed ` + s + `"}`
}

// merge over hand-written results: the tables count each seed once by
// class and once for each of its fault kinds, the convergence line takes
// the median (the middle of three), 90th percentile (index 2) and maximum
// of the counted seeds and the least slack, every failure is listed with
// its place, and the exit code is the worst class (safety over liveness).
func TestSwarmMergeTableAndExitCode(t *testing.T) {
	dir := t.TempDir()
	a := writeTemp(t, "a.jsonl", swarmResult(3, "ok", nil, []string{"kill", "pause"}, 500, 20000)+"\n"+
		swarmResult(1, "liveness", []string{"liveness_checkpoint", "liveness_watermark"}, []string{"rescale"}, -1, 0)+"\n")
	b := filepath.Join(dir, "b.jsonl")
	if err := os.WriteFile(b, []byte(swarmResult(2, "ok", nil, nil, -1, 0)+"\n"+swarmResult(5, "safety", []string{"exactly_once_output"}, []string{"kill", "cut-tm-jm"}, 1500, 9000)+"\n"+
		swarmResult(6, "ok", nil, []string{"cut-tm-jm"}, 250, 31000)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := cli(t, "swarm", "merge", a, b)
	want := `5 seeds from 2 files: 1-6, 1 missing (the first: 4)

outcome       seeds
ok                3
safety            1
liveness          1
crash             0
wall-limit        0

fault kind        seeds         ok     safety   liveness      crash wall-limit
kill                  2          1          1          0          0          0
cut-tm-jm             2          1          1          0          0          0
pause                 1          1          0          0          0          0
rescale               1          0          0          1          0          0
(no faults)           1          1          0          0          0          0

faulty runs converged after the flush in 500ms (median), 1.5s (90th percentile), 1.5s (max); least slack to the deadline 9s

FAIL seed=1 class=liveness invariant=liveness_checkpoint (` + a + `:2)
  summary   scenario 1
  broken:
    liveness_checkpoint: what broke
    liveness_watermark: what broke
  reproduce with: flinksim run 1
  the run without faults: flinksim run ref 1
  rerun the seed: flinksim swarm --seed 1

FAIL seed=5 class=safety invariant=exactly_once_output (` + b + `:2)
  summary   scenario 5
  broken:
    exactly_once_output: what broke
  reproduce with: flinksim run 5
  the run without faults: flinksim run ref 5
  rerun the seed: flinksim swarm --seed 5
`
	if code != 3 || out != want {
		t.Errorf("exit %d (want 3), printed\n%s%s\nwant\n%s", code, out, errOut, want)
	}
	// liveness alone: exit 5; all ok: exit 0
	if _, _, code := cli(t, "swarm", "merge", a); code != 5 {
		t.Errorf("liveness and ok: exit %d, want 5", code)
	}
	okOnly := writeTemp(t, "ok.jsonl", swarmResult(9, "ok", nil, []string{"kill"}, 100, 100)+"\n")
	if _, _, code := cli(t, "swarm", "merge", okOnly); code != 0 {
		t.Errorf("ok only: exit %d, want 0", code)
	}
}

// Bad shards and files that are not swarm results are refused with the
// place (the flag, or FILE:LINE), exit 2, before anything runs.
func TestSwarmShardAndMergeBadInput(t *testing.T) {
	good := swarmResult(1, "ok", nil, []string{"kill"}, 100, 100)
	dup := writeTemp(t, "dup.jsonl", good+"\n")
	cases := []struct {
		name    string
		args    []string
		file    string // written to in.jsonl and given to merge
		wantErr string
	}{
		{name: "K 0", args: []string{"swarm", "--seeds", "3", "--shard", "0/3"}, wantErr: `--shard "0/3": K must be in 1..3 (shards count from 1); an index that counts from 0, as Kubernetes' JOB_COMPLETION_INDEX does, is K - 1: pass --shard $((JOB_COMPLETION_INDEX + 1))/3`},
		{name: "K above N", args: []string{"swarm", "--seeds", "3", "--shard", "4/3"}, wantErr: `--shard "4/3": K must be in 1..3`},
		{name: "N 0", args: []string{"swarm", "--seeds", "3", "--shard", "1/0"}, wantErr: `--shard "1/0": N is the number of shards, at least 1`},
		{name: "not K/N", args: []string{"swarm", "--seeds", "3", "--shard", "2"}, wantErr: `--shard "2": want K/N`},
		{name: "shard of one seed", args: []string{"swarm", "--seed", "5", "--shard", "1/2"}, wantErr: "a shard is part of a range"},
		{name: "no files", args: []string{"swarm", "merge"}, wantErr: "requires at least 1 arg"},
		{name: "missing file", args: []string{"swarm", "merge", "/nonexistent/r.jsonl"}, wantErr: "/nonexistent/r.jsonl: no such file"},
		{name: "not JSON", file: good + "\nseed 2 p=1 | ok\n", wantErr: "in.jsonl:2: not a swarm result (want one JSON object a line"},
		{name: "a log line", file: `{"vt":0,"actor":"flinksim","event":"header"}` + "\n", wantErr: `in.jsonl:1: not a swarm result (want one JSON object a line, as flinksim swarm --json writes): json: unknown field "vt"`},
		{name: "no format", file: `{"seed":1,"class":"ok"}` + "\n", wantErr: `in.jsonl:1: not a swarm result: format "", want "flinksim-swarm/1"`},
		{name: "unknown class", file: strings.Replace(good, `"class":"ok"`, `"class":"fine"`, 1) + "\n", wantErr: `in.jsonl:1: seed 1: class "fine" is none of ok, safety, liveness, crash, wall-limit`},
		{name: "ok with a broken invariant", file: swarmResult(1, "ok", []string{"exactly_once_output"}, nil, -1, 0) + "\n", wantErr: "in.jsonl:1: seed 1: class ok with 1 broken invariants"},
		{name: "unknown fault kind", file: swarmResult(1, "ok", nil, []string{"meteor"}, -1, 0) + "\n", wantErr: `in.jsonl:1: seed 1: fault kind "meteor" is not one of this build's`},
		{name: "two values on a line", file: good + good + "\n", wantErr: "in.jsonl:1: not a swarm result: more than one JSON value on the line"},
		{name: "a seed twice in a file", file: good + "\n" + swarmResult(2, "ok", nil, nil, -1, 0) + "\n" + good + "\n", wantErr: "in.jsonl:3: seed 1 is also at "},
		{name: "a seed in two files", file: good + "\n", args: []string{dup}, wantErr: dup + ":1: seed 1 is also at "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if c.file != "" {
				args = append([]string{"swarm", "merge", writeTemp(t, "in.jsonl", c.file)}, c.args...)
			}
			out, errOut, code := cli(t, args...)
			if code != 2 || out != "" || !strings.Contains(errOut, c.wantErr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout, stderr with %q", code, out, errOut, c.wantErr)
			}
		})
	}
}
