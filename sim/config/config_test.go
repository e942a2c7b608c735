package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// setCase gives, for one key, a valid value different from the default
// (good, and the text Get then returns), and invalid values with a part of
// the error each must give.
type setCase struct {
	good, wantText string
	bad            map[string]string // value -> substring of the error
}

var setCases = map[string]setCase{
	"parallelism.default": {"4", "4", map[string]string{
		"0":     "parallelism.default: Operator parallelism not within bounds: 0 (allowed: 1..32768)",
		"32769": "Operator parallelism not within bounds: 32769",
		"-1":    "Operator parallelism not within bounds: -1",
		"two":   `Could not parse value 'two' for key 'parallelism.default'. For input string: "two" (allowed: 1..32768)`,
		"1.5":   "Could not parse value '1.5'",
	}},
	// the operators' own parallelism (DataStream.setParallelism): -1 is
	// ExecutionConfig.PARALLELISM_DEFAULT; Flink's messages from
	// OperatorValidationUtils.validateParallelism and
	// DefaultVertexParallelismInfo.checkBounds
	"job.source.parallelism": {"3", "3", map[string]string{
		"0":     "job.source.parallelism 0: The parallelism of an operator must be at least 1, or ExecutionConfig.PARALLELISM_DEFAULT (use system default). (allowed: -1 (parallelism.default) or 1..32768)",
		"-2":    "job.source.parallelism -2: The parallelism of an operator must be at least 1",
		"32769": "job.source.parallelism 32769: Setting parallelism is not in valid bounds (1..32768), found: 32769",
		"x":     `Could not parse value 'x' for key 'job.source.parallelism'. For input string: "x" (allowed: -1 (parallelism.default) or 1..32768)`,
	}},
	"job.window.parallelism": {"3", "3", map[string]string{
		"0":     "job.window.parallelism 0: The parallelism of an operator must be at least 1, or ExecutionConfig.PARALLELISM_DEFAULT (use system default).",
		"40000": "Setting parallelism is not in valid bounds (1..32768), found: 40000",
	}},
	"job.sink.parallelism": {"1", "1", map[string]string{
		"0":  "job.sink.parallelism 0: The parallelism of an operator must be at least 1",
		"-7": "job.sink.parallelism -7: The parallelism of an operator must be at least 1",
	}},
	"pipeline.max-parallelism": {"128", "128", map[string]string{
		"0":     "pipeline.max-parallelism: maxParallelism is out of bounds 0 < maxParallelism <= 32768. Found: 0 (allowed: -1 or 1..32768)",
		"32769": "Found: 32769",
		"-2":    "Found: -2",
	}},
	"taskmanager.numberOfTaskSlots": {"4", "4", map[string]string{
		"0":  "Invalid configuration value for taskmanager.numberOfTaskSlots : 0 - Number of task slots must be at least one. (allowed: -1 or 1..)",
		"-5": "Invalid configuration value for taskmanager.numberOfTaskSlots : -5 - Number of task slots must be at least one.",
		"x":  "Could not parse value 'x' for key 'taskmanager.numberOfTaskSlots'",
		// Java's int ends at 2147483647: Integer.parseInt refuses more.
		"2147483648": "Could not parse value '2147483648'",
	}},
	"pipeline.auto-watermark-interval": {"1 s", "1 s", map[string]string{
		"-1 s": "Could not parse value '-1 s' for key 'pipeline.auto-watermark-interval'. text does not start with a number (allowed: 0 ms..)",
		"1 x":  "Time interval unit label 'x' does not match",
	}},
	"execution.buffer-timeout": {"0", "0 ms", map[string]string{"5 parsecs": "Time interval unit label 'parsecs'"}},
	"pipeline.operator-chaining.enabled": {"FALSE", "false", map[string]string{
		"no": "Could not parse value 'no' for key 'pipeline.operator-chaining.enabled'. Unrecognized option for boolean: no. Expected either true or false(case insensitive) (allowed: true|false)",
		"1":  "Unrecognized option for boolean: 1.",
	}},
	"pekko.ask.timeout": {"30 s", "30 s", map[string]string{
		"0": "pekko.ask.timeout: 0 is out of range (allowed: 1 ms..)",
	}},
	"slot.request.timeout": {"5 min", "5 min", map[string]string{
		"0":     "slot.request.timeout: 0 is out of range (allowed: 1 ms..)",
		"10 ns": "slot.request.timeout: 10 ns is out of range (allowed: 1 ms..)",
	}},
	"taskmanager.network.memory.buffers-per-channel": {"0", "0", map[string]string{
		"-1":   "taskmanager.network.memory.buffers-per-channel: -1 is out of range (allowed: 0..1000)",
		"1001": "1001 is out of range",
	}},
	"taskmanager.network.memory.floating-buffers-per-gate": {"0", "0", map[string]string{"-1": "-1 is out of range (allowed: 0..1000)"}},
	"taskmanager.cpu.cores": {"1.5", "1.5", map[string]string{
		"-1":  "taskmanager.cpu.cores: -1 is out of range (allowed: 0..1000000)",
		"NaN": "NaN is out of range",
		"Inf": "Inf is out of range",
		"a":   `For input string: "a"`,
		"1_5": `For input string: "1_5"`, // Go's ParseFloat would take it, Java's Double.parseDouble does not
	}},
	"taskmanager.memory.task.heap.size": {"1g", "1 gb", map[string]string{
		"1 parsec": "Memory size unit 'parsec' does not match",
		"-1":       "text does not start with a number",
	}},
	"taskmanager.memory.task.off-heap.size":      {"64m", "64 mb", map[string]string{"x": "text does not start with a number"}},
	"taskmanager.memory.managed.size":            {"0", "0 bytes", map[string]string{"": "argument is an empty- or whitespace-only string"}},
	"taskmanager.memory.network.max":             {"64 mb", "64 mb", map[string]string{"64 mib": "Memory size unit 'mib'"}},
	"taskmanager.memory.process.size":            {"4096m", "4 gb", map[string]string{"4 gib": "Memory size unit 'gib'"}},
	"taskmanager.memory.flink.size":              {"1280m", "1280 mb", map[string]string{"-1": "text does not start with a number"}},
	"taskmanager.memory.framework.heap.size":     {"64m", "64 mb", map[string]string{"x": "text does not start with a number"}},
	"taskmanager.memory.framework.off-heap.size": {"64m", "64 mb", map[string]string{"x": "text does not start with a number"}},
	"taskmanager.memory.jvm-metaspace.size":      {"512m", "512 mb", map[string]string{"x": "text does not start with a number"}},
	"taskmanager.memory.jvm-overhead.min":        {"128m", "128 mb", map[string]string{"x": "text does not start with a number"}},
	"taskmanager.memory.jvm-overhead.max":        {"2g", "2 gb", map[string]string{"x": "text does not start with a number"}},
	"taskmanager.memory.jvm-overhead.fraction":   {"0.2", "0.2", map[string]string{"x": "For input string", "1.5": "out of range"}},
	"taskmanager.memory.managed.fraction":        {"0.5", "0.5", map[string]string{"-0.1": "out of range"}},
	"taskmanager.memory.network.min":             {"32m", "32 mb", map[string]string{"x": "text does not start with a number"}},
	"taskmanager.memory.network.fraction":        {"0.2", "0.2", map[string]string{"2": "out of range"}},
	"job.source.topic":                           {"clicks", "clicks", map[string]string{"": "job.source.topic: must not be empty (allowed: non-empty text)", "  ": "must not be empty"}},
	"job.source.partitions": {"2", "2", map[string]string{
		"0":     "job.source.partitions: 0 is out of range (allowed: 1..10000)",
		"10001": "10001 is out of range",
	}},
	"job.source.starting-offsets": {"LATEST", "latest", map[string]string{
		"committed": "Could not parse value 'committed' for key 'job.source.starting-offsets'. Expected one of: [earliest, latest] (allowed: earliest|latest)",
	}},
	"job.source.max-poll-records": {"100", "100", map[string]string{
		"0": "job.source.max-poll-records: Invalid value 0 for configuration max.poll.records: Value must be at least 1 (allowed: 1..)",
	}},
	"job.key-field":           {"page", "page", map[string]string{"": "job.key-field: must not be empty"}},
	"job.time-field":          {"timestamp", "timestamp", map[string]string{"": "job.time-field: must not be empty"}},
	"job.time-characteristic": {"processing-time", "processing-time", map[string]string{"ingestion-time": "Expected one of: [event-time, processing-time]"}},
	"job.operator":            {"process", "process", map[string]string{"map": "Expected one of: [window, process]"}},
	"job.window.type":         {"Session", "session", map[string]string{"global": "Expected one of: [tumbling, sliding, session]"}},
	"job.window.size":         {"15 s", "15 s", map[string]string{"-1 s": "text does not start with a number"}},
	"job.window.slide":        {"5 s", "5 s", map[string]string{"five": "text does not start with a number"}},
	"job.window.gap":          {"30 s", "30 s", map[string]string{"30 x": "Time interval unit label 'x'"}},
	"job.window.offset": {"-8 h", "-8 h", map[string]string{
		"--8 h": "Could not parse value '--8 h' for key 'job.window.offset'. text does not start with a number (allowed: any duration, may be negative)",
	}},
	"job.window.allowed-lateness":             {"10 s", "10 s", map[string]string{"-10 s": "text does not start with a number"}},
	"job.window.side-output-late-data":        {"true", "true", map[string]string{"on": "Unrecognized option for boolean: on."}},
	"job.window.aggregate":                    {"avg", "avg", map[string]string{"median": "Expected one of: [count, sum, min, max, avg]"}},
	"job.window.aggregate-field":              {"price", "price", nil},
	"job.filter":                              {"amount > 100", "amount > 100", nil},
	"job.watermark.out-of-orderness":          {"0", "0 ms", map[string]string{"-5 s": "text does not start with a number"}},
	"job.watermark.idleness":                  {"1 min", "1 min", map[string]string{"1 fortnight": "Time interval unit label 'fortnight'"}},
	"job.watermark.alignment.group":           {"g1", "g1", nil},
	"job.watermark.alignment.max-drift":       {"20 s", "20 s", map[string]string{"x": "text does not start with a number"}},
	"job.watermark.alignment.update-interval": {"500 ms", "500 ms", map[string]string{"": "argument is an empty- or whitespace-only string"}},
	"job.state.ttl":                           {"1 h", "1 h", map[string]string{"1 y": "Time interval unit label 'y'"}},
	"job.sink.topic":                          {"out", "out", map[string]string{"": "job.sink.topic: must not be empty"}},
	"sim.seed": {"18446744073709551615", "18446744073709551615", map[string]string{
		"-1":                   "Could not parse value '-1' for key 'sim.seed'",
		"18446744073709551616": "Could not parse value '18446744073709551616'",
	}},
	"sim.duration": {"10 min", "10 min", map[string]string{
		"0":      "sim.duration: 0 is out of range (allowed: 1 ms..)",
		"100 µs": "sim.duration: 100 µs is out of range",
	}},
	"sim.taskmanagers": {"3", "3", map[string]string{
		"0":  "sim.taskmanagers: 0 is out of range (allowed: 1..64)",
		"65": "sim.taskmanagers: 65 is out of range (allowed: 1..64)",
	}},
	"sim.source.rate":                                      {"250.5", "250.5", map[string]string{"1000001": "1000001 is out of range (allowed: 0..1000000)", "-1": "-1 is out of range"}},
	"sim.source.keys":                                      {"7", "7", map[string]string{"0": "sim.source.keys: 0 is out of range (allowed: 1..1000000)"}},
	"sim.source.disorder":                                  {"0", "0 ms", map[string]string{"2 lightyears": "Time interval unit label 'lightyears'"}},
	"sim.source.late-fraction":                             {"0.25", "0.25", map[string]string{"1.01": "sim.source.late-fraction: 1.01 is out of range (allowed: 0..1)", "-0.1": "-0.1 is out of range"}},
	"sim.events.pace":                                      {"file-order", "file-order", map[string]string{"realtime": "Expected one of: [backfill, event-time, file-order]"}},
	"sim.events.gap":                                       {"250 ms", "250 ms", map[string]string{"2 h": "sim.events.gap: 2 h is out of range (allowed: 0 ms..1 h)"}},
	"sim.cost.parse":                                       {"1 ms", "1 ms", map[string]string{"20us": "Time interval unit label 'us'"}},
	"sim.cost.filter":                                      {"0", "0 ms", map[string]string{"-2 µs": "text does not start with a number"}},
	"sim.cost.window":                                      {"3 micros", "3 µs", map[string]string{"3 u": "Time interval unit label 'u'"}},
	"sim.cost.sink":                                        {"100 ns", "100 ns", map[string]string{"fast": "text does not start with a number"}},
	"sim.cost.state.rocksdb":                               {"40 µs", "40 µs", map[string]string{"slow": "text does not start with a number"}},
	"sim.log.netty-frames":                                 {"true", "true", map[string]string{"maybe": "Unrecognized option for boolean"}},
	"execution.checkpointing.interval":                     {"30 s", "30 s", map[string]string{"-1 s": "does not start with a number"}},
	"execution.checkpointing.timeout":                      {"2 min", "2 min", map[string]string{"0": "out of range"}},
	"execution.checkpointing.min-pause":                    {"5 s", "5 s", map[string]string{"soon": "Could not parse"}},
	"execution.checkpointing.max-concurrent-checkpoints":   {"2", "2", map[string]string{"0": "out of range"}},
	"execution.checkpointing.unaligned.enabled":            {"true", "true", map[string]string{"yes please": "Unrecognized option for boolean"}},
	"execution.checkpointing.aligned-checkpoint-timeout":   {"2 s", "2 s", map[string]string{"x": "Could not parse"}},
	"execution.checkpointing.tolerable-failed-checkpoints": {"3", "3", map[string]string{"-1": "out of range"}},
	"state.backend.incremental":                            {"true", "true", map[string]string{"2": "Unrecognized option for boolean"}},
	"sink.delivery-guarantee":                              {"exactly-once", "exactly-once", map[string]string{"twice": "Expected one of"}},
	"sink.transactional-id-prefix":                         {"orders-tx", "orders-tx", map[string]string{"": "must not be empty"}},
	"properties.transaction.timeout.ms":                    {"5 min", "5 min", map[string]string{"0": "out of range"}},
	"sim.output.isolation-level":                           {"read_committed", "read_committed", map[string]string{"serializable": "Expected one of"}},
	"sim.checkpoint.upload-speed":                          {"10 mb", "10 mb", map[string]string{"fast": "Could not parse"}},
	"sim.checkpoint.channel-state-speed":                   {"10 mb", "10 mb", map[string]string{"0 bytes": "out of range"}},
	"sim.checkpoint.sync-time":                             {"3 ms", "3 ms", map[string]string{"2 min": "out of range"}},
	"sim.checkpoint.file-time":                             {"40 ms", "40 ms", map[string]string{"-1 ms": ""}},
	"sim.checkpoint.ack-time":                              {"0 ms", "0 ms", map[string]string{"5 min": "out of range"}},
	"state.storage.fs.memory-threshold":                    {"1 mb", "1 mb", map[string]string{"x": ""}},
	"heartbeat.interval":                                   {"2 s", "2 s", map[string]string{"0": "out of range"}},
	"heartbeat.timeout":                                    {"20 s", "20 s", map[string]string{"0": "out of range"}},
	"restart-strategy.type":                                {"fixed-delay", "fixed-delay", map[string]string{"always": "Expected one of"}},
	"restart-strategy.exponential-delay.initial-backoff":   {"2 s", "2 s", map[string]string{"0": "out of range"}},
	"restart-strategy.exponential-delay.jitter-factor":     {"0.5", "0.5", map[string]string{"2": "out of range"}},
	"restart-strategy.fixed-delay.attempts":                {"3", "3", map[string]string{"-2": "out of range"}},
	"restart-strategy.fixed-delay.delay":                   {"5 s", "5 s", map[string]string{"-1 s": "does not start with a number"}},
	"state.backend.type":                                   {"RocksDB", "rocksdb", map[string]string{"memory": "Expected one of: [hashmap, rocksdb]"}},
	"sim.network.latency":                                  {"1 ms", "1 ms", map[string]string{"-1": "text does not start with a number"}},
	"sim.rpc.latency":                                      {"2 ms", "2 ms", map[string]string{"2 min": "sim.rpc.latency: 2 min is out of range (allowed: 0 ms..1 min)"}},
	"sim.task.deploy-time":                                 {"50 ms", "50 ms", map[string]string{"2 h": "sim.task.deploy-time: 2 h is out of range (allowed: 0 ms..1 h)"}},
	"sim.task.init-time":                                   {"0 ms", "0 ms", map[string]string{"-1 s": "text does not start with a number"}},
	"sim.network.local-latency":                            {"0", "0 ms", map[string]string{"local": "text does not start with a number"}},
	"sim.buffer.records": {"1", "1", map[string]string{
		"-1":     "sim.buffer.records: -1 is out of range (allowed: 0..100000)",
		"100001": "100001 is out of range",
	}},
	"taskmanager.network.memory.max-buffers-per-channel":        {"3", "3", map[string]string{"-1": "-1 is out of range (allowed: 0..100000)"}},
	"taskmanager.network.memory.max-overdraft-buffers-per-gate": {"0", "0", map[string]string{"-1": "-1 is out of range (allowed: 0..100000)"}},
	"execution.checkpointing.checkpoints-after-tasks-finish":    {"false", "false", map[string]string{"yes please": "Unrecognized option for boolean"}},
	"taskmanager.memory.segment-size": {"64 kb", "64 kb", map[string]string{
		"2 kb": "taskmanager.memory.segment-size: 2 kb is out of range (allowed: 4 kb..)",
	}},
	"taskmanager.network.memory.buffer-debloat.enabled":               {"true", "true", map[string]string{"on": "Unrecognized option for boolean"}},
	"taskmanager.network.memory.buffer-debloat.target":                {"500 ms", "500 ms", map[string]string{"0": "out of range"}},
	"taskmanager.network.memory.buffer-debloat.period":                {"1 s", "1 s", map[string]string{"0": "out of range"}},
	"taskmanager.network.memory.buffer-debloat.samples":               {"10", "10", map[string]string{"0": "out of range"}},
	"taskmanager.network.memory.buffer-debloat.threshold-percentages": {"50", "50", map[string]string{"-1": "out of range"}},
	"taskmanager.memory.min-segment-size":                             {"1 kb", "1 kb", map[string]string{"0": "out of range"}},
	"sim.record.bytes":                                                {"512", "512", map[string]string{"0": "sim.record.bytes: 0 is out of range (allowed: 1..1048576)"}},
}

