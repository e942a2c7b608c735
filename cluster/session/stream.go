//go:build !js

package session

import (
	"net/http"
	"time"
)

// serveStream is GET /sim/stream: server-sent events, one "frame" event
// per published frame the client is ready for (Frames.Next):
//
//	id: GEN.SEQ
//	event: frame
//	data: {"gen":GEN,"reset":bool,"skipped":N,"events":[log lines...],"traffic":[batches...],"traffic_skipped":N,"state":{...}}
//
// Last-Event-ID or ?since=GEN.SEQ resumes.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	since := r.Header.Get("Last-Event-ID")
	if q := r.URL.Query().Get("since"); q != "" {
		since = q
	}
	st, err := s.Subscribe(since)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer st.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	ping := time.NewTicker(keepAlive)
	defer ping.Stop()
	var frame, out []byte
	send := true
	for {
		if send {
			var id string
			frame, id = st.Next(frame[:0])
			out = append(append(append(append(out[:0], "id: "...), id...), "\nevent: frame\ndata: "...), frame...)
			out = append(out, "\n\n"...)
			_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
			if _, err := w.Write(out); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
			send = false
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		case <-st.Ready:
			send = true
		case <-ping.C:
			_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
			if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	}
}
