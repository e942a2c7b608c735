package tests

// Cluster scenarios: scripts under testdata/cluster/*.txt steer one whole
// simulated cluster (cluster.Session: the JobManager, the ResourceManager,
// the TaskManagers, every subtask and input channel and the Kafka broker)
// the way an operator would, and print what a Flink engineer would look at:
// the job and its slots, keyed state, watermarks, input channels and
// credit, the Kafka topics, checkpoints and the log. One behaviour per file,
// each commented with what to see and why, with the arithmetic behind each
// expectation (key groups, window bounds, watermarks, split owners) worked
// out by hand in the script. Regenerate expectations with
//
//	go test ./tests -run TestClusterScenarios -rewrite
//
// and review the diff as you would code.
//
// Every file runs twice: on the product's driver (every component a
// Hollywood actor) against the expectations, then on the plain driver
// (kernel.Loop), and both runs must print the same bytes and write the same
// event log: the scenario is a pure function of its script.
//
// Times: `10s`, `1500ms`, `2min` are Flink durations (config.ParseDuration),
// and `10.0002s` a virtual time as the verbs print it (seconds, to the µs);
// the virtual clock starts at 0 when the cluster is created. Event times
// (ts=) and watermarks are milliseconds, as Flink has them; Long.MIN_VALUE
// and Long.MAX_VALUE print by name.
//
// An unknown verb, an unknown or leftover argument, or a malformed value
// fails the test. What the simulator refuses (a setting, an action, an
// actor that does not exist) is written into the output as "error: ...";
// an action the cluster ignores when it arrives, or a broken invariant, is
// printed by the verb that ran into it. A verb with nothing to show prints
// "ok".
//
// Building the cluster:
//
//	cluster [tms=N] [slots=N] [parallelism=N] [partitions=N] [rate=R] [KEY=VALUE ...]
//	    Creates the session, paused at virtual time 0 (the job is submitted
//	    4 network latencies + 1 ms later, once the TaskManagers registered). tms is sim.taskmanagers, slots
//	    taskmanager.numberOfTaskSlots, parallelism parallelism.default,
//	    partitions job.source.partitions, rate sim.source.rate; any other
//	    KEY is a setting as `flinksim settings` lists it (a value with a
//	    space is written without it: 10s). Unlike `flinksim run`, the
//	    built-in generator is off (rate=0: records come from produce) and
//	    sim.duration is 1 h, so the run only ends when the job does. One
//	    cluster per file.
//	cluster [...]
//	{"key": "u1", "ts": 1000, "partition": 0}
//	...
//	    The same with the input lines as the records of an events file
//	    (flinksim run --events): the source is bounded, and
//	    sim.events.pace says when the records reach the topic.
//
// Moving time:
//
//	run-until T
//	    Delivers every scheduler step due before virtual time T and pauses
//	    with the clock at T.
//	run-for D
//	    run-until now + D.
//	step [N]
//	    Takes N scheduler steps (default 1) and prints each: its virtual
//	    time, the messages delivered (sender -> receiver: the RPC or network
//	    message with its main fields; timers an actor set itself are
//	    counted, not listed) and the events logged (task_metrics and
//	    kafka_metrics left out).
//
// Both print "ok", or how the run ended, and every action_ignored and
// failure event logged meanwhile.
//
// Acting (each happens now, as `flinksim ui` does it, and is logged as an
// action event so that the run replays):
//
//	produce key=K ts=MS|now|now-D [partition=N] [FIELD=VALUE ...]
//	produce
//	key=K ts=MS [partition=N] [FIELD=VALUE ...]
//	...
//	    Appends records to the source topic (send-event): one, or one per
//	    input line. Without partition Kafka's default partitioner picks one.
//	kill TM                          kill-taskmanager TM
//	trigger-checkpoint
//	savepoint                        trigger-savepoint
//	stop-with-savepoint
//	rescale N [max-parallelism=M]
//	set KEY=VALUE                    one of action.SetKeys
//	pause-partition N / resume-partition N
//
// Looking (read-only: views of the actors between two steps, and the log):
//
//	jobs
//	    Every job seen with its last status, then the current job: its
//	    JobGraph (vertices, edges), and each TaskManager slot with its
//	    allocation and the subtasks sharing it.
//	state TASK...
//	    A subtask by name (window-0 means its current attempt): a window or
//	    process subtask's key-group range, watermark, and each key with its
//	    key group and its windows (aggregate, firings, when it fires and is
//	    cleaned up) or its ValueState (the count, its last write and, with a
//	    TTL, when it expires, as virtual times: the processing-time clock is
//	    the virtual clock); a source subtask's splits with their offsets and
//	    watermarks.
//	watermarks
//	    Every subtask: the watermark of each input (a source's splits, a
//	    gate's input channels), IDLE marks, and the subtask's combined
//	    watermark, the minimum over its active inputs.
//	channels
//	    Every producer's ResultPartition (finished buffers queued per
//	    subpartition, the output buffer pool, backpressure), then every
//	    input channel: a RemoteInputChannel's credit, exclusive and floating
//	    buffers, buffers in use and the producer's last backlog; for every
//	    channel the buffers queued in the gate, and whether checkpoint
//	    alignment blocks it or its data is persisted for an unaligned
//	    checkpoint. A LocalInputChannel shows no credit: in Flink it has
//	    none (it reads the producer's buffers through its subpartition
//	    view; only RemoteInputChannel.setup takes exclusive buffers).
//	backpressure
//	    Every subtask's busy, backpressured and idle ms per second of the
//	    last metrics tick, rated as Flink's web UI does (OK <= 10%, LOW <=
//	    50%, HIGH above; JobVertexBackPressureHandler).
//	kafka
//	    The source topic's partitions (end offset, the reader's position,
//	    lag, committed offset) and the sink topic's records by transaction
//	    state with the last stable offset.
//	output committed|uncommitted|all
//	    (once the run has ended, committed reads the sink topic from the
//	    run's result: what a read_committed consumer reads from offset 0)
//	    The sink topic's records (the last 200): committed is what a
//	    read_committed consumer sees (committed transactions and records
//	    written outside one, below the last stable offset), uncommitted the
//	    records of transactions still open or pre-committed, all every
//	    record with its transaction state.
//	checkpoints
//	    Every checkpoint and savepoint so far from the log: kind, trigger,
//	    how it ended (duration, sizes, alignment, source offsets; or Flink's
//	    failure reason), each task's snapshot, declined triggers and
//	    restores; then the CheckpointCoordinator's own counts for the
//	    current job (its view).
//	events KIND... [actor=NAME]
//	    The log events of the kinds given (each a kind README.md documents), each kind since it was last shown
//	    (with the same actor=), one a line in log order: virtual time,
//	    actor, (the kind, when several are asked for,) fields. actor= keeps
//	    one actor's (window-0 matches every attempt of it; a trailing *
//	    matches a prefix).
//	in-flight [to=NAME] [from=NAME]
//	    The messages queued in the scheduler now (timers left out), in
//	    delivery order, with the time each was sent.
//
// Once the run has ended (the job reached a terminal status, or the
// cluster gave up) there is no actor left to inspect: the verbs that read
// views say so, while events and checkpoints, which read the log, go on.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/checkpoint"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/exchange"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/jobmaster"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/resourcemanager"
	"github.com/flinksim/flinksim/sim/status"
	"github.com/flinksim/flinksim/sim/task"
	"github.com/flinksim/flinksim/sim/taskexecutor"
	"github.com/flinksim/flinksim/sim/vt"
)

func TestClusterScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/cluster", func(t *testing.T, path string) {
		first := &clusterScenario{}
		datadriven.RunTest(t, path, first.handle)
		first.close()
		if t.Failed() {
			return
		}
		// the same script again, on the plain driver: the same bytes
		script, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		again := &clusterScenario{plain: true}
		datadriven.RunTestFromString(t, string(script), again.handle)
		again.close()
		if first.transcript.String() != again.transcript.String() {
			line, x, y, _ := eventlog.FirstDifference([]byte(first.transcript.String()), []byte(again.transcript.String()))
			t.Fatalf("the second run printed something else at line %d\n first:  %s\n second: %s", line, x, y)
		}
		if line, x, y, differ := eventlog.FirstDifference(first.log.Bytes(), again.log.Bytes()); differ {
			t.Fatalf("the second run wrote another log at line %d\n first:  %s\n second: %s", line, x, y)
		}
	})
}

// clusterScenario is the state of one script.
type clusterScenario struct {
	plain      bool // the plain driver instead of Hollywood actors
	cfg        config.Config
	s          *cluster.Session
	log        bytes.Buffer
	events     []*eventlog.LogEvent // every event logged so far, in log order
	cursors    map[string]int       // "kind|actor=" of the events verb -> events already looked at
	problems   int                  // action_ignored and failure events already reported
	transcript strings.Builder      // every command and its output, for the second run
}

func (c *clusterScenario) close() {
	if c.s != nil {
		c.s.Interrupt()
		c.s.Finish()
	}
}

func (c *clusterScenario) handle(t *testing.T, d *datadriven.TestData) string {
	out := c.dispatch(t, d)
	if out == "" {
		out = "ok"
	}
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	fmt.Fprintf(&c.transcript, "%s\n%s", d.FullCmd(), out)
	return out
}

func (c *clusterScenario) dispatch(t *testing.T, d *datadriven.TestData) string {
	args := newArgSet(t, d)
	if d.Cmd != "produce" && d.Cmd != "cluster" && d.Input != "" {
		t.Fatalf("%s: %s takes no input lines", d.Pos, d.Cmd)
	}
	if d.Cmd == "cluster" {
		return c.build(t, d)
	}
	if c.s == nil {
		t.Fatalf("%s: %s before cluster", d.Pos, d.Cmd)
	}
	switch d.Cmd {
	// moving time
	case "run-until", "run-for":
		at := parseVirtual(t, d, args.positional())
		args.done()
		now := c.s.Status().Now
		if d.Cmd == "run-for" {
			at += now
		}
		if at < now {
			return fmt.Sprintf("error: %s is in the past (the run is at %s)", fmtVT(at), fmtVT(now))
		}
		c.s.RunUntil(at)
		return c.afterRun()
	case "step":
		n := 1
		if len(d.CmdArgs) > 0 {
			v, err := strconv.Atoi(args.positional())
			if err != nil || v < 1 {
				t.Fatalf("%s: step takes a number of steps >= 1", d.Pos)
			}
			n = v
		}
		args.done()
		return c.step(n)

	// acting
	case "produce":
		return c.produce(t, d)
	case "kill":
		tm := args.positional()
		args.done()
		return c.act("kill-taskmanager " + tm)
	case "trigger-checkpoint", "stop-with-savepoint":
		args.done()
		return c.act(d.Cmd)
	case "savepoint":
		args.done()
		return c.act("trigger-savepoint")
	case "rescale", "set", "pause-partition", "resume-partition":
		// the action's own parser checks the arguments and says what is
		// wrong
		text := d.Cmd
		for _, a := range d.CmdArgs {
			text += " " + a.String()
		}
		return c.act(text)

	// looking
	case "jobs":
		args.done()
		return c.jobs()
	case "state":
		if len(d.CmdArgs) == 0 {
			t.Fatalf("%s: state needs a subtask, e.g. state window-0", d.Pos)
		}
		var names []string
		for _, a := range d.CmdArgs {
			if len(a.Vals) != 0 {
				t.Fatalf("%s: state takes subtask names, not %s", d.Pos, a)
			}
			names = append(names, a.Key)
		}
		return c.inspecting(func() string {
			var parts []string
			for _, n := range names {
				parts = append(parts, c.state(n))
			}
			return strings.Join(parts, "\n")
		})
	case "watermarks":
		args.done()
		return c.inspecting(c.watermarks)
	case "channels":
		args.done()
		return c.inspecting(c.channels)
	case "backpressure":
		args.done()
		return c.inspecting(c.backpressure)
	case "kafka":
		args.done()
		return c.inspecting(c.kafka)
	case "output":
		which := args.positional()
		args.done()
		if which != "committed" && which != "uncommitted" && which != "all" {
			t.Fatalf("%s: output committed|uncommitted|all, not %q", d.Pos, which)
		}
		if c.s.Status().Ended && which == "committed" {
			return c.finalOutput()
		}
		return c.inspecting(func() string { return c.output(which) })
	case "in-flight":
		to, _ := args.str("to")
		from, _ := args.str("from")
		args.done()
		return c.inspecting(func() string { return c.inFlight(to, from) })
	case "checkpoints":
		args.done()
		return c.checkpoints()
	case "events":
		return c.eventsVerb(t, d, args)
	}
	t.Fatalf("%s: unknown verb %q", d.Pos, d.Cmd)
	return ""
}

// inspecting runs a verb that reads the actors' views, or says that the
// run is over and there is nothing to read.
func (c *clusterScenario) inspecting(f func() string) string {
	if st := c.s.Status(); st.Ended {
		return fmt.Sprintf("the run ended at %s: no actor to inspect", fmtVT(st.Now))
	}
	return f()
}

// ---- building ------------------------------------------------------------

