package buildinfo

import (
	"crypto/sha256"
	"encoding/hex"
	"runtime/debug"
	"strings"
	"testing"
)

func buildInfo(settings map[string]string, deps ...*debug.Module) *debug.BuildInfo {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/flinksim/flinksim", Version: "(devel)"}, Deps: deps}
	for k, v := range settings {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: k, Value: v})
	}
	return bi
}

func sha12(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:12]
}

func TestFingerprintForm(t *testing.T) {
	cobra := &debug.Module{Path: "github.com/spf13/cobra", Version: "v1.8.1", Sum: "h1:abc="}
	yaml := &debug.Module{Path: "go.yaml.in/yaml/v3", Version: "v3.0.4", Sum: "h1:def=", Replace: &debug.Module{Path: "../yaml", Version: ""}}
	// the dependencies' lines, sorted, computed here by hand
	depsDigest := sha12("github.com/spf13/cobra v1.8.1 h1:abc=\ngo.yaml.in/yaml/v3 v3.0.4 h1:def= => ../yaml  ")
	exe := func() string { return "e0e0e0e0e0e0" }
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"a clean stamped build names its revision, not its file",
			buildInfo(map[string]string{"GOARCH": "amd64", "GOAMD64": "v1", "vcs.revision": "b876ff4fcb9256c75c13c6b1f8e400e29de2a9ac", "vcs.modified": "false"}, cobra, yaml),
			"program=flinksim/0.1.0 go=go1.26.8 arch=amd64/v1 vcs=b876ff4fcb92 deps=" + depsDigest},
		{"dependencies in another order give the same digest",
			buildInfo(map[string]string{"GOARCH": "amd64", "GOAMD64": "v1", "vcs.revision": "b876ff4fcb9256c75c13c6b1f8e400e29de2a9ac"}, yaml, cobra),
			"program=flinksim/0.1.0 go=go1.26.8 arch=amd64/v1 vcs=b876ff4fcb92 deps=" + depsDigest},
		{"a dirty tree adds the executable's digest",
			buildInfo(map[string]string{"GOARCH": "arm64", "vcs.revision": "b876ff4fcb9256c75c13c6b1f8e400e29de2a9ac", "vcs.modified": "true"}, cobra, yaml),
			"program=flinksim/0.1.0 go=go1.26.8 arch=arm64 vcs=b876ff4fcb92+dirty deps=" + depsDigest + " exe=e0e0e0e0e0e0"},
		{"no VCS stamp: the executable names the build; tags and flags count",
			buildInfo(map[string]string{"GOARCH": "amd64", "-tags": "flinksim_broken_abort", "-ldflags": "-X a.b=c"}),
			"program=flinksim/0.1.0 go=go1.26.8 arch=amd64 vcs=none deps=" + sha12("") + " tags=flinksim_broken_abort ldflags=" + sha12("-X a.b=c") + " exe=e0e0e0e0e0e0"},
		{"a stamped module version",
			func() *debug.BuildInfo {
				bi := buildInfo(map[string]string{"GOARCH": "amd64", "vcs.revision": "0123456789abcdef"})
				bi.Main.Version = "v0.0.0-20261203181020-0123456789ab"
				return bi
			}(),
			"program=flinksim/0.1.0 go=go1.26.8 arch=amd64 module=v0.0.0-20261203181020-0123456789ab vcs=0123456789ab deps=" + sha12("")},
	}
	for _, tt := range tests {
		if got := fingerprint(tt.bi, exe); got != tt.want {
			t.Errorf("%s:\n  got  %s\n  want %s", tt.name, got, tt.want)
		}
	}
	other := buildInfo(map[string]string{"GOARCH": "amd64", "GOAMD64": "v1", "vcs.revision": "b876ff4fcb9256c75c13c6b1f8e400e29de2a9ac"},
		&debug.Module{Path: "github.com/spf13/cobra", Version: "v1.9.0", Sum: "h1:xyz="}, yaml)
	if fingerprint(other, exe) == fingerprint(tests[0].bi, exe) {
		t.Error("another dependency version gives the same fingerprint")
	}
	if got := fingerprint(nil, exe); !strings.HasSuffix(got, " vcs=none deps="+sha12("")+" exe=e0e0e0e0e0e0") {
		t.Errorf("no build info: %s", got)
	}
}

// The fingerprint is one per process and fit for a header field.
func TestFingerprintIsOnePerProcess(t *testing.T) {
	fp := Fingerprint()
	if fp != Fingerprint() || !strings.HasPrefix(fp, "program=flinksim/0.1.0 go=") || strings.ContainsAny(fp, "\n\"") {
		t.Fatalf("Fingerprint = %q", fp)
	}
	if strings.Contains(fp, "vcs=none") && !strings.Contains(fp, " exe=") {
		t.Errorf("an unstamped build without its executable's digest: %s", fp)
	}
	if strings.Contains(fp, "exe=unknown") {
		t.Errorf("the test binary could not be read: %s", fp)
	}
}
