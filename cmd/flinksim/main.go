// Command flinksim runs a deterministic simulation of an Apache Flink 1.20
// cluster. Subcommands: run, replay, explain, settings.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes shared by every subcommand.
const (
	exitOK        = 0
	exitDiff      = 1 // replay found a difference
	exitBadInput  = 2 // bad flags, settings or input files
	exitInvariant = 3 // a simulation invariant broke (FAIL seed=...)
	exitJobFailed = 4 // the simulated job ended FAILED, as Flink's CLI fails
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

var rootCmd = &cobra.Command{
	Use:           "flinksim",
	Short:         "A deterministic simulator of an Apache Flink 1.20 streaming job",
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	err := rootCmd.Execute()
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "flinksim:", err)
	var ee exitError
	if errors.As(err, &ee) {
		os.Exit(ee.code)
	}
	// cobra reports flag errors as plain errors; every error that is not an
	// explicit exitError is caused by the input.
	os.Exit(exitBadInput)
}