func TestSetEveryKey(t *testing.T) {
	for _, s := range Registry() {
		tc, ok := setCases[s.Key]
		if !ok {
			t.Errorf("setting %q has no case in setCases", s.Key)
			continue
		}
		c := Default()
		if tc.good == s.SimDefault || tc.wantText == s.SimDefault {
			t.Errorf("%s: good value %q must differ from the default %q", s.Key, tc.good, s.SimDefault)
		}
		if err := c.Set(s.Key, tc.good); err != nil {
			t.Errorf("Set(%q, %q) = %v", s.Key, tc.good, err)
			continue
		}
		if got, _ := c.Get(s.Key); got != tc.wantText {
			t.Errorf("after Set(%q, %q) Get = %q, want %q", s.Key, tc.good, got, tc.wantText)
		}
		if err := c.Validate(); err != nil && s.Key != "job.window.type" && s.Key != "job.window.slide" &&
			s.Key != "job.window.gap" && s.Key != "job.window.offset" && s.Key != "job.window.aggregate-field" {
			t.Errorf("Validate after Set(%q, %q) = %v", s.Key, tc.good, err)
		}
		values := slices.Sorted(mapsKeys(tc.bad))
		for _, bad := range values {
			before := c
			err := c.Set(s.Key, bad)
			var ve *ValueError
			if !errors.As(err, &ve) {
				t.Errorf("Set(%q, %q) = %v, want a *ValueError", s.Key, bad, err)
				continue
			}
			if !strings.Contains(err.Error(), tc.bad[bad]) {
				t.Errorf("Set(%q, %q) error\n  got  %s\n  want %s", s.Key, bad, err, tc.bad[bad])
			}
			if ve.Key != s.Key || ve.Value != bad || ve.Range != s.Range {
				t.Errorf("Set(%q, %q): ValueError fields %+v", s.Key, bad, *ve)
			}
			if !strings.Contains(err.Error(), s.Key) || !strings.Contains(err.Error(), "(allowed: "+s.Range+")") {
				t.Errorf("Set(%q, %q) error %q must name the key and the allowed range", s.Key, bad, err)
			}
			if c != before {
				t.Errorf("Set(%q, %q) failed but changed the config", s.Key, bad)
			}
		}
	}
	for key := range setCases {
		if _, ok := Lookup(key); !ok {
			t.Errorf("setCases has %q, which is not a setting", key)
		}
	}
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestRegistryCoversEveryField sets each key to its non-default value and
// checks, by reflection, that exactly one field of Config changes, and that
// every field of Config is changed by exactly one key.
func TestRegistryCoversEveryField(t *testing.T) {
	typ := reflect.TypeOf(Config{})
	owner := make(map[string]string) // field -> key
	for _, s := range Registry() {
		tc := setCases[s.Key]
		c := Default()
		if err := c.Set(s.Key, tc.good); err != nil {
			t.Fatalf("Set(%q): %v", s.Key, err)
		}
		def, got := reflect.ValueOf(Default()), reflect.ValueOf(c)
		var changed []string
		for i := 0; i < typ.NumField(); i++ {
			if !typ.Field(i).IsExported() {
				continue // bookkeeping (which memory keys were set)
			}
			if !reflect.DeepEqual(def.Field(i).Interface(), got.Field(i).Interface()) {
				changed = append(changed, typ.Field(i).Name)
			}
		}
		if len(changed) != 1 {
			t.Errorf("Set(%q) changed fields %v, want exactly one", s.Key, changed)
			continue
		}
		if prev, dup := owner[changed[0]]; dup {
			t.Errorf("field %s is set by both %q and %q", changed[0], prev, s.Key)
		}
		owner[changed[0]] = s.Key
	}
	for i := 0; i < typ.NumField(); i++ {
		if _, ok := owner[typ.Field(i).Name]; !ok && typ.Field(i).IsExported() {
			t.Errorf("field Config.%s has no setting in the registry", typ.Field(i).Name)
		}
	}
}

func TestRegistryShape(t *testing.T) {
	reg := Registry()
	if !slices.IsSortedFunc(reg, func(a, b Setting) int { return strings.Compare(a.Key, b.Key) }) {
		t.Error("Registry() is not sorted by key")
	}
	def := Default()
	seen := map[string]bool{}
	for _, s := range reg {
		if seen[s.Key] {
			t.Errorf("duplicate key %q", s.Key)
		}
		seen[s.Key] = true
		if s.Type == "" || s.Range == "" || s.Doc == "" || s.set == nil || s.get == nil {
			t.Errorf("%q: incomplete row %+v", s.Key, s)
		}
		if got, _ := def.Get(s.Key); got != s.SimDefault {
			t.Errorf("%q: SimDefault %q, Default() gives %q", s.Key, s.SimDefault, got)
		}
		if strings.HasPrefix(s.Key, "sim.") && s.FlinkDefault != "" {
			t.Errorf("%q: a simulator-only setting has a Flink default %q", s.Key, s.FlinkDefault)
		}
		// The default itself must be allowed.
		probe := Default()
		if err := probe.Set(s.Key, s.SimDefault); err != nil {
			t.Errorf("%q: the default %q is refused: %v", s.Key, s.SimDefault, err)
		}
	}
	if err := def.Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
	// Registry returns a copy.
	reg[0].Key = "changed"
	if Registry()[0].Key == "changed" {
		t.Error("Registry() exposes its backing array")
	}
}

func TestDefaultsFlinkDiffers(t *testing.T) {
	// Where the simulator departs from Flink's default on purpose.
	want := map[string][2]string{ // key -> {sim, flink}
		"parallelism.default":  {"2", "1"},
		"slot.request.timeout": {"10 s", "5 min"},
	}
	for _, kv := range Default().Values() {
		if w, ok := want[kv.Key]; ok && (kv.Value != w[0] || kv.FlinkDefault != w[1]) {
			t.Errorf("%s = %q (Flink %q), want %q (Flink %q)", kv.Key, kv.Value, kv.FlinkDefault, w[0], w[1])
		}
	}
}

func TestUnknownKey(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{"paralelism.default", `unknown setting "paralelism.default"; did you mean "parallelism.default"?`},
		{"parallelism.defaults", `did you mean "parallelism.default"?`},
		{"taskmanager.numberoftaskslots", `did you mean "taskmanager.numberOfTaskSlots"?`},
		{"pipeline.auto-watermark-intervall", `did you mean "pipeline.auto-watermark-interval"?`},
		{"sim.taskmanager", `did you mean "sim.taskmanagers"?`},
		{"job.window.sze", `did you mean "job.window.size"?`},
		{"pipeline.operator-chaining", `did you mean "pipeline.operator-chaining.enabled"?`},
		{"jobmanager.rpc.adress", `did you mean "jobmanager.rpc.address"?`},
		{"rest.prot", `did you mean "rest.port"?`},
		{"x", `unknown setting "x"; run "flinksim settings" for the list`},
		{"", `unknown setting ""; run "flinksim settings" for the list`},
	}
	for _, tt := range tests {
		c := Default()
		err := c.Set(tt.give, "1")
		var uk *UnknownKeyError
		if !errors.As(err, &uk) || uk.Key != tt.give {
			t.Errorf("Set(%q) = %v, want an *UnknownKeyError", tt.give, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Set(%q) error %q, want it to contain %q", tt.give, err, tt.want)
		}
		if _, err := c.Get(tt.give); !errors.As(err, &uk) {
			t.Errorf("Get(%q) = %v, want an *UnknownKeyError", tt.give, err)
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"flaw", "lawn", 2}, {"same", "same", 0}, {"ab", "ba", 2},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := editDistance(tt.b, tt.a); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.b, tt.a, got, tt.want)
		}
	}
}

