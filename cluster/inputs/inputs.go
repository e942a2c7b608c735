// Package inputs reads what a run is a function of as the commands take it
// from a person: the settings (a YAML file like Flink's config.yaml and
// key=value pairs), an events file, and actions (flags and a file), each
// within its limits (sim/input), with errors that name the flag, the file
// and the line. What it returns is a recipe's parts (the settings, the
// cluster.Options' Events and Actions); it runs nothing.
package inputs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/filter"
	"github.com/flinksim/flinksim/sim/input"
)

// Settings are a run's settings and what loading them told.
type Settings struct {
	Config config.Config
	// NotSimulated are the Flink keys given that the simulator does not
	// model, in the order given, once each.
	NotSimulated []string
	// Explicit are the keys the user gave a value other than the default,
	// or named with --set.
	Explicit map[string]bool
}

// LoadSettings applies a YAML settings file (--config, "": none), then
// each key=value of sets (--set), derives what Flink derives (Resolve),
// then validates. An error names the flag and what is wrong.
func LoadSettings(configFile string, sets []string) (Settings, error) {
	lc := Settings{Config: config.Default(), Explicit: map[string]bool{}}
	seen := map[string]bool{}
	noteKey := func(k string) {
		if !seen[k] {
			seen[k] = true
			lc.NotSimulated = append(lc.NotSimulated, k)
		}
	}
	if configFile != "" {
		notSim, err := lc.Config.LoadYAML(configFile)
		if err != nil {
			return lc, fmt.Errorf("--config %v", err)
		}
		for _, k := range notSim {
			noteKey(k)
		}
	}
	for _, kv := range sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return lc, fmt.Errorf("--set %s: expected key=value", input.Quote(kv))
		}
		k = strings.TrimSpace(k)
		if err := lc.Config.Set(k, strings.TrimSpace(v)); err != nil {
			var ns *config.NotSimulatedError
			if errors.As(err, &ns) {
				noteKey(k)
				continue
			}
			return lc, fmt.Errorf("--set %v", err)
		}
		lc.Explicit[k] = true
	}
	def := config.Default()
	for _, kv := range lc.Config.Values() {
		if d, _ := def.Get(kv.Key); kv.Value != d {
			lc.Explicit[kv.Key] = true
		}
	}
	if err := lc.Config.Resolve(); err != nil {
		return lc, err
	}
	if err := lc.Config.Validate(); err != nil {
		return lc, err
	}
	return lc, nil
}

// ReadEvents reads an events file within its limits (input.EventsLimits)
// as the settings read records (key and time fields, partitions, the
// fields the aggregate and the filter read), checks them against the
// settings (cluster.CheckEvents), and returns them with the file's sha256
// in hex; what names where the path came from in errors ("--events ", or
// "LOG:1: events_file ").
func ReadEvents(what, path string, cfg config.Config) ([]events.Record, string, error) {
	data, err := input.ReadFile(path, input.EventsLimits)
	if err != nil {
		return nil, "", fmt.Errorf("%s%v", what, err)
	}
	opt := events.Options{KeyField: cfg.KeyField, TimeField: cfg.TimeField, Partitions: cfg.SourcePartitions}
	if cfg.Operator == config.OperatorWindow && cfg.Aggregate != config.AggregateCount {
		opt.NumberField = cfg.AggregateField
	}
	if p, err := filter.Parse(cfg.Filter); cfg.Filter != "" && err == nil && p.Field != "key" {
		opt.FilterField = p.Field
	}
	recs, err := events.Parse(data, path, opt)
	if err != nil {
		return nil, "", fmt.Errorf("%s%v", what, err)
	}
	if len(recs) == 0 {
		return nil, "", fmt.Errorf("%s%s: no records", what, path)
	}
	if err := cluster.CheckEvents(cfg, path, recs); err != nil {
		return nil, "", fmt.Errorf("%s%v", what, err)
	}
	sum := sha256.Sum256(data)
	return recs, hex.EncodeToString(sum[:]), nil
}

// ParseActions reads --action flags and an --actions file ("": none),
// sorted by time, with check, when not nil, run on every action
// (cluster.CheckAction: what the settings refuse of an action), its
// refusal at the flag or at the file's line.
func ParseActions(flags []string, file string, check func(action.Action) error) ([]action.Action, error) {
	var out []action.Action
	for _, s := range flags {
		a, err := action.Parse(s)
		if err == nil && check != nil {
			err = check(a)
		}
		if err != nil {
			return nil, fmt.Errorf("--action: %v", err)
		}
		out = append(out, a)
	}
	if file != "" {
		data, err := input.ReadFile(file, input.ActionsLimits)
		if err != nil {
			return nil, fmt.Errorf("--actions %v", err)
		}
		data = input.Clean(data)
		if line, col := input.CheckUTF8(data); line > 0 {
			return nil, fmt.Errorf("--actions %s:%d: invalid UTF-8 at byte %d of the line", file, line, col)
		}
		if line := input.BOMLine(data); line > 0 {
			return nil, fmt.Errorf("--actions %s:%d: %s", file, line, input.BOMMessage(line))
		}
		as, err := action.ParseScriptChecked(file, string(data), check)
		if err != nil {
			return nil, fmt.Errorf("--actions %v", err)
		}
		out = append(out, as...)
	}
	action.Sort(out)
	return out, nil
}

// File is one file flag of a command (Flag, as the person typed it) and its
// path ("" or "-": none, or stdout), for the identity checks.
type File struct{ Flag, Path string }

// CheckOutputs refuses an output that is one of the inputs or the other
// output: the same file by identity (os.SameFile: also through a link or
// another spelling), or the same path when it does not exist yet. It runs
// before anything is created, so no input is ever truncated.
func CheckOutputs(inputs, outputs []File) error {
	stat := func(p string) os.FileInfo {
		st, err := os.Stat(p)
		if err != nil {
			return nil
		}
		return st
	}
	same := func(a, b string) bool {
		sa, sb := stat(a), stat(b)
		if sa != nil && sb != nil {
			return os.SameFile(sa, sb)
		}
		ca, _ := filepath.Abs(a)
		cb, _ := filepath.Abs(b)
		return ca == cb
	}
	for i, out := range outputs {
		if out.Path == "" || out.Path == "-" {
			continue
		}
		if st := stat(out.Path); st != nil && st.IsDir() {
			return fmt.Errorf("%s %s: is a directory", out.Flag, out.Path)
		}
		for _, in := range inputs {
			if in.Path != "" && same(out.Path, in.Path) {
				return fmt.Errorf("%s %s is the %s file: refusing to overwrite an input", out.Flag, out.Path, in.Flag)
			}
		}
		for _, other := range outputs[i+1:] {
			if other.Path != "" && other.Path != "-" && same(out.Path, other.Path) {
				return fmt.Errorf("%s and %s name the same file %s", out.Flag, other.Flag, out.Path)
			}
		}
	}
	return nil
}
