package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/cluster/explain"
	"github.com/flinksim/flinksim/sim/keygroup"
)

// explainCmd is "flinksim explain": it shows, step by step and with Flink's
// formulas, where Flink sends something. It has no behaviour of its own; each
// question is a subcommand.
//
// Adding a subcommand from a sibling file of package main (as "explain window"
// will be): define the command there and register it from that file's init,
//
//	func init() { explainCmd.AddCommand(explainWindowCmd) }
//
// Package-level variables are initialised before any init function runs, so
// explainCmd exists whatever order the files' init functions run in. A
// subcommand should read the shared --json flag with explainWantsJSON(cmd),
// write to cmd.OutOrStdout() (writeExplainJSON for JSON), and refuse bad input
// with badInput(...) (exit code 2), using Flink's own message where Flink
// refuses the same thing.
var explainCmd = &cobra.Command{
	Use:   "explain",
	Short: "Explain where Flink routes a key, which reader owns a partition, which windows a timestamp falls into, what the JobGraph is, what a Netty frame holds",
	Long: `explain answers one question with Flink's own formulas and prints every
intermediate value. Output is a plain table; --json prints JSON instead.

  explain key KEY      hashCode, murmur hash, key group, owning subtask (KeyGroupRangeAssignment)
  explain split        which Kafka source reader owns each partition (KafkaSourceEnumerator)
  explain window       the windows a timestamp falls into, when each fires and is cleaned up
  explain job          the JobGraph of the settings: JobVertices, ship strategies, key groups, slots
  explain netty HEX    the fields of frames of Flink's Netty protocol (NettyMessage), from hex`,
	Example: `  flinksim explain key user-42 --parallelism 4
  flinksim explain split --topic orders --partitions 4 --readers 6
  flinksim explain window --ts 2023-11-14T22:13:20.123Z --size 1min
  flinksim explain job --set job.window.parallelism=3 --set job.sink.parallelism=1
  flinksim explain netty 0000001d badc0ffe 06 00000003 0102030405060708 1112131415161718`,
	RunE: func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		var names []string
		for _, c := range cmd.Commands() {
			names = append(names, c.Name())
		}
		sort.Strings(names)
		return badInput("unknown explain subcommand %q (want one of: %s)", args[0], strings.Join(names, ", "))
	},
}

var explainKeyCmd = &cobra.Command{
	Use:   "key KEY --parallelism P [--max-parallelism M] [--key-type string|long|int]",
	Short: "Show the hash code, key group and subtask Flink routes a key to",
	Long: `explain key follows a key through KeyGroupRangeAssignment: Java's hashCode of the
key, MathUtils.murmurHash of it, the key group (murmur hash % max parallelism), the
subtask that owns the key group (key group * parallelism / max parallelism) and that
subtask's key-group range. Without --max-parallelism the max parallelism is Flink's
default for the parallelism, min(max(roundUpToPowerOfTwo(p + p/2), 128), 32768).

A key that starts with '-' (a negative long or int) goes after "--".`,
	Example: `  flinksim explain key user-42 --parallelism 4
  flinksim explain key --key-type long --parallelism 3 --max-parallelism 256 -- -42
  flinksim explain key 7 --key-type int --parallelism 2 --json`,
	Args: func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return badInput("explain key takes exactly one KEY, got %d arguments", len(args))
		}
		return nil
	},
	RunE: runExplainKey,
}

var explainSplitCmd = &cobra.Command{
	Use:   "split --topic T --partitions N --readers R",
	Short: "Show which Kafka source reader owns each partition, and which readers own none",
	Long: `explain split applies KafkaSourceEnumerator.getSplitOwner (flink-connector-kafka
3.4.0) to partitions 0..N-1 of topic T with R source readers:

  start index = ((T.hashCode() * 31) & 0x7FFFFFFF) % R
  owner(p)    = (start index + p) % R

A reader that owns no split does not go idle by itself: it holds the watermark of
every downstream operator at Long.MIN_VALUE, so event-time windows never fire,
unless the WatermarkStrategy sets withIdleness.`,
	Example: `  flinksim explain split --topic orders --partitions 4 --readers 6
  flinksim explain split --topic orders --partitions 12 --readers 4 --json`,
	Args: func(cmd *cobra.Command, args []string) error {
		if len(args) != 0 {
			return badInput("explain split takes no arguments, got %q", args)
		}
		return nil
	},
	RunE: runExplainSplit,
}

