package console

import (
	"fmt"
	"io"
	"strconv"

	"github.com/rs/zerolog"

	"github.com/flinksim/flinksim/sim/eventlog"
)

// ConsoleWriter renders JSON log lines as --log-format console shows them:
// the zerolog console format sim/eventlog's Writer uses (vt as seconds,
// actor, event, then the fields), without colour.
func ConsoleWriter(w io.Writer) io.Writer {
	return zerolog.ConsoleWriter{Out: w, NoColor: true,
		PartsOrder:    []string{"vt", "actor", "event"},
		FieldsExclude: []string{"vt", "actor", "event"},
		FormatPartValueByName: func(v any, name string) string {
			s := fmt.Sprint(v)
			if name == "vt" {
				if us, err := strconv.ParseInt(s, 10, 64); err == nil {
					return eventlog.FormatVT(us)
				}
			}
			return s
		}}
}

// Filtered passes w only the JSON lines f lets through (f inactive: w).
func Filtered(w io.Writer, f KindFilter) io.Writer {
	if !f.Active() {
		return w
	}
	return &filterWriter{f: f, w: func(line []byte) error { _, err := w.Write(line); return err }}
}
