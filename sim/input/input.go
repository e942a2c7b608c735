// Package input reads the user's input files (events, settings, actions, a
// log to replay) with limits, so that no input can hang a run or eat the
// machine's memory: a file larger than its limit, or a line longer than its
// limit, is refused with FILE:LINE and the limit, after reading at most the
// limit plus one chunk. Text quoted from the input in an error is cut to a
// readable length (Quote). A UTF-8 byte order mark is dropped and CRLF line
// ends read like LF ones (Clean), the same for every kind of input file.
package input

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"unicode/utf8"
)

// Limits bound one input file. A zero field means no bound of that kind.
type Limits struct {
	// MaxBytes is the largest file accepted, in bytes.
	MaxBytes int64
	// MaxLine is the longest line accepted, in bytes, without its line end.
	MaxLine int
	// MaxFirstLine, when not zero, is the longest first line (a log's
	// header) accepted.
	MaxFirstLine int
}

// Limits of each kind of input. Each is far above what a real input
// needs: an events file of 256 MiB holds ~2.5 million records of 100
// bytes; a log line carries one event (the header, with every setting, is
// ~4 kB; a kafka_metrics line of a topic with 10,000 partitions ~800 kB).
var (
	EventsLimits   = Limits{MaxBytes: 256 << 20, MaxLine: 1 << 20}
	SettingsLimits = Limits{MaxBytes: 1 << 20, MaxLine: 64 << 10}
	ActionsLimits  = Limits{MaxBytes: 1 << 20, MaxLine: 4 << 10}
	LogLimits      = Limits{MaxBytes: 2 << 30, MaxLine: 16 << 20, MaxFirstLine: 1 << 20}
)

// Error is a problem with an input file as a whole (Line 0) or at a line.
type Error struct {
	File string
	Line int
	Msg  string
	Err  error // the underlying error, if any (os errors)
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// ErrTooLarge is wrapped by every limit error.
var ErrTooLarge = errors.New("input over its limit")

// ReadFile reads the file at path within lim. A directory, a missing or
// unreadable file gives an *Error naming path.
func ReadFile(path string, lim Limits) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Msg: pathErrText(err), Err: err}
	}
	defer func() { _ = f.Close() }() // read only: closing loses nothing
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, &Error{File: path, Msg: "is a directory, not a file"}
	}
	return Read(f, path, lim)
}

// pathErrText is an os error without the path it repeats.
func pathErrText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// chunk is how much Read asks of the reader at a time.
const chunk = 64 << 10

// Read reads r to its end within lim; name is the file's name in errors.
// It stops at the first limit broken, having read at most one chunk (64
// KiB) past it, so /dev/zero or an endless pipe is refused in bounded time
// and memory. Cost: O(size) time, the size plus one chunk of memory.
func Read(r io.Reader, name string, lim Limits) ([]byte, error) {
	var data []byte
	buf := make([]byte, chunk)
	line, lineStart := 1, 0 // current line number and where it starts in data
	for {
		n, err := r.Read(buf)
		if n > 0 {
			start := len(data)
			data = append(data, buf[:n]...)
			// check every line that ended in this chunk, then the open one
			for i := start; i < len(data); i++ {
				if data[i] == '\n' {
					if e := checkLine(name, line, data[lineStart:i], lim); e != nil {
						return nil, e
					}
					line++
					lineStart = i + 1
				}
			}
			if e := checkLine(name, line, data[lineStart:], lim); e != nil {
				return nil, e
			}
			if lim.MaxBytes > 0 && int64(len(data)) > lim.MaxBytes {
				return nil, &Error{File: name, Msg: "larger than " + Size(lim.MaxBytes) + ", the limit for this kind of input", Err: ErrTooLarge}
			}
		}
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, &Error{File: name, Line: line, Msg: err.Error(), Err: err}
		}
	}
}

