package console

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fatih/color"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
)

// Screen is the terminal a person watches: the lines of the View on out,
// warnings on errOut, and one live status line at the bottom of out that
// every other line first erases and then redraws (statusText), at most
// every 100 ms of wall time. Wall time paces the drawing only; it never
// reaches the log.
type Screen struct {
	out, errOut io.Writer
	live        bool // draw the status line (out is a terminal)
	shown       bool // a status line is on the Screen
	lastDraw    time.Time
	statusText  func() string
	colour      bool
}

// NewScreen is the terminal of out (the view) and errOut (warnings), in
// colour when colour is set; the status line is off until SetLive.
func NewScreen(out, errOut io.Writer, colour bool) *Screen {
	return &Screen{out: out, errOut: errOut, colour: colour}
}

// SetLive draws the status line (out is a terminal) or not.
func (s *Screen) SetLive(live bool) { s.live = live }

// ClearStatus erases the status line, if one is on the screen, so that
// another line can be written in its place.
func (s *Screen) ClearStatus() {
	if s.shown {
		fmt.Fprint(s.out, "\r\033[K")
		s.shown = false
	}
}

// line prints one line on w, keeping the status line below it.
func (s *Screen) line(w io.Writer, text string) {
	s.ClearStatus()
	fmt.Fprintln(w, text)
	s.Draw(true)
}

// draw redraws the status line when it is due (or now, with force).
func (s *Screen) Draw(force bool) {
	if !s.live || s.statusText == nil {
		return
	}
	now := time.Now()
	if !force && now.Sub(s.lastDraw) < 100*time.Millisecond {
		return
	}
	s.lastDraw = now
	text := s.statusText()
	if text == "" {
		return
	}
	fmt.Fprint(s.out, "\r\033[K"+text)
	s.shown = true
}

// paint colours text when colour is on (a terminal and NO_COLOR unset).
func (s *Screen) paint(attr color.Attribute, text string) string {
	if !s.colour {
		return text
	}
	c := color.New(attr)
	c.EnableColor()
	return c.Sprint(text)
}

// subtaskStats is what the summary table shows of one subtask attempt.
type subtaskStats struct {
	name                      string
	recordsIn, recordsOut     int64
	watermark                 int64
	hasWatermark, isSource    bool
	busy, backpressured, idle float64 // sums of the per-second values
	samples                   int
	keys, windows, late       int64
	hasKeys                   bool
}

type partitionStats struct {
	partition, endOffset, committed, lag int64
	hasCommitted                         bool
}

// View is the person's View of a run (Observer): a short line per notable
// event, a live status line, and a summary table at the end (finish).
type View struct {
	s      *Screen
	filter KindFilter
	quiet  bool
	cfg    config.Config

	subtasks   map[string]*subtaskStats
	order      []string
	partitions []partitionStats
	topic      string

	registered   []string
	slotsPerTM   int64
	checkpoints  int
	lastCkpt     *eventlog.CheckpointCompleted
	ckptFailed   int
	firingsShown int
	group        *firingGroup
	results      int64
	jobStatus    string
	ended        bool
	current      map[string]bool // the subtasks of the running attempt
	now          int64           // virtual µs of the last event
	readTotal    int64           // records read by the source (sum of read offsets)
	readPrev     int64
	readPrevVT   int64
	rate         float64
	lag          int64
}

// firingGroup gathers the firings of one window bound, printed as one line
// once another window's firings begin or the run ends.
type firingGroup struct {
	start, end int64
	firing     int64
	keys       int64
	sum        float64
	vt         int64
	actors     []string // the subtasks that fired, in order
}

func NewView(s *Screen, cfg config.Config, filter KindFilter, quiet bool) *View {
	v := &View{s: s, cfg: cfg, filter: filter, quiet: quiet, subtasks: map[string]*subtaskStats{}, current: map[string]bool{}}
	s.statusText = v.statusLine
	return v
}

