package eventlog

// Typed events of the kinds whose fields depend on the case: each writes
// the fields its case has, in the log's order.

import "github.com/flinksim/flinksim/sim/logenc"

// Failover is the JobManager failing over the job (Flink's
// ExecutionFailureHandler): with Restart, the restart strategy's backoff
// and the attempt that follows; without, the job fails.
type Failover struct {
	Cause       string
	Restart     bool
	Strategy    string
	BackoffMs   int64 // Restart only
	Restarts    int64
	NextAttempt int64 // Restart only
}

// Kind is KindFailover.
func (Failover) Kind() Kind { return KindFailover }

// AppendJSON appends the Failover event's fields to b in the log's order.
func (e Failover) AppendJSON(b []byte) []byte {
	b = logenc.Str(logenc.Bool(logenc.Str(b, "cause", e.Cause), "restart", e.Restart), "strategy", e.Strategy)
	if e.Restart {
		b = logenc.Int(b, "backoff_ms", e.BackoffMs)
	}
	b = logenc.Int(b, "restarts", e.Restarts)
	if e.Restart {
		b = logenc.Int(b, "next_attempt", e.NextAttempt)
	}
	return b
}

// HeartbeatTimeout is a heartbeat monitor timing out (HeartbeatMonitorImpl):
// the JobManager's of a TaskManager (TaskManager set), or a TaskManager's
// of the ResourceManager or the JobManager, with the last heartbeat heard
// (virtual ms).
type HeartbeatTimeout struct {
	TaskManager, JobManager, ResourceManager string // one of them
	LastHeartbeatMs                          int64
	Cause                                    string
}

// Kind is KindHeartbeatTimeout.
func (HeartbeatTimeout) Kind() Kind { return KindHeartbeatTimeout }

// AppendJSON appends the HeartbeatTimeout event's fields to b in the log's order.
func (e HeartbeatTimeout) AppendJSON(b []byte) []byte {
	switch {
	case e.TaskManager != "":
		b = logenc.Str(b, "task_manager", e.TaskManager)
	case e.ResourceManager != "":
		b = logenc.Str(b, "resource_manager", e.ResourceManager)
	default:
		b = logenc.Str(b, "job_manager", e.JobManager)
	}
	return logenc.Str(logenc.Int(b, "last_heartbeat_ms", e.LastHeartbeatMs), "cause", e.Cause)
}

// KafkaError is the broker refusing a produce or transaction request:
// Records (HasRecords, a produce) is the records it dropped.
type KafkaError struct {
	Request, TransactionalID, Error string
	HasRecords                      bool
	Records                         int64
	Producer                        string
}

// Kind is KindKafkaError.
func (KafkaError) Kind() Kind { return KindKafkaError }

// AppendJSON appends the KafkaError event's fields to b in the log's order.
func (e KafkaError) AppendJSON(b []byte) []byte {
	b = logenc.Str(logenc.Str(logenc.Str(b, "request", e.Request), "transactional_id", e.TransactionalID), "error", e.Error)
	if e.HasRecords {
		b = logenc.Int(b, "records", e.Records)
	}
	return logenc.Str(b, "producer", e.Producer)
}

// Reconfigure is a set action's restart with a new setting: its
// stop-with-savepoint, its submit from the savepoint (SavepointPath), or
// its failure (Result "failed", Cause).
type Reconfigure struct {
	Step, Result, Setting, Value, Cause, SavepointPath string
}

// Kind is KindReconfigure.
func (Reconfigure) Kind() Kind { return KindReconfigure }

// AppendJSON appends the Reconfigure event's fields to b in the log's order.
func (e Reconfigure) AppendJSON(b []byte) []byte {
	if e.Result != "" {
		return logenc.Str(logenc.Str(logenc.Str(b, "result", e.Result), "setting", e.Setting), "cause", e.Cause)
	}
	b = logenc.Str(logenc.Str(logenc.Str(b, "step", e.Step), "setting", e.Setting), "value", e.Value)
	if e.Step == RescaleSubmit {
		b = logenc.Str(b, "savepoint_path", e.SavepointPath)
	}
	return b
}

