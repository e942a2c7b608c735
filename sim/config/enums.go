package config

// The values of the enumerated settings, each a named string type whose
// constants are the words Flink's configuration (or the simulator's, for
// sim.* keys) accepts. The zero value is never valid: Default sets each.

// StateBackendType is state.backend.type (StateBackendOptions.STATE_BACKEND).
type StateBackendType string

// The state backends.
const (
	BackendHashMap StateBackendType = "hashmap" // HashMapStateBackend: objects on the heap
	BackendRocksDB StateBackendType = "rocksdb" // EmbeddedRocksDBStateBackend
)

// StartingOffsets is job.source.starting-offsets (KafkaSource's
// OffsetsInitializer.earliest / latest).
type StartingOffsets string

// The starting offsets.
const (
	OffsetsEarliest StartingOffsets = "earliest"
	OffsetsLatest   StartingOffsets = "latest"
)

// TimeCharacteristic is job.time-characteristic: which clock the window
// follows.
type TimeCharacteristic string

// The time characteristics.
const (
	EventTime      TimeCharacteristic = "event-time"
	ProcessingTime TimeCharacteristic = "processing-time"
)

// OperatorKind is job.operator: the keyed operator between source and sink.
type OperatorKind string

// The keyed operators.
const (
	OperatorWindow  OperatorKind = "window"  // WindowOperator
	OperatorProcess OperatorKind = "process" // KeyedProcessOperator with a ValueState counter
)

// WindowType is job.window.type: the WindowAssigner.
type WindowType string

// The window assigners.
const (
	WindowTumbling WindowType = "tumbling" // TumblingEventTimeWindows / TumblingProcessingTimeWindows
	WindowSliding  WindowType = "sliding"  // SlidingEventTimeWindows / SlidingProcessingTimeWindows
	WindowSession  WindowType = "session"  // EventTimeSessionWindows / ProcessingTimeSessionWindows
)

// AggregateKind is job.window.aggregate: the window's AggregateFunction.
type AggregateKind string

// The aggregates.
const (
	AggregateCount AggregateKind = "count"
	AggregateSum   AggregateKind = "sum"
	AggregateMin   AggregateKind = "min"
	AggregateMax   AggregateKind = "max"
	AggregateAvg   AggregateKind = "avg"
)

// EventsPace is sim.events.pace: how an events file reaches the topic.
type EventsPace string

// The paces.
const (
	PaceBackfill  EventsPace = "backfill"   // everything before the job starts
	PaceEventTime EventsPace = "event-time" // at each record's timestamp relative to the first
	PaceFileOrder EventsPace = "file-order" // in the file's order, at each record's arrival field
)

// RestartStrategyType is restart-strategy.type (RestartStrategyOptions).
type RestartStrategyType string

// The restart strategies.
const (
	RestartDefault          RestartStrategyType = "default" // Flink picks: exponential-delay with checkpointing, none without
	RestartNone             RestartStrategyType = "none"
	RestartFixedDelay       RestartStrategyType = "fixed-delay"
	RestartFailureRate      RestartStrategyType = "failure-rate"
	RestartExponentialDelay RestartStrategyType = "exponential-delay"
)

// DeliveryGuarantee is sink.delivery-guarantee (KafkaSink's
// DeliveryGuarantee).
type DeliveryGuarantee string

// The delivery guarantees.
const (
	DeliveryNone        DeliveryGuarantee = "none"
	DeliveryAtLeastOnce DeliveryGuarantee = "at-least-once"
	DeliveryExactlyOnce DeliveryGuarantee = "exactly-once"
)

// IsolationLevel is sim.output.isolation-level: the isolation.level of the
// consumer that reads the sink topic.
type IsolationLevel string

// The isolation levels.
const (
	ReadUncommitted IsolationLevel = "read_uncommitted"
	ReadCommitted   IsolationLevel = "read_committed"
)
