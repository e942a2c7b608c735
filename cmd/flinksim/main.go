// Command flinksim runs a deterministic simulation of an Apache Flink 1.20
// cluster. Subcommands: run, replay, explain, settings.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/input"
)

// Exit codes shared by every subcommand.
const (
	exitOK        = 0
	exitDiff      = 1 // replay found a difference
	exitBadInput  = 2 // bad flags, settings or input files
	exitInvariant = 3 // a simulation invariant broke (FAIL seed=...)
	exitJobFailed = 4 // the simulated job ended FAILED, as Flink's CLI fails
	// exitInterrupted and exitTerminated end a run cut short by SIGINT or
	// SIGTERM (128 + the signal number, as a shell reports them).
	exitInterrupted = 130
	exitTerminated  = 143
)

// usageError marks an error caused by the user's input: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func badInput(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitError carries an explicit exit code.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }

// goVersion is the Go release the binary was built with.
var goVersion = runtime.Version()

// version is what --version and "flinksim version" print.
func version() string {
	return fmt.Sprintf("%s (simulates Apache Flink 1.20; log format %s; %s)", eventlog.ProgramVersion, eventlog.FormatVersion, goVersion)
}

var rootCmd = &cobra.Command{
	Use:   "flinksim",
	Short: "A deterministic simulator of an Apache Flink 1.20 streaming job",
	Long: `flinksim runs an Apache Flink 1.20 streaming job (Kafka source, keyBy, a window or
process function, Kafka sink) on a simulated cluster in virtual time: the same
settings, seed and actions give the same event log, byte for byte.

Commands: run, ui, replay, settings, explain (key, split, window, job), swarm,
jobmanager, taskmanager, version.

` + actionVerbsHelp + `

Settings come from --config FILE (Flink's config.yaml, flat or nested), --set
key=value, --duration and --seed; 'flinksim settings' lists them.`,
	Example: `  flinksim run
  flinksim run --events examples/data/playground-clicks.jsonl --set job.window.size=15s
  flinksim settings taskmanager.memory.process.size
  flinksim explain split --topic orders --partitions 4 --readers 6`,
	Version:       version(),
	SilenceUsage:  true,
	SilenceErrors: true,
}

func init() {
	rootCmd.SetVersionTemplate("{{.Version}}\n")
	rootCmd.SetUsageTemplate(usageTemplate(rootCmd.UsageTemplate()))
	rootCmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return badInput("%w (see %s --help)", err, cmd.CommandPath())
	})
	rootCmd.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version of flinksim, the Flink version it simulates and the log format",
		Long:  "version prints flinksim's version, the Flink version it simulates, the event log format it writes and reads, and the Go version it was built with.",
		Example: `  flinksim version
  flinksim --version`,
		Args: cobra.NoArgs,
		Run:  func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), version()) },
	})
}

// maxErrorLine is the longest line of an error message printed: input
// quoted in an error is cut (input.Quote) where it is made, and this is
// the backstop for what is not.
const maxErrorLine = 2000

func main() {
	err := rootCmd.Execute()
	if err == nil {
		return
	}
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		if len(l) > maxErrorLine {
			lines[i] = input.Cut(l)
		}
	}
	fmt.Fprintln(os.Stderr, "flinksim:", strings.Join(lines, "\n"))
	var ee exitError
	if errors.As(err, &ee) {
		os.Exit(ee.code)
	}
	// cobra reports flag errors as plain errors; every error that is not an
	// explicit exitError is caused by the input.
	os.Exit(exitBadInput)
}
