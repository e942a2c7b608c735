package remote

import (
	"crypto/sha256"
	"encoding/hex"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/flinksim/flinksim/buildinfo"
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

// Fingerprint names the build this process runs: buildinfo.Fingerprint
// (module versions, VCS revision and dirty flag, dependencies, flags, and
// the executable's digest for a dirty tree), with the test hook's tag. Two
// processes of one run must have the same: a TaskManager built from a
// modified tree with the same version string runs other rules and would
// write another log.
func Fingerprint() string {
	if buildTag != "" {
		return buildinfo.Fingerprint() + " build:" + buildTag
	}
	return buildinfo.Fingerprint()
}