// clusterShorthands are the cluster verb's short names for settings.
var clusterShorthands = map[string]string{
	"tms":         "sim.taskmanagers",
	"slots":       "taskmanager.numberOfTaskSlots",
	"parallelism": "parallelism.default",
	"partitions":  "job.source.partitions",
	"rate":        "sim.source.rate",
}

func (c *clusterScenario) build(t *testing.T, d *datadriven.TestData) string {
	if c.s != nil {
		t.Fatalf("%s: one cluster per file", d.Pos)
	}
	cfg := config.Default()
	must := func(k, v string) {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	must("sim.source.rate", "0")
	must("sim.duration", "1h")
	for _, a := range d.CmdArgs {
		key := a.Key
		if long, ok := clusterShorthands[key]; ok {
			key = long
		} else if !strings.Contains(key, ".") {
			t.Fatalf("%s: unknown argument %q for cluster (a setting key has a dot)", d.Pos, a.Key)
		}
		if len(a.Vals) != 1 {
			t.Fatalf("%s: %s needs one value", d.Pos, a.Key)
		}
		if err := cfg.Set(key, a.Vals[0]); err != nil {
			return "error: " + err.Error()
		}
	}
	if err := cfg.Validate(); err != nil {
		return "error: " + err.Error()
	}
	opt := cluster.Options{Log: &c.log, Observe: func(ev *eventlog.LogEvent) { kept := *ev; c.events = append(c.events, &kept) }}
	if d.Input != "" {
		// the records of an events file (--events): the source is bounded
		recs, err := events.Parse([]byte(d.Input+"\n"), d.Pos, events.Options{KeyField: cfg.KeyField,
			TimeField: cfg.TimeField, Partitions: cfg.SourcePartitions})
		if err != nil {
			return "error: " + err.Error()
		}
		opt.Events = recs
	}
	var s *cluster.Session
	var err error
	if c.plain {
		s, err = cluster.NewPlainSession(cfg, opt)
	} else {
		s, err = cluster.NewSession(cfg, opt)
	}
	if err != nil {
		return "error: " + err.Error()
	}
	c.cfg, c.s, c.cursors = cfg, s, map[string]int{}
	return "ok"
}

// ---- moving time and acting ----------------------------------------------

// afterRun reports how the run ended, if it did, and the problems logged
// since the last report.
func (c *clusterScenario) afterRun() string {
	var b strings.Builder
	for _, ev := range c.events[c.problems:] {
		switch ev.Kind() {
		case eventlog.KindActionIgnored, eventlog.KindFailure:
			fmt.Fprintf(&b, "%s\n", renderEvent(ev))
		}
	}
	c.problems = len(c.events)
	if st := c.s.Status(); st.Ended {
		fmt.Fprintf(&b, "the run ended at %s: %s\n", fmtVT(st.Now), c.s.Finish().JobStatus)
	}
	return b.String()
}

func (c *clusterScenario) act(text string) string {
	if _, err := c.s.Act(text); err != nil {
		return "error: " + err.Error()
	}
	return "ok"
}

func (c *clusterScenario) produce(t *testing.T, d *datadriven.TestData) string {
	var lines []string
	if len(d.CmdArgs) > 0 {
		if d.Input != "" {
			t.Fatalf("%s: produce takes arguments or input lines, not both", d.Pos)
		}
		var f []string
		for _, a := range d.CmdArgs {
			f = append(f, a.String())
		}
		lines = append(lines, strings.Join(f, " "))
	} else {
		for _, l := range strings.Split(d.Input, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) == 0 {
		t.Fatalf("%s: produce needs key=K ts=MS", d.Pos)
	}
	var errs []string
	for _, l := range lines {
		if out := c.act("send-event " + l); out != "ok" {
			errs = append(errs, out)
		}
	}
	return strings.Join(errs, "\n")
}

// step takes n scheduler steps, printing each.
func (c *clusterScenario) step(n int) string {
	var b strings.Builder
	for i := 0; i < n && !c.s.Status().Ended; i++ {
		queued := c.s.InFlight()
		if len(queued) == 0 {
			break
		}
		sortEnvelopes(queued)
		from := len(c.events)
		// the step's time is the clock after it: what the generator sends
		// ahead of its time is not in flight yet, so the head of the queue
		// need not be the step
		at := c.s.Step().Now.Micros()
		timers, shown := 0, 0
		fmt.Fprintf(&b, "%s\n", fmtVT(at))
		for _, e := range queued {
			if e.DeliverAt != at {
				continue
			}
			shown++
			if _, ok := e.Body.(*messages.Envelope_Timer); ok {
				timers++
				continue
			}
			fmt.Fprintf(&b, "  %s\n", renderEnvelope(e))
		}
		if timers > 0 {
			fmt.Fprintf(&b, "  (%d timer(s))\n", timers)
		}
		if shown == 0 {
			b.WriteString("  (sent ahead of their time: the broker's answers)\n")
		}
		for _, ev := range c.events[from:] {
			if ev.Kind() == eventlog.KindTaskMetrics || ev.Kind() == eventlog.KindKafkaMetrics {
				continue
			}
			fmt.Fprintf(&b, "  > %s\n", renderEvent(ev))
		}
	}
	if rest := c.afterRun(); rest != "" {
		b.WriteString(rest)
	}
	return b.String()
}

// sortEnvelopes puts envelopes in the kernel's delivery order.
func sortEnvelopes(es []*messages.Envelope) {
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.DeliverAt != b.DeliverAt {
			return a.DeliverAt < b.DeliverAt
		}
		if a.To != b.To {
			return a.To < b.To
		}
		if a.From != b.From {
			return a.From < b.From
		}
		return a.SenderSeq < b.SenderSeq
	})
}

func (c *clusterScenario) inFlight(to, from string) string {
	queued := c.s.InFlight()
	sortEnvelopes(queued)
	var b strings.Builder
	for _, e := range queued {
		if _, ok := e.Body.(*messages.Envelope_Timer); ok {
			continue
		}
		if (to != "" && !actorMatches(e.To, to)) || (from != "" && !actorMatches(e.From, from)) {
			continue
		}
		fmt.Fprintf(&b, "%s (sent %s) %s\n", fmtVT(e.DeliverAt), fmtVT(e.SentAt), renderEnvelope(e))
	}
	return b.String()
}

// renderEnvelope is "from -> to: Message fields".
func renderEnvelope(e *messages.Envelope) string {
	name, detail := describeBody(e)
	s := e.From + " -> " + e.To + ": " + name
	if detail != "" {
		s += " " + detail
	}
	return s
}