// TestValuesRoundTrip sets every key to its non-default value, reads Values,
// and sets them all on a fresh Default: the configs must be equal.
func TestValuesRoundTrip(t *testing.T) {
	c := Default()
	var reg []Setting // the settings the header carries
	for _, s := range Registry() {
		if !s.Input {
			reg = append(reg, s)
			if err := c.Set(s.Key, setCases[s.Key].good); err != nil {
				t.Fatal(err)
			}
		}
	}
	vals := c.Values()
	if len(vals) != len(reg) {
		t.Fatalf("Values() has %d entries, registry %d", len(vals), len(reg))
	}
	back := Default()
	for i, kv := range vals {
		if kv.Key != reg[i].Key || kv.FlinkDefault != reg[i].FlinkDefault {
			t.Errorf("Values()[%d] = %+v, out of step with Registry()", i, kv)
		}
		if err := back.Set(kv.Key, kv.Value); err != nil {
			t.Errorf("Set(%q, %q) from Values: %v", kv.Key, kv.Value, err)
		}
	}
	if back != c {
		t.Errorf("round trip through Values changed the config:\n got  %+v\n want %+v", back, c)
	}
}

func TestSlots(t *testing.T) {
	for _, tt := range []struct{ give, want int }{{-1, 1}, {1, 1}, {4, 4}} {
		c := Default()
		c.NumberOfTaskSlots = tt.give
		if got := c.Slots(); got != tt.want {
			t.Errorf("Slots() with %d = %d, want %d", tt.give, got, tt.want)
		}
	}
}

