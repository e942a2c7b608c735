package vt

import "github.com/flinksim/flinksim/messages"

// Less is Compare as a "less" function.
func Less(a, b *messages.Envelope) bool { return Compare(a, b) < 0 }
