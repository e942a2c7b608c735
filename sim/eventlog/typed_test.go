package eventlog

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/kernel"
)

// zerologLine is the line the log's writer wrote before typed events: the
// event's proto fields through zerolog (the old Writer.Write, kept here as
// the reference the new writer must match byte for byte).
func zerologLine(vt int64, actor string, kind Kind, fields []*messages.Field) []byte {
	var buf bytes.Buffer
	l := zerolog.New(&buf)
	e := l.Log().Int64("vt", vt).Str("actor", actor).Str("event", string(kind))
	for _, f := range fields {
		switch v := f.Value.(type) {
		case *messages.Field_Int:
			e.Int64(f.Key, v.Int)
		case *messages.Field_Str:
			e.Str(f.Key, v.Str)
		case *messages.Field_Bool:
			e.Bool(f.Key, v.Bool)
		case *messages.Field_Float:
			e.Float64(f.Key, v.Float)
		case *messages.Field_RawJson:
			e.RawJSON(f.Key, []byte(v.RawJson))
		}
	}
	e.Send()
	return buf.Bytes()
}

func newLine(ev *LogEvent) []byte {
	var buf bytes.Buffer
	NewWriter(&buf, false).Write(ev)
	return buf.Bytes()
}

var (
	str = messages.Str
	num = messages.Int
	flt = messages.Float
	yes = messages.Bool
	raw = messages.Raw
)

