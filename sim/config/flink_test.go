package config

import (
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// exactFloat32 is the exact binary value of the float32 nearest f, as a
// fraction: the naive oracle for Flink's float fractions (0.4f is
// 13421773/2^25), computed without the decimal route multiply takes.
func exactFloat32(f float64) *big.Rat {
	return new(big.Rat).SetFloat64(float64(float32(f)))
}

func truncMul(bytes int64, f float64) int64 {
	r := new(big.Rat).Mul(new(big.Rat).SetInt64(bytes), exactFloat32(f))
	return new(big.Int).Quo(r.Num(), r.Denom()).Int64()
}

// oracleFromProcess derives the TaskManager memory from a process size the
// way the docs' "Detailed Memory Model" describes it, with the defaults
// written out: overhead = 0.1 of the process within [192m, 1g], metaspace
// 256m, Flink memory the rest; managed 0.4 and network 0.1 (at least 64m)
// of it; framework heap and off-heap 128m each; task heap the rest.
func oracleFromProcess(process int64) TaskExecutorMemory {
	const mb = 1 << 20
	overhead := min(max(truncMul(process, 0.1), 192*mb), 1024*mb)
	flink := process - 256*mb - overhead
	managed := truncMul(flink, 0.4)
	network := max(truncMul(flink, 0.1), 64*mb)
	return TaskExecutorMemory{FrameworkHeap: 128 * mb, FrameworkOffHeap: 128 * mb, Managed: managed, Network: network,
		TaskHeap: flink - 256*mb - managed - network, Metaspace: 256 * mb, Overhead: overhead}
}

// The sizes Flink 1.20 derives from taskmanager.memory.process.size: for
// 1728m (the config.yaml Flink ships) the figures a TaskManager prints at
// startup ("Task: 384.000mb (402653174 bytes)", "Managed: 512.000mb
// (536870920 bytes)", "Network: 128.000mb (134217730 bytes)", "JVM Overhead:
// 192.000mb (201326592 bytes)", "Total Flink Memory: 1.250gb (1342177280
// bytes)"); for 4096m the same rules (overhead 0.1 = 409.6 mb within [192
// mb, 1 gb]), each against the naive oracle too.
func TestTaskExecutorMemoryFromProcessSize(t *testing.T) {
	tests := []struct {
		give string
		want TaskExecutorMemory
		text string // HumanReadable of the task heap
	}{
		{"1728m", TaskExecutorMemory{FrameworkHeap: 134217728, TaskHeap: 402653174, FrameworkOffHeap: 134217728, Network: 134217730,
			Managed: 536870920, Metaspace: 268435456, Overhead: 201326592}, "384.000mb (402653174 bytes)"},
		{"4096m", TaskExecutorMemory{FrameworkHeap: 134217728, TaskHeap: 1530082070, FrameworkOffHeap: 134217728, Network: 359703515,
			Managed: 1438814063, Metaspace: 268435456, Overhead: 429496736}, "1.425gb (1530082070 bytes)"},
	}
	for _, tt := range tests {
		c := Default()
		if err := c.Set("taskmanager.memory.process.size", tt.give); err != nil {
			t.Fatal(err)
		}
		m, ok, err := c.TaskExecutorMemory()
		if err != nil || !ok {
			t.Fatalf("%s: ok %v, %v", tt.give, ok, err)
		}
		if m != tt.want {
			t.Errorf("%s: got %+v\nwant %+v", tt.give, m, tt.want)
		}
		if o := oracleFromProcess(c.ProcessMemoryBytes); m != o {
			t.Errorf("%s: got %+v\noracle %+v", tt.give, m, o)
		}
		if m.TotalProcess() != c.ProcessMemoryBytes {
			t.Errorf("%s: components add up to %d, not the process size %d", tt.give, m.TotalProcess(), c.ProcessMemoryBytes)
		}
		if got := HumanReadable(m.TaskHeap); got != tt.text {
			t.Errorf("HumanReadable = %q, want %q", got, tt.text)
		}
		// Resolve puts the derived sizes where the simulator reads them
		if err := c.Resolve(); err != nil {
			t.Fatal(err)
		}
		if c.TaskHeapBytes != m.TaskHeap || c.ManagedMemoryBytes != m.Managed || c.NetworkMemoryBytes != m.Network {
			t.Errorf("%s: Resolve set heap %d managed %d network %d", tt.give, c.TaskHeapBytes, c.ManagedMemoryBytes, c.NetworkMemoryBytes)
		}
		if err := c.Validate(); err != nil {
			t.Error(err)
		}
	}
	if got := FlinkDefaultMemory(); got != tests[0].want {
		t.Errorf("FlinkDefaultMemory = %+v", got)
	}
}

// The other routes of the derivation and Flink's refusals.
func TestTaskExecutorMemoryRoutes(t *testing.T) {
	const mb = 1 << 20
	set := func(t *testing.T, kv ...string) Config {
		c := Default()
		for i := 0; i < len(kv); i += 2 {
			if err := c.Set(kv[i], kv[i+1]); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	t.Run("flink size 1280m is the default process size's Flink memory", func(t *testing.T) {
		c := set(t, "taskmanager.memory.flink.size", "1280m")
		m, _, err := c.TaskExecutorMemory()
		// overhead by inverse fraction: (1280m + 256m) * 0.1/0.9 = 170.7m, raised to 192m
		if err != nil || m.TaskHeap != 402653174 || m.Overhead != 192*mb || m.TotalProcess() != 1728*mb {
			t.Fatalf("%+v, %v", m, err)
		}
	})
	t.Run("explicit task heap and managed", func(t *testing.T) {
		c := set(t, "taskmanager.memory.process.size", "1728m", "taskmanager.memory.task.heap.size", "256m", "taskmanager.memory.managed.size", "256m")
		m, _, err := c.TaskExecutorMemory()
		// network = (128+128+256+256)m * 0.1/0.9 = 85.33m; overhead = 1728 - 853.33 - 256 = 618.67m, within [192m, 1g]
		wantNet := truncMulDecimal(768*mb, 0.1)
		if err != nil || m.TaskHeap != 256*mb || m.Managed != 256*mb || m.Network != wantNet || m.TotalProcess() != 1728*mb {
			t.Fatalf("%+v (network want %d), %v", m, wantNet, err)
		}
	})
	t.Run("explicit network max bounds the derived network", func(t *testing.T) {
		c := set(t, "taskmanager.memory.process.size", "4096m", "taskmanager.memory.network.max", "256m")
		m, _, err := c.TaskExecutorMemory()
		if err != nil || m.Network != 256*mb || m.TotalProcess() != 4096*mb {
			t.Fatalf("%+v, %v", m, err)
		}
	})
	t.Run("without a total size the simulator's sizes stay", func(t *testing.T) {
		c := set(t, "taskmanager.memory.task.heap.size", "1g")
		if _, ok, err := c.TaskExecutorMemory(); ok || err != nil {
			t.Fatalf("ok %v, %v", ok, err)
		}
		if err := c.Resolve(); err != nil || c.TaskHeapBytes != 1024*mb || c.NetworkMemoryBytes != 128*mb {
			t.Fatalf("%v: %+v", err, c)
		}
	})
	refusals := []struct {
		name string
		kv   []string
		want string
	}{
		{"metaspace and overhead above the process size", []string{"taskmanager.memory.process.size", "400m"},
			"Sum of configured JVM Metaspace (256.000mb (268435456 bytes)) and JVM Overhead (192.000mb (201326592 bytes)) exceed configured Total Process Memory (400.000mb (419430400 bytes))."},
		{"no room for task heap", []string{"taskmanager.memory.process.size", "600m"},
			"exceed configured Total Flink Memory (152.000mb (159383552 bytes))."},
		{"task heap too large", []string{"taskmanager.memory.process.size", "1728m", "taskmanager.memory.task.heap.size", "2g"},
			"Task Heap Memory (2.000gb (2147483648 bytes))"},
		{"overhead out of range", []string{"taskmanager.memory.process.size", "4g", "taskmanager.memory.flink.size", "1g"},
			"Derived JVM Overhead size (2.750gb (2952790016 bytes)) is not in configured JVM Overhead range [192.000mb (201326592 bytes), 1.000gb (1073741824 bytes)]."},
		{"min above max", []string{"taskmanager.memory.process.size", "2g", "taskmanager.memory.network.min", "512m", "taskmanager.memory.network.max", "256m"},
			"Inconsistently configured taskmanager.memory.network.fraction"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			c := set(t, tt.kv...)
			err := c.Resolve()
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "taskmanager.memory.*: ") {
				t.Fatalf("Resolve = %v, want %q", err, tt.want)
			}
		})
	}
}

// truncMulDecimal is MemorySize.multiply of an inverse fraction f/(1-f),
// computed from the widened float as Flink does.
func truncMulDecimal(bytes int64, f float64) int64 {
	w := float64(float32(f))
	return multiply(bytes, w/(1-w))
}

// The Flink column of the derived sizes is computed from 1728m and rounded
// to whole mebibytes; the texts are in every log header, so they must stay.
func TestDerivedDefaultsInTheHeader(t *testing.T) {
	for key, want := range map[string]string{
		"taskmanager.memory.task.heap.size": "(derived: 384 mb)",
		"taskmanager.memory.managed.size":   "(derived: 512 mb)",
		"taskmanager.memory.network.max":    "infinite (derived: 128 mb)",
	} {
		if s, _ := Lookup(key); s.FlinkDefault != want {
			t.Errorf("%s Flink default %q, want %q", key, s.FlinkDefault, want)
		}
	}
	for _, kv := range Default().Values() {
		if s, _ := Lookup(kv.Key); s.Input {
			t.Errorf("input-only setting %s is in Values (the log header)", kv.Key)
		}
		if strings.HasPrefix(kv.Key, "taskmanager.memory.process") || strings.HasPrefix(kv.Key, "taskmanager.memory.flink") {
			t.Errorf("%s in the header", kv.Key)
		}
	}
	// the buffer debloating keys show only once one is set (OmitDefault)
	on := Default()
	if err := on.Set("taskmanager.network.memory.buffer-debloat.enabled", "true"); err != nil {
		t.Fatal(err)
	}
	if n := len(on.Values()); n != 101 {
		t.Errorf("with buffer debloating on the header has %d settings, want 95 + its 6", n)
	}
	if n := len(Default().Values()); n != 95 {
		t.Errorf("the header has %d settings; it had 78 before the memory inputs came, 80 with taskmanager.memory.segment-size and max-buffers-per-channel, 81 with sim.events.gap, 84 with sim.rpc.latency and sim.task.deploy-time / init-time, 87 with job.source, job.window and job.sink.parallelism, 88 with pekko.ask.timeout, 95 with max-overdraft-buffers-per-gate, checkpoints-after-tasks-finish and the checkpoint's costs (sim.checkpoint.channel-state-speed, sync-time, file-time, ack-time, state.storage.fs.memory-threshold)", n)
	}
}

func TestNotSimulatedAndUnknownKeys(t *testing.T) {
	c := Default()
	for _, key := range []string{"rest.port", "jobmanager.rpc.address", "jobmanager.execution.failover-strategy",
		"metrics.reporter.prom.factory.class", "execution.checkpointing.mode", "high-availability.type"} {
		err := c.Set(key, "x")
		var ns *NotSimulatedError
		if !errors.As(err, &ns) || ns.Key != key {
			t.Errorf("Set(%q) = %v, want a *NotSimulatedError", key, err)
		}
		if !IsFlinkKey(key) {
			t.Errorf("IsFlinkKey(%q) = false", key)
		}
	}
	if c != Default() {
		t.Error("a not-simulated key changed the config")
	}
	for give, want := range map[string]string{"rest.prot": "rest.port", "jobmanager.rpc.adress": "jobmanager.rpc.address",
		"taskmanager.memory.proces.size": "taskmanager.memory.process.size"} {
		var uk *UnknownKeyError
		if err := c.Set(give, "1"); !errors.As(err, &uk) || uk.Suggestion != want {
			t.Errorf("Set(%q) = %v, want a suggestion of %q", give, err, want)
		}
	}
	if IsFlinkKey("metrics.reporter.") || IsFlinkKey("sim.nope") {
		t.Error("a bare prefix or a sim key is not a Flink key")
	}
	keys := FlinkKeys()
	if !slices.IsSorted(keys) || len(keys) < 300 {
		t.Errorf("FlinkKeys: sorted %v, %d keys", slices.IsSorted(keys), len(keys))
	}
	for _, k := range keys {
		if _, simulated := index[k]; simulated {
			t.Errorf("%s is both simulated and in the not-simulated list", k)
		}
	}
}

// Enum values parse as Flink parses them: case-insensitive against the
// value's text (ConfigurationUtils.convertToEnum), and the other names
// Flink accepts.
func TestEnumSpellings(t *testing.T) {
	tests := []struct{ key, give, want string }{
		{"sink.delivery-guarantee", "EXACTLY_ONCE", "exactly-once"},
		{"sink.delivery-guarantee", "exactly-once", "exactly-once"},
		{"sink.delivery-guarantee", "Exactly-Once", "exactly-once"},
		{"sink.delivery-guarantee", "at_least_once", "at-least-once"},
		{"sink.delivery-guarantee", "NONE", "none"},
		{"restart-strategy.type", "fixeddelay", "fixed-delay"},
		{"restart-strategy.type", "OFF", "none"},
		{"restart-strategy.type", "exponentialdelay", "exponential-delay"},
		{"state.backend.type", "RocksDB", "rocksdb"},
		{"sim.output.isolation-level", "READ_COMMITTED", "read_committed"},
		{"job.window.type", "Tumbling", "tumbling"},
	}
	for _, tt := range tests {
		c := Default()
		if err := c.Set(tt.key, tt.give); err != nil {
			t.Errorf("Set(%s, %s): %v", tt.key, tt.give, err)
			continue
		}
		if got, _ := c.Get(tt.key); got != tt.want {
			t.Errorf("Set(%s, %s) stored %q, want %q", tt.key, tt.give, got, tt.want)
		}
	}
	c := Default()
	if err := c.Set("sink.delivery-guarantee", "exactly once"); err == nil || !strings.Contains(err.Error(), "Expected one of: [none, at-least-once, exactly-once]") {
		t.Errorf("exactly once: %v", err)
	}
}

// Settings Flink refuses at startup are refused by Validate with Flink's
// message.
func TestValidateFlinkStartupChecks(t *testing.T) {
	c := Default()
	c.HeartbeatInterval, c.HeartbeatTimeout = 10*time.Second, 5*time.Second
	err := c.Validate()
	if err == nil || err.Error() != "heartbeat.timeout 5 s < heartbeat.interval 10 s: The heartbeat timeout should be larger or equal than the heartbeat interval." {
		t.Errorf("Validate = %v", err)
	}
	c.HeartbeatTimeout = 10 * time.Second
	if err := c.Validate(); err != nil {
		t.Errorf("timeout == interval: %v", err)
	}
	c = Default()
	c.HeartbeatInterval = 500 * time.Microsecond // below Flink's 1 ms resolution: 0 ms
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "heartbeat.interval: 500 µs is out of range (allowed: 1 ms..)") {
		t.Errorf("Validate = %v", err)
	}
	c = Default()
	c.NetworkFraction = 1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "taskmanager.memory.network.fraction 1: fraction must be in range [0, 1)") {
		t.Errorf("Validate = %v", err)
	}
}

