//go:build js

package session

import "time"

// maxSlice is a slice of work at max speed. In the browser the session
// shares one thread with the page's worker, and each slice ends with a
// return to the JavaScript event loop (yieldToHost), which costs a timer's
// delay: longer slices spend less of the time there, and commands wait at
// most this.
const maxSlice = 150 * time.Millisecond

// yieldToHost returns to the JavaScript event loop, so that the worker
// takes the page's messages (a command, a pause) and the frames posted go
// out: Go's scheduler in WebAssembly runs one goroutine at a time and
// returns to the event loop only when every goroutine waits, which a
// sleep makes them do.
func yieldToHost() { time.Sleep(time.Millisecond) }
