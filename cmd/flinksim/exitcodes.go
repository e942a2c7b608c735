package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// The exit codes each command's --help lists: its own, and only those
// (usageTemplate appends exitCodesOf to every help).
const (
	exitCodesRun = `Exit codes:
  0    the run ended: the job FINISHED, or was still RUNNING at the end of sim.duration
  2    bad input: flags, settings, an input file (named with its line), a combination Flink refuses
  3    a broken invariant (FAIL seed=... vt=... invariant=..., with the command that reproduces it)
  4    the simulated job ended FAILED (its log is still written in full)
  130  interrupted (SIGINT); 143 terminated (SIGTERM): the log ends INTERRUPTED, replayable`
	exitCodesJobManager = exitCodesRun + `
  5    the transport failed: no listen, the wait for taskmanager processes timed out,
       a process sent what this program cannot decode`
	exitCodesTaskManager = `Exit codes:
  0    the run ended
  2    bad input: flags, addresses, TLS files
  5    refused (another version, too many processes, a duplicate name, a refused
       certificate), unreachable, the jobmanager lost or sending what this program
       cannot decode, or interrupted (SIGINT, SIGTERM)`
	exitCodesReplay = `Exit codes:
  0    identical (also when the log was recorded by another build: replay says so)
  1    the replayed log differs: the first differing line and field are printed
  2    bad input: an unreadable, truncated or console-format log (named with its line),
       an events file that is missing or not the one the run read`
	exitCodesSwarm = `Exit codes (the worst class found):
  0    every seed passed
  2    bad flags
  3    a safety invariant broke
  5    a liveness check failed
  6    a run crashed
  7    the wall limit was reached`
	exitCodesUI = `Exit codes:
  0    stopped
  2    bad input: flags, settings, an input file or a recorded log (named with its line)
  130  interrupted (SIGINT); 143 terminated (SIGTERM)`
	exitCodesQuery = `Exit codes:
  0    ok
  2    bad input: flags, an unknown key, a value or a combination Flink refuses`
	exitCodesVersion = `Exit codes:
  0    ok
  2    bad flags`
	exitCodesRoot = `Exit codes (each command's --help lists its own):
  0    ok
  1    replay found a difference
  2    bad input: flags, settings, an input file (named with its line), a combination Flink refuses
  3    a broken invariant (FAIL seed=... vt=... invariant=...)
  4    the simulated job ended FAILED
  5    jobmanager, taskmanager: the transport failed
  6, 7 swarm: a run crashed, the wall limit
  130  interrupted (SIGINT); 143 terminated (SIGTERM)`
)

// exitCodesOf is the exit-code list of cmd's help: by the command under
// the root it belongs to (explain key is explain's).
func exitCodesOf(cmd *cobra.Command) string {
	path := strings.Fields(cmd.CommandPath())
	if len(path) < 2 {
		return exitCodesRoot
	}
	switch path[1] {
	case "run":
		return exitCodesRun
	case "jobmanager":
		return exitCodesJobManager
	case "taskmanager":
		return exitCodesTaskManager
	case "replay":
		return exitCodesReplay
	case "swarm":
		return exitCodesSwarm
	case "ui":
		return exitCodesUI
	case "settings", "explain":
		return exitCodesQuery
	}
	return exitCodesVersion // version, help, completion
}

// usageTemplate is cobra's usage template with the command's exit codes
// at the end.
func usageTemplate(base string) string {
	cobra.AddTemplateFunc("exitCodes", exitCodesOf)
	return base + "\n{{exitCodes .}}\n"
}
