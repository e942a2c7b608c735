package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/eventlog"
)

// buildTag tells apart builds that must not run together although they
// come from the same tree (a test hook for a modified build): set it with
// -ldflags "-X github.com/flinksim/flinksim/cluster/remote.buildTag=TAG".
// It is part of the build fingerprint.
var buildTag string

// Version is the program version and a fingerprint of the message schema
// (both .proto files): a process that decodes the messages differently
// would write another log.
func Version() string {
	h := sha256.New()
	for _, fd := range []protoreflect.FileDescriptor{messages.File_messages_flinksim_proto, messages.File_messages_remote_proto} {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(protodesc.ToFileDescriptorProto(fd))
		h.Write(b)
	}
	return eventlog.ProgramVersion + " messages:" + hex.EncodeToString(h.Sum(nil))[:12]
}

var fingerprint = sync.OnceValue(func() string {
	bi, _ := debug.ReadBuildInfo()
	return fingerprintOf(bi, buildTag)
})

// Fingerprint names the build this process runs (debug.ReadBuildInfo): the
// main module's version, the VCS revision and whether the tree was modified,
// and a hash of every dependency's path, version and sum. Two processes of
// one run must have the same: a TaskManager built from a modified tree
// with the same version string runs other rules and would write another log.
func Fingerprint() string { return fingerprint() }

func fingerprintOf(bi *debug.BuildInfo, tag string) string {
	if bi == nil {
		s := "no build info"
		if tag != "" {
			s += " build:" + tag
		}
		return s
	}
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	rev := set["vcs.revision"]
	if rev == "" {
		rev = "none"
	} else if len(rev) > 12 {
		rev = rev[:12]
	}
	if set["vcs.modified"] == "true" {
		// a dirty tree is not named by its revision: the executable is
		rev += "+modified"
		if exe, err := os.Executable(); err == nil {
			if b, err := os.ReadFile(exe); err == nil {
				h := sha256.Sum256(b)
				rev += " exe:" + hex.EncodeToString(h[:])[:12]
			}
		}
	}
	var deps []string
	for _, d := range bi.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		deps = append(deps, m.Path+"@"+m.Version+" "+m.Sum)
	}
	slices.Sort(deps)
	h := sha256.Sum256([]byte(strings.Join(deps, "\n")))
	s := fmt.Sprintf("%s %s vcs:%s deps:%s %s", bi.Main.Path, bi.Main.Version, rev, hex.EncodeToString(h[:])[:12], bi.GoVersion)
	if tag != "" {
		s += " build:" + tag
	}
	return s
}