// describeBody names a message as Flink does and picks its telling fields.
func describeBody(e *messages.Envelope) (string, string) {
	switch b := e.Body.(type) {
	case *messages.Envelope_Action:
		return "Action", strconv.Quote(action.Text(b.Action))
	case *messages.Envelope_BufferResponse:
		m := b.BufferResponse
		return "BufferResponse", fmt.Sprintf("seq=%d backlog=%d %s", m.SequenceNumber, m.Backlog, describeBuffer(m.Buffer))
	case *messages.Envelope_ChannelBuffer:
		return "Buffer", fmt.Sprintf("channel=%d %s", b.ChannelBuffer.ChannelIndex, describeBuffer(b.ChannelBuffer.Buffer))
	case *messages.Envelope_AddCredit:
		return "AddCredit", fmt.Sprintf("credit=%d", b.AddCredit.Credit)
	case *messages.Envelope_PartitionRequest:
		return "PartitionRequest", fmt.Sprintf("subpartition=%d credit=%d", b.PartitionRequest.SubpartitionIndex, b.PartitionRequest.Credit)
	case *messages.Envelope_BacklogAnnouncement:
		return "BacklogAnnouncement", fmt.Sprintf("backlog=%d", b.BacklogAnnouncement.Backlog)
	case *messages.Envelope_ResumeConsumption:
		return "ResumeConsumption", fmt.Sprintf("subpartition=%d", b.ResumeConsumption.SubpartitionIndex)
	case *messages.Envelope_RecycleBuffers:
		return "RecycleBuffers", fmt.Sprintf("count=%d", b.RecycleBuffers.Count)
	case *messages.Envelope_TriggerCheckpoint:
		return "TriggerCheckpoint", fmt.Sprintf("id=%d kind=%s unaligned=%v", b.TriggerCheckpoint.CheckpointId, b.TriggerCheckpoint.Kind, b.TriggerCheckpoint.Unaligned)
	case *messages.Envelope_AcknowledgeCheckpoint:
		return "AcknowledgeCheckpoint", fmt.Sprintf("id=%d task=%s", b.AcknowledgeCheckpoint.CheckpointId, b.AcknowledgeCheckpoint.Task)
	case *messages.Envelope_DeclineCheckpoint:
		return "DeclineCheckpoint", fmt.Sprintf("id=%d reason=%s", b.DeclineCheckpoint.CheckpointId, b.DeclineCheckpoint.Reason)
	case *messages.Envelope_NotifyCheckpointComplete:
		return "NotifyCheckpointComplete", fmt.Sprintf("id=%d", b.NotifyCheckpointComplete.CheckpointId)
	case *messages.Envelope_NotifyCheckpointAborted:
		return "NotifyCheckpointAborted", fmt.Sprintf("id=%d", b.NotifyCheckpointAborted.CheckpointId)
	case *messages.Envelope_Fetch:
		var ps []string
		for _, p := range b.Fetch.Partitions {
			ps = append(ps, fmt.Sprintf("%d@%d", p.Partition, p.Offset))
		}
		return "Fetch", strings.Join(ps, " ")
	case *messages.Envelope_FetchResponse:
		var ps []string
		for _, p := range b.FetchResponse.Partitions {
			ps = append(ps, fmt.Sprintf("%d:%d records", p.Partition, len(p.Records)))
		}
		return "FetchResponse", strings.Join(ps, " ")
	case *messages.Envelope_Produce:
		s := fmt.Sprintf("%d records", len(b.Produce.Records))
		if b.Produce.TransactionalId != "" {
			s += " in " + b.Produce.TransactionalId
		}
		return "Produce", s
	case *messages.Envelope_TxnRequest:
		return "TxnRequest", strings.TrimSpace(b.TxnRequest.Op.String() + " " + b.TxnRequest.TransactionalId)
	case *messages.Envelope_SubmitTask:
		return "SubmitTask", b.SubmitTask.ExecutionId
	case *messages.Envelope_TaskExecutionState:
		return "TaskExecutionState", b.TaskExecutionState.ExecutionId + " " + status.Execution(b.TaskExecutionState.State).String()
	case *messages.Envelope_CancelTask:
		return "CancelTask", b.CancelTask.ExecutionId
	}
	// the oneof wrapper's type name without its package and prefix
	name := strings.TrimPrefix(fmt.Sprintf("%T", e.Body), "*messages.Envelope_")
	return name, ""
}

// describeBuffer is a network buffer's content: its records, watermarks
// and events in order, runs of records counted.
func describeBuffer(b *messages.Buffer) string {
	if b == nil {
		return ""
	}
	var parts []string
	records := 0
	flush := func() {
		if records > 0 {
			parts = append(parts, fmt.Sprintf("%d record(s)", records))
			records = 0
		}
	}
	for i, k := range b.Kinds {
		if k == exchange.KindRecord {
			records++
			continue
		}
		flush()
		switch k {
		case exchange.KindWatermark:
			parts = append(parts, "Watermark "+fmtWm(b.Timestamps[i]))
		case exchange.KindStatusIdle:
			parts = append(parts, "WatermarkStatus IDLE")
		case exchange.KindStatusActive:
			parts = append(parts, "WatermarkStatus ACTIVE")
		case exchange.KindEndOfPartition:
			parts = append(parts, "EndOfPartitionEvent")
		case exchange.KindEndOfData:
			parts = append(parts, "EndOfData")
		case exchange.KindBarrier:
			s := fmt.Sprintf("CheckpointBarrier %d", b.CheckpointId)
			if b.Unaligned {
				s += " unaligned"
			}
			parts = append(parts, s)
		}
	}
	flush()
	return "[" + strings.Join(parts, ", ") + "]"
}

// ---- looking -------------------------------------------------------------

// views returns every live actor's view by name.
func (c *clusterScenario) views() map[string]json.RawMessage {
	return c.s.Inspect()
}

func decodeView[V any](raw json.RawMessage) *V {
	if raw == nil {
		return nil
	}
	v := new(V)
	if err := json.Unmarshal(raw, v); err != nil {
		panic(err)
	}
	return v
}

// subtasks returns the views of the current job's subtasks in deployment
// order.
func (c *clusterScenario) subtasks(views map[string]json.RawMessage) []*task.SubtaskView {
	jm := decodeView[jobmaster.JobMasterView](views[jobgraph.JobManagerName])
	var out []*task.SubtaskView
	if jm == nil {
		return nil
	}
	for _, tl := range jm.Tasks {
		if v := decodeView[task.SubtaskView](views[tl.Name]); v != nil {
			out = append(out, v)
		}
	}
	return out
}