// maxExplainPartitions limits the table explain split prints.
const maxExplainPartitions = 1 << 20

func init() {
	explainCmd.PersistentFlags().Bool("json", false, "print JSON instead of a table")

	kf := explainKeyCmd.Flags()
	kf.String("key-type", "string", "Java type of the key: string, long or int (decimal text)")
	kf.Int("parallelism", 0, "parallelism of the keyed operator (required, 1..32768)")
	kf.Int("max-parallelism", 0, "max parallelism, i.e. the number of key groups (1..32768; default: Flink's default for the parallelism)")

	sf := explainSplitCmd.Flags()
	sf.String("topic", "", "Kafka topic name (required)")
	sf.Int("partitions", 0, "number of partitions of the topic (required, >= 1)")
	sf.Int("readers", 0, "number of source readers, the source's parallelism (required, 1..32768)")

	// A flag error under explain is bad input (exit 2). A negative number
	// given as KEY reads as flags: say how to pass it.
	explainCmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if strings.Contains(err.Error(), "unknown shorthand flag") {
			return badInput("%w (a KEY that starts with '-' goes after \"--\": flinksim explain key --key-type long --parallelism 2 -- -42)", err)
		}
		return badInput("%w", err)
	})

	explainCmd.AddCommand(explainKeyCmd, explainSplitCmd)
	rootCmd.AddCommand(explainCmd)
}

// explainWantsJSON reports whether --json was given to explain or one of its
// subcommands.
func explainWantsJSON(cmd *cobra.Command) bool {
	v, err := cmd.Flags().GetBool("json")
	return err == nil && v
}

// writeExplainJSON writes v as indented JSON followed by a newline, without
// escaping <, > and &.
func writeExplainJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// requiredInt returns the value of an int flag that must be given.
func requiredInt(cmd *cobra.Command, name string) (int, error) {
	if !cmd.Flags().Changed(name) {
		return 0, badInput("--%s is required", name)
	}
	return cmd.Flags().GetInt(name)
}

func runExplainKey(cmd *cobra.Command, args []string) error {
	key := args[0]
	ktName, err := cmd.Flags().GetString("key-type")
	if err != nil {
		return err
	}
	kt, err := keygroup.ParseKeyType(ktName)
	if err != nil {
		return badInput("--key-type: %w", err)
	}
	hash, err := keygroup.HashCodeOf(key, kt)
	if err != nil {
		return badInput("%w", err)
	}
	p, err := requiredInt(cmd, "parallelism")
	if err != nil {
		return err
	}
	if err := keygroup.CheckParallelismBounds(p); err != nil {
		return badInput("--parallelism %d: %w", p, err)
	}
	m, isDefault := 0, !cmd.Flags().Changed("max-parallelism")
	if isDefault {
		if m, err = keygroup.DefaultMaxParallelism(p); err != nil {
			return badInput("--parallelism %d: %w", p, err)
		}
	} else if m, err = cmd.Flags().GetInt("max-parallelism"); err != nil {
		return err
	}
	if err := keygroup.CheckParallelismPreconditions(p, m); err != nil {
		if keygroup.CheckParallelismBounds(m) != nil {
			return badInput("--max-parallelism %d: %w", m, err)
		}
		return badInput("--parallelism %d above --max-parallelism %d: %w", p, m, err)
	}

	res, err := explain.KeyOf(key, kt, hash, p, m, isDefault)
	if err != nil { // cannot happen once the preconditions hold
		return fmt.Errorf("explain key: %w", err)
	}
	out := cmd.OutOrStdout()
	if explainWantsJSON(cmd) {
		return writeExplainJSON(out, res)
	}
	return writeExplainKeyTable(out, res, kt)
}