// The steps of a rescale or a reconfiguration.
const (
	RescaleStop   = "stop-with-savepoint"
	RescaleSubmit = "submit from savepoint"
)

// Rescale is a rescale action's stop-with-savepoint (ToParallelism), its
// submit from the savepoint (the parallelism before and after, the max
// parallelism), or its failure (Result "failed", Cause).
type Rescale struct {
	Step, Result, Cause, SavepointPath             string
	FromParallelism, ToParallelism, MaxParallelism int64
}

// Kind is KindRescale.
func (Rescale) Kind() Kind { return KindRescale }

// AppendJSON appends the Rescale event's fields to b in the log's order.
func (e Rescale) AppendJSON(b []byte) []byte {
	switch {
	case e.Result != "":
		return logenc.Str(logenc.Str(b, "result", e.Result), "cause", e.Cause)
	case e.Step == RescaleSubmit:
		b = logenc.Str(logenc.Str(b, "step", e.Step), "savepoint_path", e.SavepointPath)
		b = logenc.Int(logenc.Int(b, "from_parallelism", e.FromParallelism), "to_parallelism", e.ToParallelism)
		return logenc.Int(b, "max_parallelism", e.MaxParallelism)
	}
	return logenc.Int(logenc.Str(b, "step", e.Step), "to_parallelism", e.ToParallelism)
}

// TaskState is an execution's state (ExecutionState) as the JobManager or
// a TaskManager logs it, with a note, an allocation id or a reason when it
// has one (each omitted when "").
type TaskState struct {
	Task, State                string
	Note, AllocationID, Reason string
}

// Kind is KindTaskState.
func (TaskState) Kind() Kind { return KindTaskState }

// AppendJSON appends the TaskState event's fields to b in the log's order.
func (e TaskState) AppendJSON(b []byte) []byte {
	b = logenc.Str(logenc.Str(b, "task", e.Task), "state", e.State)
	if e.Note != "" {
		b = logenc.Str(b, "note", e.Note)
	}
	if e.AllocationID != "" {
		b = logenc.Str(b, "allocation_id", e.AllocationID)
	}
	if e.Reason != "" {
		b = logenc.Str(b, "reason", e.Reason)
	}
	return b
}

// Transaction is a transaction of the sink topic changing state, or a
// request that left it as it was (then with Note).
type Transaction struct {
	Op, TransactionalID, State string
	Records                    int64
	Producer, Note             string
}

// Kind is KindTransaction.
func (Transaction) Kind() Kind { return KindTransaction }

// NoteTransactionTimedOut is the note of the broker's abort of a
// transaction still open transaction.timeout.ms after it began (Kafka's
// TransactionCoordinator): what it held is never visible to read_committed.
const NoteTransactionTimedOut = "transaction.timeout.ms expired: the broker aborted it"

// AppendJSON appends the Transaction event's fields to b in the log's order.
func (e Transaction) AppendJSON(b []byte) []byte {
	b = logenc.Str(logenc.Str(logenc.Str(b, "op", e.Op), "transactional_id", e.TransactionalID), "state", e.State)
	b = logenc.Str(logenc.Int(b, "records", e.Records), "producer", e.Producer)
	if e.Note != "" {
		b = logenc.Str(b, "note", e.Note)
	}
	return b
}

// PartitionRequest is an input channel asking its producer for its
// subpartition (Channel: LocalInputChannel or RemoteInputChannel; a remote
// one with its initial credit and connection, Remote).
type PartitionRequest struct {
	Channel, Producer string
	Subpartition      int64
	Remote            bool
	InitialCredit     int64
	ConnectionID      string
}

// Kind is KindPartitionRequest.
func (PartitionRequest) Kind() Kind { return KindPartitionRequest }

// AppendJSON appends the PartitionRequest event's fields to b in the log's order.
func (e PartitionRequest) AppendJSON(b []byte) []byte {
	b = logenc.Int(logenc.Str(logenc.Str(b, "channel", e.Channel), "producer", e.Producer), "subpartition", e.Subpartition)
	if e.Remote {
		b = logenc.Str(logenc.Int(b, "initial_credit", e.InitialCredit), "connection_id", e.ConnectionID)
	}
	return b
}