// show prints one event line unless the filter or --quiet hides its kind.
func (v *View) show(ev *eventlog.LogEvent, tag string, attr color.Attribute, text string) {
	if v.quiet || !v.filter.passEvent(ev) {
		return
	}
	v.s.line(v.s.out, v.s.paint(color.Faint, fmtVT(ev.Vt))+"  "+v.s.paint(attr, fmt.Sprintf("%-10s", tag))+" "+text)
}

func (v *View) Observe(ev *eventlog.LogEvent) {
	v.now = ev.Vt
	if ev.Kind() != eventlog.KindWindowFired {
		v.flushFirings()
	}
	switch e := eventlog.Decode(ev).(type) {
	case eventlog.TaskExecutorRegistered:
		v.registered = append(v.registered, e.TaskManager)
		v.slotsPerTM = e.NumSlots
	case eventlog.JobGraph:
		if len(v.registered) > 0 {
			v.show(ev, "cluster", color.FgCyan, fmt.Sprintf("%s x %s registered (%s)",
				Plural(int64(len(v.registered)), "TaskManager"), Plural(v.slotsPerTM, "slot"), strings.Join(v.registered, ", ")))
			v.registered = nil
		}
		v.show(ev, "job", color.FgCyan, describeGraph(e))
	case eventlog.JobStatus:
		v.jobStatus = e.Status
		if v.jobStatus == "RUNNING" {
			v.current = map[string]bool{} // a new attempt: its subtasks report from now on
		}
		text := e.JobID + " " + v.jobStatus
		if c := e.Cause; c != "" {
			text += ": " + shortCause(c)
		}
		attr := color.FgGreen
		switch v.jobStatus {
		case "FAILED", "FAILING":
			attr = color.FgRed
		case "RESTARTING":
			attr = color.FgYellow
		case "CREATED":
			return // the RUNNING line follows at once
		}
		v.show(ev, "job", attr, text)
	case eventlog.SplitsAssigned:
		parts := strings.Trim(e.Partitions, "[]")
		if parts == "" {
			return // reader_without_splits follows
		}
		noun := "partitions"
		if !strings.Contains(parts, ",") {
			noun = "partition"
		}
		v.show(ev, "source", color.FgBlue, fmt.Sprintf("%s reads %s %s", e.Reader, noun, parts))
	case eventlog.ReaderNoSplits:
		v.show(ev, "source", color.FgYellow, e.Reader+" has no split")
	case eventlog.SplitFinished:
		v.show(ev, "source", color.FgBlue, fmt.Sprintf("%s finished partition %d at offset %d", ev.Actor, e.Partition, e.Offset))
	case eventlog.CheckpointCompleted:
		v.checkpoints++
		v.lastCkpt = &e
		v.show(ev, "checkpoint", color.FgGreen, fmt.Sprintf("%d (%s) completed in %s, %s", e.CheckpointID, e.CheckpointKind,
			config.FormatDuration(time.Duration(e.DurationMs)*time.Millisecond), config.FormatMemorySize(e.CheckpointedSize)))
	case eventlog.CheckpointFailed:
		v.ckptFailed++
		v.show(ev, "checkpoint", color.FgYellow, fmt.Sprintf("%d failed: %s", e.CheckpointID, e.Message))
	case eventlog.CheckpointDeclined:
		v.show(ev, "checkpoint", color.FgYellow, fmt.Sprintf("%s declined: %s", e.CheckpointKind, e.Message))
	case eventlog.TaskManagerKilled:
		v.show(ev, "failure", color.FgRed, fmt.Sprintf("%s killed (%s), %d tasks lost", ev.Actor, e.Action, e.Tasks))
	case eventlog.HeartbeatTimeout:
		v.show(ev, "failure", color.FgRed, fmt.Sprintf("heartbeat of %s timed out", e.TaskManager))
	case eventlog.NoResourceAvailable:
		v.show(ev, "failure", color.FgRed, fmt.Sprintf("%d slots needed, %d offered within %s: NoResourceAvailableException",
			e.SlotsNeeded, e.SlotsOffered, e.SlotRequestTimeout))
	case eventlog.Failover:
		text := "no restart (" + e.Strategy + ")"
		if e.Restart {
			text = fmt.Sprintf("restart %d after %s (%s)", e.Restarts, config.FormatDuration(time.Duration(e.BackoffMs)*time.Millisecond), e.Strategy)
		}
		v.show(ev, "failure", color.FgRed, text)
	case eventlog.Restore:
		text := "from " + e.From
		if e.From == "checkpoint" {
			text += fmt.Sprintf(" %d", e.CheckpointID)
		}
		if r := e.Reason; r != "" {
			text += ": " + r
		}
		v.show(ev, "restore", color.FgYellow, text)
	case eventlog.Rescale:
		v.show(ev, "rescale", color.FgMagenta, fmt.Sprintf("%s to parallelism %d", e.Step, e.ToParallelism))
	case eventlog.Failure:
		v.show(ev, "FAIL", color.FgRed, e.Invariant+": "+e.What)
	case eventlog.EventSent:
		v.show(ev, "action", color.FgMagenta, fmt.Sprintf("record %s appended to partition %d at offset %d", e.Key, e.Partition, e.Offset))
	case eventlog.PartitionPaused:
		v.show(ev, "action", color.FgMagenta, fmt.Sprintf("partition %d paused", e.Partition))
	case eventlog.PartitionResumed:
		v.show(ev, "action", color.FgMagenta, fmt.Sprintf("partition %d resumed (%d records held)", e.Partition, e.HeldRecords))
	case eventlog.OutputIsolation:
		v.show(ev, "action", color.FgMagenta, "the output consumer now reads "+e.IsolationLevel)
	case eventlog.Reconfigure:
		text := e.Setting + " = " + e.Value + ": " + e.Step
		if r := e.Result; r != "" {
			text = e.Setting + ": " + r + ": " + e.Cause
		}
		v.show(ev, "reconfig", color.FgMagenta, text)
	case eventlog.ActionIgnored:
		v.show(ev, "action", color.FgYellow, "not carried out: "+e.Action+": "+e.Reason)
	case eventlog.WindowFired:
		v.firing(ev, e)
	case eventlog.TaskMetrics:
		v.metrics(ev, e)
	case eventlog.KafkaMetrics:
		v.kafkaMetrics(ev, e)
	case eventlog.FinalCounters:
		if st, ok := v.subtasks[ev.Actor]; ok {
			st.late = max(st.late, e.Int("numLateRecordsDropped"))
		}
	}
	v.s.Draw(false)
}

