package input

import (
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// endless is a reader that never ends: every Read fills the buffer with c.
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

func TestReadLimits(t *testing.T) {
	tests := []struct {
		name string
		r    io.Reader
		lim  Limits
		want string // "" for no error
	}{
		{"within", strings.NewReader("a\nbb\nccc\n"), Limits{MaxBytes: 100, MaxLine: 3}, ""},
		{"line too long", strings.NewReader("a\nbbbbb\nc\n"), Limits{MaxBytes: 100, MaxLine: 3}, "f:2: line longer than 3 bytes"},
		{"a CR does not count", strings.NewReader("abc\r\n"), Limits{MaxLine: 3}, ""},
		{"last line without its end", strings.NewReader("a\nbbbbb"), Limits{MaxLine: 3}, "f:2: line longer than 3 bytes"},
		{"first line", strings.NewReader("aaaaa\nb\n"), Limits{MaxLine: 10, MaxFirstLine: 3}, "f:1: line longer than 3 bytes"},
		{"file too large", strings.NewReader(strings.Repeat("a\n", 100)), Limits{MaxBytes: 50}, "f: larger than 50 bytes"},
		{"endless zeros", endless(0), Limits{MaxBytes: 1 << 30, MaxLine: 1 << 20}, "f:1: line longer than 1 MiB"},
		{"endless lines", endless('\n'), Limits{MaxBytes: 1 << 20, MaxLine: 10}, "f: larger than 1 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := Read(tt.r, "f", tt.lim)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, ErrTooLarge) || data != nil {
				t.Fatalf("Read = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCleanAndUTF8(t *testing.T) {
	if got := string(Clean([]byte(BOM + "a\r\nb\r\n"))); got != "a\nb\n" {
		t.Errorf("Clean = %q", got)
	}
	if got := string(Clean([]byte("a\rb"))); got != "a\rb" {
		t.Errorf("a lone CR is kept: %q", got)
	}
	if l, c := CheckUTF8([]byte("ok\nab\xffc\n")); l != 2 || c != 3 {
		t.Errorf("CheckUTF8 = %d:%d, want 2:3", l, c)
	}
	if l, _ := CheckUTF8([]byte("µs ✓\n")); l != 0 {
		t.Errorf("valid UTF-8 refused at line %d", l)
	}
}

func TestQuoteAndCut(t *testing.T) {
	long := strings.Repeat("é", 10_000)
	q := Quote(long)
	if utf8.RuneCountInString(q) > QuoteMax+40 || !strings.HasSuffix(q, "... (20000 bytes in all)") || !utf8.ValidString(q) {
		t.Errorf("Quote = %.200s", q)
	}
	if Quote("ab") != `"ab"` || Cut("ab") != "ab" {
		t.Error("short text is not cut")
	}
	if c := Cut(strings.Repeat("x", 81)); c != strings.Repeat("x", 80)+"... (81 bytes in all)" {
		t.Errorf("Cut = %q", c)
	}
	if Size(1<<20) != "1 MiB" || Size(64<<10) != "64 KiB" || Size(100) != "100 bytes" {
		t.Error("Size")
	}
}
