package main

// Shards of a swarm range, its machine-readable results (--json) and their
// merge (flinksim swarm merge): the swarm split over any batch system, each
// shard a process of its own, no scheduler of ours.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/cluster/campaign"
	"github.com/flinksim/flinksim/sim/input"
	"github.com/flinksim/flinksim/sim/swarm"
)

// shard is the K-th of N shards of a seed range, K from 1; the zero value
// is the whole range.
type shard struct{ k, n int }

// parseShard reads --shard K/N ("" is the whole range): N at least 1, K in
// 1..N.
func parseShard(s string) (shard, error) {
	if s == "" {
		return shard{1, 1}, nil
	}
	ks, ns, ok := strings.Cut(s, "/")
	k, errK := strconv.Atoi(strings.TrimSpace(ks))
	n, errN := strconv.Atoi(strings.TrimSpace(ns))
	switch {
	case !ok || errK != nil || errN != nil:
		return shard{}, badInput("--shard %s: want K/N, two whole numbers, e.g. --shard 3/8 (the third of eight shards)", input.Quote(s))
	case n < 1:
		return shard{}, badInput("--shard %s: N is the number of shards, at least 1", input.Quote(s))
	case k < 1 || k > n:
		hint := ""
		if k == 0 {
			hint = "; an index that counts from 0, as Kubernetes' JOB_COMPLETION_INDEX does, is K - 1: pass --shard $((JOB_COMPLETION_INDEX + 1))/" + strconv.Itoa(n)
		}
		return shard{}, badInput("--shard %s: K must be in 1..%d (shards count from 1)%s", input.Quote(s), n, hint)
	}
	return shard{k, n}, nil
}

// seeds are the shard's seeds of [from, from+count): those s with
// (s - from) mod N = K - 1, in increasing order.
func (sh shard) seeds(from uint64, count int) []uint64 {
	var out []uint64
	for i := sh.k - 1; i < count; i += sh.n {
		out = append(out, from+uint64(i))
	}
	return out
}

// resultWriter writes --json lines as the seeds are emitted, each flushed
// at once, so a shard killed half-way leaves the lines of the seeds it
// finished.
type resultWriter struct {
	path string
	f    *os.File
	w    *bufio.Writer
	enc  *json.Encoder
	err  error
}

func createResults(path string) (*resultWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, badInput("--json: %v", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &resultWriter{path: path, f: f, w: w, enc: enc}, nil
}

func (j *resultWriter) write(r campaign.SeedResult) {
	if j.err != nil {
		return
	}
	if j.err = j.enc.Encode(campaign.RecordOf(r)); j.err == nil {
		j.err = j.w.Flush()
	}
}

// close ends the file; the first write error, if any, names the file.
func (j *resultWriter) close() error {
	err := j.err
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return exitError{1, fmt.Errorf("--json %s: %v", j.path, err)}
	}
	return nil
}

// swarmResultLimits bound a --json file: a line is a few kB (the reproducing
// commands), a file of 100,000 seeds some hundred MB.
var swarmResultLimits = input.Limits{MaxBytes: 1 << 30, MaxLine: 1 << 20}

func mergeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "merge FILE...",
		Short: "Print the swarm's table over the --json files of its shards",
		Long: `Read the --json files that shards of a swarm wrote (flinksim swarm --shard K/N
--json FILE) and print the tables by outcome and by fault kind over all of
them, the convergence line, the seeds the files cover, and each failed seed
with its broken invariants and the commands that reproduce it. The exit code
is the worst class found, as the swarm's (0 all passed, 3 safety, 6 crash,
5 liveness, 7 wall limit); a file that is not a swarm result, or a seed in
two places, is refused with its file and line (exit 2).`,
		Example: `  flinksim swarm merge shard-1.jsonl shard-2.jsonl shard-3.jsonl
  flinksim swarm merge results/*.jsonl`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			out := bufio.NewWriter(cmd.OutOrStdout())
			defer out.Flush()
			recs, err := readResults(files)
			if err != nil {
				return err
			}
			return exitFor(printMerged(out, recs, len(files)))
		},
	}
}

// placed is a record with the file and line it came from.
type placed struct {
	campaign.Record
	class swarm.Class
	kinds []swarm.FaultKind
	file  string
	line  int
}

