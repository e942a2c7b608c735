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
		{"exactly the limit", strings.NewReader("abc\nabc"), Limits{MaxLine: 3}, ""},
		{"one byte over the limit", strings.NewReader("abcd\n"), Limits{MaxLine: 3}, "f:1: line longer than 3 bytes"},
		{"one byte over, last line", strings.NewReader("a\nabcd"), Limits{MaxLine: 3}, "f:2: line longer than 3 bytes"},
		{"a CR inside counts", strings.NewReader("ab\rc\n"), Limits{MaxLine: 3}, "f:1: line longer than 3 bytes"},
		{"1 MiB + 1 byte", strings.NewReader(strings.Repeat("x", 1<<20+1) + "\n"), Limits{MaxLine: 1 << 20}, "f:1: line longer than 1 MiB"},
		{"1 MiB and a CRLF", strings.NewReader(strings.Repeat("x", 1<<20) + "\r\n"), Limits{MaxLine: 1 << 20}, ""},
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

func TestBOMLine(t *testing.T) {
	tests := []struct {
		give string
		want int
	}{
		{"a\nb\n", 0},
		{BOM + "a\n", 1},          // after Clean: a second mark at the start
		{"a\n" + BOM + "b\n", 2},  // two files joined
		{"a\nb" + BOM + "c\n", 0}, // inside a line: an ordinary character
		{"a\n\n" + BOM, 3},
		{"", 0},
	}
	for _, tt := range tests {
		if got := BOMLine([]byte(tt.give)); got != tt.want {
			t.Errorf("BOMLine(%q) = %d, want %d", tt.give, got, tt.want)
		}
	}
	if !strings.Contains(BOMMessage(2), "byte order mark (bytes EF BB BF") || !strings.Contains(BOMMessage(1), "two UTF-8 byte order marks") {
		t.Error("BOMMessage does not name the mark")
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
