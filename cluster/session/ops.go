package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/keygroup"
	"github.com/flinksim/flinksim/sim/vt"
)

// The operations of a session (Core.Call), one for each request of the
// page's session interface (assets/session.js): the server maps each to
// a path under /sim/, the WebAssembly build to a message from the page.
const (
	OpAct         = "act"          // one action in the --action syntax; without at= it happens now
	OpSpeed       = "speed"        // pause, step, max, or a factor of real time
	OpSeek        = "seek"         // a virtual time with a unit
	OpSettings    = "settings"     // key=value lines or a JSON object: a new session
	OpScenario    = "scenario"     // a guided scenario's name: its session
	OpState       = "state"        // the whole view (arg "0": without keyed state)
	OpGetSettings = "get-settings" // every setting with its metadata
	OpExplain     = "explain"      // where the job keeps a key
	OpScenarios   = "scenarios"    // the guided scenarios
)

// Answer is an operation's outcome: a JSON body with status 200, or an
// error (the CLI's message) with the HTTP status the server answers it with.
type Answer struct {
	Status int
	Body   []byte
	Err    error
}

func answerJSON(v any) Answer {
	b, err := jsonMarshal(v)
	if err != nil {
		return Answer{Status: 500, Err: err}
	}
	return Answer{Status: 200, Body: b}
}

func answerErr(status int, err error) Answer { return Answer{Status: status, Err: err} }

// answerReply is a loop command's reply as an Answer (400 for an error
// unless the command said otherwise).
func answerReply(r reply) Answer {
	if r.err != nil {
		st := r.status
		if st == 0 {
			st = 400
		}
		return answerErr(st, r.err)
	}
	return answerJSON(r.body)
}

// Call carries out operation op with its argument (a request body or a
// query value) and answers as the server does.
func (s *Core) Call(op, arg string) Answer {
	switch op {
	case OpAct:
		// without at= it happens now. Answers {"action": text as
		// scheduled, "vt": µs, "dropped": actions of a jumped-back
		// timeline the fork dropped}.
		text := strings.TrimSpace(arg)
		if text == "" || strings.ContainsAny(text, "\n\r") {
			return answerErr(400, errors.New("the body must be one action in the --action syntax, e.g. 'kill-taskmanager tm-1'"))
		}
		return answerReply(s.loop.do(&command{kind: "act", text: text}))
	case OpSpeed:
		// pause, step (one scheduler step), max, or a factor of real time
		// (0.001 .. 1000; the page offers 0.001, 0.01, 0.1, 1, 10, 100)
		sp := strings.ToLower(strings.TrimSpace(arg))
		if sp == "step" {
			return answerReply(s.loop.do(&command{kind: "step"}))
		}
		if _, err := ParseSpeed(sp); err != nil {
			return answerErr(400, err)
		}
		return answerReply(s.loop.do(&command{kind: "speed", text: sp}))
	case OpSeek:
		// a virtual time as a duration ("90s", "2 min", "1500 ms",
		// "123456 µs"); an earlier time re-runs the recipe there
		t, err := parseVT(arg)
		if err != nil {
			return answerErr(400, err)
		}
		return answerReply(s.loop.do(&command{kind: "seek", at: t}))
	case OpSettings:
		// key=value lines (as --set takes them; # comments allowed) or a
		// JSON object of key: value, checked with the CLI's messages; on
		// success a new session starts, paused at 0
		kvs, err := parseSettingsBody(arg)
		if err != nil {
			return answerErr(400, err)
		}
		return answerReply(s.loop.do(&command{kind: "settings", settings: kvs}))
	case OpScenario:
		// a scenario's session replaces the current one (a new log) and
		// runs at its speed. Answers {"scenario", "generation", "speed"}.
		return answerReply(s.loop.do(&command{kind: "scenario", text: strings.TrimSpace(arg)}))
	case OpState:
		snap := s.loop.latest.Load()
		if arg == "0" {
			return Answer{Status: 200, Body: snap.frame}
		}
		st := *snap.state
		return answerJSON(&st)
	case OpGetSettings:
		return answerJSON(s.settingsInfo())
	case OpExplain:
		return s.explain(arg)
	case OpScenarios:
		// {"scenarios": [Scenario...]} in menu order
		list, err := scenarioList()
		if err != nil {
			return answerErr(500, err)
		}
		return answerJSON(map[string]any{"scenarios": list})
	}
	return answerErr(404, fmt.Errorf("no operation %q", op))
}

