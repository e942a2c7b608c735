package config

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// TaskExecutorMemory is the memory of one TaskManager as Flink derives it
// at startup (TaskExecutorProcessSpec), in bytes.
type TaskExecutorMemory struct {
	FrameworkHeap, TaskHeap, FrameworkOffHeap, TaskOffHeap, Network, Managed int64
	Metaspace, Overhead                                                      int64
}

// TotalFlink is the total Flink memory: the six Flink components.
func (m TaskExecutorMemory) TotalFlink() int64 {
	return m.FrameworkHeap + m.TaskHeap + m.FrameworkOffHeap + m.TaskOffHeap + m.Network + m.Managed
}

// TotalProcess is the total process memory: Flink memory, JVM metaspace
// and JVM overhead.
func (m TaskExecutorMemory) TotalProcess() int64 { return m.TotalFlink() + m.Metaspace + m.Overhead }

// memory keys whose explicit setting changes how Flink derives the rest.
const (
	keyProcessMemory   = "taskmanager.memory.process.size"
	keyFlinkMemory     = "taskmanager.memory.flink.size"
	keyTaskHeap        = "taskmanager.memory.task.heap.size"
	keyTaskOffHeap     = "taskmanager.memory.task.off-heap.size"
	keyManaged         = "taskmanager.memory.managed.size"
	keyNetworkMax      = "taskmanager.memory.network.max"
	keyNetworkMin      = "taskmanager.memory.network.min"
	keyNetworkFraction = "taskmanager.memory.network.fraction"
)

// memoryBit marks a memory key as set explicitly (Config.memSet), Flink's
// config.contains(option).
func memoryBit(key string) uint32 {
	switch key {
	case keyProcessMemory:
		return 1 << 0
	case keyFlinkMemory:
		return 1 << 1
	case keyTaskHeap:
		return 1 << 2
	case keyManaged:
		return 1 << 3
	case keyNetworkMax:
		return 1 << 4
	case keyNetworkMin:
		return 1 << 5
	case keyNetworkFraction:
		return 1 << 6
	}
	return 0
}

func (c *Config) isSet(key string) bool { return c.memSet&memoryBit(key) != 0 }

// Flink's memory defaults (TaskManagerOptions, Flink 1.20).
const (
	defaultFrameworkHeap    = 128 << 20
	defaultFrameworkOffHeap = 128 << 20
	defaultMetaspace        = 256 << 20
	defaultOverheadMin      = 192 << 20
	defaultOverheadMax      = 1 << 30
	defaultOverheadFraction = 0.1
	defaultManagedFraction  = 0.4
	defaultNetworkMin       = 64 << 20
	defaultNetworkFraction  = 0.1
	// FlinkDefaultProcessMemory is taskmanager.memory.process.size in the
	// config.yaml Flink 1.20 ships (flink-dist): 1728m.
	FlinkDefaultProcessMemory = 1728 << 20
)

// multiply is MemorySize.multiply: the exact decimal product of bytes and
// BigDecimal.valueOf(f) (the shortest decimal that reads back as the double
// f, Double.toString), truncated toward zero (BigDecimal.longValue).
func multiply(bytes int64, f float64) int64 {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok {
		return 0
	}
	r.Mul(r, new(big.Rat).SetInt64(bytes))
	q := new(big.Int).Quo(r.Num(), r.Denom()) // truncates toward zero
	if !q.IsInt64() {
		return math.MaxInt64
	}
	return q.Int64()
}

// widen is a Flink float option read as the double Flink computes with:
// the options' type is Float (TaskManagerOptions.*_FRACTION), widened by
// config.get(option) into a double, so 0.4 becomes 0.4000000059604645.
func widen(f float64) float64 { return float64(float32(f)) }

// rangeFraction is Flink's RangeFraction: a fraction of a base, capped to
// [min, max].
type rangeFraction struct {
	min, max int64
	fraction float64
	name     string // "jvm overhead memory", "network memory", "managed memory"
}

// withFraction is ProcessMemoryUtils.deriveWithFraction.
func (r rangeFraction) withFraction(base int64) int64 {
	return r.capToMinMax(multiply(base, r.fraction))
}

// withInverseFraction is ProcessMemoryUtils.deriveWithInverseFraction: the
// size that is the fraction of base plus itself.
func (r rangeFraction) withInverseFraction(base int64) int64 {
	return r.capToMinMax(multiply(base, r.fraction/(1-r.fraction)))
}

func (r rangeFraction) capToMinMax(size int64) int64 {
	return min(max(size, r.min), r.max)
}