func writeExplainKeyTable(out io.Writer, r explain.Key, kt keygroup.KeyType) error {
	hashHow := map[keygroup.KeyType]string{
		keygroup.KeyTypeString: "String.hashCode(): s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, int arithmetic",
		keygroup.KeyTypeLong:   "Long.hashCode(): (int)(v ^ (v >>> 32))",
		keygroup.KeyTypeInt:    "Integer.hashCode(): the value itself",
	}[kt]
	maxHow := "given with --max-parallelism"
	if r.MaxParallelismDefault {
		maxHow = fmt.Sprintf("default: min(max(roundUpToPowerOfTwo(%d + %d/2), 128), 32768)", r.Parallelism, r.Parallelism)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	rows := [][3]string{
		{"key", fmt.Sprintf("%q", r.Key), kt.JavaClass()},
		{"hash code", fmt.Sprint(r.HashCode), hashHow},
		{"murmur hash", fmt.Sprint(r.MurmurHash), "MathUtils.murmurHash(hash code): MurmurHash3 x86_32, seed 0, made non-negative"},
		{"max parallelism", fmt.Sprint(r.MaxParallelism), maxHow},
		{"key group", fmt.Sprint(r.KeyGroup), fmt.Sprintf("%d %% %d", r.MurmurHash, r.MaxParallelism)},
		{"subtask", fmt.Sprintf("%d of %d", r.Subtask, r.Parallelism),
			fmt.Sprintf("%d * %d / %d (integer division)", r.KeyGroup, r.Parallelism, r.MaxParallelism)},
		{"key-group range", fmt.Sprintf("[%d, %d]", r.KeyGroupRange[0], r.KeyGroupRange[1]),
			fmt.Sprintf("subtask %d owns %d of the %d key groups", r.Subtask, r.KeyGroupRange[1]-r.KeyGroupRange[0]+1, r.MaxParallelism)},
	}
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", row[0], row[1], row[2])
	}
	return tw.Flush()
}

func runExplainSplit(cmd *cobra.Command, _ []string) error {
	if !cmd.Flags().Changed("topic") {
		return badInput("--topic is required")
	}
	topic, err := cmd.Flags().GetString("topic")
	if err != nil {
		return err
	}
	if topic == "" {
		// Kafka's own refusal (ReplicationControlManager.validateNewTopicNames).
		return badInput("--topic \"\": Topic name is illegal, it can't be empty")
	}
	n, err := requiredInt(cmd, "partitions")
	if err != nil {
		return err
	}
	if n <= 0 {
		// Kafka's own refusal of a CreateTopics request (INVALID_PARTITIONS).
		return badInput("--partitions %d: Number of partitions was set to an invalid non-positive value.", n)
	}
	if n > maxExplainPartitions {
		return badInput("--partitions %d is above explain's limit of %d", n, maxExplainPartitions)
	}
	readers, err := requiredInt(cmd, "readers")
	if err != nil {
		return err
	}
	// The readers are the source's parallel subtasks: Flink's bounds apply.
	if err := keygroup.CheckParallelismBounds(readers); err != nil {
		return badInput("--readers %d: %w", readers, err)
	}

	res, owned := explain.SplitsOf(topic, n, readers)
	out := cmd.OutOrStdout()
	if explainWantsJSON(cmd) {
		return writeExplainJSON(out, res)
	}
	return writeExplainSplitTable(out, res, owned)
}

func writeExplainSplitTable(out io.Writer, r explain.Splits, owned [][]int) error {
	fmt.Fprintf(out, "topic %q (hashCode %d): %d partitions over %d readers (KafkaSourceEnumerator.getSplitOwner)\n",
		r.Topic, r.TopicHashCode, r.Partitions, r.Readers)
	fmt.Fprintf(out, "start index = ((%d * 31) & 0x7FFFFFFF) %% %d = %d; partition p goes to reader (%d + p) %% %d\n\n",
		r.TopicHashCode, r.Readers, r.StartIndex, r.StartIndex, r.Readers)

	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tREADER")
	for _, a := range r.Assignments {
		fmt.Fprintf(tw, "%d\t%d\n", a.Partition, a.Reader)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)

	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "READER\tPARTITIONS")
	for reader, ps := range owned {
		if len(ps) == 0 {
			fmt.Fprintf(tw, "%d\t(none: idle)\n", reader)
			continue
		}
		fmt.Fprintf(tw, "%d\t%s\n", reader, explain.JoinInts(ps))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)

	if len(r.IdleReaders) == 0 {
		_, err := fmt.Fprintln(out, "idle readers: none")
		return err
	}
	fmt.Fprintf(out, "idle readers: %s\n", explain.JoinInts(r.IdleReaders))
	_, err := fmt.Fprintf(out, "note: %s\n", r.Note)
	return err
}
