package session

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/examples"
	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/vt"
)

// A guided scenario is an example of examples/ run as a session of its own
// and narrated: examples/NAME/scenario.txt gives its title, a summary, the
// speed it runs at and its steps, each at a virtual time with what to watch
// and, optionally, an action (in the --action syntax) that the session takes
// live at that time, so it is logged, replayed and shown on the timeline like
// one given by hand. The settings and the events are those of the example's
// command (examples/NAME/command: its --config and --events); an example run
// with --actions has exactly those actions as its steps' actions, so the
// scenario shows what the example claims, and a new job a step starts (a
// rescale, a set of the job's configuration) writes to a fresh view of the
// output, as the seed's scenario step says.
//
// The file: header lines "key: value" (title, summary, speed, order, next:
// the scenario to go on with), then steps, each a line "at=TIME [action]"
// followed by its text (lines up to the next step, joined). Lines starting
// with # are comments.

// Scenario is one guided scenario as GET /sim/scenarios lists it.
type Scenario struct {
	Name    string         `json:"name"` // the example's directory
	Title   string         `json:"title"`
	Summary string         `json:"summary"`
	Speed   string         `json:"speed"` // the speed it starts at (ParseSpeed)
	Order   int            `json:"order"` // its place in the menu
	Next    string         `json:"next,omitempty"`
	Command string         `json:"command"` // the example's command, from the repository root
	Steps   []ScenarioStep `json:"steps"`

	config, events, actions string // paths in the examples' file system ("" when the command has none)
}

// ScenarioStep is one step: from virtual time AtUs (µs) on, Say is what to
// watch; Action, when set, happens then (in the --action syntax, without
// its at=).
type ScenarioStep struct {
	AtUs   int64  `json:"at_us"`
	Action string `json:"action,omitempty"`
	Say    string `json:"say"`

	act *action.Action
}

// ParseScenario reads one scenario file; name is the file's name in errors
// (examples/NAME/scenario.txt), and the scenario's name is its directory.
func ParseScenario(name string, data []byte) (Scenario, error) {
	sc := Scenario{Name: path.Base(path.Dir(name))}
	var errs []error
	fail := func(line int, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, a...)))
	}
	var step *ScenarioStep
	stepLine := 0
	endStep := func() {
		if step == nil {
			return
		}
		if step.Say == "" {
			fail(stepLine, "the step at %s says nothing: give the text to show after its at= line", fmtAt(step.AtUs))
		}
		sc.Steps = append(sc.Steps, *step)
		step = nil
	}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "at=") {
			endStep()
			st, err := parseStepLine(line)
			if err != nil {
				fail(n, "%v", err)
				continue
			}
			if k := len(sc.Steps); k > 0 && st.AtUs < sc.Steps[k-1].AtUs {
				fail(n, "the step at %s comes before the step above it (%s): steps go in time order", fmtAt(st.AtUs), fmtAt(sc.Steps[k-1].AtUs))
			}
			step, stepLine = &st, n
			continue
		}
		if step != nil {
			step.Say = strings.TrimSpace(step.Say + " " + line)
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			fail(n, "expected a header line key: value (title, summary, speed, order, next) or a step at=TIME, got %q", line)
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "title":
			sc.Title = v
		case "summary":
			sc.Summary = v
		case "speed":
			if _, err := ParseSpeed(v); err != nil {
				fail(n, "%v", err)
			}
			sc.Speed = v
		case "order":
			o, err := strconv.Atoi(v)
			if err != nil || o < 1 {
				fail(n, "order %q: want a whole number from 1", v)
			}
			sc.Order = o
		case "next":
			sc.Next = v
		default:
			fail(n, "unknown header key %q (title, summary, speed, order, next)", k)
		}
	}
	endStep()
	for _, need := range []struct{ key, val string }{{"title", sc.Title}, {"summary", sc.Summary}, {"speed", sc.Speed}} {
		if need.val == "" {
			errs = append(errs, fmt.Errorf("%s: no %s: line", name, need.key))
		}
	}
	if len(sc.Steps) == 0 {
		errs = append(errs, fmt.Errorf("%s: no steps: give at least one at=TIME line with its text", name))
	}
	if len(errs) > 0 {
		return Scenario{}, errors.Join(errs...)
	}
	return sc, nil
}