// HumanReadable prints a byte count as Flink's
// MemorySize.toHumanReadableString does: "384.000mb (402653174 bytes)", or
// "N bytes" below 1 kb.
func HumanReadable(bytes int64) string {
	units := []struct {
		name string
		size int64
	}{{"tb", 1 << 40}, {"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}}
	for _, u := range units {
		if bytes >= u.size {
			return fmt.Sprintf("%.3f%s (%d bytes)", float64(bytes)/float64(u.size), u.name, bytes)
		}
	}
	return strconv.FormatInt(bytes, 10) + " bytes"
}

// TaskExecutorMemory derives the TaskManager's memory from c as Flink
// 1.20's TaskExecutorProcessUtils.processSpecFromConfig does (through
// ProcessMemoryUtils.memoryProcessSpecFromConfig and
// TaskExecutorFlinkMemoryUtils), with the key sizes taken as explicitly
// configured when they were set (Set): when task heap and managed memory
// are both set they are used as they are; otherwise, when the total Flink
// memory is set, managed memory (fraction 0.4) and network memory (fraction
// 0.1 within [network.min, network.max]) are derived from it and task heap
// is the rest; otherwise the total process memory less JVM metaspace (256
// mb) and JVM overhead (fraction 0.1 within [192 mb, 1 gb]) is the total
// Flink memory. Fractions are Flink's floats. A combination Flink refuses
// gives Flink's IllegalConfigurationException message. ok is false when
// neither taskmanager.memory.process.size nor taskmanager.memory.flink.size
// is set: the simulator then keeps its own sizes.
func (c *Config) TaskExecutorMemory() (m TaskExecutorMemory, ok bool, err error) {
	if !c.isSet(keyProcessMemory) && !c.isSet(keyFlinkMemory) {
		return m, false, nil
	}
	m.FrameworkHeap, m.FrameworkOffHeap, m.TaskOffHeap, m.Metaspace = c.FrameworkHeapBytes, c.FrameworkOffHeapBytes, c.TaskOffHeapBytes, c.MetaspaceBytes
	overhead := rangeFraction{c.OverheadMinBytes, c.OverheadMaxBytes, widen(c.OverheadFraction), "jvm overhead memory"}
	networkMax := int64(math.MaxInt64) // Flink's default: infinite
	if c.isSet(keyNetworkMax) {
		networkMax = c.NetworkMemoryBytes
	}
	network := rangeFraction{c.NetworkMinBytes, networkMax, widen(c.NetworkFraction), "network memory"}
	managed := rangeFraction{0, math.MaxInt64, widen(c.ManagedFraction), "managed memory"}
	for _, r := range []struct {
		rf  rangeFraction
		key string
	}{{overhead, "taskmanager.memory.jvm-overhead"}, {network, "taskmanager.memory.network"}} {
		if r.rf.min > r.rf.max {
			return m, true, fmt.Errorf("Inconsistently configured %s.fraction (%v) and its min (%s), max (%s) value",
				r.key, r.rf.fraction, HumanReadable(r.rf.min), HumanReadable(r.rf.max))
		}
	}

	fineGrained := c.isSet(keyTaskHeap) && c.isSet(keyManaged)
	var totalFlink int64
	switch {
	case fineGrained:
		// deriveProcessSpecWithExplicitInternalMemory
		m.TaskHeap, m.Managed = c.TaskHeapBytes, c.ManagedMemoryBytes
		rest := m.FrameworkHeap + m.FrameworkOffHeap + m.TaskHeap + m.TaskOffHeap + m.Managed
		if c.isSet(keyFlinkMemory) {
			if rest > c.FlinkMemoryBytes {
				return m, true, c.exceedError(m, c.FlinkMemoryBytes)
			}
			m.Network = c.FlinkMemoryBytes - rest
			if err := networkInRange(m.Network, network, true); err != nil {
				return m, true, err
			}
		} else {
			m.Network = network.withInverseFraction(rest)
		}
		totalFlink = m.TotalFlink()
	case c.isSet(keyFlinkMemory):
		totalFlink = c.FlinkMemoryBytes
	default:
		process := c.ProcessMemoryBytes
		m.Overhead = overhead.withFraction(process)
		if m.Metaspace+m.Overhead > process {
			return m, true, fmt.Errorf("Sum of configured JVM Metaspace (%s) and JVM Overhead (%s) exceed configured Total Process Memory (%s).",
				HumanReadable(m.Metaspace), HumanReadable(m.Overhead), HumanReadable(process))
		}
		totalFlink = process - m.Metaspace - m.Overhead
	}
	if !fineGrained {
		// TaskExecutorFlinkMemoryUtils.deriveFromTotalFlinkMemory
		if c.isSet(keyManaged) {
			m.Managed = c.ManagedMemoryBytes
		} else {
			m.Managed = managed.withFraction(totalFlink)
		}
		if c.isSet(keyTaskHeap) {
			m.TaskHeap = c.TaskHeapBytes
			rest := m.FrameworkHeap + m.FrameworkOffHeap + m.TaskHeap + m.TaskOffHeap + m.Managed
			if rest > totalFlink {
				return m, true, c.exceedError(m, totalFlink)
			}
			m.Network = totalFlink - rest
			if err := networkInRange(m.Network, network, true); err != nil {
				return m, true, err
			}
		} else {
			m.Network = network.withFraction(totalFlink)
			rest := m.FrameworkHeap + m.FrameworkOffHeap + m.TaskOffHeap + m.Managed + m.Network
			if rest > totalFlink {
				return m, true, fmt.Errorf("Sum of configured Framework Heap Memory (%s), Framework Off-Heap Memory (%s), Task Off-Heap Memory (%s), Managed Memory (%s) and Network Memory (%s) exceed configured Total Flink Memory (%s).",
					HumanReadable(m.FrameworkHeap), HumanReadable(m.FrameworkOffHeap), HumanReadable(m.TaskOffHeap),
					HumanReadable(m.Managed), HumanReadable(m.Network), HumanReadable(totalFlink))
			}
			m.TaskHeap = totalFlink - rest
		}
	}
	if c.isSet(keyFlinkMemory) && m.TotalFlink() != c.FlinkMemoryBytes {
		return m, true, fmt.Errorf("Configured and Derived Flink internal memory sizes (total %s) do not add up to the configured Total Flink Memory size (%s).",
			HumanReadable(m.TotalFlink()), HumanReadable(c.FlinkMemoryBytes))
	}
	if c.isSet(keyFlinkMemory) || fineGrained {
		// deriveJvmMetaspaceAndOverheadFromTotalFlinkMemory
		if c.isSet(keyProcessMemory) {
			m.Overhead = c.ProcessMemoryBytes - totalFlink - m.Metaspace
			if m.Overhead < overhead.min || m.Overhead > overhead.max {
				return m, true, fmt.Errorf("Derived JVM Overhead size (%s) is not in configured JVM Overhead range [%s, %s].",
					HumanReadable(m.Overhead), HumanReadable(overhead.min), HumanReadable(overhead.max))
			}
		} else {
			m.Overhead = overhead.withInverseFraction(totalFlink + m.Metaspace)
		}
	}
	return m, true, nil
}

func (c *Config) exceedError(m TaskExecutorMemory, totalFlink int64) error {
	return fmt.Errorf("Sum of configured Framework Heap Memory (%s), Framework Off-Heap Memory (%s), Task Heap Memory (%s), Task Off-Heap Memory (%s) and Managed Memory (%s) exceed configured Total Flink Memory (%s).",
		HumanReadable(m.FrameworkHeap), HumanReadable(m.FrameworkOffHeap), HumanReadable(m.TaskHeap),
		HumanReadable(m.TaskOffHeap), HumanReadable(m.Managed), HumanReadable(totalFlink))
}

// networkInRange is TaskExecutorFlinkMemoryUtils.sanityCheckNetworkMemory
// for a network size that is the rest of the total Flink memory.
func networkInRange(size int64, r rangeFraction, rest bool) error {
	if size >= r.min && size <= r.max {
		return nil
	}
	msg := fmt.Sprintf("Derived Network Memory size (%s) is not in configured Network Memory range [%s, %s].",
		HumanReadable(size), HumanReadable(r.min), HumanReadable(r.max))
	if rest {
		msg = "If Total Flink, Task Heap and (or) Managed Memory sizes are explicitly configured then the Network Memory size is the rest of the Total Flink memory after subtracting all other configured types of memory, but the derived Network Memory is inconsistent with its configuration. " + msg
	}
	return fmt.Errorf("%s", msg)
}

// Resolve derives what settings derive from others, as Flink does at
// startup; call it once after every Set and before Validate. Today that is
// the TaskManager's memory: with taskmanager.memory.process.size or
// taskmanager.memory.flink.size set, task heap, task off-heap, managed and
// network memory become Flink's derived sizes (TaskExecutorMemory), so
// the log header carries what Flink would run with. Without either, the
// simulator's sizes stay as they are.
func (c *Config) Resolve() error {
	m, ok, err := c.TaskExecutorMemory()
	if err != nil {
		return fmt.Errorf("taskmanager.memory.*: %w", err)
	}
	if ok {
		c.TaskHeapBytes, c.TaskOffHeapBytes, c.ManagedMemoryBytes, c.NetworkMemoryBytes = m.TaskHeap, m.TaskOffHeap, m.Managed, m.Network
	}
	return nil
}

// FlinkDefaultMemory is what Flink 1.20 derives from the config.yaml it
// ships (taskmanager.memory.process.size 1728m, every other size at its
// default): the figures of the settings table's Flink column.
func FlinkDefaultMemory() TaskExecutorMemory {
	c := Default()
	c.ProcessMemoryBytes = FlinkDefaultProcessMemory
	c.memSet = memoryBit(keyProcessMemory)
	m, _, err := c.TaskExecutorMemory()
	if err != nil {
		panic(err) // the defaults are consistent: TestFlinkDefaultMemory
	}
	return m
}
