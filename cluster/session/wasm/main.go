//go:build js && wasm

// Command wasm is the simulator inside the page of `flinksim site`: built
// with GOOS=js GOARCH=wasm to flinksim.wasm, it runs in the page's Web
// Worker (assets/worker.js) the same session core as `flinksim ui`
// (session.Core: the kernel and every component as Hollywood actors on
// Hollywood's local engine), without a server, a remote transport or the
// CLI.
//
// The worker and this module talk through two functions:
//
//	flinksimCall(id, op, arg)  from the worker: a session operation
//	                           (session.Core.Call's ops, and "link", "log",
//	                           "pause", "resume")
//	flinksimPost(msg)          to the worker, which posts it to the page:
//	                           {type:"frame", data} a frame (JSON text, as
//	                           GET /sim/stream's data), {type:"reply", id,
//	                           status, body | error}, {type:"log", id, name,
//	                           bytes}, {type:"ready"} or {type:"fatal", error}
package main

import (
	"errors"
	"io/fs"
	"slices"
	"sync/atomic"
	"syscall/js"

	"github.com/flinksim/flinksim/cluster/session"
	"github.com/flinksim/flinksim/examples"
)

func main() {
	post := js.Global().Get("flinksimPost")
	session.SetScenarioFS(siteFS{examples.FS})
	r, err := session.DefaultRecipe()
	// a tab lives shorter than a server: the scheduler may let the heap
	// grow to three times what is live while it is small (actors/workers.go),
	// 1.17x faster at max speed (BenchmarkWasmSessionMax)
	r.Options.AdaptGC = true
	var core *session.Core
	if err == nil {
		core, err = session.NewCore(session.Config{Recipe: r})
	}
	if err != nil {
		post.Invoke(map[string]any{"type": "fatal", "error": err.Error()})
		return
	}
	var paused atomic.Bool
	wake := make(chan struct{}, 1)
	js.Global().Set("flinksimCall", js.FuncOf(func(_ js.Value, args []js.Value) any {
		id, op, arg := args[0].Int(), args[1].String(), args[2].String()
		switch op {
		case "pause":
			paused.Store(true)
			return nil
		case "resume":
			paused.Store(false)
			select {
			case wake <- struct{}{}:
			default:
			}
			return nil
		}
		// a blocking call may not run in a JavaScript callback: the
		// answer comes from a goroutine of its own
		go func() {
			switch op {
			case "log":
				name, b, a := core.LogFile()
				if a.Err != nil {
					post.Invoke(map[string]any{"type": "reply", "id": id, "status": a.Status, "error": a.Err.Error()})
					return
				}
				u8 := js.Global().Get("Uint8Array").New(len(b))
				js.CopyBytesToJS(u8, b)
				post.Invoke(map[string]any{"type": "log", "id": id, "name": name, "bytes": u8})
				return
			case "link":
				answer(post, id, core.OpenLink(arg))
				return
			}
			answer(post, id, core.Call(op, arg))
		}()
		return nil
	}))
	frames, err := core.Subscribe("")
	if err != nil {
		post.Invoke(map[string]any{"type": "fatal", "error": err.Error()})
		return
	}
	post.Invoke(map[string]any{"type": "ready"})
	var buf []byte
	for {
		if paused.Load() {
			<-wake
			continue
		}
		buf, _ = frames.Next(buf[:0])
		post.Invoke(map[string]any{"type": "frame", "data": string(buf)})
		select {
		case <-frames.Ready:
		case <-wake:
		}
	}
}

// answer posts an operation's answer.
func answer(post js.Value, id int, a session.Answer) {
	if a.Err != nil {
		post.Invoke(map[string]any{"type": "reply", "id": id, "status": a.Status, "error": a.Err.Error()})
		return
	}
	post.Invoke(map[string]any{"type": "reply", "id": id, "status": a.Status, "body": string(a.Body)})
}

// siteFS is the embedded examples with the events files (examples.DataFiles)
// read from the site beside the page, by the worker's flinksimFetch (a
// synchronous request, which a worker may make).
type siteFS struct{ fs.FS }

func (f siteFS) ReadFile(name string) ([]byte, error) {
	if slices.Contains(examples.DataFiles, name) {
		v := js.Global().Call("flinksimFetch", "examples/"+name)
		if v.Type() != js.TypeString {
			return nil, &fs.PathError{Op: "read", Path: "examples/" + name, Err: errors.New("the site does not serve it: write the site again with flinksim site")}
		}
		return []byte(v.String()), nil
	}
	return fs.ReadFile(f.FS, name)
}
