package exchange

import (
	"hash/fnv"

	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/netty"
)

// ChannelID derives the InputChannelID (a 16-byte AbstractID in Flink) of a
// channel from its actor name, so frames are the same in every run.
func ChannelID(name string) netty.InputChannelID {
	h := fnv.New128a()
	h.Write([]byte(name))
	b := h.Sum(nil)
	var lo, hi int64
	for i := 0; i < 8; i++ {
		lo = lo<<8 | int64(b[i])
		hi = hi<<8 | int64(b[8+i])
	}
	return netty.InputChannelID{LowerPart: lo, UpperPart: hi}
}

// ResultPartitionID is the ID a PartitionRequest frame names for the
// partition of producer (a subtask's actor name), as Flink's
// ResultPartitionID has it: the IntermediateDataSetID its JobVertex
// produces (one for every subtask of the vertex), the partition number and
// the producer's ExecutionAttemptID, both from the subtask's index
// (IntermediateResultPartitionID.partitionNum, ExecutionVertexID.subtaskIndex)
// and attempt. The 16-byte IDs are hashes of the vertex's name (Flink draws
// them at random), so they are stable across runs.
func ResultPartitionID(producer string) netty.ResultPartitionID {
	id, err := jobgraph.ParseActorID(producer)
	if err != nil {
		return netty.ResultPartitionID{PartitionID: netty.IntermediateResultPartitionID{
			IntermediateDataSetID: netty.IntermediateDataSetID(ChannelID(producer))}}
	}
	v, i := id.Vertex(), int32(id.Index())
	return netty.ResultPartitionID{
		PartitionID: netty.IntermediateResultPartitionID{
			IntermediateDataSetID: netty.IntermediateDataSetID(ChannelID(v + "/result")), PartitionNum: i},
		ProducerID: netty.ExecutionAttemptID{
			ExecutionGraphID:  netty.ExecutionGraphID(ChannelID("execution-graph")),
			ExecutionVertexID: netty.ExecutionVertexID{JobVertexID: netty.JobVertexID(ChannelID(v)), SubtaskIndex: i},
			AttemptNumber:     int32(id.Attempt()),
		},
	}
}

// LogFrame logs one NettyMessage of a remote channel as its encoded bytes
// (sim.log.netty-frames): direction "out" from this actor to peer.
func LogFrame(o *kernel.Out, peer string, m netty.Message) {
	frame := netty.Encode(m)
	o.Log(eventlog.NettyFrame{Peer: peer, Message: m.ID().String(), FrameLength: int64(len(frame)), Hex: netty.HexDump(frame)})
}