// flinkConfigYAML is a Flink 1.20 config.yaml as Flink ships it
// (flink-dist/src/main/resources/config.yaml), comments left out, nested,
// with a few documented keys more in the flat form (rest.port, a metrics
// reporter, a list-typed pipeline.jars).
const flinkConfigYAML = `env:
  java:
    opts:
      all: --add-exports=java.base/sun.net.util=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED
jobmanager:
  bind-host: localhost
  rpc:
    address: localhost
    port: 6123
  memory:
    process:
      size: 1600m
  execution:
    failover-strategy: region
taskmanager:
  bind-host: localhost
  host: localhost
  numberOfTaskSlots: 1
  memory:
    process:
      size: 1728m
parallelism:
  default: 1
rest:
  address: localhost
  bind-address: localhost
rest.port: 8081
metrics.reporter.prom.factory.class: org.apache.flink.metrics.prometheus.PrometheusReporterFactory
pipeline.jars: [file:///opt/flink/usrlib/job.jar]
execution.checkpointing.mode: EXACTLY_ONCE
`

func TestLoadFlinkConfigYAML(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(flinkConfigYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Default()
	notSim, err := c.LoadYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"env.java.opts.all", "jobmanager.bind-host", "jobmanager.rpc.address", "jobmanager.rpc.port",
		"jobmanager.memory.process.size", "jobmanager.execution.failover-strategy", "taskmanager.bind-host", "taskmanager.host",
		"rest.address", "rest.bind-address", "rest.port", "metrics.reporter.prom.factory.class", "pipeline.jars", "execution.checkpointing.mode"}
	if !slices.Equal(notSim, want) {
		t.Errorf("not simulated:\n got  %v\n want %v", notSim, want)
	}
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	if c.Parallelism != 1 || c.NumberOfTaskSlots != 1 || c.TaskHeapBytes != 402653174 || c.ManagedMemoryBytes != 536870920 || c.NetworkMemoryBytes != 134217730 {
		t.Errorf("parallelism %d slots %d heap %d managed %d network %d", c.Parallelism, c.NumberOfTaskSlots, c.TaskHeapBytes, c.ManagedMemoryBytes, c.NetworkMemoryBytes)
	}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
}