// start prints the run's first line: the seed and the job (the log's
// header, which is not an observed event).
func (v *View) Start(opt cluster.Options) {
	text := fmt.Sprintf("seed %d, %s", v.cfg.Seed, describeJob(v.cfg))
	if opt.Events != nil {
		text += fmt.Sprintf(", %d records from %s", len(opt.Events), opt.EventsFile)
	}
	if len(opt.Actions) > 0 {
		text += fmt.Sprintf(", %s", Plural(int64(len(opt.Actions)), "action"))
	}
	v.show(&eventlog.LogEvent{Body: eventlog.F(eventlog.KindHeader)}, "flinksim", color.FgCyan, text)
}

// firing shows the first three firings and then one line per window bound
// and run of subtasks: the keys and total of every firing of that window
// (the first three included), and the subtasks they fired on.
func (v *View) firing(ev *eventlog.LogEvent, w eventlog.WindowFired) {
	v.results++
	start, end, firing, value := w.WindowStart, w.WindowEnd, w.Firing, w.Value
	if v.firingsShown < 3 {
		v.firingsShown++
		v.show(ev, "window", color.FgGreen, fmt.Sprintf("%s %s fired: %s = %s%s", ev.Actor, windowText(start, end),
			w.Key, fmtNumber(value), lateText(firing)))
	}
	if g := v.group; g == nil || g.start != start || g.end != end || g.firing != firing {
		v.flushFirings()
		v.group = &firingGroup{start: start, end: end, firing: firing, vt: ev.Vt}
	}
	g := v.group
	g.keys++
	g.sum += value
	if !slices.Contains(g.actors, ev.Actor) {
		g.actors = append(g.actors, ev.Actor)
	}
}

