package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/flinksim/flinksim/sim/config"
	"github.com/spf13/cobra"
)

// settingsCmd is "flinksim settings": it prints the registry of every
// setting (sim/config.Registry), sorted by key.
var settingsCmd = &cobra.Command{
	Use:   "settings [--json]",
	Short: "List every setting with its type, defaults, allowed range and meaning",
	Long: `settings lists every key flinksim accepts in a config.yaml or with --set, sorted by key:
its type, the simulator's default, Flink 1.20's default where it differs ("(same)" when
it does not, "(simulator only)" when Flink has no such key or default), the allowed
range, and what it does. Flink keys keep Flink's names; job.* keys describe the
simulated job; sim.* keys are the simulator's own.

Durations are written as Flink writes them ("200 ms", "1 min", "20 µs"; a plain number
is milliseconds) and memory sizes likewise ("64 mb", "1g"; a plain number is bytes).`,
	Example: `  flinksim settings
  flinksim settings --json`,
	Args: func(cmd *cobra.Command, args []string) error {
		if len(args) != 0 {
			return badInput("settings takes no arguments, got %q", args)
		}
		return nil
	},
	RunE: func(cmd *cobra.Command, args []string) error {
		asJSON, err := cmd.Flags().GetBool("json")
		if err != nil {
			return err
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

func writeSettingsTable(w io.Writer, reg []config.Setting) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tTYPE\tDEFAULT\tFLINK DEFAULT\tRANGE\tDOC")
	for _, s := range reg {
		def := s.SimDefault
		if def == "" {
			def = `""`
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Key, s.Type, def, flinkDefaultColumn(s), s.Range, s.Doc)
	}
	return tw.Flush()
}
