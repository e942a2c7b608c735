package main

// Shards of a swarm range, its machine-readable results (--json) and their
// merge (flinksim swarm merge): the swarm split over any batch system, each
// shard a process of its own, no scheduler of ours.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/cluster/campaign"
)

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
		RunE: func(cmd *cobra.Command, files []string) (err error) {
			out := bufio.NewWriter(cmd.OutOrStdout())
			defer flushInto(&err, out)
			recs, err := campaign.ReadResults(files)
			if err != nil {
				return badInput("%v", err)
			}
			return exitFor(campaign.PrintMerged(out, recs, len(files)))
		},
	}
}
