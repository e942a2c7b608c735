//go:build !js

package session

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/flinksim/flinksim/examples"
)

// WasmPackage is the main package of the simulator in the page, built for
// GOOS=js GOARCH=wasm by WriteSite.
const WasmPackage = "./cluster/session/wasm"

// ModulePath is flinksim's module, whose source WriteSite builds.
const ModulePath = "github.com/flinksim/flinksim"

// Site is what WriteSite wrote.
type Site struct {
	Dir        string
	Files      []string // relative to Dir, in the order written
	WasmBytes  int64    // flinksim.wasm
	WasmGzip   int64    // flinksim.wasm gzip-compressed (level 9), as a server or a bucket would send it
	GoVersion  string   // of the toolchain that built flinksim.wasm
	SourceDir  string   // the module source it was built from
	WasmExecJS string   // where wasm_exec.js came from
}

// WriteSite writes the static site of the live diagram to dir: index.html
// (the page of `flinksim ui`, its session the simulator in a Web Worker),
// assets/ (the page's scripts and style and the worker), flinksim.wasm (the
// session core built for the browser with the Go toolchain on PATH from
// flinksim's source at src; "" finds it with go list from the current
// directory, or, for a binary installed with go install, the module cache's
// source of its version), wasm_exec.js from that toolchain, and the events files the
// scenarios read (examples/data/). Any static file server serves it.
//
// Building needs the Go toolchain now, at site time: the error says so
// when go is not on PATH or the source is not found.
func WriteSite(dir, src string) (*Site, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, errors.New("flinksim site builds flinksim.wasm with the Go toolchain, and there is no go on PATH: install Go (https://go.dev/dl/) or put its bin directory on PATH")
	}
	goOut := func(dir string, args ...string) (string, error) {
		cmd := exec.Command(goBin, args...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(string(out)), nil
	}
	if src == "" {
		src, err = goOut("", "list", "-m", "-f", "{{.Dir}}", ModulePath)
		if err != nil || src == "" {
			// a binary installed with go install names its module version:
			// that version's source from the module cache
			if v := moduleVersion(); v != "" {
				if dir, derr := goOut("", "mod", "download", "-json", ModulePath+"@"+v); derr == nil {
					var m struct{ Dir string }
					if json.Unmarshal([]byte(dir), &m) == nil && m.Dir != "" {
						src, err = m.Dir, nil
					}
				}
			}
		}
		if err != nil || src == "" {
			return nil, fmt.Errorf("flinksim site builds flinksim.wasm from flinksim's source: run it inside a checkout of %s, or give --source DIR (%v)", ModulePath, err)
		}
	}
	if _, err := os.Stat(filepath.Join(src, filepath.FromSlash(WasmPackage), "main.go")); err != nil {
		return nil, fmt.Errorf("--source %s: not flinksim's source (no %s/main.go)", src, WasmPackage)
	}
	goroot, err := goOut(src, "env", "GOROOT")
	if err != nil {
		return nil, err
	}
	version, err := goOut(src, "env", "GOVERSION")
	if err != nil {
		return nil, err
	}
	var execJS string
	for _, p := range []string{filepath.Join(goroot, "lib", "wasm", "wasm_exec.js"), filepath.Join(goroot, "misc", "wasm", "wasm_exec.js")} {
		if _, err := os.Stat(p); err == nil {
			execJS = p
			break
		}
	}
	if execJS == "" {
		return nil, fmt.Errorf("the Go toolchain at %s has no wasm_exec.js (lib/wasm or misc/wasm): a complete Go installation is needed", goroot)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	site := &Site{Dir: dir, GoVersion: version, SourceDir: src, WasmExecJS: execJS}
	write := func(name string, data []byte) error {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		site.Files = append(site.Files, name)
		return nil
	}

	// the page, its session the worker's
	page, err := assets.ReadFile("assets/index.html")
	if err != nil {
		return nil, err
	}
	const httpMeta, wasmMeta = `<meta name="flinksim-session" content="http">`, `<meta name="flinksim-session" content="wasm">`
	if !bytes.Contains(page, []byte(httpMeta)) {
		return nil, errors.New("the embedded index.html has no " + httpMeta)
	}
	if err := write("index.html", bytes.Replace(page, []byte(httpMeta), []byte(wasmMeta), 1)); err != nil {
		return nil, err
	}
	err = fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == "assets/index.html" {
			return err
		}
		b, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		return write(p, b)
	})
	if err != nil {
		return nil, err
	}
	for _, name := range examples.DataFiles {
		b, err := fs.ReadFile(examples.FS, name)
		if err != nil {
			return nil, err
		}
		if err := write("examples/"+name, b); err != nil {
			return nil, err
		}
	}
	js, err := os.ReadFile(execJS)
	if err != nil {
		return nil, err
	}
	if err := write("wasm_exec.js", js); err != nil {
		return nil, err
	}

	// the simulator: no remote transport, no CLI, no symbol tables
	wasm := filepath.Join(dir, "flinksim.wasm")
	abs, err := filepath.Abs(wasm)
	if err != nil {
		return nil, err
	}
	build := exec.Command(goBin, "build", "-trimpath", "-ldflags=-s -w", "-o", abs, WasmPackage)
	build.Dir = src
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building flinksim.wasm (GOOS=js GOARCH=wasm go build %s in %s): %v\n%s", WasmPackage, src, err, out)
	}
	site.Files = append(site.Files, "flinksim.wasm")
	b, err := os.ReadFile(wasm)
	if err != nil {
		return nil, err
	}
	site.WasmBytes = int64(len(b))
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	site.WasmGzip = int64(gz.Len())
	return site, nil
}

// moduleVersion is the version of flinksim this binary was built from
// ("" for a build of a checkout).
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Path != ModulePath || bi.Main.Version == "" || bi.Main.Version == "(devel)" {
		return ""
	}
	return bi.Main.Version
}
