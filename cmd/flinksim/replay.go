package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/input"
	"github.com/flinksim/flinksim/sim/vt"
)

// header is the first line of a JSON event log, as far as replay needs it.
type header struct {
	Event        string            `json:"event"`
	Format       string            `json:"format"`
	Seed         uint64            `json:"seed"`
	Settings     map[string]string `json:"settings"`
	EventsFile   string            `json:"events_file"`
	EventsSHA256 string            `json:"events_sha256"`
	Bounded      bool              `json:"bounded"`
	Actions      []string          `json:"actions"`
}

func init() {
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Re-run the run recorded in a JSON event log and compare",
		Long: `Re-run the run recorded in FILE (a JSON event log written by 'flinksim run'
with --log FILE, or its stdout piped) from its header (settings, seed, events
file, actions) and compare the new log with FILE line by line. Prints
'identical' (exit 0) or the first differing line (exit 1). An unreadable,
truncated or console-format file exits 2, naming the file and the line.

The events file is read at the path recorded in the header, relative to the
directory where 'run' was started: replay from the same directory.`,
		Example: `  flinksim run --duration 1min --log run.log && flinksim replay run.log
  flinksim run --events examples/data/orders-sample.jsonl --log-format json > run.log; flinksim replay run.log`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return badInput("replay takes exactly one FILE (a JSON event log), got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			same, msg, err := replay(args[0])
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
	rootCmd.AddCommand(cmd)
}

// replay re-runs the log at path; it reports whether the logs are
// identical and a message saying so or naming the first difference.
func replay(path string) (bool, string, error) {
	data, err := input.ReadFile(path, input.LogLimits)
	if err != nil {
		return false, "", badInput("%v", err)
	}
	data = input.Clean(data)
	first, _, _ := bytes.Cut(data, []byte("\n"))
	var h header
	if err := json.Unmarshal(first, &h); err != nil || h.Event != string(eventlog.KindHeader) {
		return false, "", badInput("%s:1: not a flinksim JSON event log header (console logs cannot be replayed)", path)
	}
	if h.Format != eventlog.FormatVersion {
		return false, "", badInput("%s:1: log format %q, this flinksim reads %q", path, h.Format, eventlog.FormatVersion)
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
	live, err := liveActions(path, data)
	if err != nil {
		return false, "", err
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
	if h.EventsFile != "" {
		recs, sum, err := readEvents(path+":1: events_file ", h.EventsFile, cfg)
		if err != nil {
			return false, "", err
		}
		if sum != h.EventsSHA256 {
			return false, "", badInput("%s: the events file %s changed since the run (sha256 %s, recorded %s)", path, h.EventsFile, sum, h.EventsSHA256)
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
	if line, want, got, differ := eventlog.FirstDifference(data, out.Bytes()); differ {
		return false, fmt.Sprintf("differs at line %d\n  expected: %s\n  got:      %s", line, input.Cut(want), input.Cut(got)), nil
	}
	return true, "identical", nil
}

// liveActions are the actions a log's action events record: given while
// the run was under way (a UI session), not in the header. Replay injects
// them again at their times.
func liveActions(path string, data []byte) ([]action.Action, error) {
	var out []action.Action
	needle := []byte(`"event":"` + eventlog.KindAction + `"`)
	for i, line := range bytes.Split(data, []byte("\n")) {
		if !bytes.Contains(line, needle) {
			continue
		}
		var ev struct {
			Event  string `json:"event"`
			Action string `json:"action"`
		}
		if err := json.Unmarshal(line, &ev); err != nil || ev.Event != string(eventlog.KindAction) {
			continue
		}
		a, err := action.Parse(ev.Action)
		if err != nil {
			return nil, badInput("%s:%d: %v", path, i+1, err)
		}
		out = append(out, a)
	}
	return out, nil
}
