// Package ui is the server behind `flinksim ui`: one live session of the
// simulated cluster, steered from a browser, and the page that shows it
// (the seed's "Flink, simulated"), embedded in the binary.
//
// One goroutine (the session loop, loop.go) owns the cluster.Session: it
// paces the run against the wall clock, takes actions, jumps through time by
// re-running the recipe, and publishes a snapshot after every slice of work.
// HTTP handlers never touch the session: reads come from the last snapshot
// (an atomic pointer), changes go to the loop over a channel. The live log
// goes into a bounded ring that stream clients read at their own pace; the
// log a user downloads is a re-run of the recipe, so the page never holds
// the whole log. Watching never changes the run: the log is a function of
// the settings, the seed and the actions with their virtual times.
//
// Endpoints (README.md, "The live diagram"): the page at /, Flink's REST
// API shapes (flinkrest.go), and the simulator's own under /sim/ (sim.go).
package session

import (
	"embed"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/flinksim/flinksim/sim/vt"
)

//go:embed assets
var assets embed.FS

// MemoryLimit is the soft memory limit of a process that serves a session
// (bytes; `flinksim ui` sets it unless GOMEMLIMIT is set): the collector
// keeps the Go heap and runtime under it while what is live allows, and
// past it spends at most half the CPU's time collecting
// (runtime/debug.SetMemoryLimit). What grows in a long session is the
// simulated sink topic and the result identities the duplicates count
// needs (README, "A long session at max speed").
const MemoryLimit = 96 << 20

// Config of a Server.
type Config struct {
	// Recipe is the first session's (settings, events, actions).
	Recipe Recipe
	// ReplayEnd, when set, opens the session as the replay of a recorded
	// log ending at that virtual time (the slider spans it).
	ReplayEnd vt.Time
	// Loopback: the server listens on a loopback address, so requests
	// naming another host (DNS rebinding) are refused.
	Loopback bool
	// LogLines is how many recent log lines the page can show (20,000 when 0).
	LogLines int
	// MaxClients bounds the stream clients at once (32 when 0).
	MaxClients int
	// SessionLog, when set, is asked for a writer that gets the whole log
	// of each new session (gen counts sessions from 1); for tests.
	SessionLog func(gen int) io.Writer
}

// Server serves one live session.
type Server struct {
	cfg     Config
	loop    *loop
	hub     *hub
	mux     *http.ServeMux
	closing chan struct{}
	// simAllow is the methods each path of the simulator's API takes
	// ("GET", "GET, POST"), set once by routes.
	simAllow map[string]string
}

// simMethods is the methods path of the simulator's API takes, "" for a
// path that is not one.
func (s *Server) simMethods(path string) string { return s.simAllow[path] }

// New builds the first session paused at virtual time 0 and starts its
// loop. The error is the CLI's message for settings the job refuses.
func New(cfg Config) (*Server, error) {
	if cfg.LogLines <= 0 {
		cfg.LogLines = 20_000
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = 32
	}
	s := &Server{cfg: cfg, hub: newHub(cfg.MaxClients), closing: make(chan struct{})}
	l, err := newLoop(cfg, cfg.Recipe.clone(), s.hub)
	if err != nil {
		return nil, err
	}
	s.loop = l
	go l.run()
	s.routes()
	return s, nil
}

// Close stops the session loop and ends every stream.
func (s *Server) Close() {
	select {
	case <-s.closing:
	default:
		close(s.closing)
	}
	s.loop.stop()
}

// LogRecipe is what the log of the session so far is a re-run of: the
// recipe and the virtual time to cut it at (0: its end), for
// Recipe.Download. It answers between two slices of the session's work,
// also during a jump.
func (s *Server) LogRecipe() (Recipe, vt.Time, error) {
	r := s.loop.do(&command{kind: "download"})
	return r.recipe, r.cut, r.err
}

// Handler is the server's HTTP handler, with the security rules applied.
func (s *Server) Handler() http.Handler { return s.guard(s.mux) }