// readResults reads every file's records, in seed order, refusing a line
// that is not a swarm result and a seed met twice (FILE:LINE).
func readResults(files []string) ([]placed, error) {
	var recs []placed
	where := map[uint64]placed{}
	for _, file := range files {
		data, err := input.ReadFile(file, swarmResultLimits)
		if err != nil {
			return nil, badInput("%v", err)
		}
		for i, line := range bytes.Split(input.Clean(data), []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			p, err := parseRecord(line)
			if err != nil {
				return nil, badInput("%s:%d: %v", file, i+1, err)
			}
			p.file, p.line = file, i+1
			if q, dup := where[p.Seed]; dup {
				return nil, badInput("%s:%d: seed %d is also at %s:%d (do two shards overlap, or is a file given twice?)", file, i+1, p.Seed, q.file, q.line)
			}
			where[p.Seed] = p
			recs = append(recs, p)
		}
	}
	slices.SortFunc(recs, func(a, b placed) int {
		if a.Seed < b.Seed {
			return -1
		}
		if a.Seed > b.Seed {
			return 1
		}
		return 0
	})
	return recs, nil
}

// parseRecord reads one line of a --json file.
func parseRecord(line []byte) (placed, error) {
	var p placed
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p.Record); err != nil {
		return p, fmt.Errorf("not a swarm result (want one JSON object a line, as flinksim swarm --json writes): %v", err)
	}
	if dec.More() {
		return p, fmt.Errorf("not a swarm result: more than one JSON value on the line")
	}
	if p.Format != campaign.ResultFormat {
		return p, fmt.Errorf("not a swarm result: format %s, want %q", input.Quote(p.Format), campaign.ResultFormat)
	}
	i := slices.IndexFunc(swarm.Classes, func(c swarm.Class) bool { return c.String() == p.Class })
	if i < 0 {
		names := make([]string, len(swarm.Classes))
		for j, c := range swarm.Classes {
			names[j] = c.String()
		}
		return p, fmt.Errorf("seed %d: class %s is none of %s", p.Seed, input.Quote(p.Class), strings.Join(names, ", "))
	}
	p.class = swarm.Classes[i]
	if (p.class == swarm.ClassOK) != (len(p.Invariants) == 0) {
		return p, fmt.Errorf("seed %d: class %s with %d broken invariants", p.Seed, p.Class, len(p.Invariants))
	}
	for _, k := range p.Faults {
		if !slices.Contains(swarm.FaultKinds, swarm.FaultKind(k)) {
			return p, fmt.Errorf("seed %d: fault kind %s is not one of this build's (%d kinds): a result of another build?", p.Seed, input.Quote(k), len(swarm.FaultKinds))
		}
		p.kinds = append(p.kinds, swarm.FaultKind(k))
	}
	if (p.ConvergedMs == nil) != (p.SlackMs == nil) {
		return p, fmt.Errorf("seed %d: converged_ms and slack_ms come together", p.Seed)
	}
	return p, nil
}

// printMerged prints the tables over recs (in seed order), the seeds they
// cover and every failure, and returns the worst class.
func printMerged(w io.Writer, recs []placed, files int) swarm.Class {
	rows := make([]campaign.TallyRow, len(recs))
	for i, p := range recs {
		rows[i] = campaign.TallyRow{Class: p.class, Kinds: p.kinds}
		if p.ConvergedMs != nil {
			rows[i].Counted = true
			rows[i].Converged = time.Duration(*p.ConvergedMs) * time.Millisecond
			rows[i].Slack = time.Duration(*p.SlackMs) * time.Millisecond
		}
	}
	fmt.Fprintf(w, "%d seeds from %d files", len(recs), files)
	if len(recs) > 0 {
		first, last := recs[0].Seed, recs[len(recs)-1].Seed
		fmt.Fprintf(w, ": %d-%d", first, last)
		if missing := last - first + 1 - uint64(len(recs)); missing > 0 {
			fmt.Fprintf(w, ", %d missing (the first: %d)", missing, firstGap(recs))
		}
	}
	fmt.Fprintln(w)
	worst := campaign.Summarize(w, rows)
	for _, p := range recs {
		if p.class == swarm.ClassOK {
			continue
		}
		fmt.Fprintf(w, "\nFAIL seed=%d class=%s invariant=%s (%s:%d)\n", p.Seed, p.Class, p.Invariants[0], p.file, p.line)
		fmt.Fprintf(w, "  summary   %s\n  broken:\n", p.Summary)
		for _, v := range p.Violations {
			fmt.Fprintf(w, "    %s\n", v)
		}
		fmt.Fprintf(w, "  reproduce with: %s\n  the run without faults: %s\n  rerun the seed: %s\n", p.Reproduce, p.Reference, p.Rerun)
	}
	return worst
}

// firstGap is the first seed between recs' first and last that no record
// has (recs in seed order, with a gap).
func firstGap(recs []placed) uint64 {
	for i := 1; i < len(recs); i++ {
		if recs[i].Seed != recs[i-1].Seed+1 {
			return recs[i-1].Seed + 1
		}
	}
	return 0
}