// typedCases pairs each typed event with the proto fields its producer
// logged before it was typed, in their order.
var typedCases = []struct {
	e      Event
	fields []*messages.Field
}{
	{JobStatus{JobID: "job-1", Status: "RUNNING", Previous: "CREATED", Cause: "x"},
		[]*messages.Field{str("job_id", "job-1"), str("status", "RUNNING"), str("previous", "CREATED"), str("cause", "x")}},
	{JobStatus{JobID: "job-1", Status: "CREATED"}, []*messages.Field{str("job_id", "job-1"), str("status", "CREATED")}},
	{OutputView{Topic: "out", FromOffset: 7}, []*messages.Field{str("topic", "out"), num("from_offset", 7)}},
	{ActionIgnored{Action: "at=1s rescale 2", Reason: "why \"not\"\n"},
		[]*messages.Field{str("action", "at=1s rescale 2"), str("reason", "why \"not\"\n")}},
	{Action{Action: "at=1s trigger-checkpoint", To: "jobmanager"},
		[]*messages.Field{str("action", "at=1s trigger-checkpoint"), str("to", "jobmanager")}},
	{WindowFired{Key: "k<&>\u00e9", WindowStart: 0, WindowEnd: 5000, Value: 3, Firing: 1, Watermark: 4999},
		[]*messages.Field{str("key", "k<&>\u00e9"), num("window_start", 0), num("window_end", 5000), flt("value", 3),
			num("firing", 1), num("watermark", 4999)}},
	{WindowFired{Key: "k", WindowStart: -5, WindowEnd: 5, Value: 1.5e-9, Firing: 2, Watermark: -9223372036854775808},
		[]*messages.Field{str("key", "k"), num("window_start", -5), num("window_end", 5), flt("value", 1.5e-9),
			num("firing", 2), num("watermark", -9223372036854775808)}},
	{OutputIsolation{IsolationLevel: "read_committed"}, []*messages.Field{str("isolation_level", "read_committed")}},
	{Failure{Invariant: "credit_non_negative", What: "w"}, []*messages.Field{str("invariant", "credit_non_negative"), str("what", "w")}},
	{TaskMetrics{BusyTimeMsPerSecond: 1, BackPressuredTimeMsPerSecond: 2, IdleTimeMsPerSecond: 997, NumRecordsIn: 4, NumRecordsOut: 5},
		[]*messages.Field{num("busyTimeMsPerSecond", 1), num("backPressuredTimeMsPerSecond", 2), num("idleTimeMsPerSecond", 997),
			num("numRecordsIn", 4), num("numRecordsOut", 5)}},
	// a source: its ResultPartition, then its reader
	{TaskMetrics{BusyTimeMsPerSecond: 10, IdleTimeMsPerSecond: 989, NumRecordsIn: 549, NumRecordsOut: 549,
		HasOutput: true, NumBuffersOut: 18, NumBytesOut: 51028, OutPoolUsage: 1.0 / 6, OutputQueueLengths: []int64{0, 3},
		Watermark: 1699999995702, HasWatermark: true, AssignedSplits: 2},
		[]*messages.Field{num("busyTimeMsPerSecond", 10), num("backPressuredTimeMsPerSecond", 0), num("idleTimeMsPerSecond", 989),
			num("numRecordsIn", 549), num("numRecordsOut", 549), num("numBuffersOut", 18), num("numBytesOut", 51028),
			flt("outPoolUsage", 1.0/6), raw("outputQueueLengths", "[0,3]"), num("currentOutputWatermark", 1699999995702),
			num("assignedSplits", 2)}},
	// a window task: its InputGate and window operator
	{TaskMetrics{BusyTimeMsPerSecond: 5, IdleTimeMsPerSecond: 994, NumRecordsIn: 569, Watermark: 1699999995702, HasWatermark: true,
		InputWatermark: true, NumBuffersIn: 18, NumBytesIn: 57028, InPoolUsage: 0.25, InputQueueLength: 1, InputQueueLengths: []int64{1, 0},
		HasWindow: true, WindowKeys: 54, Windows: 54, LateDropped: 3},
		[]*messages.Field{num("busyTimeMsPerSecond", 5), num("backPressuredTimeMsPerSecond", 0), num("idleTimeMsPerSecond", 994),
			num("numRecordsIn", 569), num("numRecordsOut", 0), num("currentInputWatermark", 1699999995702), num("numBuffersIn", 18),
			num("numBytesIn", 57028), flt("inPoolUsage", 0.25), num("inputQueueLength", 1), raw("inputQueueLengths", "[1,0]"),
			num("keys", 54), num("windows", 54), num("numLateRecordsDropped", 3)}},
	// a process task that writes on
	{TaskMetrics{HasOutput: true, OutputQueueLengths: []int64{}, Watermark: -9223372036854775808, HasWatermark: true,
		InputWatermark: true, InputQueueLengths: []int64{0}, HasProcess: true, ProcessKeys: 7, ExpiredStateReads: 2},
		[]*messages.Field{num("busyTimeMsPerSecond", 0), num("backPressuredTimeMsPerSecond", 0), num("idleTimeMsPerSecond", 0),
			num("numRecordsIn", 0), num("numRecordsOut", 0), num("numBuffersOut", 0), num("numBytesOut", 0), flt("outPoolUsage", 0),
			raw("outputQueueLengths", "[]"), num("currentInputWatermark", -9223372036854775808), num("numBuffersIn", 0),
			num("numBytesIn", 0), flt("inPoolUsage", 0), num("inputQueueLength", 0), raw("inputQueueLengths", "[0]"),
			num("keys", 7), num("expired_state_reads", 2)}},
	{LateSideOutput{Key: "k", Timestamp: 12}, []*messages.Field{str("key", "k"), num("timestamp", 12)}},
	{CheckpointCompleted{CheckpointID: 3, CheckpointKind: "periodic"},
		[]*messages.Field{num("checkpoint_id", 3), str("kind", "periodic"), num("duration_ms", 0), num("state_size", 0),
			num("checkpointed_size", 0), num("persisted_records", 0), num("persisted_bytes", 0), num("max_alignment_ms", 0)}},
	{CheckpointCompleted{CheckpointID: 5, CheckpointKind: "savepoint", DurationMs: 4, StateSize: 472, CheckpointedSize: 100,
		PersistedRecords: 3, PersistedBytes: 300, MaxAlignmentMs: 2, SourceOffsets: `[{"split":"orders-0","offset":1}]`,
		SavepointPath: "file:/flinksim/savepoints/savepoint-5"},
		[]*messages.Field{num("checkpoint_id", 5), str("kind", "savepoint"), num("duration_ms", 4), num("state_size", 472),
			num("checkpointed_size", 100), num("persisted_records", 3), num("persisted_bytes", 300), num("max_alignment_ms", 2),
			raw("source_offsets", `[{"split":"orders-0","offset":1}]`), str("savepoint_path", "file:/flinksim/savepoints/savepoint-5")}},
	{CheckpointCompleted{CheckpointID: 6, CheckpointKind: "periodic", SourceOffsets: `[]`, Tasks: `[{"task":"window-0"}]`},
		[]*messages.Field{num("checkpoint_id", 6), str("kind", "periodic"), num("duration_ms", 0), num("state_size", 0),
			num("checkpointed_size", 0), num("persisted_records", 0), num("persisted_bytes", 0), num("max_alignment_ms", 0),
			raw("source_offsets", `[]`), raw("tasks", `[{"task":"window-0"}]`)}},
	{CheckpointTriggered{CheckpointID: 6, CheckpointKind: "manual", TimestampMs: 1234, Unaligned: true},
		[]*messages.Field{num("checkpoint_id", 6), str("kind", "manual"), num("timestamp_ms", 1234), yes("unaligned", true)}},
	{CheckpointFailed{CheckpointID: 7, CheckpointKind: "periodic", Reason: "CHECKPOINT_EXPIRED", Message: "m", Task: "window-0"},
		[]*messages.Field{num("checkpoint_id", 7), str("kind", "periodic"), str("reason", "CHECKPOINT_EXPIRED"), str("message", "m"),
			str("task", "window-0")}},
	{CheckpointFailed{CheckpointID: 8, CheckpointKind: "periodic", Reason: "r", Message: "m"},
		[]*messages.Field{num("checkpoint_id", 8), str("kind", "periodic"), str("reason", "r"), str("message", "m")}},
	{Restore{From: "checkpoint", CheckpointID: 4}, []*messages.Field{str("from", "checkpoint"), num("checkpoint_id", 4)}},
	{Restore{From: "starting offsets", Reason: "no completed checkpoint"},
		[]*messages.Field{str("from", "starting offsets"), str("reason", "no completed checkpoint")}},
	{CheckpointSnapshot{CheckpointID: 4, CheckpointKind: "checkpoint", Unaligned: true, StateSize: 900, CheckpointedSize: 300,
		PersistedRecords: 6, StartDelayMs: 3, AlignmentMs: 12, SyncMs: 1},
		[]*messages.Field{num("checkpoint_id", 4), str("kind", "checkpoint"), yes("unaligned", true), num("state_size", 900),
			num("checkpointed_size", 300), num("persisted_records", 6), num("start_delay_ms", 3), num("alignment_ms", 12), num("sync_ms", 1)}},
	{SubmitTask{Task: "window-0#1", TaskName: "Window(TumblingEventTimeWindows(60000), EventTimeTrigger, count)", Attempt: 1,
		TaskManager: "tm-2", Slot: 0, AllocationID: "alloc-2-0"},
		[]*messages.Field{str("task", "window-0#1"), str("task_name", "Window(TumblingEventTimeWindows(60000), EventTimeTrigger, count)"),
			num("attempt", 1), str("task_manager", "tm-2"), num("slot", 0), str("allocation_id", "alloc-2-0")}},
	{BacklogAnnouncement{Producer: "source-0", Backlog: 3, FreeBuffers: 0, BuffersInUse: 2, FloatingBuffers: 1},
		[]*messages.Field{str("producer", "source-0"), num("backlog", 3), num("free_buffers", 0), num("buffers_in_use", 2),
			num("floating_buffers", 1)}},
	{NoResourceAvailable{SlotsNeeded: 4, SlotsOffered: 2, SlotRequestTimeout: "5 min", Exception: "NoResourceAvailableException: x"},
		[]*messages.Field{num("slots_needed", 4), num("slots_offered", 2), str("slot_request_timeout", "5 min"),
			str("exception", "NoResourceAvailableException: x")}},
	{NetworkPartition{HostA: "tm-1", HostB: "jobmanager", DurationMs: 3000, Action: "at=1s partition-network tm-1 jobmanager for 3s"},
		[]*messages.Field{str("host_a", "tm-1"), str("host_b", "jobmanager"), num("duration_ms", 3000),
			str("action", "at=1s partition-network tm-1 jobmanager for 3s")}},
	{NetworkPartitionHealed{HostA: "tm-1", HostB: "tm-2", DroppedEnvelopes: 10, ConnectionsLost: 4, RunEnded: true},
		[]*messages.Field{str("host_a", "tm-1"), str("host_b", "tm-2"), num("dropped_envelopes", 10), num("connections_lost", 4),
			yes("run_ended", true)}},
	{NetworkPartitionHealed{HostA: "tm-1", HostB: "tm-2"},
		[]*messages.Field{str("host_a", "tm-1"), str("host_b", "tm-2"), num("dropped_envelopes", 0), num("connections_lost", 0)}},
	{HostStalled{Host: "tm-2", DurationMs: 9000, Action: "at=1s stall-taskmanager tm-2 for 9s"},
		[]*messages.Field{str("host", "tm-2"), num("duration_ms", 9000), str("action", "at=1s stall-taskmanager tm-2 for 9s")}},
	{HostResumed{Host: "tm-2", HeldEnvelopes: 12, RunEnded: true},
		[]*messages.Field{str("host", "tm-2"), num("held_envelopes", 12), yes("run_ended", true)}},
	{HostResumed{Host: "tm-2"}, []*messages.Field{str("host", "tm-2"), num("held_envelopes", 0)}},
	{NetworkJitter{DurationMs: 5000, MaxJitterUs: 2000, Action: "at=1s network-jitter 2ms for 5s"},
		[]*messages.Field{num("duration_ms", 5000), num("max_jitter_us", 2000), str("action", "at=1s network-jitter 2ms for 5s")}},
	{NetworkJitterEnded{JitteredEnvelopes: 40}, []*messages.Field{num("jittered_envelopes", 40)}},
	{NetworkJitterEnded{JitteredEnvelopes: 3, RunEnded: true}, []*messages.Field{num("jittered_envelopes", 3), yes("run_ended", true)}},
	{RPCLost{RPC: "acknowledge-checkpoint", From: "window-1#1", To: "checkpoint-coordinator"},
		[]*messages.Field{str("rpc", "acknowledge-checkpoint"), str("from", "window-1#1"), str("to", "checkpoint-coordinator")}},
	{RPCLossUnused{RPC: "decline-checkpoint"}, []*messages.Field{str("rpc", "decline-checkpoint")}},
	{RPCLossUnused{RPC: "decline-checkpoint", RunEnded: true}, []*messages.Field{str("rpc", "decline-checkpoint"), yes("run_ended", true)}},
	{StorageUnavailable{DurationMs: 4000, Action: "at=1s fail-checkpoint-storage for 4s"},
		[]*messages.Field{num("duration_ms", 4000), str("action", "at=1s fail-checkpoint-storage for 4s")}},
	{StorageAvailable{FailedUploads: 3}, []*messages.Field{num("failed_uploads", 3)}},
	{StorageAvailable{FailedUploads: 1, RunEnded: true}, []*messages.Field{num("failed_uploads", 1), yes("run_ended", true)}},
	{UploadFailed{Task: "window-1#2", CheckpointID: 7}, []*messages.Field{str("task", "window-1#2"), num("checkpoint_id", 7)}},
	{KafkaUnavailable{Host: "kafka", DurationMs: 20000, Action: "at=1s kafka-unavailable for 20s"},
		[]*messages.Field{str("host", "kafka"), num("duration_ms", 20000), str("action", "at=1s kafka-unavailable for 20s")}},
	{KafkaAvailable{Host: "kafka", HeldEnvelopes: 9}, []*messages.Field{str("host", "kafka"), num("held_envelopes", 9)}},
	{KafkaAvailable{Host: "kafka", RunEnded: true}, []*messages.Field{str("host", "kafka"), num("held_envelopes", 0), yes("run_ended", true)}},
	{ChannelError{Producer: "source-1", ConnectionID: "tm-2:data#0", Cause: "RemoteTransportException"},
		[]*messages.Field{str("producer", "source-1"), str("connection_id", "tm-2:data#0"), str("cause", "RemoteTransportException")}},
	{HeartbeatTimeout{TaskManager: "tm-1", LastHeartbeatMs: 3000, Cause: "c"},
		[]*messages.Field{str("task_manager", "tm-1"), num("last_heartbeat_ms", 3000), str("cause", "c")}},
	{HeartbeatTimeout{JobManager: "jobmanager", LastHeartbeatMs: -1, Cause: "c"},
		[]*messages.Field{str("job_manager", "jobmanager"), num("last_heartbeat_ms", -1), str("cause", "c")}},
	{HeartbeatTimeout{ResourceManager: "resourcemanager", Cause: "c"},
		[]*messages.Field{str("resource_manager", "resourcemanager"), num("last_heartbeat_ms", 0), str("cause", "c")}},
	{Failover{Cause: "c", Strategy: "none", Restarts: 0},
		[]*messages.Field{str("cause", "c"), yes("restart", false), str("strategy", "none"), num("restarts", 0)}},
	{Failover{Cause: "c", Restart: true, Strategy: "fixed-delay", BackoffMs: 1000, Restarts: 2, NextAttempt: 3},
		[]*messages.Field{str("cause", "c"), yes("restart", true), str("strategy", "fixed-delay"), num("backoff_ms", 1000),
			num("restarts", 2), num("next_attempt", 3)}},
	{KafkaError{Request: "produce", TransactionalID: "t-1", Error: "e", HasRecords: true, Records: 0, Producer: "sink-0"},
		[]*messages.Field{str("request", "produce"), str("transactional_id", "t-1"), str("error", "e"), num("records", 0), str("producer", "sink-0")}},
	{KafkaError{Request: "commit", TransactionalID: "t-1", Error: "e", Producer: "sink-0"},
		[]*messages.Field{str("request", "commit"), str("transactional_id", "t-1"), str("error", "e"), str("producer", "sink-0")}},
	{Reconfigure{Step: RescaleStop, Setting: "k", Value: "v"},
		[]*messages.Field{str("step", "stop-with-savepoint"), str("setting", "k"), str("value", "v")}},
	{Reconfigure{Step: RescaleSubmit, Setting: "k", Value: "v", SavepointPath: "p"},
		[]*messages.Field{str("step", "submit from savepoint"), str("setting", "k"), str("value", "v"), str("savepoint_path", "p")}},
	{Reconfigure{Result: "failed", Setting: "k", Cause: "c"}, []*messages.Field{str("result", "failed"), str("setting", "k"), str("cause", "c")}},
	{Rescale{Step: RescaleStop, ToParallelism: 3}, []*messages.Field{str("step", "stop-with-savepoint"), num("to_parallelism", 3)}},
	{Rescale{Step: RescaleSubmit, SavepointPath: "p", FromParallelism: 2, ToParallelism: 3, MaxParallelism: 128},
		[]*messages.Field{str("step", "submit from savepoint"), str("savepoint_path", "p"), num("from_parallelism", 2), num("to_parallelism", 3),
			num("max_parallelism", 128)}},
	{Rescale{Result: "failed", Cause: "c"}, []*messages.Field{str("result", "failed"), str("cause", "c")}},
	{TaskState{Task: "window-0", State: "SCHEDULED", Note: "waiting for a slot"},
		[]*messages.Field{str("task", "window-0"), str("state", "SCHEDULED"), str("note", "waiting for a slot")}},
	{TaskState{Task: "window-0", State: "DEPLOYING", AllocationID: "a"},
		[]*messages.Field{str("task", "window-0"), str("state", "DEPLOYING"), str("allocation_id", "a")}},
	{TaskState{Task: "window-0", State: "FAILED", Reason: "r"}, []*messages.Field{str("task", "window-0"), str("state", "FAILED"), str("reason", "r")}},
	{TaskState{Task: "window-0", State: "RUNNING"}, []*messages.Field{str("task", "window-0"), str("state", "RUNNING")}},
	{Transaction{Op: "commit", TransactionalID: "t", State: "Committed", Records: 4, Producer: "p", Note: "n"},
		[]*messages.Field{str("op", "commit"), str("transactional_id", "t"), str("state", "Committed"), num("records", 4), str("producer", "p"),
			str("note", "n")}},
	{Transaction{Op: "begin", TransactionalID: "t", State: "Open", Producer: "p"},
		[]*messages.Field{str("op", "begin"), str("transactional_id", "t"), str("state", "Open"), num("records", 0), str("producer", "p")}},
	{PartitionRequest{Channel: "LocalInputChannel", Producer: "source-0", Subpartition: 1},
		[]*messages.Field{str("channel", "LocalInputChannel"), str("producer", "source-0"), num("subpartition", 1)}},
	{PartitionRequest{Channel: "RemoteInputChannel", Producer: "source-0", Subpartition: 1, Remote: true, InitialCredit: 2, ConnectionID: "c"},
		[]*messages.Field{str("channel", "RemoteInputChannel"), str("producer", "source-0"), num("subpartition", 1), num("initial_credit", 2),
			str("connection_id", "c")}},
	{KafkaMetrics{Topic: "orders", Partitions: `[{"partition":0,"end_offset":5,"read_offset":5,"lag":0}]`, SinkRecords: 3, SinkOpen: 1,
		SinkPreCommitted: 2, SinkCommitted: 3, SinkAborted: 4, SinkPlain: 5, LastStableOffset: 6},
		[]*messages.Field{str("topic", "orders"), raw("partitions", `[{"partition":0,"end_offset":5,"read_offset":5,"lag":0}]`),
			num("sink_records", 3), num("sink_open", 1), num("sink_pre_committed", 2), num("sink_committed", 3), num("sink_aborted", 4),
			num("sink_plain", 5), num("last_stable_offset", 6)}},
	{FinalCounters{List: []Value{S("task", "window-0"), I("records_in", 60000), I("windows_fired", 54)}},
		[]*messages.Field{str("task", "window-0"), num("records_in", 60000), num("windows_fired", 54)}},
}

