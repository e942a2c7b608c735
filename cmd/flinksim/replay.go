package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/cluster/inputs"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/input"
	"github.com/flinksim/flinksim/sim/vt"
)

func init() {
	var eventsFile string
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Re-run the run recorded in a JSON event log and compare",
		Long: `Re-run the run recorded in FILE (a JSON event log written by 'flinksim run'
with --log FILE, or its stdout piped) from its header (settings, seed, events
file, actions) and compare the new log with FILE line by line. Prints
'identical' (exit 0) or the first differing line, naming the field that differs
(exit 1). An unreadable, truncated or console-format file exits 2, naming the
file and the line; a file that lacks only its final newline is replayed.

The header names the build that wrote the log (its fingerprint: module
versions, VCS revision, the executable's digest). A log recorded by another
build is replayed all the same; replay says so and shows both fingerprints,
since another build may run other rules.

The events file is read at the path recorded in the header, which is relative
to the directory where 'run' was started; from another directory, replay looks
for it beside FILE, or takes --events FILE. Either way the file must have the
sha256 the header records.`,
		Example: `  flinksim run --duration 1min --log run.log && flinksim replay run.log
  flinksim run --events examples/data/orders-sample.jsonl --log-format json > run.log; flinksim replay run.log
  flinksim replay /tmp/run.log --events examples/data/orders-sample.jsonl`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return badInput("replay takes exactly one FILE (a JSON event log), got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			same, msg, err := replay(args[0], eventsFile)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), msg)
			if !same {
				return exitError{exitDiff, fmt.Errorf("replay of %s differs", args[0])}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&eventsFile, "events", "", "the events file the run read, when its recorded path does not lead to it from here (checked by the sha256 in the header)")
	rootCmd.AddCommand(cmd)
}

// replay re-runs the log at path; it reports whether the logs are
// identical and a message saying so or naming the first difference.
// eventsFile, when not "", is where the run's events file is now.
func replay(path, eventsFile string) (bool, string, error) {
	data, h, err := inputs.ReadLog(path)
	if err != nil {
		return false, "", badInput("%v", err)
	}
	var notes []string
	if len(data) > 0 && data[len(data)-1] != '\n' {
		// the summary is checked whole below; only the newline is missing
		data = append(data, '\n')
		notes = append(notes, "the file lacks its final newline")
	}
	trimmed := bytes.TrimRight(data, "\n")
	lastNL := bytes.LastIndexByte(trimmed, '\n')
	var last struct {
		Event     string `json:"event"`
		VT        int64  `json:"vt"`
		JobStatus string `json:"job_status"`
	}
	if err := json.Unmarshal(trimmed[lastNL+1:], &last); err != nil || last.Event != string(eventlog.KindSummary) {
		return false, "", badInput("%s:%d: truncated: the last line is not the summary event", path, bytes.Count(trimmed, []byte("\n"))+1)
	}
	live, err := inputs.LiveActions(path, data)
	if err != nil {
		return false, "", badInput("%v", err)
	}
	cfg, err := config.FromSettings(h.Settings)
	if err != nil {
		return false, "", badInput("%s:1: %v", path, err)
	}
	spec := runSpec{cfg: cfg}
	var acts []action.Action
	for _, text := range h.Actions {
		a, err := action.Parse(text)
		if err != nil {
			return false, "", badInput("%s:1: actions: %v", path, err)
		}
		acts = append(acts, a)
	}
	action.Sort(acts)
	if h.EventsFile == "" && eventsFile != "" {
		return false, "", badInput("--events %s: the run of %s read no events file (it ran the generator)", eventsFile, path)
	}
	if h.EventsFile != "" {
		recs, sum, err := inputs.RecordedEvents(path, eventsFile, h, cfg)
		if err != nil {
			return false, "", badInput("%v", err)
		}
		spec.opt = cluster.Options{Events: recs, EventsFile: h.EventsFile, EventsSHA256: sum, Unbounded: !h.Bounded}
	}
	spec.opt.Actions = acts
	spec.opt.LiveActions = live
	if last.JobStatus == "INTERRUPTED" {
		// the run was cut short at the summary's virtual time
		spec.opt.StopAt, spec.opt.Stop = vt.Of(last.VT), true
	}
	var out bytes.Buffer
	if _, err := execute(spec, &out, nil, nil); err != nil {
		return false, "", err
	}
	got := out.Bytes()
	ours := cluster.BuildFingerprint()
	otherBuild := h.Build == nil || *h.Build != ours
	if otherBuild {
		got = asRecordedBuild(got, h.Build)
	}
	var msg string
	same := true
	if line, want, have, differ := eventlog.FirstDifference(data, got); differ {
		same = false
		msg = "differs at line " + strconv.Itoa(line) + lineDifference(want, have)
	} else {
		msg = "identical"
	}
	if len(notes) > 0 {
		msg += " (" + strings.Join(notes, "; ") + ")"
	}
	if otherBuild {
		recorded := "(none: a log written before builds were named)"
		if h.Build != nil {
			recorded = *h.Build
		}
		msg += "\nthe log was recorded by another build, which may run other rules:\n  recorded:   " + recorded + "\n  this build: " + ours
	}
	return same, msg, nil
}

// asRecordedBuild returns the log got with its header's build field as the
// recorded log has it (recorded nil: without one), so that a log from
// another build compares by its events; replay says that the builds differ.
func asRecordedBuild(got []byte, recorded *string) []byte {
	first, rest, _ := bytes.Cut(got, []byte("\n"))
	field := []byte(`,"build":` + eventlog.JSONString(cluster.BuildFingerprint()))
	var with []byte
	if recorded != nil {
		with = []byte(`,"build":` + eventlog.JSONString(*recorded))
	}
	out := bytes.Replace(first, field, with, 1)
	return append(append(out, '\n'), rest...)
}

// lineDifference says how the recorded line want and the replayed line
// have differ: which event it is and the first differing field, or, when a
// line is missing or not JSON, both lines cut to a readable length.
func lineDifference(want, have string) string {
	var ev struct {
		VT    *int64 `json:"vt"`
		Actor string `json:"actor"`
		Event string `json:"event"`
	}
	if diff := eventlog.FieldDifference(want, have, input.Cut); diff != "" {
		what := ""
		if json.Unmarshal([]byte(want), &ev) == nil && ev.Event != "" && ev.VT != nil {
			what = fmt.Sprintf(" (%s of %s at vt %d)", ev.Event, ev.Actor, *ev.VT)
		}
		return what + ": " + diff
	}
	return "\n  expected: " + input.Cut(want) + "\n  got:      " + input.Cut(have)
}
