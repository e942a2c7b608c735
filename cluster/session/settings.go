package session

import (
	"slices"
	"strings"
)

// The settings panel's groups, in the order the seed lists the settings
// ("Settings rebuild the job: window type, size, slide, gap, ..."); every
// other setting of the registry goes to the group of its kind, after them.
var settingGroups = []string{"Job", "Watermarks", "Parallelism and slots", "State", "Checkpoints", "Sink and output",
	"Source topic and generator", "Per-record costs", "Network", "Recovery", "Simulator"}

type settingGroup struct {
	group, label string
	seed         bool
	order        int // the seed's order (seedOrder)
}

// seedOrder is the order the seed lists its settings in.
var seedOrder = []string{"job.window.type", "job.window.size", "job.window.slide", "job.window.gap", "job.window.allowed-lateness",
	"job.window.side-output-late-data", "job.window.aggregate", "job.window.aggregate-field", "job.filter", "job.operator",
	"job.time-characteristic", "job.watermark.out-of-orderness", "job.watermark.idleness", "job.watermark.alignment.group",
	"job.watermark.alignment.max-drift", "parallelism.default", "pipeline.max-parallelism", "taskmanager.numberOfTaskSlots",
	"sim.taskmanagers", "pipeline.operator-chaining.enabled", "state.backend.type", "state.backend.incremental", "job.state.ttl",
	"execution.checkpointing.interval", "execution.checkpointing.unaligned.enabled", "sink.delivery-guarantee",
	"sim.output.isolation-level", "job.source.partitions", "sim.source.rate", "sim.source.keys", "sim.source.disorder",
	"sim.source.late-fraction", "sim.cost.parse", "sim.cost.filter", "sim.cost.window", "sim.cost.sink", "sim.cost.state.rocksdb"}

// seedSettings are the settings the seed names, with the label the panel
// gives them.
var seedSettings = map[string]settingGroup{
	"job.window.type":                           {"Job", "window type", true, 0},
	"job.window.size":                           {"Job", "size", true, 0},
	"job.window.slide":                          {"Job", "slide", true, 0},
	"job.window.gap":                            {"Job", "gap", true, 0},
	"job.window.allowed-lateness":               {"Job", "allowed lateness", true, 0},
	"job.window.side-output-late-data":          {"Job", "side output", true, 0},
	"job.window.aggregate":                      {"Job", "aggregate", true, 0},
	"job.window.aggregate-field":                {"Job", "aggregate field", true, 0},
	"job.filter":                                {"Job", "filter", true, 0},
	"job.operator":                              {"Job", "operator", true, 0},
	"job.time-characteristic":                   {"Job", "time characteristic", true, 0},
	"job.watermark.out-of-orderness":            {"Watermarks", "watermark bound", true, 0},
	"job.watermark.idleness":                    {"Watermarks", "idleness", true, 0},
	"job.watermark.alignment.group":             {"Watermarks", "alignment group", true, 0},
	"job.watermark.alignment.max-drift":         {"Watermarks", "alignment max drift", true, 0},
	"parallelism.default":                       {"Parallelism and slots", "parallelism", true, 0},
	"pipeline.max-parallelism":                  {"Parallelism and slots", "max parallelism", true, 0},
	"taskmanager.numberOfTaskSlots":             {"Parallelism and slots", "slots per TaskManager", true, 0},
	"sim.taskmanagers":                          {"Parallelism and slots", "TaskManagers", true, 0},
	"pipeline.operator-chaining.enabled":        {"Parallelism and slots", "chaining", true, 0},
	"state.backend.type":                        {"State", "state backend", true, 0},
	"state.backend.incremental":                 {"State", "incremental", true, 0},
	"job.state.ttl":                             {"State", "TTL", true, 0},
	"execution.checkpointing.interval":          {"Checkpoints", "checkpoint interval", true, 0},
	"execution.checkpointing.unaligned.enabled": {"Checkpoints", "unaligned (mode)", true, 0},
	"sink.delivery-guarantee":                   {"Sink and output", "sink guarantee", true, 0},
	"sim.output.isolation-level":                {"Sink and output", "consumer isolation", true, 0},
	"job.source.partitions":                     {"Source topic and generator", "partitions", true, 0},
	"sim.source.rate":                           {"Source topic and generator", "rate (records/s)", true, 0},
	"sim.source.keys":                           {"Source topic and generator", "keys", true, 0},
	"sim.source.disorder":                       {"Source topic and generator", "disorder", true, 0},
	"sim.source.late-fraction":                  {"Source topic and generator", "late records (fraction)", true, 0},
	"sim.cost.parse":                            {"Per-record costs", "parse", true, 0},
	"sim.cost.filter":                           {"Per-record costs", "filter", true, 0},
	"sim.cost.window":                           {"Per-record costs", "window / process", true, 0},
	"sim.cost.sink":                             {"Per-record costs", "sink", true, 0},
	"sim.cost.state.rocksdb":                    {"Per-record costs", "RocksDB state access", true, 0},
}

// groupOf places a setting in the panel.
func groupOf(key string) settingGroup {
	if g, ok := seedSettings[key]; ok {
		g.order = slices.Index(seedOrder, key)
		return g
	}
	label := key
	switch {
	case strings.HasPrefix(key, "job.watermark.") || key == "pipeline.auto-watermark-interval":
		return settingGroup{group: "Watermarks", label: label}
	case strings.HasPrefix(key, "job.window.") || strings.HasPrefix(key, "job.") && !strings.HasPrefix(key, "job.source."):
		return settingGroup{group: "Job", label: label}
	case strings.HasPrefix(key, "execution.checkpointing.") || key == "sim.checkpoint.upload-speed":
		return settingGroup{group: "Checkpoints", label: label}
	case strings.HasPrefix(key, "sink.") || strings.HasPrefix(key, "properties.transaction"):
		return settingGroup{group: "Sink and output", label: label}
	case strings.HasPrefix(key, "job.source.") || strings.HasPrefix(key, "sim.source.") || strings.HasPrefix(key, "sim.events."):
		return settingGroup{group: "Source topic and generator", label: label}
	case strings.HasPrefix(key, "sim.cost."):
		return settingGroup{group: "Per-record costs", label: label}
	case strings.HasPrefix(key, "taskmanager.network.") || strings.HasPrefix(key, "sim.network.") ||
		key == "execution.buffer-timeout" || key == "sim.buffer.records" || key == "sim.record.bytes":
		return settingGroup{group: "Network", label: label}
	case strings.HasPrefix(key, "restart-strategy.") || strings.HasPrefix(key, "heartbeat.") || key == "slot.request.timeout":
		return settingGroup{group: "Recovery", label: label}
	case strings.HasPrefix(key, "taskmanager.") || strings.HasPrefix(key, "state."):
		return settingGroup{group: "Parallelism and slots", label: label}
	}
	return settingGroup{group: "Simulator", label: label}
}