// Every typed event writes the line zerolog wrote from the fields its
// producer logged before, byte for byte, and decodes back from those
// fields and from its own JSON text (the remote transport's form).
func TestWriterMatchesZerolog(t *testing.T) {
	kinds := map[Kind]bool{}
	for _, c := range typedCases {
		kinds[c.e.Kind()] = true
		want := zerologLine(1234567, "window-0", c.e.Kind(), c.fields)
		if got := newLine(&LogEvent{Vt: 1234567, Actor: "window-0", Body: c.e}); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", c.e.Kind(), got, want)
		}
		if got := newLine(&LogEvent{Vt: 1234567, Actor: "window-0", Body: F(c.e.Kind(), c.fields...)}); !bytes.Equal(got, want) {
			t.Errorf("%s as fields:\n got %s\nwant %s", c.e.Kind(), got, want)
		}
		if got := Decode(&LogEvent{Body: F(c.e.Kind(), c.fields...)}); !reflect.DeepEqual(got, c.e) {
			t.Errorf("%s: decoded from fields %+v, want %+v", c.e.Kind(), got, c.e)
		}
		rawEv := &LogEvent{Body: kernel.RawJSON{K: c.e.Kind(), JSON: c.e.AppendJSON(nil)}}
		if got := Decode(rawEv); !reflect.DeepEqual(got, c.e) {
			t.Errorf("%s: decoded from JSON %+v, want %+v", c.e.Kind(), got, c.e)
		}
	}
	if len(kinds) < 30 {
		t.Errorf("only %d kinds covered", len(kinds))
	}
}

