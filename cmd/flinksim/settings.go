package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/flinksim/flinksim/sim/config"
	"github.com/spf13/cobra"
)

// settingsCmd is "flinksim settings": it prints the registry of every
// setting (sim/config.Registry), sorted by key.
var settingsCmd = &cobra.Command{
	Use:   "settings [KEY] [--json]",
	Short: "List every setting with its type, defaults, allowed range and meaning, or one in full",
	Long: `settings lists every key flinksim accepts in a config.yaml or with --set, sorted by key:
its type, the simulator's default, Flink 1.20's default where it differs ("(same)" when
it does not, "(simulator only)" when Flink has no such key or default), the allowed
range, and what it does. Flink keys keep Flink's names; job.* keys describe the
simulated job; sim.* keys are the simulator's own.

Durations are written as Flink writes them ("200 ms", "1 min", "20 µs"; a plain number
is milliseconds) and memory sizes likewise ("64 mb", "1g"; a plain number is bytes).

With KEY, settings prints that one setting in full. A key Flink 1.20 documents
that the simulator does not model is accepted in a config file and with --set,
and listed on stderr as "not simulated"; settings KEY says so for such a key.`,
	Example: `  flinksim settings
  flinksim settings taskmanager.memory.process.size
  flinksim settings --json`,
	Args: func(cmd *cobra.Command, args []string) error {
		if len(args) > 1 {
			return badInput("settings takes at most one KEY, got %d arguments", len(args))
		}
		return nil
	},
	RunE: func(cmd *cobra.Command, args []string) error {
		asJSON, err := cmd.Flags().GetBool("json")
		if err != nil {
			return err
		}
		if len(args) == 1 {
			return writeOneSetting(cmd.OutOrStdout(), args[0], asJSON)
		}
		if asJSON {
			return writeSettingsJSON(cmd.OutOrStdout(), config.Registry())
		}
		return writeSettingsTable(cmd.OutOrStdout(), config.Registry())
	},
}

func init() {
	settingsCmd.Flags().Bool("json", false, "print a JSON array instead of a table")
	rootCmd.AddCommand(settingsCmd)
}

// settingJSON is one setting in "flinksim settings --json". flink_default is
// "" when Flink has no such key or default.
type settingJSON struct {
	Key          string `json:"key"`
	Type         string `json:"type"`
	SimDefault   string `json:"sim_default"`
	FlinkDefault string `json:"flink_default"`
	Range        string `json:"range"`
	Doc          string `json:"doc"`
}

func writeSettingsJSON(w io.Writer, reg []config.Setting) error {
	out := make([]settingJSON, len(reg))
	for i, s := range reg {
		out[i] = settingJSON{s.Key, s.Type, s.SimDefault, s.FlinkDefault, s.Range, s.Doc}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// flinkDefaultColumn is what the table shows for Flink's default.
func flinkDefaultColumn(s config.Setting) string {
	switch s.FlinkDefault {
	case "":
		return "(simulator only)"
	case s.SimDefault:
		return "(same)"
	default:
		return s.FlinkDefault
	}
}

// defaultColumn is what the table shows for the simulator's default: the
// value, with what it stands for when it is a special one ("-1
// (parallelism.default)").
func defaultColumn(s config.Setting) string {
	def := s.SimDefault
	if def == "" {
		return `""`
	}
	if m, ok := s.Means[def]; ok {
		def += " (" + m + ")"
	}
	return def
}

func writeSettingsTable(w io.Writer, reg []config.Setting) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tTYPE\tDEFAULT\tFLINK DEFAULT\tRANGE\tDOC")
	for _, s := range reg {
		def := defaultColumn(s)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Key, s.Type, def, flinkDefaultColumn(s), s.Range, s.Doc)
	}
	return tw.Flush()
}

// writeOneSetting prints one setting in full: every column of the table on
// its own line, the doc unabridged. A Flink key the simulator does not
// model is described as such; an unknown key is bad input with the
// nearest key suggested.
func writeOneSetting(w io.Writer, key string, asJSON bool) error {
	s, ok := config.Lookup(key)
	if !ok {
		c := config.Default()
		err := c.Set(key, "")
		var ns *config.NotSimulatedError
		if errors.As(err, &ns) {
			fmt.Fprintf(w, "%s is a Flink 1.20 configuration key that the simulator does not model: a config file or --set may name it; it is listed as \"not simulated\" and has no effect.\n", key)
			return nil
		}
		return badInput("%v", err)
	}
	if asJSON {
		return writeSettingsJSON(w, []config.Setting{s})
	}
	def := defaultColumn(s)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "key\t%s\n", s.Key)
	fmt.Fprintf(tw, "type\t%s\n", s.Type)
	fmt.Fprintf(tw, "default\t%s\n", def)
	fmt.Fprintf(tw, "Flink's default\t%s\n", flinkDefaultColumn(s))
	fmt.Fprintf(tw, "allowed\t%s\n", s.Range)
	if s.Input {
		fmt.Fprintf(tw, "in the log header\tno: the sizes it derives are\n")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, wrap(s.Doc, 88))
	return nil
}

// wrap breaks text into lines of at most width characters at spaces.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(text) {
		if i > 0 {
			if n+1+len(word) > width {
				b.WriteByte('\n')
				n = 0
			} else {
				b.WriteByte(' ')
				n++
			}
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}
