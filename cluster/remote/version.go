// Package remote runs TaskManagers in other OS processes, on this host or
// others (ARCHITECTURE.md, "Remote transport"): a jobmanager process holds
// the scheduler, the JobManager, the ResourceManager and the broker; each
// taskmanager process opens one framed connection to it (conn: TCP, or
// mutual TLS with the role in the certificate), joins it by TLS, a join
// token or loopback, with the same build, is told the run's settings, and
// hosts the TaskManagers it is asked to start with their subtasks and input
// channels. A member's messages are its own by the connection they come on;
// anything else is dropped and counted. Every delivery still goes through
// the one scheduler in its total order, so the log is the single-process
// log, byte for byte.
//
// This package lives in wall-clock time, outside the simulation: joins,
// heartbeats between processes, dial timeouts, TLS. Nothing it does reaches
// the log except through a logged user action: a process that dies or is cut
// off becomes `kill-taskmanager tm-N` at the virtual time it is noticed.
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
