package eventlog

import "testing"

func TestFirstDifference(t *testing.T) {
	tests := []struct {
		a, b   string
		line   int
		x, y   string
		differ bool
	}{
		{"a\nb\n", "a\nb\n", 0, "", "", false},
		{"a\nb\nc", "a\nB\nc", 2, "b", "B", true},
		{"a\nb", "a\nb\nc", 3, "<end of log>", "c", true},
		{"a\nb\nc", "a", 2, "b", "<end of log>", true},
		{"", "x", 1, "", "x", true},
	}
	for _, tt := range tests {
		line, x, y, differ := FirstDifference([]byte(tt.a), []byte(tt.b))
		if line != tt.line || x != tt.x || y != tt.y || differ != tt.differ {
			t.Errorf("FirstDifference(%q, %q) = %d %q %q %v, want %d %q %q %v", tt.a, tt.b, line, x, y, differ, tt.line, tt.x, tt.y, tt.differ)
		}
	}
}