func (v *View) flushFirings() {
	g := v.group
	if g == nil {
		return
	}
	v.group = nil
	v.show(&eventlog.LogEvent{Vt: g.vt, Body: eventlog.F(eventlog.KindWindowFired)}, "window", color.FgGreen,
		fmt.Sprintf("%s fired for %s (total %s) on %s%s", windowText(g.start, g.end), Plural(g.keys, "key"), fmtNumber(g.sum),
			strings.Join(g.actors, ", "), lateText(g.firing)))
}

// Plural is n and noun, in the Plural unless n is 1.
func Plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}

func lateText(firing int64) string {
	if firing > 1 {
		return fmt.Sprintf(" (late firing %d)", firing)
	}
	return ""
}

func (v *View) metrics(ev *eventlog.LogEvent, m eventlog.TaskMetrics) {
	st := v.subtasks[ev.Actor]
	if st == nil {
		st = &subtaskStats{name: ev.Actor}
		v.subtasks[ev.Actor] = st
		v.order = append(v.order, ev.Actor)
	}
	v.current[ev.Actor] = true
	st.recordsIn, st.recordsOut = m.NumRecordsIn, m.NumRecordsOut
	if m.HasWatermark {
		st.watermark, st.hasWatermark, st.isSource = m.Watermark, true, st.isSource || !m.InputWatermark
	}
	st.busy += float64(m.BusyTimeMsPerSecond)
	st.backpressured += float64(m.BackPressuredTimeMsPerSecond)
	st.idle += float64(m.IdleTimeMsPerSecond)
	st.samples++
	switch {
	case m.HasWindow:
		st.keys, st.windows, st.hasKeys = m.WindowKeys, m.Windows, true
	case m.HasProcess:
		st.keys, st.windows, st.hasKeys = m.ProcessKeys, 0, true
	}
	if m.LateDropped > st.late {
		st.late = m.LateDropped
	}
}

func (v *View) kafkaMetrics(ev *eventlog.LogEvent, k eventlog.KafkaMetrics) {
	var parts []struct {
		Partition       int64  `json:"partition"`
		EndOffset       int64  `json:"end_offset"`
		ReadOffset      int64  `json:"read_offset"`
		Lag             int64  `json:"lag"`
		CommittedOffset *int64 `json:"committed_offset"`
	}
	if json.Unmarshal([]byte(k.Partitions), &parts) != nil {
		return
	}
	v.topic = k.Topic
	v.partitions = v.partitions[:0]
	var read, lag int64
	for _, p := range parts {
		ps := partitionStats{partition: p.Partition, endOffset: p.EndOffset, lag: p.Lag}
		if p.CommittedOffset != nil {
			ps.committed, ps.hasCommitted = *p.CommittedOffset, true
		}
		v.partitions = append(v.partitions, ps)
		read += p.ReadOffset
		lag += p.Lag
	}
	if dt := ev.Vt - v.readPrevVT; dt > 0 {
		v.rate = float64(read-v.readPrev) * 1e6 / float64(dt)
	}
	v.readPrev, v.readPrevVT, v.readTotal, v.lag = read, ev.Vt, read, lag
}

// windowWatermark is the smallest input watermark of the window subtasks
// (the one event-time windows wait for), and whether any reported.
func (v *View) windowWatermark() (int64, bool) {
	wm, ok := int64(math.MaxInt64), false
	for _, name := range v.order {
		if st := v.subtasks[name]; v.current[name] && !st.isSource && st.hasWatermark {
			wm, ok = min(wm, st.watermark), true
		}
	}
	return wm, ok
}

