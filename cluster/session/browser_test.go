//go:build !js

package session

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestBrowser runs browsertest/browser_test.mjs (Playwright driving
// Chromium headless) against a live server. It needs Chromium and the
// playwright-core package, which `go test ./...` does not: .ci/run installs
// them and sets FLINKSIM_BROWSER_TEST=1 (and FLINKSIM_BROWSER_OUT for the
// screenshots). Without it the test is skipped.
func TestBrowser(t *testing.T) {
	if os.Getenv("FLINKSIM_BROWSER_TEST") != "1" {
		t.Skip("the browser test needs Chromium and playwright-core: run .ci/run (or install them as it does and set FLINKSIM_BROWSER_TEST=1)")
	}
	srv, err := New(Config{Recipe: recipeOf(t, "sim.duration=365 d", "restart-strategy.type=fixed-delay"), Loopback: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer func() {
		srv.Close()
		hs.Close()
	}()
	out := os.Getenv("FLINKSIM_BROWSER_OUT")
	if out == "" {
		out = t.TempDir()
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(out)
	cmd := exec.Command("node", "browser_test.mjs", hs.URL+"/", abs)
	cmd.Dir = "browsertest"
	done := make(chan struct{})
	var b []byte
	go func() {
		b, err = cmd.CombinedOutput()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(9 * time.Minute):
		cmd.Process.Kill()
		<-done
	}
	t.Logf("%s", b)
	if err != nil {
		t.Fatalf("the browser test failed (%v); screenshots in %s", err, abs)
	}
	t.Logf("screenshots in %s", abs)
}
