package tests

import "testing"

// skipInShort skips a test that takes seconds of wall time under
// "go test -short", the edit loop's fast suite (README, "Run the tests").
// The whole suite and CI still run it.
func skipInShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow end-to-end run; skipped with -short")
	}
}
