// Package buildinfo names the build of this binary (Fingerprint): what the
// event log's header records, replay compares and a remote process must
// match. It lives outside the simulation (sim/, actors/, cluster/), which
// has no shared memory: the fingerprint is computed once per process.
package buildinfo

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/flinksim/flinksim/sim/eventlog"
)

// Fingerprint names the build of this binary: what decides whether
// another flinksim writes the same log from the same recipe. It is the
// "build" field of the log header (replay compares it with its own, and
// says "recorded by another build" when they differ) and what a remote
// process must match to join a run. It is computed once per process from
// runtime/debug.ReadBuildInfo (and, when that cannot name the source, the
// executable), and is the same for every run of one binary: a log written
// and replayed by one binary, or two runs in one test binary, carry the
// same fingerprint.
//
// Its text is space-separated fields, always in this order; a field whose
// value is unknown or empty is left out, except program, go, arch, vcs and
// deps:
//
//	program=flinksim/0.1.0   eventlog.ProgramVersion, the space as '/'
//	go=go1.26.8              the Go toolchain (runtime.Version)
//	arch=amd64/v1            GOARCH and its level (GOAMD64, GOARM64, ...),
//	                         which decides where floating point may fuse
//	module=v0.0.0-2026...    the main module's version, when Go stamped
//	                         one ("(devel)" is left out)
//	vcs=0123456789ab         the VCS revision, 12 hex digits, "+dirty" when
//	                         the tree had changes; vcs=none when the build
//	                         was not stamped (go build -buildvcs=false, a
//	                         git worktree, go test, go run)
//	deps=0123456789ab        the first 12 hex digits of the sha256 of the
//	                         sorted lines "path version sum" of every
//	                         dependency module (with "=> path version sum"
//	                         for a replacement)
//	tags=a,b                 the build tags (go build -tags)
//	ldflags=0123456789ab     12 hex digits of the sha256 of -ldflags (an -X
//	                         flag changes the program)
//	gcflags=0123456789ab     likewise for -gcflags
//	exe=0123456789ab         12 hex digits of the sha256 of the executable
//	                         file, only when vcs is none or dirty: then the
//	                         revision does not name the source, and two
//	                         builds of different trees must still differ
//
// A binary without build information (not built in module mode) gives
// program, go, arch, vcs=none and exe.
func Fingerprint() string { return once() }

var once = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return fingerprint(bi, executableDigest)
})

// fingerprint is Fingerprint of the build information bi (nil when
// there is none); exe gives the executable's digest when it is needed.
func fingerprint(bi *debug.BuildInfo, exe func() string) string {
	settings := map[string]string{}
	goVersion := runtime.Version()
	var deps []string
	module := ""
	if bi != nil {
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			module = bi.Main.Version
		}
		for _, d := range bi.Deps {
			line := d.Path + " " + d.Version + " " + d.Sum
			if d.Replace != nil {
				line += " => " + d.Replace.Path + " " + d.Replace.Version + " " + d.Replace.Sum
			}
			deps = append(deps, line)
		}
	}
	slices.Sort(deps)
	arch := settings["GOARCH"]
	if arch == "" {
		arch = runtime.GOARCH
	}
	for _, level := range []string{"GOAMD64", "GOARM64", "GOARM", "GO386", "GOPPC64", "GOMIPS", "GOMIPS64", "GORISCV64", "GOWASM"} {
		if v := settings[level]; v != "" {
			arch += "/" + v
		}
	}
	f := []string{"program=" + strings.ReplaceAll(eventlog.ProgramVersion, " ", "/"), "go=" + goVersion, "arch=" + arch}
	if module != "" {
		f = append(f, "module="+module)
	}
	vcs, named := "none", false
	if rev := settings["vcs.revision"]; rev != "" {
		vcs, named = rev[:min(12, len(rev))], true
		if settings["vcs.modified"] == "true" {
			vcs, named = vcs+"+dirty", false
		}
	}
	f = append(f, "vcs="+vcs, "deps="+digest(strings.Join(deps, "\n")))
	if t := settings["-tags"]; t != "" {
		f = append(f, "tags="+t)
	}
	for _, k := range []string{"-ldflags", "-gcflags"} {
		if v := settings[k]; v != "" {
			f = append(f, k[1:]+"="+digest(v))
		}
	}
	if !named {
		f = append(f, "exe="+exe())
	}
	return strings.Join(f, " ")
}

// digest is the first 12 hex digits of the sha256 of s.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}

// executableDigest is the first 12 hex digits of the sha256 of this
// process's executable file, or "unknown" when it cannot be read. On Linux
// /proc/self/exe is the running file even when it was replaced or removed
// since (go run removes its binary). Cost: one read of the file (~25 MB).
func executableDigest() string {
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		path, perr := os.Executable()
		if perr != nil {
			return "unknown"
		}
		if f, err = os.Open(path); err != nil {
			return "unknown"
		}
	}
	defer func() { _ = f.Close() }() // read only: closing loses nothing
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown"
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}
