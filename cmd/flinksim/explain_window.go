package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/cluster/explain"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/input"
	"github.com/flinksim/flinksim/sim/window"
)

var explainWindowCmd = &cobra.Command{
	Use:   "window --ts MS (--size D [--slide D] [--offset D] | --gap D) [--allowed-lateness D]",
	Short: "Show the event-time windows a timestamp falls into, when each fires and when its state is cleaned up",
	Long: `explain window assigns one element timestamp (milliseconds) as Flink's event-time
assigners do and prints each window it falls into, in ascending start order:

  tumbling (--size):          start = TimeWindow.getWindowStartWithOffset(ts, offset, size)
  sliding  (--size --slide):  every start = getWindowStartWithOffset(ts, offset, slide) - k*slide
                              with start > ts - size (none when ts falls in a gap, slide > size)
  session  (--gap):           [ts, ts + gap), before merging with other elements' sessions

A window [start, end) fires when the watermark reaches its maxTimestamp (end - 1,
EventTimeTrigger) and its state is cleaned up when the watermark reaches the cleanup
time, maxTimestamp + allowed lateness (Long.MAX_VALUE if that overflows: no cleanup).
An element whose windows have all reached their cleanup time is late: it goes to the
late side output, or is dropped and counted in numLateRecordsDropped.

Durations are parsed as Flink parses them (TimeUtils.parseDuration): "15 s", "15s",
"1 min", "500 ms"; a plain number is milliseconds. --offset may be negative ("-8 h").`,
	Example: `  flinksim explain window --ts 4500 --size 5s
  flinksim explain window --ts 4500 --size "10 s" --slide "5 s" --allowed-lateness 2s
  flinksim explain window --ts 1700000000123 --size 1d --offset -8h --json
  flinksim explain window --ts 4500 --gap "30 s"`,
	Args: func(cmd *cobra.Command, args []string) error {
		if len(args) != 0 {
			return badInput("explain window takes no arguments, got %q", args)
		}
		return nil
	},
	RunE: runExplainWindow,
}

func init() {
	f := explainWindowCmd.Flags()
	f.String("ts", "", "event timestamp of the element: epoch milliseconds or an RFC 3339 time such as 2023-11-14T22:13:20.123Z (required)")
	f.String("size", "", "window size of tumbling or sliding windows (a duration)")
	f.String("slide", "", "slide of sliding windows (a duration; default: tumbling)")
	f.String("offset", "", "offset of tumbling or sliding window starts (a duration, may be negative; default 0)")
	f.String("gap", "", "session gap of session windows (a duration)")
	f.String("allowed-lateness", "", "allowed lateness (a duration; default 0)")
	explainCmd.AddCommand(explainWindowCmd)
}

// parseExplainDuration reads a duration flag with sim/config.ParseDuration
// (Flink's TimeUtils.parseDuration) and returns it in whole milliseconds,
// truncated as Duration.toMillis does. allowNegative accepts a leading '-'
// (Flink's API takes negative offsets, its parser does not).
func parseExplainDuration(cmd *cobra.Command, name string, allowNegative bool) (ms int64, given bool, err error) {
	if !cmd.Flags().Changed(name) {
		return 0, false, nil
	}
	text, _ := cmd.Flags().GetString(name)
	trimmed := strings.TrimSpace(text)
	negative := allowNegative && strings.HasPrefix(trimmed, "-")
	if negative {
		trimmed = strings.TrimSpace(strings.TrimPrefix(trimmed, "-"))
	}
	d, err := config.ParseDuration(trimmed)
	if err != nil {
		return 0, true, badInput("--%s %q: %v", name, text, err)
	}
	ms = int64(d / time.Millisecond)
	if negative {
		ms = -ms
	}
	return ms, true, nil
}

// parseTimestamp reads an event time as an events file holds it: integer
// milliseconds since the epoch (may be negative), or an RFC 3339 time,
// truncated to milliseconds toward negative infinity.
func parseTimestamp(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	} else if strings.Trim(s, "-0123456789") == "" && s != "" && s != "-" {
		return 0, fmt.Errorf("out of the range of a 64-bit millisecond timestamp")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("expected epoch milliseconds (e.g. 1700000000123) or an RFC 3339 time (e.g. 2023-11-14T22:13:20.123Z)")
	}
	return t.UnixMilli(), nil
}