// parseStepLine reads "at=TIME [action]".
func parseStepLine(line string) (ScenarioStep, error) {
	f := strings.Fields(line)
	if len(f) > 1 { // an action: the CLI's parser and its messages
		a, err := action.Parse(line)
		if err != nil {
			return ScenarioStep{}, err
		}
		text := strings.TrimSpace(strings.TrimPrefix(a.String(), "at="+strings.ReplaceAll(config.FormatDuration(a.At), " ", "")))
		return ScenarioStep{AtUs: vt.FromDuration(a.At).Micros(), Action: text, act: &a}, nil
	}
	at := strings.TrimPrefix(f[0], "at=")
	if strings.Trim(at, "0123456789") == "" && at != "0" {
		return ScenarioStep{}, fmt.Errorf("at=%s needs a unit, e.g. at=%ss", at, at)
	}
	d, err := config.ParseDuration(at)
	if err != nil {
		return ScenarioStep{}, fmt.Errorf("at=%s: %v", at, err)
	}
	if d < 0 {
		return ScenarioStep{}, fmt.Errorf("at=%s: a step's time cannot be negative", at)
	}
	return ScenarioStep{AtUs: vt.FromDuration(d).Micros()}, nil
}

func fmtAt(us int64) string { return config.FormatDuration(time.Duration(us) * time.Microsecond) }

