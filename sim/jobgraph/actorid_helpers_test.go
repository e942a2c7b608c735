package jobgraph

import (
	"strconv"
	"strings"
)

// What the tests read of an ActorID beyond what the simulator reads.

var actorKindNames = [...]string{"", "jobmanager", "resourcemanager", "checkpoint-coordinator", "kafka", "taskmanager",
	"subtask", "inputchannel"}

// String is the kind's name.
func (k ActorKind) String() string {
	if int(k) < len(actorKindNames) && k > 0 {
		return actorKindNames[k]
	}
	return "ActorKind(" + strconv.Itoa(int(k)) + ")"
}

// String is the actor's name, exactly as the log writes it.
func (a ActorID) String() string { return a.name }

// Producer is an input channel's producer subtask index (0 for other
// kinds).
func (a ActorID) Producer() int { return a.producer }

// Task is the subtask without its attempt, as the CheckpointCoordinator
// knows it across attempts (BaseSubtaskName); of an input channel, its
// consumer's; the ID itself for other kinds.
func (a ActorID) Task() ActorID {
	switch a.kind {
	case ActorSubtask, ActorInputChannel:
		return ActorID{name: a.vertex + "-" + strconv.Itoa(a.index), kind: ActorSubtask, vertex: a.vertex, index: a.index}
	}
	return a
}

// Consumer is an input channel's subtask (the zero ActorID for other
// kinds).
func (a ActorID) Consumer() ActorID {
	if a.kind != ActorInputChannel {
		return ActorID{}
	}
	c := a
	c.kind, c.producer = ActorSubtask, 0
	c.name, _, _ = strings.Cut(a.name, "/")
	return c
}
