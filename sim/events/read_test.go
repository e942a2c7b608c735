package events

import (
	"io"
	"os"

	"github.com/flinksim/flinksim/sim/input"
)

// The readers of this package's tests: what cluster/inputs does with a
// file (input.ReadFile, then Parse), for any reader.

// ReadFile reads the events file at path; see Read.
func ReadFile(path string, opt Options) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: closing loses nothing
	return Read(f, path, opt)
}

// Read reads every record from r, in file order. name is used in error
// messages and for format detection (Format): by its extension first, then
// by its content. A UTF-8 byte order mark is dropped and CRLF line ends read
// as LF (input.Clean); a byte order mark at the start of any other line is
// refused, naming it (input.BOMLine). Empty lines are skipped. The input is
// read within opt.Limits (size and line length), must be valid UTF-8, and a
// JSON line must not name one field twice at any depth. The first error stops the read and is returned
// as an *Error naming name:LINE (or an *input.Error for a broken limit); no
// records are returned with it. Empty input gives no records and no error.
func Read(r io.Reader, name string, opt Options) ([]Record, error) {
	if opt.KeyField == "" {
		opt.KeyField = "key"
	}
	if opt.TimeField == "" {
		opt.TimeField = "ts"
	}
	lim := opt.Limits
	if lim == (input.Limits{}) {
		lim = input.EventsLimits
	}
	data, err := input.Read(r, name, lim)
	if err != nil {
		return nil, err
	}
	return Parse(data, name, opt)
}
