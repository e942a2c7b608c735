//go:build !js

package session

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
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

// writeAnswer writes a Core operation's answer: its JSON body, or its
// error as text with its status.
func writeAnswer(w http.ResponseWriter, a Answer) {
	if a.Err != nil {
		http.Error(w, a.Err.Error(), a.Status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(a.Status)
	_, _ = w.Write(append(a.Body, '\n'))
}

// serveState is GET /sim/state: the whole view as JSON (State), keyed
// state included unless ?keyed=0.
func (s *Server) serveState(w http.ResponseWriter, r *http.Request) {
	writeAnswer(w, s.Call(OpState, r.URL.Query().Get("keyed")))
}

// postAction is POST /sim/action: the body is one action in the --action
// syntax (Core.Call, OpAct).
func (s *Server) postAction(w http.ResponseWriter, r *http.Request) {
	s.post(w, r, OpAct, maxActionBody)
}

// postSpeed is POST /sim/speed: pause, step, max, or a factor of real time
// (OpSpeed).
func (s *Server) postSpeed(w http.ResponseWriter, r *http.Request) {
	s.post(w, r, OpSpeed, maxActionBody)
}

// postSeek is POST /sim/seek: the body is a virtual time with a unit
// (OpSeek).
func (s *Server) postSeek(w http.ResponseWriter, r *http.Request) {
	s.post(w, r, OpSeek, maxActionBody)
}

// postSettings is POST /sim/settings: key=value lines or a JSON object
// (OpSettings).
func (s *Server) postSettings(w http.ResponseWriter, r *http.Request) {
	s.post(w, r, OpSettings, maxSettingsBody)
}

// postScenario is POST /sim/scenario: the body is a scenario's name
// (OpScenario).
func (s *Server) postScenario(w http.ResponseWriter, r *http.Request) {
	s.post(w, r, OpScenario, maxActionBody)
}

// serveScenarios is GET /sim/scenarios (OpScenarios).
func (s *Server) serveScenarios(w http.ResponseWriter, r *http.Request) {
	writeAnswer(w, s.Call(OpScenarios, ""))
}

// serveSettings is GET /sim/settings (OpGetSettings).
func (s *Server) serveSettings(w http.ResponseWriter, r *http.Request) {
	writeAnswer(w, s.Call(OpGetSettings, ""))
}

// serveExplain is GET /sim/explain?key=K (OpExplain).
func (s *Server) serveExplain(w http.ResponseWriter, r *http.Request) {
	writeAnswer(w, s.Call(OpExplain, r.URL.Query().Get("key")))
}

// post reads a POST body within limit and hands it to op.
func (s *Server) post(w http.ResponseWriter, r *http.Request, op string, limit int64) {
	body, ok := readBody(w, r, limit)
	if !ok {
		return
	}
	writeAnswer(w, s.Call(op, body))
}

// serveLog is GET /sim/log: the log of the session so far (Core.LogFile),
// as an attachment.
func (s *Server) serveLog(w http.ResponseWriter, r *http.Request) {
	name, b, a := s.LogFile()
	if a.Err != nil {
		writeAnswer(w, a)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}
