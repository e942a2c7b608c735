package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/keygroup"
	"github.com/flinksim/flinksim/sim/vt"
)

// Body limits of the POST endpoints.
const (
	maxActionBody   = 16 << 10
	maxSettingsBody = 256 << 10
)

// readBody reads a request body of at most limit bytes; a larger one is
// refused with 413.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) (string, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			http.Error(w, fmt.Sprintf("request body larger than %d bytes", limit), http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
		return "", false
	}
	return string(b), true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := jsonMarshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// writeReply answers a loop command: its body as JSON, or its error as
// text (the CLI's message) with status 400 unless the command said
// otherwise.
func writeReply(w http.ResponseWriter, r reply) {
	if r.err != nil {
		st := r.status
		if st == 0 {
			st = http.StatusBadRequest
		}
		http.Error(w, r.err.Error(), st)
		return
	}
	writeJSON(w, http.StatusOK, r.body)
}

// serveState is GET /sim/state: the whole view as JSON (State), keyed
// state included unless ?keyed=0.
func (s *Server) serveState(w http.ResponseWriter, r *http.Request) {
	snap := s.loop.latest.Load()
	st := *snap.state
	if r.URL.Query().Get("keyed") == "0" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(append(snap.frame, '\n'))
		return
	}
	writeJSON(w, http.StatusOK, &st)
}

// postAction is POST /sim/action: the body is one action in the --action
// syntax; without at= it happens now. Answers {"action": text as
// scheduled, "vt": µs, "dropped": actions of a jumped-back timeline the
// fork dropped}.
func (s *Server) postAction(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, maxActionBody)
	if !ok {
		return
	}
	text := strings.TrimSpace(body)
	if text == "" || strings.ContainsAny(text, "\n\r") {
		http.Error(w, "the body must be one action in the --action syntax, e.g. 'kill-taskmanager tm-1'", http.StatusBadRequest)
		return
	}
	writeReply(w, s.loop.do(&command{kind: "act", text: text}))
}

// postSpeed is POST /sim/speed: pause, step (one scheduler step), max, or a
// factor of real time (0.001 .. 1000; the page offers 0.001, 0.01, 0.1, 1,
// 10, 100).
func (s *Server) postSpeed(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, maxActionBody)
	if !ok {
		return
	}
	sp := strings.ToLower(strings.TrimSpace(body))
	if sp == "step" {
		writeReply(w, s.loop.do(&command{kind: "step"}))
		return
	}
	if _, err := ParseSpeed(sp); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	writeReply(w, s.loop.do(&command{kind: "speed", text: sp}))
}

// postSeek is POST /sim/seek: the body is a virtual time as a duration
// ("90s", "2 min", "1500 ms", "123456 µs"); an earlier time re-runs the
// recipe there.
func (s *Server) postSeek(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, maxActionBody)
	if !ok {
		return
	}
	t, err := parseVT(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	writeReply(w, s.loop.do(&command{kind: "seek", at: t}))
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

// postSettings is POST /sim/settings: the body is key=value lines (as
// --set takes them; # comments allowed) or a JSON object of key: value.
// The settings are checked with the CLI's messages; on success a new
// session starts, paused at 0 unless playing.
func (s *Server) postSettings(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, maxSettingsBody)
	if !ok {
		return
	}
	kvs, err := parseSettingsBody(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	writeReply(w, s.loop.do(&command{kind: "settings", settings: kvs}))
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

// serveLog is GET /sim/log: the log of the session so far, ending with a
// summary line at the current virtual time (INTERRUPTED while the run
// goes on), which `flinksim replay` reports identical. It is a re-run of
// the recipe on a cluster of its own: the live session goes on meanwhile.
func (s *Server) serveLog(w http.ResponseWriter, r *http.Request) {
	rep := s.loop.do(&command{kind: "download"})
	if rep.err != nil {
		writeReply(w, rep)
		return
	}
	b, err := rep.recipe.Download(rep.cut)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	name := "flinksim-" + strings.ReplaceAll(strings.TrimSuffix(eventlog.FormatVT(rep.cut.Micros()), "s"), ".", "_") + "s.jsonl"
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
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

// serveSettings is GET /sim/settings: every setting with its value now,
// its range, the simulator's and Flink's defaults, grouped as the seed
// lists them ("flinksim settings --json" with the values).
func (s *Server) serveSettings(w http.ResponseWriter, r *http.Request) {
	snap := s.loop.latest.Load()
	cfg := snap.settings
	var out []SettingInfo
	for _, reg := range config.Registry() {
		v, _ := cfg.Get(reg.Key)
		g := groupOf(reg.Key)
		out = append(out, SettingInfo{Key: reg.Key, Group: g.group, Label: g.label, Type: reg.Type, Value: v,
			SimDefault: reg.SimDefault, FlinkDefault: reg.FlinkDefault, Range: reg.Range, Doc: reg.Doc, Seed: g.seed, Order: g.order})
	}
	writeJSON(w, http.StatusOK, map[string]any{"groups": settingGroups, "settings": out})
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

func (s *Server) serveExplain(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		http.Error(w, "explain: give ?key=K", http.StatusBadRequest)
		return
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
		http.Error(w, "explain: the job is not running", http.StatusConflict)
		return
	}
	m := snap.state.Settings.MaxParallelism
	p := keyed.Parallelism
	if err := keygroup.CheckParallelismPreconditions(p, m); err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
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
	writeJSON(w, http.StatusOK, out)
}
