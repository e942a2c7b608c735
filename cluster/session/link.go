package session

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/flinksim/flinksim/sim/config"
)

// LinkDuration is sim.duration of a session that nobody gave a length:
// it runs until the reader stops it, as `flinksim ui`'s does.
const LinkDuration = "365 d"

// DefaultRecipe is the first session of a page that runs the simulator
// itself (`flinksim site`): `flinksim ui`'s without flags, the default
// job running until stopped.
func DefaultRecipe() (Recipe, error) {
	cfg := config.Default()
	if err := cfg.Set("sim.duration", LinkDuration); err != nil {
		return Recipe{}, err
	}
	if err := cfg.Resolve(); err != nil {
		return Recipe{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Recipe{}, err
	}
	return Recipe{Settings: cfg}, nil
}

// Link is what a page's address asks of its session: settings (?set=KEY=VALUE,
// repeatable, and ?seed=N for sim.seed) and a guided scenario
// (?scenario=NAME), so that a teacher can link a prepared run:
// ?set=job.window.size%3D15s&seed=7&scenario=backpressure.
type Link struct {
	Settings [][2]string // in the order given, sim.seed last
	Scenario string
	// Errors are the parts of the address that were refused, each naming
	// the parameter, the setting and what it allows; the rest applies.
	Errors []string
}

// ParseLink reads a page's query string (with or without its "?"). Each
// setting is checked on its own against the default settings (the CLI's
// message: the key, the value and the allowed range); a refused one is
// left out and reported.
func ParseLink(query string) Link {
	var l Link
	q, err := url.ParseQuery(strings.TrimPrefix(query, "?"))
	if err != nil {
		l.Errors = append(l.Errors, fmt.Sprintf("the address's query %q: %v", query, err))
		return l
	}
	check := func(param, k, v string) {
		probe := config.Default()
		if err := probe.Set(k, v); err != nil {
			l.Errors = append(l.Errors, fmt.Sprintf("?%s=%s=%s: %v", param, k, v, err))
			return
		}
		l.Settings = append(l.Settings, [2]string{k, v})
	}
	for _, kv := range q["set"] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			l.Errors = append(l.Errors, fmt.Sprintf("?set=%s: expected KEY=VALUE (the = written %%3D), e.g. ?set=job.window.size%%3D15s", url.QueryEscape(kv)))
			continue
		}
		check("set", strings.TrimSpace(k), strings.TrimSpace(v))
	}
	for _, s := range q["seed"] {
		probe := config.Default()
		if err := probe.Set("sim.seed", strings.TrimSpace(s)); err != nil {
			l.Errors = append(l.Errors, fmt.Sprintf("?seed=%s: %v", s, err))
			continue
		}
		l.Settings = append(l.Settings, [2]string{"sim.seed", strings.TrimSpace(s)})
	}
	if sc := q["scenario"]; len(sc) > 0 {
		l.Scenario = strings.TrimSpace(sc[len(sc)-1])
	}
	for _, k := range slices.Sorted(maps.Keys(q)) { // the errors in one order every load
		switch k {
		case "set", "seed", "scenario":
		default:
			l.Errors = append(l.Errors, fmt.Sprintf("?%s: not a parameter of this page (it takes set, seed and scenario)", k))
		}
	}
	return l
}

// OpenLink starts the session a link asks for (ParseLink): the scenario
// with the link's settings on top, or the current session's settings
// with them. The answer's body is {"errors": [...], "scenario": NAME}; a
// scenario or a combination of settings the job refuses is one of the
// errors, and the session is then the one without them.
func (s *Core) OpenLink(query string) Answer {
	l := ParseLink(query)
	errs := l.Errors
	if l.Scenario != "" {
		r := s.loop.do(&command{kind: "scenario", text: l.Scenario, settings: l.Settings})
		if r.err != nil && len(l.Settings) > 0 {
			errs = append(errs, fmt.Sprintf("the link's settings on scenario %s: %v", l.Scenario, r.err))
			r = s.loop.do(&command{kind: "scenario", text: l.Scenario})
		}
		if r.err != nil {
			errs = append(errs, fmt.Sprintf("?scenario=%s: %v", url.QueryEscape(l.Scenario), r.err))
			l.Scenario = ""
		}
	} else if len(l.Settings) > 0 {
		if r := s.loop.do(&command{kind: "settings", settings: l.Settings}); r.err != nil {
			errs = append(errs, fmt.Sprintf("the link's settings together: %v", r.err))
		}
	}
	if errs == nil {
		errs = []string{}
	}
	return answerJSON(map[string]any{"errors": errs, "scenario": l.Scenario})
}