func (v *View) statusLine() string {
	if v.ended {
		return ""
	}
	text := fmt.Sprintf("%s  %s  %s rec/s  lag %d", v.s.paint(color.Bold, "▶ "+fmtVT(v.now)), v.jobStatus, fmtNumber(math.Round(v.rate)), v.lag)
	if wm, ok := v.windowWatermark(); ok {
		text += "  watermark " + fmtTimestamp(wm)
	}
	return text + fmt.Sprintf("  results %d", v.results)
}

// finish prints the summary table once the run is over.
func (v *View) Finish(res *cluster.Result, wall string) {
	v.flushFirings()
	v.ended = true
	v.s.ClearStatus()
	w := v.s.out
	fmt.Fprintln(w)
	if len(v.order) > 0 {
		t := [][]string{{"subtask", "records in", "records out", "watermark", "busy ms/s", "backpressured ms/s", "idle ms/s", "keys", "windows", "late dropped"}}
		for _, name := range v.order {
			st := v.subtasks[name]
			n := float64(max(st.samples, 1))
			wm, keys, windows, in := "-", "-", "-", "-"
			if st.hasWatermark {
				wm = fmtTimestamp(st.watermark)
			}
			if st.hasKeys {
				keys, windows = strconv.FormatInt(st.keys, 10), strconv.FormatInt(st.windows, 10)
			}
			if !st.isSource {
				in = strconv.FormatInt(st.recordsIn, 10)
			}
			t = append(t, []string{name, in, strconv.FormatInt(st.recordsOut, 10), wm, fmt.Sprintf("%.0f", st.busy/n),
				fmt.Sprintf("%.0f", st.backpressured/n), fmt.Sprintf("%.0f", st.idle/n), keys, windows, strconv.FormatInt(st.late, 10)})
		}
		writeTable(w, t)
		fmt.Fprintln(w, "  (busy, backpressured and idle are averages over the run's seconds)")
		fmt.Fprintln(w)
	}
	if len(v.partitions) > 0 {
		t := [][]string{{"partition of " + v.topic, "end offset", "committed offset", "lag"}}
		for _, p := range v.partitions {
			committed := "-"
			if p.hasCommitted {
				committed = strconv.FormatInt(p.committed, 10)
			}
			t = append(t, []string{strconv.FormatInt(p.partition, 10), strconv.FormatInt(p.endOffset, 10), committed, strconv.FormatInt(p.lag, 10)})
		}
		writeTable(w, t)
	}
	fmt.Fprintln(w)
	if v.checkpoints == 0 {
		fmt.Fprintf(w, "checkpoints  none completed")
	} else {
		c := v.lastCkpt
		fmt.Fprintf(w, "checkpoints  %d completed; the last, %d, took %s, %s (state %s)", v.checkpoints, c.CheckpointID,
			config.FormatDuration(time.Duration(c.DurationMs)*time.Millisecond),
			config.FormatMemorySize(c.CheckpointedSize), config.FormatMemorySize(c.StateSize))
	}
	if v.ckptFailed > 0 {
		fmt.Fprintf(w, "; %d failed", v.ckptFailed)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "results      %d visible to a %s consumer, %d uncommitted, %d duplicates, %d late records dropped\n",
		len(res.Sink), res.OutputIsolation, res.Uncommitted, res.Duplicates, res.Counters["numLateRecordsDropped"])
	status := res.JobStatus
	if res.Invariant != "" {
		status = "FAIL (" + res.Invariant + ")"
	}
	attr := color.FgGreen
	if status != "FINISHED" && status != "RUNNING" {
		attr = color.FgRed
	}
	fmt.Fprintf(w, "job          %s after %s of virtual time (%s wall), %d records read, %d windows fired\n",
		v.s.paint(attr, status), config.FormatDuration(time.Duration(res.EndVT/1000)*time.Millisecond), wall, res.Counters["records_read"],
		res.Counters["windows_fired"])
}

