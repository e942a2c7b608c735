package campaign

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flinksim/flinksim/sim/input"
	"github.com/flinksim/flinksim/sim/swarm"
)

// Shards of a swarm range and the merge of their machine-readable results
// (flinksim swarm --shard K/N --json FILE, flinksim swarm merge): the swarm
// split over any batch system, each shard a process of its own, no
// scheduler of ours.

// Shard is the K-th of N shards of a seed range, K from 1 (N at least 1:
// ParseShard makes one); {1, 1} is the whole range.
type Shard struct{ K, N int }

// ParseShard reads --shard K/N ("" is the whole range): N at least 1, K in
// 1..N.
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{K: 1, N: 1}, nil
	}
	ks, ns, ok := strings.Cut(s, "/")
	k, errK := strconv.Atoi(strings.TrimSpace(ks))
	n, errN := strconv.Atoi(strings.TrimSpace(ns))
	switch {
	case !ok || errK != nil || errN != nil:
		return Shard{}, fmt.Errorf("--shard %s: want K/N, two whole numbers, e.g. --shard 3/8 (the third of eight shards)", input.Quote(s))
	case n < 1:
		return Shard{}, fmt.Errorf("--shard %s: N is the number of shards, at least 1", input.Quote(s))
	case k < 1 || k > n:
		hint := ""
		if k == 0 {
			hint = "; an index that counts from 0, as Kubernetes' JOB_COMPLETION_INDEX does, is K - 1: pass --shard $((JOB_COMPLETION_INDEX + 1))/" + strconv.Itoa(n)
		}
		return Shard{}, fmt.Errorf("--shard %s: K must be in 1..%d (shards count from 1)%s", input.Quote(s), n, hint)
	}
	return Shard{K: k, N: n}, nil
}

// Seeds are the shard's seeds of [from, from+count): those s with
// (s - from) mod N = K - 1, in increasing order.
func (sh Shard) Seeds(from uint64, count int) []uint64 {
	var out []uint64
	for i := sh.K - 1; i < count; i += sh.N {
		out = append(out, from+uint64(i))
	}
	return out
}

// resultLimits bound a --json file: a line is a few kB (the reproducing
// commands), a file of 100,000 seeds some hundred MB.
var resultLimits = input.Limits{MaxBytes: 1 << 30, MaxLine: 1 << 20}

// Placed is a record with the file and line it came from.
type Placed struct {
	Record
	class swarm.Class
	kinds []swarm.FaultKind
	file  string
	line  int
}

// ReadResults reads every file's records, in seed order, refusing a line
// that is not a swarm result and a seed met twice (FILE:LINE).
func ReadResults(files []string) ([]Placed, error) {
	var recs []Placed
	where := map[uint64]Placed{}
	for _, file := range files {
		data, err := input.ReadFile(file, resultLimits)
		if err != nil {
			return nil, err
		}
		for i, line := range bytes.Split(input.Clean(data), []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			p, err := parseRecord(line)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", file, i+1, err)
			}
			p.file, p.line = file, i+1
			if q, dup := where[p.Seed]; dup {
				return nil, fmt.Errorf("%s:%d: seed %d is also at %s:%d (do two shards overlap, or is a file given twice?)", file, i+1, p.Seed, q.file, q.line)
			}
			where[p.Seed] = p
			recs = append(recs, p)
		}
	}
	slices.SortFunc(recs, func(a, b Placed) int {
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
func parseRecord(line []byte) (Placed, error) {
	var p Placed
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p.Record); err != nil {
		return p, fmt.Errorf("not a swarm result (want one JSON object a line, as flinksim swarm --json writes): %v", err)
	}
	if dec.More() {
		return p, fmt.Errorf("not a swarm result: more than one JSON value on the line")
	}
	if p.Format != ResultFormat {
		return p, fmt.Errorf("not a swarm result: format %s, want %q", input.Quote(p.Format), ResultFormat)
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

// PrintMerged prints the tables over recs (in seed order), the seeds they
// cover and every failure, and returns the worst class.
func PrintMerged(w io.Writer, recs []Placed, files int) swarm.Class {
	rows := make([]TallyRow, len(recs))
	for i, p := range recs {
		rows[i] = TallyRow{Class: p.class, Kinds: p.kinds}
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
	worst := Summarize(w, rows)
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
func firstGap(recs []Placed) uint64 {
	for i := 1; i < len(recs); i++ {
		if recs[i].Seed != recs[i-1].Seed+1 {
			return recs[i-1].Seed + 1
		}
	}
	return 0
}