// checkLine refuses line number line, whose bytes so far (without its
// '\n') are text, when it is over its limit. A '\r' at its end is the CR of
// a CRLF line end (or may become one when the '\n' comes in the next chunk)
// and does not count; every other byte does, so a line of exactly MaxLine
// bytes passes and one of MaxLine+1 does not.
func checkLine(name string, line int, text []byte, lim Limits) error {
	max := lim.MaxLine
	if line == 1 && lim.MaxFirstLine > 0 {
		max = lim.MaxFirstLine
	}
	n := len(text)
	if n > 0 && text[n-1] == '\r' {
		n--
	}
	if max > 0 && n > max {
		return &Error{File: name, Line: line, Msg: "line longer than " + Size(int64(max)) + ", the limit for a line of this kind of input", Err: ErrTooLarge}
	}
	return nil
}

// Size prints a byte count in the largest binary unit that divides it
// ("1 MiB", "64 KiB", "100 bytes").
func Size(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// BOM is the UTF-8 byte order mark.
const BOM = "\xef\xbb\xbf"

// Clean drops a leading UTF-8 byte order mark and turns every CRLF line end
// into LF, so that every reader sees one form. It returns data itself when
// there is nothing to change.
func Clean(data []byte) []byte {
	data = bytes.TrimPrefix(data, []byte(BOM))
	if bytes.IndexByte(data, '\r') < 0 {
		return data
	}
	return bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
}

// BOMLine returns the 1-based line of the first line of data that starts
// with a UTF-8 byte order mark, or 0 when none does. Run it after Clean,
// which drops the one a file may start with: a mark at the start of a later
// line (or a second one at the start of the file) is left by joining files
// that each had one (cat a.jsonl b.jsonl), and is no part of the text. A
// U+FEFF elsewhere in a line is an ordinary character and is not reported.
// Cost: one pass over data.
func BOMLine(data []byte) int {
	line := 1
	for {
		if bytes.HasPrefix(data, []byte(BOM)) {
			return line
		}
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return 0
		}
		data = data[i+1:]
		line++
	}
}

// BOMMessage is what a reader says of a byte order mark at the start of
// line line (BOMLine): it names the mark, so that the user is not left with
// a parser's "invalid character 'ï'".
func BOMMessage(line int) string {
	if line == 1 {
		return "the file starts with two UTF-8 byte order marks (bytes EF BB BF, U+FEFF): only one may start a file; remove the other (was it made by joining files that each had one?)"
	}
	return "a UTF-8 byte order mark (bytes EF BB BF, U+FEFF) starts this line: only the first line of a file may have one; remove it (was the file made by joining files that each had one?)"
}

// CheckUTF8 returns the 1-based line and column (in bytes) of the first
// invalid UTF-8 sequence in data, or 0, 0 when data is valid UTF-8.
func CheckUTF8(data []byte) (line, col int) {
	if utf8.Valid(data) {
		return 0, 0
	}
	line, lineStart := 1, 0
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return line, i - lineStart + 1
		}
		if data[i] == '\n' {
			line++
			lineStart = i + 1
		}
		i += size
	}
	return 0, 0
}

// QuoteMax is the most characters of input Quote shows.
const QuoteMax = 80

// Quote renders s for an error message as a Go-quoted string, cut to
// QuoteMax runes with the full length added when longer, so a 10 MB line
// never reaches the terminal whole.
func Quote(s string) string {
	if utf8.RuneCountInString(s) <= QuoteMax {
		return strconv.Quote(s)
	}
	cut, n := 0, 0
	for i := range s {
		if n == QuoteMax {
			cut = i
			break
		}
		n++
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("... (%d bytes in all)", len(s))
}

// Cut shortens s to at most QuoteMax runes (with "..." and the full length
// when it was longer), for raw input shown without quotes.
func Cut(s string) string {
	if utf8.RuneCountInString(s) <= QuoteMax {
		return s
	}
	n := 0
	for i := range s {
		if n == QuoteMax {
			return s[:i] + fmt.Sprintf("... (%d bytes in all)", len(s))
		}
		n++
	}
	return s
}