// A Done crossing the remote transport keeps every line's bytes and every
// event's typed form.
func TestDoneProtoKeepsLines(t *testing.T) {
	d := &kernel.Done{Step: 3, Actor: "window-0"}
	for i, c := range typedCases {
		d.Events = append(d.Events, kernel.Event{Vt: int64(i), Actor: "window-0", Seq: uint64(i + 1), Body: c.e})
	}
	back := kernel.DoneFromProto(d.Proto())
	if len(back.Events) != len(d.Events) {
		t.Fatalf("%d events back, want %d", len(back.Events), len(d.Events))
	}
	for i := range d.Events {
		a, b := &d.Events[i], &back.Events[i]
		if !bytes.Equal(newLine(a), newLine(b)) || a.Seq != b.Seq || a.Vt != b.Vt {
			t.Errorf("event %d: %s became %s", i, newLine(a), newLine(b))
		}
		if !reflect.DeepEqual(Decode(b), typedCases[i].e) {
			t.Errorf("event %d: decoded %+v, want %+v", i, Decode(b), typedCases[i].e)
		}
	}
}

// simpleKinds are the kinds of kinds_simple.go, each with the fields its
// producer logged before the events were typed (5690b84^), written out by
// hand: type and key in the producer's order, s string, i int64, b bool,
// f float64, r raw JSON. The encoder is held to these lists, never to
// itself.
var simpleKinds = []struct {
	e      Event
	fields []string
}{
	{AbortLingering{}, []string{"s:prefix", "i:subtask", "i:from_checkpoint", "r:aborted", "s:producer"}},
	{ActorStarted{}, []string{"s:component"}},
	{WatermarkAlignment{}, []string{"s:group", "i:combined_watermark", "i:max_allowed_watermark"}},
	{Backfill{}, []string{"s:topic", "i:records", "r:end_offsets"}},
	{BarrierTimedOut{}, []string{"i:checkpoint_id", "i:persisted_records"}},
	{ChannelFinished{}, []string{"i:channel", "s:producer"}},
	{CheckpointAckIgnored{}, []string{"i:checkpoint_id", "s:task", "s:message"}},
	{CheckpointDeclined{}, []string{"s:kind", "s:reason", "s:message"}},
	{CheckpointDeclinedByTask{}, []string{"i:checkpoint_id", "s:reason"}},
	{CheckpointSnapshot{}, []string{"i:checkpoint_id", "s:kind", "b:unaligned", "i:state_size", "i:checkpointed_size", "i:persisted_records", "i:start_delay_ms", "i:alignment_ms", "i:sync_ms"}},
	{EventSent{}, []string{"i:partition", "i:offset", "s:key", "i:timestamp", "r:value"}},
	{GeneratorStarted{}, []string{"f:rate_per_second", "i:keys", "s:disorder", "f:late_fraction"}},
	{JobGraph{}, []string{"s:job_name", "r:vertices", "r:edges", "i:max_parallelism", "i:slots_needed", "b:bounded"}},
	{NettyFrame{}, []string{"s:peer", "s:message", "i:frame_length", "s:hex"}},
	{NoResourceAvailable{}, []string{"i:slots_needed", "i:slots_offered", "s:slot_request_timeout", "s:exception"}},
	{OfferSlots{}, []string{"s:job_manager", "i:slot", "s:allocation_id"}},
	{OffsetsCommitted{}, []string{"s:group", "s:reader", "i:checkpoint_id", "r:offsets"}},
	{PartitionPaused{}, []string{"i:partition"}},
	{PartitionResumed{}, []string{"i:partition", "i:held_records"}},
	{ReaderNoSplits{}, []string{"s:reader", "s:note"}},
	{RegisterTaskExecutor{}, []string{"s:resource_manager", "i:num_slots", "r:default_slot_resource_profile", "r:total_resource_profile"}},
	{RegistrationResponse{}, []string{"b:success"}},
	{RequestSlot{}, []string{"s:task_manager", "i:slot", "s:allocation_id"}},
	{ResourceRequirements{}, []string{"s:job_id", "i:slots", "i:free_slots"}},
	{RestartStrategy{}, []string{"s:strategy", "s:description"}},
	{SplitFinished{}, []string{"i:partition", "i:offset"}},
	{SplitPaused{}, []string{"s:split", "i:split_watermark", "i:max_allowed_watermark"}},
	{SplitResumed{}, []string{"s:split", "i:split_watermark", "i:max_allowed_watermark"}},
	{SplitsAssigned{}, []string{"s:reader", "r:partitions"}},
	{StateRestored{}, []string{"i:checkpoint_id", "i:window_keys", "i:value_keys", "i:input_channel_records", "i:output_channel_records", "r:committables"}},
	{SubmitTask{}, []string{"s:task", "s:task_name", "i:attempt", "s:task_manager", "i:slot", "s:allocation_id"}},
	{TaskExecutorRegistered{}, []string{"s:task_manager", "i:num_slots", "i:registered_task_managers"}},
	{TaskManagerKilled{}, []string{"s:action", "i:tasks"}},
	{TaskManagerLost{}, []string{"s:task_manager", "s:cause", "s:replacement"}},
	{TaskManagerStarted{}, []string{"i:num_slots", "r:total_resource_profile", "r:default_slot_resource_profile"}},
	{TopicCreated{}, []string{"s:topic", "i:partitions"}},
	{WatermarkStatus{}, []string{"s:status"}},
	{WorkerTerminated{}, []string{"s:task_manager", "s:cause", "s:replacement"}},
}

