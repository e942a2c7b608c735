package inputs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flinksim/flinksim/sim/action"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/events"
	"github.com/flinksim/flinksim/sim/input"
)

// A recorded run as replay and ui --replay read it back: the log's header,
// its events file, and the actions given live.

// Header is the first line of a JSON event log, as far as a replay needs
// it (eventlog.Writer.Header writes it).
type Header struct {
	Event        string            `json:"event"`
	Format       string            `json:"format"`
	Build        *string           `json:"build"` // nil: a log written before builds were named
	Seed         uint64            `json:"seed"`
	Settings     map[string]string `json:"settings"`
	EventsFile   string            `json:"events_file"`
	EventsSHA256 string            `json:"events_sha256"`
	Bounded      bool              `json:"bounded"`
	Actions      []string          `json:"actions"`
}

// ReadLog reads the JSON event log at path within input.LogLimits, cleaned
// (input.Clean), and its header; a file whose first line is not a
// flinksim JSON header, or of another log format, is refused naming the
// file's line 1.
func ReadLog(path string) ([]byte, Header, error) {
	var h Header
	data, err := input.ReadFile(path, input.LogLimits)
	if err != nil {
		return nil, h, err
	}
	data = input.Clean(data)
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if err := json.Unmarshal(first, &h); err != nil || h.Event != string(eventlog.KindHeader) {
		return nil, h, fmt.Errorf("%s:1: not a flinksim JSON event log header (console logs cannot be replayed)", path)
	}
	if h.Format != eventlog.FormatVersion {
		return nil, h, fmt.Errorf("%s:1: log format %q, this flinksim reads %q", path, h.Format, eventlog.FormatVersion)
	}
	return data, h, nil
}

// RecordedEvents reads the events file of the header h of the log at path:
// at override when given, else at the recorded path, else beside the log
// (a relative path is relative to where run was started). Whatever the
// path, the file must have the recorded sha256.
func RecordedEvents(path, override string, h Header, cfg config.Config) ([]events.Record, string, error) {
	where := path + ":1: events_file "
	file := h.EventsFile
	if override != "" {
		where, file = "--events ", override
	} else if _, err := os.Stat(file); err != nil {
		beside := filepath.Join(filepath.Dir(path), file)
		switch _, berr := os.Stat(beside); {
		case filepath.IsAbs(file):
			return nil, "", fmt.Errorf("%s%s: %s; give --events FILE if it is elsewhere now (checked against the sha256 the header records)", where, file, pathErr(err))
		case berr == nil:
			file = beside
		default:
			return nil, "", fmt.Errorf("%s%s: not found: the recorded path is relative to the directory where 'flinksim run' was started, and the file is not beside %s either; replay from that directory, or give --events FILE (checked against the sha256 the header records)",
				where, h.EventsFile, path)
		}
	}
	recs, sum, err := ReadEvents(where, file, cfg)
	if err != nil {
		return nil, "", err
	}
	if sum != h.EventsSHA256 {
		if override != "" || file != h.EventsFile {
			return nil, "", fmt.Errorf("%s%s: not the events file of the run: its sha256 is %s, the header of %s records %s for %s", where, file, sum, path, h.EventsSHA256, h.EventsFile)
		}
		return nil, "", fmt.Errorf("%s: the events file %s changed since the run (sha256 %s, recorded %s)", path, h.EventsFile, sum, h.EventsSHA256)
	}
	return recs, sum, nil
}

// pathErr is an os error without the path it repeats.
func pathErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// LiveActions are the actions a log's action events record: given while
// the run was under way (a UI session), not in the header. Replay injects
// them again at their times.
func LiveActions(path string, data []byte) ([]action.Action, error) {
	var out []action.Action
	needle := []byte(`"event":"` + eventlog.KindAction + `"`)
	for i, line := range bytes.Split(data, []byte("\n")) {
		if !bytes.Contains(line, needle) {
			continue
		}
		var ev struct {
			Event  string `json:"event"`
			Action string `json:"action"`
		}
		if err := json.Unmarshal(line, &ev); err != nil || ev.Event != string(eventlog.KindAction) {
			continue
		}
		a, err := action.Parse(ev.Action)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
		out = append(out, a)
	}
	return out, nil
}