// KafkaMetrics are the broker's per-second metrics: per source partition
// its end offset, read position, lag and committed offset (Partitions, raw
// JSON), and the sink topic's records by transaction state.
type KafkaMetrics struct {
	Topic                                                  string
	Partitions                                             string // raw JSON
	SinkRecords                                            int64
	SinkOpen, SinkPreCommitted, SinkCommitted, SinkAborted int64
	SinkPlain, LastStableOffset                            int64
}

// Kind is KindKafkaMetrics.
func (KafkaMetrics) Kind() Kind { return KindKafkaMetrics }

// AppendJSON appends the KafkaMetrics event's fields to b in the log's order.
func (e KafkaMetrics) AppendJSON(b []byte) []byte {
	b = logenc.Int(logenc.Raw(logenc.Str(b, "topic", e.Topic), "partitions", e.Partitions), "sink_records", e.SinkRecords)
	b = logenc.Int(logenc.Int(b, "sink_open", e.SinkOpen), "sink_pre_committed", e.SinkPreCommitted)
	b = logenc.Int(logenc.Int(b, "sink_committed", e.SinkCommitted), "sink_aborted", e.SinkAborted)
	return logenc.Int(logenc.Int(b, "sink_plain", e.SinkPlain), "last_stable_offset", e.LastStableOffset)
}

func decodeShaped(kind Kind, f fields) Event {
	switch kind {
	case KindFailover:
		return Failover{Cause: f.str("cause"), Restart: f.get("restart").GetBool(), Strategy: f.str("strategy"),
			BackoffMs: f.int("backoff_ms"), Restarts: f.int("restarts"), NextAttempt: f.int("next_attempt")}
	case KindHeartbeatTimeout:
		return HeartbeatTimeout{TaskManager: f.str("task_manager"), JobManager: f.str("job_manager"),
			ResourceManager: f.str("resource_manager"), LastHeartbeatMs: f.int("last_heartbeat_ms"), Cause: f.str("cause")}
	case KindKafkaError:
		return KafkaError{Request: f.str("request"), TransactionalID: f.str("transactional_id"), Error: f.str("error"),
			HasRecords: f.get("records") != nil, Records: f.int("records"), Producer: f.str("producer")}
	case KindReconfigure:
		return Reconfigure{Step: f.str("step"), Result: f.str("result"), Setting: f.str("setting"), Value: f.str("value"),
			Cause: f.str("cause"), SavepointPath: f.str("savepoint_path")}
	case KindRescale:
		return Rescale{Step: f.str("step"), Result: f.str("result"), Cause: f.str("cause"), SavepointPath: f.str("savepoint_path"),
			FromParallelism: f.int("from_parallelism"), ToParallelism: f.int("to_parallelism"), MaxParallelism: f.int("max_parallelism")}
	case KindTaskState:
		return TaskState{Task: f.str("task"), State: f.str("state"), Note: f.str("note"), AllocationID: f.str("allocation_id"),
			Reason: f.str("reason")}
	case KindTransaction:
		return Transaction{Op: f.str("op"), TransactionalID: f.str("transactional_id"), State: f.str("state"),
			Records: f.int("records"), Producer: f.str("producer"), Note: f.str("note")}
	case KindPartitionRequest:
		return PartitionRequest{Channel: f.str("channel"), Producer: f.str("producer"), Subpartition: f.int("subpartition"),
			Remote: f.get("connection_id") != nil, InitialCredit: f.int("initial_credit"), ConnectionID: f.str("connection_id")}
	case KindKafkaMetrics:
		return KafkaMetrics{Topic: f.str("topic"), Partitions: f.get("partitions").GetRawJson(), SinkRecords: f.int("sink_records"),
			SinkOpen: f.int("sink_open"), SinkPreCommitted: f.int("sink_pre_committed"), SinkCommitted: f.int("sink_committed"),
			SinkAborted: f.int("sink_aborted"), SinkPlain: f.int("sink_plain"), LastStableOffset: f.int("last_stable_offset")}
	}
	return nil
}