// TestParallelismGolden runs the checkParallelismPreconditions vectors of
// misc.json through Set("parallelism.default").
func TestParallelismGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "misc.json"))
	if err != nil {
		t.Fatalf("golden file: %v", err)
	}
	var file struct {
		Cases []struct {
			ID          string `json:"case_id"`
			Kind        string `json:"kind"`
			Parallelism int64  `json:"parallelism"`
			OK          bool   `json:"ok"`
			Error       struct {
				Message string `json:"message"`
			} `json:"error"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tc := range file.Cases {
		if tc.Kind != "check_parallelism_preconditions" {
			continue
		}
		n++
		c := Default()
		err := c.Set("parallelism.default", strings.TrimSpace(jsonInt(tc.Parallelism)))
		if tc.OK {
			if err != nil || c.Parallelism != int(tc.Parallelism) {
				t.Errorf("%s: Set(%d) = %v", tc.ID, tc.Parallelism, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.Error.Message) {
			t.Errorf("%s: Set(%d) = %v, want %q", tc.ID, tc.Parallelism, err, tc.Error.Message)
		}
	}
	if n == 0 {
		t.Fatal("misc.json has no check_parallelism_preconditions cases")
	}
}

func jsonInt(v int64) string { b, _ := json.Marshal(v); return string(b) }

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		give map[string]string
		want []string // substrings, in order; none means valid
	}{
		{name: "defaults"},
		{name: "parallelism above max parallelism",
			give: map[string]string{"parallelism.default": "200", "pipeline.max-parallelism": "128"},
			want: []string{"parallelism.default 200 > pipeline.max-parallelism 128: Maximum parallelism must not be smaller than parallelism."}},
		{name: "parallelism equal to max parallelism",
			give: map[string]string{"parallelism.default": "128", "pipeline.max-parallelism": "128"}},
		{name: "derived max parallelism", give: map[string]string{"parallelism.default": "32768"}},
		{name: "sliding without slide",
			give: map[string]string{"job.window.type": "sliding"},
			want: []string{"job.window.size 1 min, job.window.slide 0 ms, job.window.offset 0 ms: SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0"}},
		{name: "sliding ok", give: map[string]string{"job.window.type": "sliding", "job.window.slide": "10 s"}},
		{name: "day-long windows sliding every 10 s: 8640 windows a record", give: map[string]string{"job.window.type": "sliding", "job.window.size": "1 d", "job.window.slide": "10 s"}},
		{name: "10000 windows a record", give: map[string]string{"job.window.type": "sliding", "job.window.size": "10000 ms", "job.window.slide": "1 ms"}},
		{name: "10001 windows a record",
			give: map[string]string{"job.window.type": "sliding", "job.window.size": "10001 ms", "job.window.slide": "1 ms"},
			want: []string{"job.window.size 10001 ms, job.window.slide 1 ms: each record would belong to 10001 windows (SlidingEventTimeWindows.assignWindows adds it to every one that holds it), more than the simulator holds (10000 per record); give a slide of at least 2 ms"}},
		{name: "86.4 million windows a record",
			give: map[string]string{"job.window.type": "sliding", "job.window.size": "1 d", "job.window.slide": "1 ms"},
			want: []string{"job.window.size 1 d, job.window.slide 1 ms: each record would belong to 86400000 windows"}},
		{name: "sliding zero size",
			give: map[string]string{"job.window.type": "sliding", "job.window.slide": "10 s", "job.window.size": "0"},
			want: []string{"SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0"}},
		{name: "sliding offset equal to slide",
			give: map[string]string{"job.window.type": "sliding", "job.window.slide": "10 s", "job.window.offset": "-10 s"},
			want: []string{"SlidingEventTimeWindows parameters"}},
		{name: "processing-time sliding",
			give: map[string]string{"job.window.type": "sliding", "job.time-characteristic": "processing-time"},
			want: []string{"SlidingProcessingTimeWindows parameters must satisfy abs(offset) < slide and size > 0"}},
		{name: "session without gap",
			give: map[string]string{"job.window.type": "session"},
			want: []string{"job.window.gap 0 ms: EventTimeSessionWindows parameters must satisfy 0 < size"}},
		{name: "processing-time session without gap",
			give: map[string]string{"job.window.type": "session", "job.time-characteristic": "processing-time"},
			want: []string{"ProcessingTimeSessionWindows parameters must satisfy 0 < size"}},
		{name: "session gap below a millisecond",
			give: map[string]string{"job.window.type": "session", "job.window.gap": "999 µs"},
			want: []string{"job.window.gap 999 µs: EventTimeSessionWindows parameters must satisfy 0 < size"}},
		{name: "session ok", give: map[string]string{"job.window.type": "session", "job.window.gap": "30 s"}},
		{name: "session with offset",
			give: map[string]string{"job.window.type": "session", "job.window.gap": "30 s", "job.window.offset": "1 s"},
			want: []string{"job.window.offset 1 s is set but job.window.type is session"}},
		{name: "tumbling offset too large",
			give: map[string]string{"job.window.offset": "-1 min"},
			want: []string{"job.window.size 1 min, job.window.offset -1 min: TumblingEventTimeWindows parameters must satisfy abs(offset) < size"}},
		{name: "tumbling zero size",
			give: map[string]string{"job.window.size": "0"},
			want: []string{"TumblingEventTimeWindows parameters must satisfy abs(offset) < size"}},
		{name: "tumbling processing time",
			give: map[string]string{"job.window.size": "500 µs", "job.time-characteristic": "processing-time"},
			want: []string{"TumblingProcessingTimeWindows parameters must satisfy abs(offset) < size"}},
		{name: "tumbling with offset", give: map[string]string{"job.window.offset": "-59 s"}},
		{name: "slide on tumbling",
			give: map[string]string{"job.window.slide": "5 s"},
			want: []string{"job.window.slide 5 s is set but job.window.type is tumbling: a slide applies only to sliding windows"}},
		{name: "gap on sliding",
			give: map[string]string{"job.window.type": "sliding", "job.window.slide": "5 s", "job.window.gap": "5 s"},
			want: []string{"job.window.gap 5 s is set but job.window.type is sliding"}},
		{name: "process operator ignores window settings",
			give: map[string]string{"job.operator": "process", "job.window.type": "session"}},
		{name: "sum without a field",
			give: map[string]string{"job.window.aggregate": "sum", "job.window.aggregate-field": ""},
			want: []string{"job.window.aggregate sum needs job.window.aggregate-field"}},
		{name: "count without a field", give: map[string]string{"job.window.aggregate-field": ""}},
		{name: "ttl below a millisecond",
			give: map[string]string{"job.state.ttl": "500 µs"},
			want: []string{"job.state.ttl 500 µs: TTL is expected to be positive."}},
		{name: "alignment without interval",
			give: map[string]string{"job.watermark.alignment.group": "g", "job.watermark.alignment.update-interval": "0"},
			want: []string{`job.watermark.alignment.update-interval 0 ms: watermark alignment (job.watermark.alignment.group "g") needs an update interval of at least 1 ms`}},
		{name: "no buffers",
			give: map[string]string{"taskmanager.network.memory.buffers-per-channel": "0", "taskmanager.network.memory.floating-buffers-per-gate": "0"},
			want: []string{"an input channel needs at least one buffer"}},
		{name: "checkpoint interval below 10 ms",
			give: map[string]string{"execution.checkpointing.interval": "5 ms"},
			want: []string{"execution.checkpointing.interval 5 ms: Checkpoint interval must be larger than or equal to 10 ms"}},
		{name: "checkpoint interval 10 ms", give: map[string]string{"execution.checkpointing.interval": "10 ms"}},
		{name: "only floating buffers", give: map[string]string{"taskmanager.network.memory.buffers-per-channel": "0"}},
		{name: "several errors in order",
			give: map[string]string{"parallelism.default": "8", "pipeline.max-parallelism": "4", "job.window.type": "session", "job.state.ttl": "1 µs"},
			want: []string{"Maximum parallelism must not be smaller", "EventTimeSessionWindows", "TTL is expected to be positive."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			for _, k := range slices.Sorted(mapsKeys(tt.give)) {
				if err := c.Set(k, tt.give[k]); err != nil {
					t.Fatalf("Set(%q, %q): %v", k, tt.give[k], err)
				}
			}
			err := c.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tt.want)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("Validate() =\n%v\nwant %d errors: %q", err, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("error %d = %q, want it to contain %q", i, lines[i], w)
				}
			}
		})
	}
}

// TestValidateFieldRanges checks that a Config built in code is held to the
// registry's ranges.
func TestValidateFieldRanges(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"zero parallelism", func(c *Config) { c.Parallelism = 0 }, "Operator parallelism not within bounds: 0"},
		{"slots zero", func(c *Config) { c.NumberOfTaskSlots = 0 }, "Number of task slots must be at least one."},
		{"unknown window type", func(c *Config) { c.WindowType = "global" }, "Could not parse value 'global' for key 'job.window.type'"},
		{"negative interval", func(c *Config) { c.AutoWatermarkInterval = -time.Second }, "Could not parse value '-1 s' for key 'pipeline.auto-watermark-interval'"},
		{"empty topic", func(c *Config) { c.SourceTopic = "" }, "job.source.topic: must not be empty"},
		{"late fraction", func(c *Config) { c.SourceLateFraction = 2 }, "sim.source.late-fraction: 2 is out of range"},
		{"too many taskmanagers", func(c *Config) { c.TaskManagers = 100 }, "sim.taskmanagers: 100 is out of range (allowed: 1..64)"},
	}
	for _, tt := range tests {
		c := Default()
		tt.mutate(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Validate() = %v, want %q", tt.name, err, tt.want)
		}
	}
}

// A network buffer is a memory segment of taskmanager.memory.segment-size
// (Flink's 32 kb) filled with serialized records: 32768 / 100 = 327 records
// of the default 100 bytes; one record of 50 kb still takes a buffer (it
// spans segments in Flink); sim.buffer.records overrides the derivation.
func TestRecordsPerBuffer(t *testing.T) {
	tests := []struct {
		kv   [][2]string
		want int
	}{
		{nil, 327},
		{[][2]string{{"sim.record.bytes", "51200"}}, 1},
		{[][2]string{{"sim.record.bytes", "1000"}, {"taskmanager.memory.segment-size", "64 kb"}}, 65},
		{[][2]string{{"sim.buffer.records", "64"}}, 64},
	}
	for _, tt := range tests {
		c := Default()
		for _, kv := range tt.kv {
			if err := c.Set(kv[0], kv[1]); err != nil {
				t.Fatal(err)
			}
		}
		if got := c.RecordsPerBuffer(); got != tt.want {
			t.Errorf("%v: %d records per buffer, want %d", tt.kv, got, tt.want)
		}
	}
	c := Default()
	if err := c.Set("taskmanager.memory.segment-size", "48 kb"); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "Memory segment size must be a power of 2.") {
		t.Errorf("48 kb segments: %v", err)
	}
}

// FromSettings reads back what Values wrote, and refuses a bad value by its
// key whatever the map's order.
func TestFromSettings(t *testing.T) {
	want := Default()
	if err := want.Set("parallelism.default", "3"); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, kv := range want.Values() {
		m[kv.Key] = kv.Value
	}
	got, err := FromSettings(m)
	if err != nil || got.Parallelism != 3 || !reflect.DeepEqual(got.Values(), want.Values()) {
		t.Fatalf("round trip: %v, parallelism %d", err, got.Parallelism)
	}
	m["sim.seed"], m["parallelism.default"] = "x", "0"
	for range 5 {
		if _, err := FromSettings(m); err == nil || !strings.Contains(err.Error(), "parallelism.default") {
			t.Fatalf("want the first bad key in key order (parallelism.default), got %v", err)
		}
	}
}
