package main

import (
	"bufio"
	"fmt"
	"github.com/flinksim/flinksim/cluster/console"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/cluster/campaign"
	"github.com/flinksim/flinksim/sim/input"
	"github.com/flinksim/flinksim/sim/swarm"
)

type swarmFlags struct {
	seeds       int
	from        uint64
	seed        string
	parallel    int
	wallLimit   time.Duration
	keep        string
	maxFailures int
	driver      string
	shard       string
	json        string
}

func init() {
	var f swarmFlags
	cmd := &cobra.Command{
		Use:   "swarm",
		Short: "Run many seeded scenarios with random faults and check every invariant",
		Long: `Run the fault swarm: each seed draws a scenario (settings, workload, faults at
virtual times), runs it once without faults and once with them, and checks the
invariants (exactly-once and at-least-once output against the run without faults,
watermarks never go back, credits never negative, every record counted, no broken
invariant in the log, liveness after the faults heal, the wall limit).

One line per seed on stdout, in seed order whatever --parallel says; a table by
outcome and by fault kind at the end; for each failure its seed, scenario,
invariant and the flinksim run command that reproduces it. The swarm's exit code
is the worst class found: 0 all passed, 3 a safety invariant broke, 6 a crash,
5 liveness, 7 the wall limit (2 bad flags).

--shard K/N runs the K-th of N shards of the range (K from 1): the seeds s
with (s - from) mod N = K - 1, each seed's line as the whole range prints it.
--json FILE writes one JSON line per seed (seed, class, broken invariants,
fault kinds, the reproducing commands); 'flinksim swarm merge FILE...' prints
the table over every shard's file and exits with the worst class.`,
		Example: `  flinksim swarm --seeds 200 --parallel 2
  flinksim swarm --from 1000 --seeds 50 --keep /tmp/swarm
  flinksim swarm --seed 42
  flinksim swarm --from 1 --seeds 20000 --shard 3/8 --json shard-3.jsonl
  flinksim swarm merge shard-*.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return swarmMain(cmd, f) },
	}
	fl := cmd.Flags()
	fl.IntVar(&f.seeds, "seeds", 100, "number of seeds to run")
	fl.Uint64Var(&f.from, "from", 1, "first seed")
	fl.StringVar(&f.seed, "seed", "", "run this one seed, printing its scenario first")
	fl.IntVar(&f.parallel, "parallel", runtime.NumCPU(), "seeds run at once")
	fl.DurationVar(&f.wallLimit, "wall-limit", 30*time.Second, "wall time one run of a seed may take")
	fl.StringVar(&f.keep, "keep", "", "write the logs and scenarios (JSON) of failed seeds into this directory")
	fl.IntVar(&f.maxFailures, "max-failures", 0, "stop starting seeds after this many failed (0: no limit)")
	fl.StringVar(&f.driver, "driver", "plain", "plain (the plain loop, faster) or actors (every component a Hollywood actor); both write the same log")
	fl.StringVar(&f.shard, "shard", "", "K/N: run only the K-th of N shards of the range (K from 1): the seeds s with (s - from) mod N = K - 1")
	fl.StringVar(&f.json, "json", "", "write one JSON line per seed to this file (flinksim swarm merge reads them)")
	cmd.AddCommand(mergeCommand())
	rootCmd.AddCommand(cmd)
}

func swarmMain(cmd *cobra.Command, f swarmFlags) (err error) {
	out := bufio.NewWriter(cmd.OutOrStdout())
	defer flushInto(&err, out)
	if f.keep != "" {
		if err := os.MkdirAll(f.keep, 0o755); err != nil {
			return badInput("--keep: %v", err)
		}
	}
	if f.wallLimit <= 0 {
		return badInput("--wall-limit must be positive")
	}
	c := campaign.Campaign{Parallel: f.parallel, WallLimit: f.wallLimit, MaxFailures: f.maxFailures}
	switch f.driver {
	case "plain":
		c.Run = cluster.RunPlain
	case "actors":
		c.Run = cluster.Run
	default:
		return badInput("--driver %q: allowed values are plain, actors", f.driver)
	}
	if f.seed != "" {
		if f.shard != "" {
			return badInput("--shard %s: a shard is part of a range (--from, --seeds), not of --seed", input.Quote(f.shard))
		}
		seed, err := strconv.ParseUint(f.seed, 10, 64)
		if err != nil {
			return badInput("--seed %q: %v", f.seed, err)
		}
		sc := swarm.Generate(seed)
		fmt.Fprint(out, sc.Describe())
		_ = out.Flush() // before the run; an error sticks and flushInto reports it
		var js *resultWriter
		if f.json != "" {
			if js, err = createResults(f.json); err != nil {
				return err
			}
		}
		r := c.RunSeed(seed)
		fmt.Fprintln(out, r.Line())
		if js != nil {
			js.write(r)
			if err := js.close(); err != nil {
				return err
			}
		}
		if r.Verdict.Class != swarm.ClassOK {
			c.Report(out, r, f.keep)
		}
		return exitFor(r.Verdict.Class)
	}
	if f.seeds < 1 {
		return badInput("--seeds must be at least 1")
	}
	if f.parallel < 1 {
		f.parallel = 1
		c.Parallel = 1
	}
	sh, err := campaign.ParseShard(f.shard)
	if err != nil {
		return badInput("%v", err)
	}
	seeds := sh.Seeds(f.from, f.seeds)
	if len(seeds) == 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "swarm: shard %s of %d seeds holds no seed\n", f.shard, f.seeds)
	}
	var js *resultWriter
	if f.json != "" {
		if js, err = createResults(f.json); err != nil {
			return err
		}
	}
	start := time.Now()
	results := c.RunSeeds(seeds, cmd.ErrOrStderr(), func(r campaign.SeedResult) {
		fmt.Fprintln(out, r.Line())
		_ = out.Flush() // a line a seed; an error sticks and flushInto reports it
		if js != nil {
			js.write(r)
		}
	})
	wall := time.Since(start)
	if js != nil {
		if err := js.close(); err != nil {
			return err
		}
	}
	rows := make([]campaign.TallyRow, len(results))
	for i, r := range results {
		rows[i] = r.TallyRow()
	}
	worst := campaign.Summarize(out, rows)
	fmt.Fprintf(out, "\n%d seeds in %.1fs wall on %s: %.2f seeds/s\n", len(results), wall.Seconds(),
		console.Plural(int64(f.parallel), "worker"), float64(len(results))/wall.Seconds())
	for _, r := range results {
		if r.Verdict.Class != swarm.ClassOK {
			c.Report(out, r, f.keep)
		}
	}
	return exitFor(worst)
}

func exitFor(c swarm.Class) error {
	if c == swarm.ClassOK {
		return nil
	}
	return exitError{c.ExitCode(), fmt.Errorf("the swarm found a %s failure", c)}
}
