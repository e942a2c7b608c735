//go:build !js

package session

import (
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Server serves one live session over HTTP: the page, the simulator's
// API under /sim/ and Flink's REST shapes. The session itself is a Core
// (core.go), which the WebAssembly build drives without a server.
type Server struct {
	*Core
	mux *http.ServeMux
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
	c, err := NewCore(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{Core: c}
	s.routes()
	return s, nil
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
	b, err := assets.ReadFile("assets/index.html") // the page reads its kind of session from its meta tag: http
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
