// Package session is one live session of the simulated cluster, steered
// from a browser, and the page that shows it (the seed's "Flink,
// simulated"), embedded in the binary. Two drivers share it: the server
// behind `flinksim ui` (server.go, HTTP and server-sent events) and the
// WebAssembly build of `flinksim site` (cluster/session/wasm), which calls
// the same Core from a Web Worker in the page.
//
// One goroutine (the session loop, loop.go) owns the cluster.Session: it
// paces the run against the wall clock, takes actions, jumps through time by
// re-running the recipe, and publishes a snapshot after every slice of work.
// Callers never touch the session: reads come from the last snapshot
// (an atomic pointer), changes go to the loop over a channel. The live log
// goes into a bounded ring that stream clients read at their own pace; the
// log a user downloads is a re-run of the recipe, so the page never holds
// the whole log. Watching never changes the run: the log is a function of
// the settings, the seed and the actions with their virtual times.
//
// Endpoints of the server (README.md, "The live diagram"): the page at /,
// Flink's REST API shapes (flinkrest.go), and the simulator's own under
// /sim/ (sim.go), each a thin wrapper of a Core operation (ops.go).
package session

import (
	"embed"
	"io"

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

// Config of a session (Core, and the Server that serves one).
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

// Core is one live session without a server: its loop, and the hub that
// hands its frames to the streams (Subscribe). `flinksim ui` serves it over
// HTTP (Server); the WebAssembly build calls it from the page's worker.
type Core struct {
	cfg     Config
	loop    *loop
	hub     *hub
	closing chan struct{}
}

// NewCore builds the first session paused at virtual time 0 and starts its
// loop. The error is the CLI's message for settings the job refuses.
func NewCore(cfg Config) (*Core, error) {
	if cfg.LogLines <= 0 {
		cfg.LogLines = 20_000
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = 32
	}
	c := &Core{cfg: cfg, hub: newHub(cfg.MaxClients), closing: make(chan struct{})}
	l, err := newLoop(cfg, cfg.Recipe.clone(), c.hub)
	if err != nil {
		return nil, err
	}
	c.loop = l
	go l.run()
	return c, nil
}

// Close stops the session loop and ends every stream.
func (s *Core) Close() {
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
func (s *Core) LogRecipe() (Recipe, vt.Time, error) {
	r := s.loop.do(&command{kind: "download"})
	return r.recipe, r.cut, r.err
}