// LogFile is the log of the session so far, ending with a summary line at
// the current virtual time (INTERRUPTED while the run goes on), which
// `flinksim replay` reports identical, and the name to save it under. It is
// a re-run of the recipe on a cluster of its own, in the caller's
// goroutine: the live session goes on meanwhile.
func (s *Core) LogFile() (string, []byte, Answer) {
	rep := s.loop.do(&command{kind: "download"})
	if rep.err != nil {
		return "", nil, answerReply(rep)
	}
	b, err := rep.recipe.Download(rep.cut)
	if err != nil {
		return "", nil, answerErr(500, err)
	}
	name := "flinksim-" + strings.ReplaceAll(strings.TrimSuffix(eventlog.FormatVT(rep.cut.Micros()), "s"), ".", "_") + "s.jsonl"
	return name, b, Answer{Status: 200}
}

// settingsInfo is every setting with its value now, its range, the
// simulator's and Flink's defaults, grouped as the seed lists them
// ("flinksim settings --json" with the values).
func (s *Core) settingsInfo() any {
	snap := s.loop.latest.Load()
	cfg := snap.settings
	var out []SettingInfo
	for _, reg := range config.Registry() {
		v, _ := cfg.Get(reg.Key)
		g := groupOf(reg.Key)
		out = append(out, SettingInfo{Key: reg.Key, Group: g.group, Label: g.label, Type: reg.Type, Value: v,
			SimDefault: reg.SimDefault, FlinkDefault: reg.FlinkDefault, Range: reg.Range, Doc: reg.Doc, Seed: g.seed, Order: g.order})
	}
	return map[string]any{"groups": settingGroups, "settings": out}
}

// parseVT reads a virtual time given as a Flink duration with a unit.
func parseVT(text string) (vt.Time, error) {
	text = strings.TrimSpace(text)
	if text == "" || strings.Trim(text, "0123456789") == "" && text != "0" {
		return 0, fmt.Errorf("virtual time %q: give a duration with a unit, e.g. 90s, 2 min or 123456 µs", text)
	}
	unit := strings.TrimLeft(text, "0123456789 ")
	if unit == "us" { // µs is hard to type
		text = strings.TrimSuffix(text, "us") + "µs"
	}
	d, err := config.ParseDuration(text)
	if err != nil {
		return 0, fmt.Errorf("virtual time %q: %v", text, err)
	}
	if d < 0 {
		return 0, fmt.Errorf("virtual time %q must not be negative", text)
	}
	return vt.FromDuration(d), nil
}

func parseSettingsBody(body string) ([][2]string, error) {
	body = strings.TrimSpace(body)
	var kvs [][2]string
	if strings.HasPrefix(body, "{") {
		m, err := settingsObject(body)
		if err != nil {
			return nil, err
		}
		for _, s := range config.Registry() { // registry order, not map order
			if v, ok := m[s.Key]; ok {
				kvs = append(kvs, [2]string{s.Key, v})
				delete(m, s.Key)
			}
		}
		if len(m) > 0 { // the first unknown key in name order: the message is the same each time
			left := make([]string, 0, len(m))
			for k := range m {
				left = append(left, k)
			}
			sort.Strings(left)
			return nil, (&config.Config{}).Set(left[0], "")
		}
		return kvs, nil
	}
	for i, line := range strings.Split(body, "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("settings line %d %q: expected key=value", i+1, line)
		}
		kvs = append(kvs, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	if len(kvs) == 0 {
		return nil, errors.New("settings: no key=value given")
	}
	return kvs, nil
}

// settingsObject reads a JSON object of settings: every value a string, a
// number (as written) or a boolean. A key given twice is refused, naming
// it, rather than one of the values winning silently (as a config file
// with both forms of one key is refused); so is a nested value, a null,
// and anything after the object.
func settingsObject(body string) (map[string]string, error) {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("settings: the body must be one JSON object of key: value")
	}
	m := map[string]string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("settings: %v", err)
		}
		key, _ := tok.(string)
		if tok, err = dec.Token(); err != nil {
			return nil, fmt.Errorf("settings: %s: %v", key, err)
		}
		var val string
		switch v := tok.(type) {
		case string:
			val = v
		case json.Number:
			val = v.String()
		case bool:
			val = strconv.FormatBool(v)
		default:
			return nil, fmt.Errorf("settings: %s: give a string, number or boolean, not %s", key, jsonKind(v))
		}
		if _, dup := m[key]; dup {
			return nil, fmt.Errorf("settings: key %q is given twice (%q and %q): give it once", key, m[key], val)
		}
		m[key] = val
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("settings: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("settings: text after the JSON object")
	}
	return m, nil
}