// Bad settings files: each refused with FILE:LINE, quickly, the config
// unchanged.
func TestLoadYAMLHostileInput(t *testing.T) {
	var laughs strings.Builder // nested mapping aliases: 9^9 keys if expanded
	laughs.WriteString("a: &a {x0: 1, x1: 1, x2: 1, x3: 1, x4: 1, x5: 1, x6: 1, x7: 1, x8: 1}\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		laughs.WriteString(n + ": &" + n + " {")
		for j := 0; j < 9; j++ {
			if j > 0 {
				laughs.WriteString(", ")
			}
			laughs.WriteString("k" + string(rune('0'+j)) + ": *" + prev)
		}
		laughs.WriteString("}\n")
		prev = n
	}
	var seqLaughs strings.Builder // the list form: lists are not expanded at all
	seqLaughs.WriteString("a: &a [x, x, x, x, x, x, x, x, x]\n")
	prev = "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		seqLaughs.WriteString(n + ": &" + n + " [*" + prev + strings.Repeat(", *"+prev, 8) + "]\n")
		prev = n
	}
	tests := []struct{ name, give, want string }{
		{"self-referencing alias", "a: &a\n  b: *a\n", `:2: a.b: the alias *a names a mapping that contains it`},
		{"alias cycle two deep", "x: &x\n  y:\n    z: *x\n", `:3: x.y.z: the alias *x names a mapping that contains it`},
		{"billion laughs of mappings", laughs.String(), ":7: more than 50 aliases to mappings or lists (Flink's SnakeYAML refuses them: Number of aliases for non-scalar nodes exceeds the specified max=50)"},
		{"billion laughs of lists", seqLaughs.String(), ":7: more than 50 aliases to mappings or lists"},
		{"second document", "parallelism.default: 2\n---\nsim.seed: 3\n", ":3: a second YAML document"},
		{"invalid UTF-8 in a key", "sim.se\xffed: 3\n", ":1: invalid UTF-8 at byte 7 of the line"},
		{"a long garbage value", "job.filter: [" + strings.Repeat("x", 70000) + "\n", "line longer than 64 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.yaml")
			if err := os.WriteFile(path, []byte(tt.give), 0o644); err != nil {
				t.Fatal(err)
			}
			c := Default()
			start := time.Now()
			_, err := c.LoadYAML(path)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), path+":") {
				t.Fatalf("LoadYAML = %v, want %q", err, tt.want)
			}
			if len(err.Error()) > 4000 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			if c != Default() {
				t.Error("config changed")
			}
		})
	}
}

// /dev/zero is refused after reading at most the limit.
func TestLoadYAMLDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	c := Default()
	_, err := c.LoadYAML("/dev/zero")
	if err == nil || !strings.HasPrefix(err.Error(), "/dev/zero:1: line longer than 64 KiB") {
		t.Fatalf("LoadYAML(/dev/zero) = %v", err)
	}
}

// A byte order mark and CRLF line ends read as without them.
func TestLoadYAMLBOMAndCRLF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crlf.yaml")
	if err := os.WriteFile(path, []byte("\xef\xbb\xbfparallelism.default: 3\r\nsim:\r\n  seed: 7\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Default()
	if _, err := c.LoadYAML(path); err != nil || c.Parallelism != 3 || c.Seed != 7 {
		t.Fatalf("%v: parallelism %d seed %d", err, c.Parallelism, c.Seed)
	}
}