// LoadScenarios reads every NAME/scenario.txt of fsys (the examples
// directory) with its NAME/command, in menu order; every problem found is
// reported, each naming its file.
func LoadScenarios(fsys fs.FS) ([]Scenario, error) {
	files, err := fs.Glob(fsys, "*/scenario.txt")
	if err != nil {
		return nil, err
	}
	var out []Scenario
	var errs []error
	for _, f := range files {
		name := "examples/" + f
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", name, err))
			continue
		}
		sc, err := ParseScenario(name, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := sc.readCommand(fsys); err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, sc)
	}
	for _, sc := range out {
		if sc.Next != "" && !slices.ContainsFunc(out, func(o Scenario) bool { return o.Name == sc.Next }) {
			errs = append(errs, fmt.Errorf("examples/%s/scenario.txt: next: %s is no scenario", sc.Name, sc.Next))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortStableFunc(out, func(a, b Scenario) int { return a.Order - b.Order })
	return out, nil
}

// readCommand reads the example's command: `flinksim run --config
// examples/NAME/config.yaml [--events FILE] [--actions FILE]`, the paths
// from the repository root. With --actions, the steps' actions must be
// exactly the file's.
func (sc *Scenario) readCommand(fsys fs.FS) error {
	where := "examples/" + sc.Name + "/command"
	data, err := fs.ReadFile(fsys, sc.Name+"/command")
	if err != nil {
		return fmt.Errorf("%s: %v", where, err)
	}
	sc.Command = strings.TrimSpace(string(data))
	f := strings.Fields(sc.Command)
	if len(f) < 2 || f[0] != "flinksim" || f[1] != "run" {
		return fmt.Errorf("%s: %q is not 'flinksim run ...'", where, sc.Command)
	}
	for i := 2; i < len(f); i += 2 {
		var dst *string
		switch f[i] {
		case "--config":
			dst = &sc.config
		case "--events":
			dst = &sc.events
		case "--actions":
			dst = &sc.actions
		default:
			return fmt.Errorf("%s: %s: a scenario takes the example's --config, --events and --actions only", where, f[i])
		}
		if i+1 >= len(f) || !strings.HasPrefix(f[i+1], "examples/") {
			return fmt.Errorf("%s: %s needs a path under examples/", where, f[i])
		}
		*dst = strings.TrimPrefix(f[i+1], "examples/")
	}
	if sc.config == "" {
		return fmt.Errorf("%s: no --config", where)
	}
	if sc.actions != "" {
		text, err := fs.ReadFile(fsys, sc.actions)
		if err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		want, err := action.ParseScript("examples/"+sc.actions, string(text))
		if err != nil {
			return err
		}
		var got []action.Action
		for _, st := range sc.Steps {
			if st.act != nil {
				got = append(got, *st.act)
			}
		}
		if !slices.EqualFunc(got, want, action.Action.Equal) {
			return fmt.Errorf("examples/%s/scenario.txt: its steps' actions %v are not the example's examples/%s %v", sc.Name, got, sc.actions, want)
		}
	}
	return nil
}

// Recipe is the scenario's session: the settings of its example's
// --config (read as `flinksim run --config` reads them), the records of its
// --events, and its steps' actions as live actions at their times.
func (sc Scenario) Recipe(fsys fs.FS) (Recipe, error) {
	cfg, err := loadExampleConfig(fsys, sc.config)
	if err != nil {
		return Recipe{}, err
	}
	r := Recipe{Settings: cfg}
	if sc.events != "" {
		data, err := fs.ReadFile(fsys, sc.events)
		if err != nil {
			return Recipe{}, fmt.Errorf("examples/%s: %v", sc.events, err)
		}
		opt := events.Options{KeyField: cfg.KeyField, TimeField: cfg.TimeField, Partitions: cfg.SourcePartitions}
		if cfg.Operator == config.OperatorWindow && cfg.Aggregate != config.AggregateCount {
			opt.NumberField = cfg.AggregateField
		}
		name := "examples/" + sc.events
		recs, err := events.Parse(data, name, opt)
		if err != nil {
			return Recipe{}, err
		}
		sum := sha256.Sum256(data)
		r.Options = cluster.Options{Events: recs, EventsFile: name, EventsSHA256: hex.EncodeToString(sum[:])}
	}
	for _, st := range sc.Steps {
		if st.act != nil {
			r.insert(*st.act)
		}
	}
	return r, nil
}

// loadExampleConfig reads an example's settings file as `flinksim run
// --config` does (config.LoadYAML, then Resolve and Validate). LoadYAML
// reads the embedded file's bytes (LoadYAMLData); errors name the
// example's file.
func loadExampleConfig(fsys fs.FS, p string) (config.Config, error) {
	name := "examples/" + p
	data, err := fs.ReadFile(fsys, p)
	if err != nil {
		return config.Config{}, fmt.Errorf("%s: %v", name, err)
	}
	cfg := config.Default()
	if _, err := cfg.LoadYAMLData(name, data); err != nil {
		return config.Config{}, err
	}
	if err := cfg.Resolve(); err != nil {
		return config.Config{}, fmt.Errorf("%s: %v", name, err)
	}
	if err := cfg.Validate(); err != nil {
		return config.Config{}, fmt.Errorf("%s: %v", name, err)
	}
	return cfg, nil
}

// scenarioFS is where the scenarios come from: the examples embedded in the
// binary.
var scenarioFS fs.FS = examples.FS

var scenarioList = sync.OnceValues(func() ([]Scenario, error) { return LoadScenarios(scenarioFS) })

// SetScenarioFS replaces where the scenarios come from, before the first
// session asks for them: the WebAssembly build's embedded examples with
// the events files read from the site.
func SetScenarioFS(fsys fs.FS) { scenarioFS = fsys }

// startScenario is the loop's "scenario" command; settings, when given (a
// link's ?set=), change the scenario's own, checked as the settings panel's
// are.
func (l *loop) startScenario(name string, settings [][2]string) reply {
	list, err := scenarioList()
	if err != nil {
		return reply{err: err, status: 500}
	}
	i := slices.IndexFunc(list, func(s Scenario) bool { return s.Name == name })
	if i < 0 {
		names := make([]string, len(list))
		for j, s := range list {
			names[j] = s.Name
		}
		return reply{err: fmt.Errorf("no scenario %q; there are %s", name, strings.Join(names, ", ")), status: 404}
	}
	sc := list[i]
	nr, err := sc.Recipe(scenarioFS)
	if err != nil {
		return reply{err: err, status: 500}
	}
	if len(settings) > 0 {
		if err := applySettings(&nr.Settings, settings); err != nil {
			return reply{err: err}
		}
		if _, err := jobgraph.Build(nr.Settings); err != nil {
			return reply{err: err}
		}
	}
	// how the process runs its simulation stays the process's
	nr.Options.AdaptProcs, nr.Options.AdaptGC = l.recipe.Options.AdaptProcs, l.recipe.Options.AdaptGC
	if err := l.rebuild(nr, 0); err != nil {
		return reply{err: err}
	}
	l.mode, l.replayTo, l.tlMax = "live", 0, 0
	l.scenario = sc.Name
	sp, _ := ParseSpeed(sc.Speed) // checked when the file was read
	l.speed = sp
	l.reanchor()
	return reply{body: map[string]any{"scenario": sc.Name, "generation": l.gen, "speed": sp.String()}}
}
