//go:build !js

package session

import "time"

// maxSlice is a slice of work at max speed (commands wait at most this).
const maxSlice = 30 * time.Millisecond

// yieldToHost lets the host run between two slices of work at max speed;
// a native process has nothing to yield to (other goroutines run on other
// threads).
func yieldToHost() {}
