// Package remote runs TaskManagers in other OS processes, on this host or
// others, over Hollywood's remote package (ARCHITECTURE.md, "Remote
// transport"): a jobmanager process holds the scheduler, the JobManager, the
// ResourceManager and the broker; each taskmanager process joins it, is told
// the run's settings, and hosts the TaskManagers it is asked to start with
// their subtasks and input channels. Every delivery still goes through the
// one scheduler in its total order, so the log is the single-process log,
// byte for byte.
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

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/eventlog"
)

// buildTag tells apart builds that must not run together although they
// carry the same program version: set it with
// -ldflags "-X github.com/flinksim/flinksim/cluster/remote.buildTag=TAG".
var buildTag string

// Version is what a joining process must match: the program version and a
// fingerprint of the message schema (both .proto files), since a process
// that decodes the messages differently, or runs other rules, would write
// another log.
func Version() string {
	h := sha256.New()
	for _, fd := range []protoreflect.FileDescriptor{messages.File_messages_flinksim_proto, messages.File_messages_remote_proto} {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(protodesc.ToFileDescriptorProto(fd))
		h.Write(b)
	}
	v := eventlog.ProgramVersion + " messages:" + hex.EncodeToString(h.Sum(nil))[:12]
	if buildTag != "" {
		v += " build:" + buildTag
	}
	return v
}
