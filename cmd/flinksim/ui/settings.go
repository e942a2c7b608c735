package ui

import "strings"

// The settings panel's groups, in the order the seed lists the settings
// ("Settings rebuild the job: window type, size, slide, gap, ..."); every
// other setting of the registry goes to the group of its kind, after them.
var settingGroups = []string{"Job", "Watermarks", "Parallelism and slots", "State", "Checkpoints", "Sink and output",
	"Source topic and generator", "Per-record costs", "Network", "Recovery", "Simulator"}

type settingGroup struct {
	group, label string
	seed         bool
}

// seedSettings are the settings the seed names, with the label the panel
// gives them.
var seedSettings = map[string]settingGroup{
	"job.window.type":                           {"Job", "window type", true},
	"job.window.size":                           {"Job", "size", true},
	"job.window.slide":                          {"Job", "slide", true},
	"job.window.gap":                            {"Job", "gap", true},
	"job.window.allowed-lateness":               {"Job", "allowed lateness", true},
	"job.window.side-output-late-data":          {"Job", "side output", true},
	"job.window.aggregate":                      {"Job", "aggregate", true},
	"job.window.aggregate-field":                {"Job", "aggregate field", true},
	"job.filter":                                {"Job", "filter", true},
	"job.operator":                              {"Job", "operator", true},
	"job.time-characteristic":                   {"Job", "time characteristic", true},
	"job.watermark.out-of-orderness":            {"Watermarks", "watermark bound", true},
	"job.watermark.idleness":                    {"Watermarks", "idleness", true},
	"job.watermark.alignment.group":             {"Watermarks", "alignment group", true},
	"job.watermark.alignment.max-drift":         {"Watermarks", "alignment max drift", true},
	"parallelism.default":                       {"Parallelism and slots", "parallelism", true},
	"pipeline.max-parallelism":                  {"Parallelism and slots", "max parallelism", true},
	"taskmanager.numberOfTaskSlots":             {"Parallelism and slots", "slots per TaskManager", true},
	"sim.taskmanagers":                          {"Parallelism and slots", "TaskManagers", true},
	"pipeline.operator-chaining.enabled":        {"Parallelism and slots", "chaining", true},
	"state.backend.type":                        {"State", "state backend", true},
	"state.backend.incremental":                 {"State", "incremental", true},
	"job.state.ttl":                             {"State", "TTL", true},
	"execution.checkpointing.interval":          {"Checkpoints", "checkpoint interval", true},
	"execution.checkpointing.unaligned.enabled": {"Checkpoints", "unaligned (mode)", true},
	"sink.delivery-guarantee":                   {"Sink and output", "sink guarantee", true},
	"sim.output.isolation-level":                {"Sink and output", "consumer isolation", true},
	"job.source.partitions":                     {"Source topic and generator", "partitions", true},
	"sim.source.rate":                           {"Source topic and generator", "rate (records/s)", true},
	"sim.source.keys":                           {"Source topic and generator", "keys", true},
	"sim.source.disorder":                       {"Source topic and generator", "disorder", true},
	"sim.source.late-fraction":                  {"Source topic and generator", "late records (fraction)", true},
	"sim.cost.parse":                            {"Per-record costs", "parse", true},
	"sim.cost.filter":                           {"Per-record costs", "filter", true},
	"sim.cost.window":                           {"Per-record costs", "window / process", true},
	"sim.cost.sink":                             {"Per-record costs", "sink", true},
	"sim.cost.state.rocksdb":                    {"Per-record costs", "RocksDB state access", true},
}

// groupOf places a setting in the panel.
func groupOf(key string) settingGroup {
	if g, ok := seedSettings[key]; ok {
		return g
	}
	label := key
	switch {
	case strings.HasPrefix(key, "job.watermark.") || key == "pipeline.auto-watermark-interval":
		return settingGroup{"Watermarks", label, false}
	case strings.HasPrefix(key, "job.window.") || strings.HasPrefix(key, "job.") && !strings.HasPrefix(key, "job.source."):
		return settingGroup{"Job", label, false}
	case strings.HasPrefix(key, "execution.checkpointing.") || key == "sim.checkpoint.upload-speed":
		return settingGroup{"Checkpoints", label, false}
	case strings.HasPrefix(key, "sink.") || strings.HasPrefix(key, "properties.transaction"):
		return settingGroup{"Sink and output", label, false}
	case strings.HasPrefix(key, "job.source.") || strings.HasPrefix(key, "sim.source.") || strings.HasPrefix(key, "sim.events."):
		return settingGroup{"Source topic and generator", label, false}
	case strings.HasPrefix(key, "sim.cost."):
		return settingGroup{"Per-record costs", label, false}
	case strings.HasPrefix(key, "taskmanager.network.") || strings.HasPrefix(key, "sim.network.") ||
		key == "execution.buffer-timeout" || key == "sim.buffer.records" || key == "sim.record.bytes":
		return settingGroup{"Network", label, false}
	case strings.HasPrefix(key, "restart-strategy.") || strings.HasPrefix(key, "heartbeat.") || key == "slot.request.timeout":
		return settingGroup{"Recovery", label, false}
	case strings.HasPrefix(key, "taskmanager.") || strings.HasPrefix(key, "state."):
		return settingGroup{"Parallelism and slots", label, false}
	}
	return settingGroup{"Simulator", label, false}
}