// fmtVT prints virtual time as M:SS.mmm (H:MM:SS.mmm past an hour).
func fmtVT(us int64) string {
	ms := us / 1000
	h, m, s, frac := ms/3600000, ms/60000%60, ms/1000%60, ms%1000
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d.%03d", h, m, s, frac)
	}
	return fmt.Sprintf("%2d:%02d.%03d", m, s, frac)
}

// fmtTimestamp prints an event time or watermark: Long.MIN_VALUE and
// MAX_VALUE by name, an epoch time as UTC clock time, a small one in ms.
func fmtTimestamp(ms int64) string {
	switch {
	case ms == math.MinInt64:
		return "Long.MIN_VALUE"
	case ms == math.MaxInt64:
		return "Long.MAX_VALUE"
	case ms >= 1e11 || ms <= -1e11:
		return time.UnixMilli(ms).UTC().Format("15:04:05.000")
	}
	return strconv.FormatInt(ms, 10)
}

func windowText(start, end int64) string {
	if start >= 1e11 {
		return "[" + strings.TrimSuffix(fmtTimestamp(start), ".000") + ", " + strings.TrimSuffix(fmtTimestamp(end), ".000") + ")"
	}
	return fmt.Sprintf("[%d, %d)", start, end)
}

func fmtNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

// shortCause is the last exception of a cause chain without its Java
// package: "NoResourceAvailableException: Slot request bulk ...".
func shortCause(c string) string {
	first, _, _ := strings.Cut(c, ": ")
	if i := strings.LastIndexByte(first, '.'); i >= 0 && !strings.Contains(first, " ") {
		return c[i+1:]
	}
	return c
}

func describeJob(c config.Config) string {
	op := "a keyed process function"
	if c.Operator == config.OperatorWindow {
		op = fmt.Sprintf("%s %s %s windows (%s)", config.FormatDuration(c.WindowSize), c.WindowType, c.TimeCharacteristic, c.Aggregate)
		if c.WindowType == config.WindowSession {
			op = fmt.Sprintf("%s session windows, gap %s (%s)", c.TimeCharacteristic, config.FormatDuration(c.WindowGap), c.Aggregate)
		}
	}
	par := fmt.Sprintf("parallelism %d", c.Parallelism)
	if c.SourceParallelism > 0 || c.WindowParallelism > 0 || c.SinkParallelism > 0 {
		of := func(p int) int {
			if p > 0 {
				return p
			}
			return c.Parallelism
		}
		par = fmt.Sprintf("parallelism source %d, window %d, sink %d", of(c.SourceParallelism), of(c.WindowParallelism), of(c.SinkParallelism))
	}
	return fmt.Sprintf("%s (%d partitions) -> keyBy -> %s -> %s, %s", c.SourceTopic, c.SourcePartitions, op, c.SinkTopic, par)
}

func describeGraph(g eventlog.JobGraph) string {
	var vs []struct {
		Operators   []string `json:"operators"`
		Parallelism int      `json:"parallelism"`
	}
	_ = json.Unmarshal([]byte(g.Vertices), &vs)
	parts := make([]string, len(vs))
	for i, x := range vs {
		ops := make([]string, len(x.Operators))
		for j, op := range x.Operators {
			// Window(TumblingEventTimeWindows(60000), EventTimeTrigger, ...): the assigner is enough
			if a, _, cut := strings.Cut(op, ", "); cut && strings.Contains(a, "(") {
				op = a + ", ...)"
			}
			ops[j] = op
		}
		parts[i] = fmt.Sprintf("%s (%d)", strings.Join(ops, " -> "), x.Parallelism)
	}
	return fmt.Sprintf("%s; %d slots", strings.Join(parts, " => "), g.SlotsNeeded)
}

var _ = slices.Contains[[]string]

// writeTable prints rows as columns two spaces apart: the first column
// left-aligned, the others right-aligned, the first row as the heading.
func writeTable(w io.Writer, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i == 0 {
				b.WriteString("  " + c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		fmt.Fprintln(w, b.String())
	}
}
