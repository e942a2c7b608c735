package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/cluster/explain"
	"github.com/flinksim/flinksim/sim/jobgraph"
)

var explainJobCmd = &cobra.Command{
	Use:   "job [--set key=value ...] [--config FILE]",
	Short: "Show the JobGraph the settings give: JobVertices, edges with their ship strategy, key groups, slots, splits",
	Long: `explain job builds the JobGraph of the job the settings describe, as a run does, and
prints it without running anything:

  JobVertices   the operators chained into each (StreamingJobGraphGenerator.isChainable:
                chaining on, a FORWARD edge, which needs equal parallelism) and its
                parallelism: job.source.parallelism (the source, ParseOrder and Filter),
                job.window.parallelism (the window or process function),
                job.sink.parallelism (the sink), each -1 taking parallelism.default
  edges         the ship strategy of each JobEdge, as Flink's StreamPartitioner names it:
                HASH for keyBy (KeyGroupStreamPartitioner), FORWARD between equal
                parallelisms (ForwardPartitioner: subtask i to subtask i), REBALANCE
                otherwise (RebalancePartitioner: round robin over every consumer, from
                a first channel each producer subtask draws from sim.seed and its name)
  key groups    the key-group range of each subtask of the keyed vertex
                (KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex)
  slots         one slot-sharing group: slot i holds subtask i of every vertex that has
                one, so the job needs as many slots as its widest vertex
  splits        the partitions each source reader owns (KafkaSourceEnumerator.getSplitOwner)

It takes run's --set and --config and refuses what run refuses, with the same message
and exit code 2.`,
	Example: `  flinksim explain job
  flinksim explain job --set job.source.parallelism=2 --set job.window.parallelism=3 --set job.sink.parallelism=1
  flinksim explain job --set pipeline.operator-chaining.enabled=false --set job.filter='amount > 100' --json`,
	Args: func(cmd *cobra.Command, args []string) error {
		if len(args) != 0 {
			return badInput("explain job takes no arguments, got %q (settings go with --set key=value)", args)
		}
		return nil
	},
	RunE: runExplainJob,
}

func init() {
	f := explainJobCmd.Flags()
	f.StringArray("set", nil, "a setting key=value, as for run (repeatable)")
	f.String("config", "", "a Flink config.yaml, as for run")
	explainCmd.AddCommand(explainJobCmd)
}

func runExplainJob(cmd *cobra.Command, _ []string) error {
	sets, err := cmd.Flags().GetStringArray("set")
	if err != nil {
		return err
	}
	file, err := cmd.Flags().GetString("config")
	if err != nil {
		return err
	}
	lc, err := loadConfig(file, sets)
	if err != nil {
		return err
	}
	g, err := jobgraph.Build(lc.Config)
	if err != nil {
		return badInput("%v", err)
	}
	res := explain.JobOf(g, lc.Config)
	out := cmd.OutOrStdout()
	if explainWantsJSON(cmd) {
		return writeExplainJSON(out, res)
	}
	return writeExplainJobTable(out, res)
}

// shipStrategyHow says what each ship strategy does, for the table.
var shipStrategyHow = map[string]string{
	jobgraph.PartitionHash:      "keyBy (KeyGroupStreamPartitioner): a record goes to the subtask owning its key group",
	jobgraph.PartitionForward:   "ForwardPartitioner: subtask i to subtask i",
	jobgraph.PartitionRebalance: "RebalancePartitioner: round robin over every consumer subtask",
}

func writeExplainJobTable(out io.Writer, r explain.Job) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "JobGraph %q: %d JobVertices, max parallelism %d, %d slots (one slot-sharing group)\n\n",
		r.JobName, len(r.Vertices), r.MaxParallelism, r.SlotsNeeded)
	if r.SlotsNeeded > r.SlotsOffered {
		fmt.Fprintf(tw, "the cluster offers only %d slots (sim.taskmanagers x taskmanager.numberOfTaskSlots): a run would wait for slots and fail after slot.request.timeout (NoResourceAvailableException); give it --set sim.taskmanagers=%d\n\n",
			r.SlotsOffered, (r.SlotsNeeded+r.SlotsPerTM-1)/r.SlotsPerTM)
	}
	fmt.Fprintln(tw, "vertex\tparallelism\toperators (chained)")
	for _, v := range r.Vertices {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", v.ID, v.Parallelism, v.Name)
	}
	fmt.Fprintln(tw, "\nedge\tship strategy\tchannels\t")
	for _, e := range r.Edges {
		fmt.Fprintf(tw, "%s -> %s\t%s\t%d\t%s\n", e.From, e.To, e.ShipStrategy, e.Channels, shipStrategyHow[e.ShipStrategy])
	}
	if len(r.KeyGroups) > 0 {
		fmt.Fprintf(tw, "\nkey groups of %s (KeyGroupRangeAssignment, max parallelism %d)\n", jobgraph.VertexKeyed, r.MaxParallelism)
		fmt.Fprintln(tw, "subtask\tkey groups")
		for _, k := range r.KeyGroups {
			fmt.Fprintf(tw, "%s\t[%d, %d]\n", k.Subtask, k.Start, k.End)
		}
	}
	fmt.Fprintln(tw, "\nslot\tsubtasks")
	for i, s := range r.Slots {
		fmt.Fprintf(tw, "%d\t%s\n", i, strings.Join(s, ", "))
	}
	fmt.Fprintln(tw, "\nsource reader\tpartitions (KafkaSourceEnumerator.getSplitOwner)")
	for i, ps := range r.Splits {
		parts := make([]string, len(ps))
		for k, p := range ps {
			parts[k] = strconv.Itoa(p)
		}
		owned := strings.Join(parts, ", ")
		if owned == "" {
			owned = "none: holds every downstream watermark back unless job.watermark.idleness is set"
		}
		fmt.Fprintf(tw, "%s\t%s\n", jobgraph.SubtaskName(jobgraph.VertexSource, i, 0), owned)
	}
	return tw.Flush()
}