// resolve finds the actor a name means: itself, or the current attempt of
// a subtask named without its attempt.
func (c *clusterScenario) resolve(views map[string]json.RawMessage, name string) string {
	if jm := decodeView[jobmaster.JobMasterView](views[jobgraph.JobManagerName]); jm != nil {
		for _, tl := range jm.Tasks {
			if tl.Name == name || jobgraph.BaseSubtaskName(tl.Name) == name {
				return tl.Name
			}
		}
	}
	return name
}

func (c *clusterScenario) jobs() string {
	var b strings.Builder
	// every job's last status, from the log
	var order []string
	last := map[string]eventlog.JobStatus{}
	for _, ev := range c.events {
		if js, ok := eventlog.Decode(ev).(eventlog.JobStatus); ok {
			if _, seen := last[js.JobID]; !seen {
				order = append(order, js.JobID)
			}
			last[js.JobID] = js
		}
	}
	for _, id := range order {
		js := last[id]
		fmt.Fprintf(&b, "%s %s", id, js.Status)
		if js.Cause != "" {
			fmt.Fprintf(&b, " (%s)", js.Cause)
		}
		b.WriteString("\n")
	}
	if st := c.s.Status(); st.Ended {
		fmt.Fprintf(&b, "the run ended at %s: no actor to inspect\n", fmtVT(st.Now))
		return b.String()
	}
	views := c.views()
	jm := decodeView[jobmaster.JobMasterView](views[jobgraph.JobManagerName])
	if jm == nil {
		b.WriteString("no JobManager\n")
		return b.String()
	}
	fmt.Fprintf(&b, "current job %s %q %s: attempt %d, %d restart(s), max parallelism %d, %d slot(s) needed\n",
		jm.JobID, jm.JobName, jm.Status, jm.Attempt, jm.Restarts, jm.Graph.MaxParallelism, jm.Graph.SlotsNeeded)
	for _, v := range jm.Graph.Vertices {
		fmt.Fprintf(&b, "  vertex %s %q parallelism %d\n", v.ID, v.Name, v.Parallelism)
	}
	for _, e := range jm.Graph.Edges {
		fmt.Fprintf(&b, "  edge %s -> %s %s\n", e.From, e.To, e.Partitioner)
	}
	// where each current task went, from its submit_task event
	alloc := map[string]string{}
	for _, ev := range c.events {
		if ev.Kind() == eventlog.KindSubmitTask {
			alloc[fieldStr(ev, "task")] = fieldStr(ev, "allocation_id")
		}
	}
	state := map[string]string{}
	byAlloc := map[string][]string{}
	for _, tl := range jm.Tasks {
		state[tl.Name] = tl.State
		byAlloc[alloc[tl.Name]] = append(byAlloc[alloc[tl.Name]], tl.Name)
	}
	var tms []string
	for name := range views {
		if strings.HasPrefix(name, "tm-") {
			tms = append(tms, name)
		}
	}
	slices.SortFunc(tms, func(a, b string) int {
		x, _ := strconv.Atoi(strings.TrimPrefix(a, "tm-"))
		y, _ := strconv.Atoi(strings.TrimPrefix(b, "tm-"))
		return x - y
	})
	for _, name := range tms {
		tm := decodeView[taskexecutor.TaskExecutorView](views[name])
		for i, a := range tm.Slots {
			if a == "" {
				fmt.Fprintf(&b, "  %s slot %d: free\n", name, i)
				continue
			}
			var ts []string
			for _, task := range byAlloc[a] {
				ts = append(ts, task+" "+state[task])
			}
			if len(ts) == 0 {
				ts = []string{"no task"}
			}
			fmt.Fprintf(&b, "  %s slot %d %s: %s\n", name, i, a, strings.Join(ts, ", "))
		}
	}
	if rm := decodeView[resourcemanager.ResourceManagerView](views[jobgraph.ResourceManagerName]); rm != nil {
		fmt.Fprintf(&b, "  resourcemanager: %d task manager(s) registered (%s), %d free slot(s)\n",
			len(rm.TaskManagers), strings.Join(rm.TaskManagers, ", "), rm.FreeSlots)
	}
	return b.String()
}

