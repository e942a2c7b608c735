//go:build !js

package session

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSiteBrowser builds the static site (WriteSite: flinksim.wasm with the
// Go toolchain), serves it with a plain static file server (http.FileServer)
// that records every request, and runs browsertest/site_test.mjs in
// Chromium: the first frame, the job running, its speed at max, a kill from
// the page, a jump back, the downloaded log, settings in the address. The
// server must see no request but for the site's files, and `flinksim
// replay` must report the downloaded log identical. Gated as TestBrowser
// is (FLINKSIM_BROWSER_TEST=1, which .ci/run sets).
func TestSiteBrowser(t *testing.T) {
	if os.Getenv("FLINKSIM_BROWSER_TEST") != "1" {
		t.Skip("the browser test needs Chromium and playwright-core: run .ci/run (or install them as it does and set FLINKSIM_BROWSER_TEST=1)")
	}
	dir := t.TempDir()
	start := time.Now()
	site, err := WriteSite(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("site written in %v: flinksim.wasm %d bytes (%d gzip), %s", time.Since(start).Round(time.Millisecond), site.WasmBytes, site.WasmGzip, site.GoVersion)
	if site.WasmBytes > 15e6 || site.WasmGzip > 4e6 {
		t.Errorf("flinksim.wasm is %d bytes, %d gzip: want at most 15 MB and 4 MB", site.WasmBytes, site.WasmGzip)
	}
	served := map[string]bool{"/": true}
	for _, f := range site.Files {
		served["/"+f] = true
	}
	var mu sync.Mutex
	var paths []string
	files := http.FileServer(http.Dir(dir))
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	defer hs.Close()

	out := os.Getenv("FLINKSIM_BROWSER_OUT")
	if out == "" {
		out = t.TempDir()
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(out)
	cmd := exec.Command("node", "site_test.mjs", hs.URL+"/", abs)
	cmd.Dir = "browsertest"
	done := make(chan struct{})
	var b []byte
	go func() {
		b, err = cmd.CombinedOutput()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(8 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
	}
	t.Logf("%s", b)
	if err != nil {
		t.Fatalf("the site's browser test failed (%v); screenshots in %s", err, abs)
	}
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		t.Logf("load average after the test: %s (%d cores)", strings.TrimSpace(string(la)), runtime.NumCPU())
	}

	mu.Lock()
	defer mu.Unlock()
	if len(paths) == 0 {
		t.Fatal("the static server saw no request")
	}
	for _, p := range paths {
		method, path, _ := strings.Cut(p, " ")
		if method != http.MethodGet || !served[path] {
			t.Errorf("the page asked the static server for %s, not one of the site's files", p)
		}
	}
	for _, want := range []string{"/", "/flinksim.wasm", "/wasm_exec.js", "/assets/worker.js"} {
		if !slices.Contains(paths, "GET "+want) {
			t.Errorf("no request for %s: %v", want, paths)
		}
	}

	// the downloaded log replays identical with the CLI
	replay := exec.Command("go", "run", "../../cmd/flinksim", "replay", filepath.Join(abs, "site.jsonl"))
	rb, err := replay.CombinedOutput()
	t.Logf("flinksim replay: %s", rb)
	if err != nil || !strings.HasPrefix(string(rb), "identical") {
		t.Fatalf("flinksim replay of the downloaded log: %v\n%s", err, rb)
	}
}