// Every field of every simple kind, filled with values that need escaping
// or are extreme, writes what zerolog writes for its producer's fields, and
// decodes back from its JSON text.
func TestSimpleKindsMatchZerolog(t *testing.T) {
	ints := []int64{0, -1, math.MaxInt64, math.MinInt64, 42}
	strs := []string{"", "q\"\\\n", "<&>é\x7f", "tab\t\u2028", "plain"}
	raws := []string{`[1,"x"]`, `{"a":[]}`, `[]`, `[{"p":-1}]`, `{}`}
	floats := []float64{0.1, 1e21, 1e-7, -3, 2.5}
	kinds := map[Kind]bool{}
	for _, c := range simpleKinds {
		kinds[c.e.Kind()] = true
		typ := reflect.TypeOf(c.e)
		if typ.NumField() != len(c.fields) {
			t.Errorf("%s has %d fields, its producer logged %d", typ.Name(), typ.NumField(), len(c.fields))
			continue
		}
		for round := 0; round < 5; round++ {
			rv := reflect.New(typ).Elem()
			var fields []*messages.Field
			for i, spec := range c.fields {
				kind, key, _ := strings.Cut(spec, ":")
				f, n := rv.Field(i), (i+round)%5
				want := map[string]reflect.Kind{"s": reflect.String, "r": reflect.String, "i": reflect.Int64, "b": reflect.Bool, "f": reflect.Float64}[kind]
				if f.Kind() != want {
					t.Fatalf("%s.%s is %s, its producer's %s is %s", typ.Name(), typ.Field(i).Name, f.Kind(), key, want)
				}
				switch kind {
				case "s":
					f.SetString(strs[n])
					fields = append(fields, str(key, strs[n]))
				case "r":
					f.SetString(raws[n])
					fields = append(fields, raw(key, raws[n]))
				case "i":
					f.SetInt(ints[n])
					fields = append(fields, num(key, ints[n]))
				case "b":
					f.SetBool(n%2 == 0)
					fields = append(fields, yes(key, n%2 == 0))
				case "f":
					f.SetFloat(floats[n])
					fields = append(fields, flt(key, floats[n]))
				}
			}
			e := rv.Interface().(Event)
			want := zerologLine(5, "a", e.Kind(), fields)
			if got := newLine(&LogEvent{Vt: 5, Actor: "a", Body: e}); !bytes.Equal(got, want) {
				t.Errorf("%T:\n got %s\nwant %s", e, got, want)
			}
			if got := Decode(&LogEvent{Body: kernel.RawJSON{K: e.Kind(), JSON: e.AppendJSON(nil)}}); !reflect.DeepEqual(got, e) {
				t.Errorf("%T: decoded %+v, want %+v", e, got, e)
			}
		}
	}
	if len(kinds) != 38 {
		t.Errorf("%d simple kinds, want the 38 of kinds_simple.go", len(kinds))
	}
}

func TestFinalCountersInt(t *testing.T) {
	e := FinalCounters{List: []Value{S("task", "window-0"), I("records_in", 60000), I("numLateRecordsDropped", 7)}}
	for key, want := range map[string]int64{"records_in": 60000, "numLateRecordsDropped": 7, "task": 0, "absent": 0} {
		if got := e.Int(key); got != want {
			t.Errorf("Int(%q) = %d, want %d", key, got, want)
		}
	}
}