func (c *clusterScenario) state(name string) string {
	views := c.views()
	actor := c.resolve(views, name)
	v := decodeView[task.SubtaskView](views[actor])
	if v == nil {
		return fmt.Sprintf("error: no subtask %s", name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s, %s", v.Name, v.TaskManager, v.Status)
	if v.Vertex == jobgraph.VertexSource {
		fmt.Fprintf(&b, ", watermark %s", fmtWm(v.Watermark))
		if v.Idle {
			b.WriteString(" IDLE")
		}
		b.WriteString("\n")
		if len(v.Splits) == 0 {
			b.WriteString("  no split\n")
		}
		for _, sp := range v.Splits {
			fmt.Fprintf(&b, "  split %s-%d: next offset %d", c.cfg.SourceTopic, sp.Partition, sp.Offset)
			if sp.Stop >= 0 {
				fmt.Fprintf(&b, " (stops at %d)", sp.Stop)
			}
			fmt.Fprintf(&b, ", watermark %s%s\n", fmtWm(sp.Watermark), splitFlags(sp))
		}
		return b.String()
	}
	if c.cfg.Operator == config.OperatorProcess {
		fmt.Fprintf(&b, ", key groups %d-%d, watermark %s, %d key(s)\n", v.KeyGroupStart, v.KeyGroupEnd, fmtWm(v.Watermark), v.Keys)
	} else {
		fmt.Fprintf(&b, ", key groups %d-%d, watermark %s, %d key(s), %d window(s), %d late record(s) dropped\n",
			v.KeyGroupStart, v.KeyGroupEnd, fmtWm(v.Watermark), v.Keys, v.Windows, v.LateDropped)
	}
	for _, k := range v.KeyedState {
		fmt.Fprintf(&b, "  %s (key group %d)", k.Key, k.KeyGroup)
		if len(k.Windows) == 0 {
			// ValueState: times are processing time, shown as the virtual
			// time they correspond to
			fmt.Fprintf(&b, ": count=%d, last write at %s", k.Count, fmtVT((k.LastMs-kafka.GeneratorEpochMillis)*1000))
			if k.TTLMs > 0 {
				expiry := k.LastMs + k.TTLMs
				fmt.Fprintf(&b, ", expires at %s", fmtVT((expiry-kafka.GeneratorEpochMillis)*1000))
				if nowMs := kafka.GeneratorEpochMillis + vt.Millis(c.s.Status().Now); expiry <= nowMs {
					b.WriteString(" (expired)")
				}
			}
			b.WriteString("\n")
			continue
		}
		b.WriteString("\n")
		for _, w := range k.Windows {
			fmt.Fprintf(&b, "    [%d,%d) %s fired=%d fires at %d", w.Start, w.End, c.aggregate(w.Count, w.Value), w.Fired, w.FiresAt)
			if w.CleanupAt != w.FiresAt {
				fmt.Fprintf(&b, ", cleaned up at %d", w.CleanupAt)
			}
			b.WriteString("\n")
		}
	}
	if v.MoreKeys > 0 {
		fmt.Fprintf(&b, "  ... %d more key(s)\n", v.MoreKeys)
	}
	return b.String()
}

// aggregate renders a window's accumulator: count, or the aggregate and
// the count.
func (c *clusterScenario) aggregate(count int64, value float64) string {
	if c.cfg.Aggregate == config.AggregateCount {
		return fmt.Sprintf("count=%d", count)
	}
	return fmt.Sprintf("%s=%s count=%d", c.cfg.Aggregate, strconv.FormatFloat(value, 'f', -1, 64), count)
}

func splitFlags(sp task.SplitView) string {
	var f []string
	if sp.Idle {
		f = append(f, "IDLE")
	}
	if sp.Paused {
		f = append(f, "paused")
	}
	if sp.Finished {
		f = append(f, "finished")
	}
	if len(f) == 0 {
		return ""
	}
	return " " + strings.Join(f, " ")
}

func (c *clusterScenario) watermarks() string {
	var b strings.Builder
	for _, v := range c.subtasks(c.views()) {
		var in []string
		if v.Vertex == jobgraph.VertexSource {
			for _, sp := range v.Splits {
				in = append(in, fmt.Sprintf("%s-%d=%s%s", c.cfg.SourceTopic, sp.Partition, fmtWm(sp.Watermark), splitFlags(sp)))
			}
			if len(v.Splits) == 0 {
				in = append(in, "no split")
			}
		} else {
			for _, g := range v.Inputs {
				s := fmt.Sprintf("ch-%d(%s)=%s", g.Index, g.Producer, fmtWm(g.Watermark))
				if g.Idle {
					s += " IDLE"
				}
				in = append(in, s)
			}
		}
		status := ""
		if v.Idle {
			status = " IDLE"
		}
		fmt.Fprintf(&b, "%s: %s -> %s%s\n", v.Name, strings.Join(in, " "), fmtWm(v.Watermark), status)
	}
	return b.String()
}

// producerQueue is the length of subpartition sub of producer's
// ResultPartition, -1 when the producer is not among views.
func producerQueue(views []*task.SubtaskView, producer string, sub int) int {
	for _, v := range views {
		if v.Name == producer && sub < len(v.OutputQueueLengths) {
			return v.OutputQueueLengths[sub]
		}
	}
	return -1
}

func (c *clusterScenario) channels() string {
	views := c.views()
	var b strings.Builder
	subtasks := c.subtasks(views)
	for _, v := range subtasks {
		if v.OutPoolSize == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s out: queued %v, held %v, pool %d/%d", v.Name, v.OutputQueueLengths, v.OutputBuffersHeld, v.OutPoolInUse, v.OutPoolSize)
		if v.Backpressured {
			b.WriteString(", backpressured")
		}
		b.WriteString("\n")
	}
	for _, v := range subtasks {
		for _, g := range v.Inputs {
			ch := decodeView[exchange.InputChannelView](views[jobgraph.ChannelName(v.Name, g.Index)])
			if ch == nil {
				fmt.Fprintf(&b, "%s/ch-%d: gone\n", v.Name, g.Index)
				continue
			}
			if ch.Kind == "LocalInputChannel" {
				// Flink's LocalInputChannel reads the producer's buffers
				// through its subpartition view: no buffers, no credit;
				// its queue is the producer's subpartition
				fmt.Fprintf(&b, "%s Local <- %s[%d]: reads a queue of %d, queued %d", ch.Name, ch.Producer, ch.Subpartition,
					producerQueue(subtasks, ch.Producer, ch.Subpartition), g.Queued)
			} else {
				fmt.Fprintf(&b, "%s Remote <- %s[%d]: credit %d, exclusive %d, floating %d, in use %d, backlog %d, queued %d",
					ch.Name, ch.Producer, ch.Subpartition, ch.Credit, ch.Exclusive, ch.Floating, ch.InUse, ch.Backlog, g.Queued)
			}
			if g.Blocked {
				b.WriteString(", blocked")
			}
			if g.Persisting {
				b.WriteString(", persisting")
			}
			if g.Ended {
				b.WriteString(", ended")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func (c *clusterScenario) backpressure() string {
	var b strings.Builder
	for _, v := range c.subtasks(c.views()) {
		level := "OK"
		switch r := float64(v.BackPressuredTimeMsPerSecond) / 1000; {
		case r > 0.5:
			level = "HIGH"
		case r > 0.1:
			level = "LOW"
		}
		fmt.Fprintf(&b, "%s: busy %d, backpressured %d, idle %d ms/s: %s\n", v.Name, v.BusyTimeMsPerSecond,
			v.BackPressuredTimeMsPerSecond, v.IdleTimeMsPerSecond, level)
	}
	return b.String()
}

func (c *clusterScenario) kafka() string {
	k := decodeView[kafka.KafkaView](c.views()[jobgraph.KafkaName])
	if k == nil {
		return "error: no broker"
	}
	var b strings.Builder
	for _, p := range k.Partitions {
		committed := "-"
		if p.CommittedOffset >= 0 {
			committed = strconv.FormatInt(p.CommittedOffset, 10)
		}
		fmt.Fprintf(&b, "%s-%d: end offset %d, position %d, lag %d, committed %s\n", k.SourceTopic, p.Partition,
			p.EndOffset, p.ReadOffset, p.Lag, committed)
	}
	fmt.Fprintf(&b, "%s: %d record(s): open %d, pre-committed %d, committed %d, aborted %d, outside transactions %d; last stable offset %d\n",
		k.SinkTopic, k.SinkRecords, k.SinkOpen, k.SinkPreCommitted, k.SinkCommitted, k.SinkAborted, k.SinkPlain, k.LastStableOffset)
	return b.String()
}

func (c *clusterScenario) output(which string) string {
	k := decodeView[kafka.KafkaView](c.views()[jobgraph.KafkaName])
	if k == nil {
		return "error: no broker"
	}
	var b strings.Builder
	for _, r := range k.Recent {
		switch which {
		case "committed":
			if !(r.State == "Committed" || (r.State == "" && r.Offset < k.LastStableOffset)) {
				continue
			}
		case "uncommitted":
			if r.State != "Open" && r.State != "PreCommitted" {
				continue
			}
		}
		fmt.Fprintf(&b, "%d: %s", r.Offset, renderResult(r.Value))
		if r.State != "" {
			fmt.Fprintf(&b, " (%s %s)", r.State, r.TransactionalID)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// finalOutput is the sink topic as a read_committed consumer reads it once
// the run has ended (the run's result: no broker is left to ask).
func (c *clusterScenario) finalOutput() string {
	var b strings.Builder
	for i, r := range c.s.Finish().SinkCommitted {
		fmt.Fprintf(&b, "%d: %s\n", i, renderResult(string(r.Value)))
	}
	fmt.Fprintf(&b, "(the run has ended: %d record(s) committed)\n", len(c.s.Finish().SinkCommitted))
	return b.String()
}

// renderResult renders a sink record: a window result as
// "key [start,end) value=V firing=N", anything else as its JSON fields.
func renderResult(value string) string {
	var r map[string]any
	d := json.NewDecoder(strings.NewReader(value))
	d.UseNumber()
	if err := d.Decode(&r); err != nil {
		return value
	}
	if _, ok := r["window_start"]; ok {
		return fmt.Sprintf("%v [%v,%v) value=%v firing=%v", r["key"], r["window_start"], r["window_end"], r["value"], r["firing"])
	}
	keys := make([]string, 0, len(r))
	for k := range r {
		if k != "key" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	s := fmt.Sprint(r["key"])
	for _, k := range keys {
		s += fmt.Sprintf(" %s=%v", k, r[k])
	}
	return s
}

// checkpoints renders the checkpoint history from the log, as the web UI's
// checkpoint tab shows it.
func (c *clusterScenario) checkpoints() string {
	type history struct {
		triggered *eventlog.LogEvent
		snapshots []*eventlog.LogEvent
		end       *eventlog.LogEvent
	}
	byID := map[int64]*history{}
	var order []int64
	var b strings.Builder
	var lines []string // declined triggers and restores, in log order
	get := func(id int64) *history {
		h := byID[id]
		if h == nil {
			h = &history{}
			byID[id] = h
			order = append(order, id)
		}
		return h
	}
	for _, ev := range c.events {
		switch ev.Kind() {
		case eventlog.KindCheckpointTriggered:
			get(fieldInt(ev, "checkpoint_id")).triggered = ev
		case eventlog.KindCheckpointSnapshot:
			h := get(fieldInt(ev, "checkpoint_id"))
			h.snapshots = append(h.snapshots, ev)
		case eventlog.KindCheckpointCompleted, eventlog.KindCheckpointFailed:
			get(fieldInt(ev, "checkpoint_id")).end = ev
		case eventlog.KindCheckpointDeclined:
			lines = append(lines, fmt.Sprintf("%s %s declined: %s %s", fmtVT(ev.Vt), fieldStr(ev, "kind"),
				fieldStr(ev, "reason"), strconv.Quote(fieldStr(ev, "message"))))
		case eventlog.KindRestore:
			if from := fieldStr(ev, "from"); from == "checkpoint" {
				lines = append(lines, fmt.Sprintf("%s restore from checkpoint %d", fmtVT(ev.Vt), fieldInt(ev, "checkpoint_id")))
			} else {
				lines = append(lines, fmt.Sprintf("%s restore from %s: %s", fmtVT(ev.Vt), from, fieldStr(ev, "reason")))
			}
		}
	}
	completed, failed, pending := 0, 0, 0
	for _, id := range order {
		h := byID[id]
		fmt.Fprintf(&b, "%d", id)
		if t := h.triggered; t != nil {
			mode := "aligned"
			if fieldBool(t, "unaligned") {
				mode = "unaligned"
			}
			fmt.Fprintf(&b, " %s %s, triggered %s", fieldStr(t, "kind"), mode, fmtVT(t.Vt))
		}
		switch {
		case h.end == nil:
			pending++
			b.WriteString(": IN_PROGRESS\n")
		case h.end.Kind() == eventlog.KindCheckpointCompleted:
			completed++
			e := h.end
			fmt.Fprintf(&b, ": COMPLETED %s after %d ms, state %d B (checkpointed %d B), max alignment %d ms",
				fmtVT(e.Vt), fieldInt(e, "duration_ms"), fieldInt(e, "state_size"), fieldInt(e, "checkpointed_size"),
				fieldInt(e, "max_alignment_ms"))
			if n := fieldInt(e, "persisted_records"); n > 0 {
				fmt.Fprintf(&b, ", %d in-flight record(s) persisted", n)
			}
			if p := fieldStr(e, "savepoint_path"); p != "" {
				fmt.Fprintf(&b, ", %s", p)
			}
			fmt.Fprintf(&b, "\n    source offsets %s\n", renderOffsets(fieldRaw(e, "source_offsets")))
		default:
			failed++
			e := h.end
			fmt.Fprintf(&b, ": FAILED %s %s %s", fmtVT(e.Vt), fieldStr(e, "reason"), strconv.Quote(fieldStr(e, "message")))
			if task := fieldStr(e, "task"); task != "" {
				fmt.Fprintf(&b, " (task %s)", task)
			}
			b.WriteString("\n")
		}
		// each task's asynchronous part, from the completed checkpoint
		async := map[string]int64{}
		if h.end != nil && h.end.Kind() == eventlog.KindCheckpointCompleted {
			var tasks []struct {
				Task  string `json:"task"`
				Async int64  `json:"async_ms"`
			}
			if err := json.Unmarshal([]byte(fieldRaw(h.end, "tasks")), &tasks); err == nil {
				for _, t := range tasks {
					async[t.Task] = t.Async
				}
			}
		}
		for _, s := range h.snapshots {
			fmt.Fprintf(&b, "    %s %s: state %d B, start delay %d ms, alignment %d ms, sync %d ms", fmtVT(s.Vt), s.Actor, fieldInt(s, "state_size"),
				fieldInt(s, "start_delay_ms"), fieldInt(s, "alignment_ms"), fieldInt(s, "sync_ms"))
			if a, ok := async[jobgraph.BaseSubtaskName(s.Actor)]; ok {
				fmt.Fprintf(&b, ", async %d ms", a)
			}
			if fieldBool(s, "unaligned") {
				b.WriteString(", unaligned")
			}
			if n := fieldInt(s, "persisted_records"); n > 0 {
				fmt.Fprintf(&b, ", %d in-flight record(s) persisted", n)
			}
			b.WriteString("\n")
		}
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "in the log: completed %d, failed %d, in progress %d\n", completed, failed, pending)
	if cc := decodeView[checkpoint.CheckpointCoordinatorView](c.views()[jobgraph.CheckpointCoordinatorName]); cc != nil {
		fmt.Fprintf(&b, "coordinator of %s: completed %d, failed %d, in progress %d, latest completed %d, latest savepoint %d\n",
			cc.JobID, cc.Completed, cc.Failed, cc.InProgress, cc.Latest, cc.Savepoint)
	}
	return b.String()
}

// renderOffsets turns [{"split":"orders-0","offset":3},...] into
// "orders-0=3 ...".
func renderOffsets(raw string) string {
	var offs []struct {
		Split  string `json:"split"`
		Offset int64  `json:"offset"`
	}
	if err := json.Unmarshal([]byte(raw), &offs); err != nil {
		return raw
	}
	var s []string
	for _, o := range offs {
		s = append(s, fmt.Sprintf("%s=%d", o.Split, o.Offset))
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, " ")
}

func (c *clusterScenario) eventsVerb(t *testing.T, d *datadriven.TestData, args *argSet) string {
	actor, _ := args.str("actor")
	var kinds []string
	for _, a := range d.CmdArgs {
		if len(a.Vals) == 0 {
			kinds = append(kinds, a.Key)
			args.used[a.Key] = true
		}
	}
	args.done()
	if len(kinds) == 0 {
		t.Fatalf("%s: events needs at least one kind, e.g. events window_fired", d.Pos)
	}
	for _, k := range kinds {
		if !documentedKind(t, k) {
			t.Fatalf("%s: %q is not an event kind README.md documents", d.Pos, k)
		}
	}
	// each kind (with the actor filter) has its own cursor
	from := map[string]int{}
	for _, k := range kinds {
		from[k] = c.cursors[k+"|"+actor]
		c.cursors[k+"|"+actor] = len(c.events)
	}
	start := len(c.events)
	for _, n := range from {
		start = min(start, n)
	}
	var b strings.Builder
	for i, ev := range c.events[start:] {
		if n, ok := from[string(ev.Kind())]; !ok || start+i < n || (actor != "" && !actorMatches(ev.Actor, actor)) {
			continue
		}
		if len(kinds) == 1 {
			fmt.Fprintf(&b, "%s %s %s\n", fmtVT(ev.Vt), ev.Actor, renderFields(eventlog.FieldsOf(ev)))
		} else {
			fmt.Fprintf(&b, "%s\n", renderEvent(ev))
		}
	}
	return b.String()
}

// readme is README.md, read once: every event kind is documented there.
var readme struct {
	once sync.Once
	text string
	err  error
}

// documentedKind reports whether README.md names kind as `kind`: a typo in
// a script fails instead of showing nothing.
func documentedKind(t *testing.T, kind string) bool {
	readme.once.Do(func() {
		b, err := os.ReadFile("../README.md")
		readme.text, readme.err = string(b), err
	})
	if readme.err != nil {
		t.Fatal(readme.err)
	}
	return strings.Contains(readme.text, "`"+kind+"`")
}

// actorMatches reports whether an actor is the one a pattern names: the
// name, any attempt of a subtask (window-0 matches window-0#1 and its
// channels' owner), or a prefix ending in *.
func actorMatches(actor, pattern string) bool {
	if p, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(actor, p)
	}
	return actor == pattern || jobgraph.BaseSubtaskName(actor) == pattern
}

// ---- rendering -----------------------------------------------------------

// renderEvent is "vt actor kind fields".
func renderEvent(ev *eventlog.LogEvent) string {
	s := fmtVT(ev.Vt) + " " + ev.Actor + " " + string(ev.Kind())
	if f := renderFields(eventlog.FieldsOf(ev)); f != "" {
		s += " " + f
	}
	return s
}

// renderFields renders fields as key=value in their logged order: strings
// with spaces quoted, Long.MIN_VALUE and Long.MAX_VALUE by name, JSON as
// written.
func renderFields(fs []*messages.Field) string {
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		var v string
		switch x := f.Value.(type) {
		case *messages.Field_Int:
			v = fmtWm(x.Int)
		case *messages.Field_Str:
			v = x.Str
			if v == "" || strings.ContainsAny(v, " \"=") {
				v = strconv.Quote(v)
			}
		case *messages.Field_Bool:
			v = strconv.FormatBool(x.Bool)
		case *messages.Field_Float:
			v = strconv.FormatFloat(x.Float, 'f', -1, 64)
		case *messages.Field_RawJson:
			v = x.RawJson
		}
		parts = append(parts, f.Key+"="+v)
	}
	return strings.Join(parts, " ")
}

// fmtVT renders virtual µs as seconds without trailing zeros: 2s, 2.0026s.
func fmtVT[T ~int64](t T) string {
	us := int64(t)
	s := strconv.FormatInt(us/1_000_000, 10)
	if frac := us % 1_000_000; frac != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
	}
	return s + "s"
}

// fmtWm renders an event time or watermark in ms, naming Long.MIN_VALUE
// and Long.MAX_VALUE.
func fmtWm(ms int64) string {
	switch ms {
	case math.MinInt64:
		return "Long.MIN_VALUE"
	case math.MaxInt64:
		return "Long.MAX_VALUE"
	}
	return strconv.FormatInt(ms, 10)
}

// parseVirtual reads a Flink duration (10s, 1500ms, 2min, 200µs) or a
// virtual time as the verbs print it (10.0002s) as virtual µs since the
// start.
func parseVirtual(t *testing.T, d *datadriven.TestData, s string) vt.Time {
	if secs, frac, ok := strings.Cut(strings.TrimSuffix(s, "s"), "."); ok && strings.HasSuffix(s, "s") && len(frac) <= 6 {
		whole, err1 := strconv.ParseInt(secs, 10, 64)
		part, err2 := strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
		if err1 == nil && err2 == nil && whole >= 0 && part >= 0 {
			return vt.Of(whole*1_000_000 + part)
		}
	}
	dur, err := config.ParseDuration(s)
	if err != nil || dur < 0 {
		t.Fatalf("%s: %q is not a duration (10s, 1500ms, 2min, 10.0002s): %v", d.Pos, s, err)
	}
	if dur%time.Microsecond != 0 {
		t.Fatalf("%s: %q is finer than a virtual µs", d.Pos, s)
	}
	return vt.FromDuration(dur)
}

func fieldOf(ev *eventlog.LogEvent, key string) *messages.Field {
	for _, f := range eventlog.FieldsOf(ev) {
		if f.Key == key {
			return f
		}
	}
	return nil
}

func fieldStr(ev *eventlog.LogEvent, key string) string { return fieldOf(ev, key).GetStr() }
func fieldInt(ev *eventlog.LogEvent, key string) int64  { return fieldOf(ev, key).GetInt() }
func fieldBool(ev *eventlog.LogEvent, key string) bool  { return fieldOf(ev, key).GetBool() }
func fieldRaw(ev *eventlog.LogEvent, key string) string { return fieldOf(ev, key).GetRawJson() }