func (s *Server) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	m.HandleFunc("GET /{$}", s.serveIndex)
	m.Handle("GET /assets/", http.StripPrefix("/assets/", noCache(files)))

	// the simulator's own API
	s.simAllow = map[string]string{}
	for _, rt := range []struct {
		method, path string
		h            http.HandlerFunc
	}{
		{"GET", "/sim/stream", s.serveStream}, {"GET", "/sim/state", s.serveState}, {"GET", "/sim/log", s.serveLog},
		{"GET", "/sim/settings", s.serveSettings}, {"GET", "/sim/explain", s.serveExplain},
		{"POST", "/sim/action", s.postAction}, {"POST", "/sim/speed", s.postSpeed}, {"POST", "/sim/seek", s.postSeek},
		{"POST", "/sim/settings", s.postSettings},
		{"GET", "/sim/scenarios", s.serveScenarios}, {"POST", "/sim/scenario", s.postScenario},
	} {
		m.HandleFunc(rt.method+" "+rt.path, rt.h)
		if a := s.simAllow[rt.path]; a != "" {
			s.simAllow[rt.path] = a + ", " + rt.method
		} else {
			s.simAllow[rt.path] = rt.method
		}
	}
	// every other path, and another method on a path: Flink's 404 (or, for
	// the simulator's API, a 405 naming the methods)
	m.HandleFunc("/", s.flinkUnknownPath)

	// Flink's REST API (rest_v1_dispatcher), also under /v1
	for _, p := range []string{"", "/v1"} {
		m.HandleFunc("GET "+p+"/overview", s.flinkOverview)
		m.HandleFunc("GET "+p+"/config", s.flinkConfig)
		m.HandleFunc("GET "+p+"/jobs", s.flinkJobs)
		m.HandleFunc("GET "+p+"/jobs/overview", s.flinkJobsOverview)
		m.HandleFunc("GET "+p+"/jobs/{jobid}", s.flinkJob)
		m.HandleFunc("GET "+p+"/jobs/{jobid}/checkpoints", s.flinkCheckpoints)
		m.HandleFunc("GET "+p+"/jobs/{jobid}/checkpoints/details/{checkpointid}", s.flinkCheckpointDetails)
		m.HandleFunc("GET "+p+"/jobs/{jobid}/vertices/{vertexid}/backpressure", s.flinkBackPressure)
		m.HandleFunc("GET "+p+"/jobs/{jobid}/vertices/{vertexid}/watermarks", s.flinkWatermarks)
		m.HandleFunc("GET "+p+"/jobs/{jobid}/vertices/{vertexid}/subtasks/metrics", s.flinkSubtaskMetrics)
		m.HandleFunc("GET "+p+"/taskmanagers", s.flinkTaskManagers)
	}
	s.mux = m
}

func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}

// serveIndex is the page; asked for JSON (Accept: application/json) it is
// GET /sim/state, as Caddy's file browser answers JSON on the same URL.
func (s *Server) serveIndex(w http.ResponseWriter, r *http.Request) {
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		s.serveState(w, r)
		return
	}
	b, err := assets.ReadFile("assets/index.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}

// guard applies the security rules to every request:
//   - on a loopback listener, the Host header must name a loopback host
//     (localhost, 127.0.0.1, [::1]): a page elsewhere that rebinds its own
//     name to 127.0.0.1 gets 403;
//   - a request that changes something (anything but GET and HEAD) must
//     come from this page: an Origin other than this host, or Sec-Fetch-Site
//     other than same-origin or none (curl, a typed URL), gets 403, so a web
//     page elsewhere cannot kill a TaskManager.
//
// Bodies are size-limited by each handler (readBody).
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Loopback && !loopbackHost(r.Host) {
			http.Error(w, "forbidden: this flinksim ui serves "+"localhost only, not host "+r.Host, http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if why := crossOrigin(r); why != "" {
				http.Error(w, "forbidden: "+why, http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header names this machine's
// loopback interface.
func loopbackHost(hostport string) bool {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// crossOrigin says why a state-changing request does not come from this
// page ("" when it does).
func crossOrigin(r *http.Request) string {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		return "a " + site + " request may not change the simulation"
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
			return "a request from origin " + o + " may not change the simulation"
		}
	}
	return ""
}
