//go:build !js

package session

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// ParseLink: each setting checked on its own, a refused one reported with
// the parameter, the key and the allowed range and left out, the seed as
// sim.seed, the scenario, and what the page does not take.
func TestParseLink(t *testing.T) {
	l := ParseLink("?set=job.window.size%3D15s&seed=7&scenario=backpressure")
	if want := [][2]string{{"job.window.size", "15s"}, {"sim.seed", "7"}}; !slices.Equal(l.Settings, want) || l.Scenario != "backpressure" || len(l.Errors) != 0 {
		t.Fatalf("ParseLink = %+v, want settings %v, scenario backpressure, no errors", l, want)
	}
	l = ParseLink("set=parallelism.default%3D0&set=sim.taskmanagers%3D3&seed=x&set=nope&color=red")
	if want := [][2]string{{"sim.taskmanagers", "3"}}; !slices.Equal(l.Settings, want) {
		t.Errorf("settings %v, want %v (the refused ones left out)", l.Settings, want)
	}
	want := []string{
		"?set=parallelism.default=0: parallelism.default: Operator parallelism not within bounds: 0 (allowed: 1..32768)",
		"?set=nope: expected KEY=VALUE",
		"?seed=x: Could not parse value 'x' for key 'sim.seed'",
		"?color: not a parameter of this page",
	}
	if len(l.Errors) != len(want) {
		t.Fatalf("errors %q, want %d", l.Errors, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(l.Errors[i], w) {
			t.Errorf("error %d = %q, want it to start with %q", i, l.Errors[i], w)
		}
	}
	if !strings.Contains(l.Errors[2], "(allowed: 0..18446744073709551615)") {
		t.Errorf("the seed's refusal %q does not give the range", l.Errors[2])
	}
}

// OpenLink starts the scenario with the link's settings on top of its
// own; a combination the job refuses is reported and the session runs
// without it.
func TestOpenLink(t *testing.T) {
	r, err := DefaultRecipe()
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCore(Config{Recipe: r})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := c.OpenLink("?set=job.window.size%3D15s&seed=7&scenario=backpressure")
	if a.Err != nil || !bytes.Equal(a.Body, []byte(`{"errors":[],"scenario":"backpressure"}`)) {
		t.Fatalf("OpenLink = %s %v", a.Body, a.Err)
	}
	snap := c.loop.latest.Load()
	if snap.state.Scenario != "backpressure" || snap.state.Seed != 7 {
		t.Errorf("scenario %q seed %d, want backpressure and 7", snap.state.Scenario, snap.state.Seed)
	}
	if v, _ := snap.settings.Get("job.window.size"); v != "15 s" {
		t.Errorf("job.window.size %q, want 15 s", v)
	}
	// each valid alone, refused together; the session is the one before
	gen := snap.state.Generation
	a = c.OpenLink("?set=parallelism.default%3D8&set=pipeline.max-parallelism%3D4")
	var body struct{ Errors []string }
	if err := json.Unmarshal(a.Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Errors) != 1 || !strings.Contains(body.Errors[0], "parallelism.default 8 > pipeline.max-parallelism 4") {
		t.Errorf("errors %q, want the refusal of the two together", body.Errors)
	}
	if g := c.loop.latest.Load().state.Generation; g != gen {
		t.Errorf("a refused link started session %d (was %d)", g, gen)
	}
}

// WriteSite writes every file of the site, the page with its wasm session,
// wasm_exec.js of the toolchain that built flinksim.wasm, within its size.
func TestWriteSite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds flinksim.wasm (a minute on a busy machine)")
	}
	dir := t.TempDir()
	start := time.Now()
	site, err := WriteSite(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v: %d bytes, %d gzip", time.Since(start), site.WasmBytes, site.WasmGzip)
	for _, f := range []string{"index.html", "assets/session.js", "assets/app.js", "assets/traffic.js", "assets/style.css", "assets/worker.js", "wasm_exec.js", "flinksim.wasm", "examples/data/playground-clicks.jsonl"} {
		if !slices.Contains(site.Files, f) {
			t.Errorf("%s not written (%v)", f, site.Files)
		}
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	if !bytes.Contains(page, []byte(`<meta name="flinksim-session" content="wasm">`)) || bytes.Contains(page, []byte(`content="http"`)) {
		t.Error("index.html does not choose the wasm session")
	}
	served, _ := assets.ReadFile("assets/index.html")
	if !bytes.Equal(bytes.Replace(served, []byte(`content="http"`), []byte(`content="wasm"`), 1), page) {
		t.Error("index.html differs from the page flinksim ui serves by more than its meta tag")
	}
	js, _ := os.ReadFile(filepath.Join(dir, "wasm_exec.js"))
	orig, _ := os.ReadFile(site.WasmExecJS)
	if !bytes.Equal(js, orig) || !strings.HasPrefix(site.WasmExecJS, strings.TrimSpace(goEnv(t, "GOROOT"))) {
		t.Errorf("wasm_exec.js is not %s of the toolchain", site.WasmExecJS)
	}
	if site.WasmBytes > 15e6 || site.WasmGzip > 4e6 {
		t.Errorf("flinksim.wasm %d bytes, %d gzip: want at most 15 MB and 4 MB", site.WasmBytes, site.WasmGzip)
	}
}

// Without go on PATH the site cannot be built, and the error says so.
func TestWriteSiteNeedsGo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := WriteSite(t.TempDir(), "")
	if err == nil || !strings.Contains(err.Error(), "no go on PATH") || !strings.Contains(err.Error(), "install Go") {
		t.Fatalf("WriteSite without go: %v", err)
	}
}

func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