// jsonKind names a JSON token that is not a scalar value.
func jsonKind(tok json.Token) string {
	switch tok {
	case json.Delim('{'):
		return "an object"
	case json.Delim('['):
		return "an array"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}

// SettingInfo is one setting as the settings panel shows it.
type SettingInfo struct {
	Key          string `json:"key"`
	Group        string `json:"group"`
	Label        string `json:"label"`
	Type         string `json:"type"`
	Value        string `json:"value"`
	SimDefault   string `json:"sim_default"`
	FlinkDefault string `json:"flink_default"` // "" when Flink has no such key or default
	Range        string `json:"range"`
	Doc          string `json:"doc"`
	Seed         bool   `json:"seed"`  // one of the seed's settings (shown first)
	Order        int    `json:"order"` // the seed's order
}

// ExplainKey is GET /sim/explain?key=K: where the running job keeps key K
// (KeyGroupRangeAssignment), as `flinksim explain key` prints it, with the
// subtask that owns it now and its state there.
type ExplainKey struct {
	Key            string `json:"key"`
	HashCode       int32  `json:"hash_code"`
	MurmurHash     int32  `json:"murmur_hash"`
	KeyGroup       int    `json:"key_group"`
	MaxParallelism int    `json:"max_parallelism"`
	Parallelism    int    `json:"parallelism"`
	Subtask        int    `json:"subtask"`
	KeyGroupRange  [2]int `json:"key_group_range"`
	Owner          string `json:"owner,omitempty"` // the execution that holds it now
	State          any    `json:"state,omitempty"`
}

// explain is OpExplain: where the running job keeps key (ExplainKey).
func (s *Core) explain(key string) Answer {
	if key == "" {
		return answerErr(400, errors.New("explain: give ?key=K"))
	}
	snap := s.loop.latest.Load()
	var keyed *Vertex
	for i := range snap.state.Vertices {
		if snap.state.Vertices[i].ID != "source" {
			keyed = &snap.state.Vertices[i]
			break
		}
	}
	if keyed == nil {
		return answerErr(409, errors.New("explain: the job is not running"))
	}
	m := snap.state.Settings.MaxParallelism
	p := keyed.Parallelism
	if err := keygroup.CheckParallelismPreconditions(p, m); err != nil {
		return answerErr(409, err)
	}
	hash := keygroup.StringHashCode(key)
	kg := keygroup.AssignToKeyGroup(hash, m)
	idx := keygroup.OperatorIndexForKeyGroup(m, p, kg)
	rng, _ := keygroup.RangeForOperatorIndex(m, p, idx)
	out := ExplainKey{Key: key, HashCode: hash, MurmurHash: keygroup.MurmurHash(hash), KeyGroup: kg, MaxParallelism: m,
		Parallelism: p, Subtask: idx, KeyGroupRange: [2]int{rng.Start, rng.End}}
	for _, st := range keyed.Subtasks {
		if st.Index != idx {
			continue
		}
		out.Owner = st.Name
		for _, k := range st.KeyedState {
			if k.Key == key {
				kk := k
				out.State = kk
			}
		}
	}
	return answerJSON(out)
}
