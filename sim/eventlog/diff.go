package eventlog

import "bytes"

// FirstDifference compares two logs (or any texts) line by line and returns
// the 1-based number of the first line where they differ and the two lines
// there, "<end of log>" standing for a line one of them does not have;
// differ is false (and the rest zero) when they are byte-identical line for
// line. It is what replay, --check-determinism and the tests that compare
// two runs report. Cost: O(len(a) + len(b)).
func FirstDifference(a, b []byte) (line int, x, y string, differ bool) {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(la) || i < len(lb); i++ {
		sa, sb := "<end of log>", "<end of log>"
		if i < len(la) {
			sa = string(la[i])
		}
		if i < len(lb) {
			sb = string(lb[i])
		}
		if sa != sb {
			return i + 1, sa, sb, true
		}
	}
	return 0, "", "", false
}