func runExplainWindow(cmd *cobra.Command, _ []string) error {
	if !cmd.Flags().Changed("ts") {
		return badInput("--ts is required")
	}
	text, _ := cmd.Flags().GetString("ts")
	ts, err := parseTimestamp(text)
	if err != nil {
		return badInput("--ts %s: %v", input.Quote(text), err)
	}
	size, hasSize, err := parseExplainDuration(cmd, "size", false)
	if err != nil {
		return err
	}
	slide, hasSlide, err := parseExplainDuration(cmd, "slide", false)
	if err != nil {
		return err
	}
	offset, hasOffset, err := parseExplainDuration(cmd, "offset", true)
	if err != nil {
		return err
	}
	gap, hasGap, err := parseExplainDuration(cmd, "gap", false)
	if err != nil {
		return err
	}
	lateness, _, err := parseExplainDuration(cmd, "allowed-lateness", false)
	if err != nil {
		return err
	}

	var assigner window.WindowAssigner
	var describe string
	switch {
	case hasGap && (hasSize || hasSlide || hasOffset):
		return badInput("--gap (session windows) cannot be combined with --size, --slide or --offset")
	case hasGap:
		assigner, err = window.NewEventTimeSessionWindows(gap)
		describe = fmt.Sprintf("session windows, gap %s", fmtMillis(gap))
	case !hasSize:
		return badInput("give --size (tumbling or sliding windows) or --gap (session windows)")
	case hasSlide && slide > 0 && (size+slide-1)/slide > config.MaxSlidingWindowsPerRecord:
		return badInput("--size %s, --slide %s: the record would belong to %d windows, more than the simulator holds (%d per record)",
			fmtMillis(size), fmtMillis(slide), (size+slide-1)/slide, config.MaxSlidingWindowsPerRecord)
	case hasSlide:
		assigner, err = window.NewSlidingEventTimeWindows(size, slide, offset)
		describe = fmt.Sprintf("sliding windows, size %s, slide %s, offset %s", fmtMillis(size), fmtMillis(slide), fmtMillis(offset))
	default:
		assigner, err = window.NewTumblingEventTimeWindows(size, offset, window.StaggerAligned)
		describe = fmt.Sprintf("tumbling windows, size %s, offset %s", fmtMillis(size), fmtMillis(offset))
	}
	if err != nil {
		return badInput("%v", err)
	}
	res, err := explain.WindowsOf(assigner, ts, lateness)
	if err != nil {
		return badInput("%v", err)
	}
	out := cmd.OutOrStdout()
	if explainWantsJSON(cmd) {
		return writeExplainJSON(out, res)
	}
	return writeExplainWindowTable(out, ts, describe, lateness, hasGap, res)
}

// fmtMillis prints a millisecond count with Flink's highest-unit format
// ("5 s", "-8 h").
func fmtMillis(ms int64) string {
	if ms < 0 {
		return "-" + fmtMillis(-ms)
	}
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return fmt.Sprintf("%d ms", ms)
	}
	return config.FormatDuration(time.Duration(ms) * time.Millisecond)
}

func writeExplainWindowTable(out io.Writer, ts int64, describe string, lateness int64, session bool, r explain.Windows) error {
	fmt.Fprintf(out, "timestamp %d, %s, allowed lateness %s\n", ts, describe, fmtMillis(lateness))
	if len(r.Windows) == 0 {
		_, err := fmt.Fprintln(out, "the timestamp falls into no window: it lies in a gap between sliding windows (slide > size); Flink ignores such an element, or counts it as late once the watermark reaches timestamp + allowed lateness")
		return err
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WINDOW\tFIRES AT WATERMARK (maxTimestamp)\tSTATE CLEANED AT WATERMARK (cleanup time)")
	for _, w := range r.Windows {
		cleanup := fmt.Sprint(w.CleanupTime)
		if w.CleanupTime == math.MaxInt64 {
			cleanup += " (Long.MAX_VALUE: never)"
		}
		fmt.Fprintf(tw, "[%d,%d)\t%d\t%s\n", w.Start, w.End, w.MaxTimestamp, cleanup)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	latest := r.Windows[0].CleanupTime
	for _, w := range r.Windows {
		latest = max(latest, w.CleanupTime)
	}
	if session {
		fmt.Fprintln(out, "note: the session grows when other elements of the key fall within the gap; the times above hold for this element alone")
	}
	if latest == math.MaxInt64 {
		_, err := fmt.Fprintln(out, "the element is never late: a window's cleanup time is Long.MAX_VALUE")
		return err
	}
	_, err := fmt.Fprintf(out, "the element is late (side output, or dropped and counted in numLateRecordsDropped) once the watermark reaches %d\n", latest)
	return err
}
