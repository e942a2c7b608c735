package netty

import (
	"encoding/binary"
	"fmt"
)

// AbstractID is Flink's 128-bit identifier (org.apache.flink.util.AbstractID): two Java longs.
// On the wire it is lowerPart then upperPart, 16 bytes, big-endian. The zero value is a valid
// (all-zero) ID.
type AbstractID struct {
	LowerPart int64
	UpperPart int64
}

// String renders the ID as AbstractID.toString does: 32 lowercase hex digits, the lower part's
// eight big-endian bytes first, then the upper part's.
func (id AbstractID) String() string {
	return fmt.Sprintf("%016x%016x", uint64(id.LowerPart), uint64(id.UpperPart))
}

// InputChannelID identifies the receiving input channel of a subpartition
// (org.apache.flink.runtime.io.network.partition.consumer.InputChannelID); 16 bytes on the wire.
type InputChannelID AbstractID

// String is AbstractID.String.
func (id InputChannelID) String() string { return AbstractID(id).String() }

// IntermediateDataSetID identifies a job's intermediate data set
// (org.apache.flink.runtime.jobgraph.IntermediateDataSetID); 16 bytes on the wire.
type IntermediateDataSetID AbstractID

// String is AbstractID.String.
func (id IntermediateDataSetID) String() string { return AbstractID(id).String() }

// JobVertexID identifies a job vertex (org.apache.flink.runtime.jobgraph.JobVertexID); 16 bytes.
type JobVertexID AbstractID

// String is AbstractID.String.
func (id JobVertexID) String() string { return AbstractID(id).String() }

// ExecutionGraphID identifies one execution graph of a job
// (org.apache.flink.runtime.executiongraph.ExecutionGraphID); 16 bytes on the wire.
type ExecutionGraphID AbstractID

// String is AbstractID.String.
func (id ExecutionGraphID) String() string { return AbstractID(id).String() }

// IntermediateResultPartitionID is one partition of an intermediate data set
// (org.apache.flink.runtime.jobgraph.IntermediateResultPartitionID): the data set's ID, then
// PartitionNum as a Java int; 20 bytes on the wire. Any PartitionNum is accepted.
type IntermediateResultPartitionID struct {
	IntermediateDataSetID IntermediateDataSetID
	PartitionNum          int32
}

// String follows IntermediateResultPartitionID.toString: "<dataset>#<partitionNum>".
func (id IntermediateResultPartitionID) String() string {
	return fmt.Sprintf("%s#%d", id.IntermediateDataSetID, id.PartitionNum)
}

// ExecutionVertexID is one parallel subtask of a job vertex
// (org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID): JobVertexID then SubtaskIndex;
// 20 bytes on the wire. SubtaskIndex must be >= 0 (Flink's constructor refuses a negative one).
type ExecutionVertexID struct {
	JobVertexID  JobVertexID
	SubtaskIndex int32
}

// String follows ExecutionVertexID.toString: "<jobVertexId>_<subtaskIndex>".
func (id ExecutionVertexID) String() string {
	return fmt.Sprintf("%s_%d", id.JobVertexID, id.SubtaskIndex)
}

// ExecutionAttemptID is one attempt to run a subtask
// (org.apache.flink.runtime.executiongraph.ExecutionAttemptID): ExecutionGraphID,
// ExecutionVertexID, then AttemptNumber; 40 bytes on the wire. AttemptNumber must be >= 0.
type ExecutionAttemptID struct {
	ExecutionGraphID  ExecutionGraphID
	ExecutionVertexID ExecutionVertexID
	AttemptNumber     int32
}

// String follows ExecutionAttemptID.toString: "<graph>_<vertex>_<attempt>".
func (id ExecutionAttemptID) String() string {
	return fmt.Sprintf("%s_%s_%d", id.ExecutionGraphID, id.ExecutionVertexID, id.AttemptNumber)
}

// ResultPartitionID names a produced partition
// (org.apache.flink.runtime.io.network.partition.ResultPartitionID). NettyMessage writes
// PartitionID (20 bytes) then ProducerID (40 bytes): 60 bytes on the wire.
type ResultPartitionID struct {
	PartitionID IntermediateResultPartitionID
	ProducerID  ExecutionAttemptID
}

// String follows ResultPartitionID.toString: "<partitionId>@<producerId>".
func (id ResultPartitionID) String() string {
	return fmt.Sprintf("%s@%s", id.PartitionID, id.ProducerID)
}

// ResultSubpartitionIndexSet is the inclusive range of subpartition indexes one input channel
// consumes (org.apache.flink.runtime.io.network.partition.ResultSubpartitionIndexSet, an
// IndexRange); StartIndex then EndIndex, 8 bytes on the wire. IndexRange requires
// 0 <= StartIndex <= EndIndex.
type ResultSubpartitionIndexSet struct {
	StartIndex int32
	EndIndex   int32
}

// String follows IndexRange.toString: "[start, end]".
func (s ResultSubpartitionIndexSet) String() string {
	return fmt.Sprintf("[%d, %d]", s.StartIndex, s.EndIndex)
}

// DataType is the ordinal of org.apache.flink.runtime.io.network.buffer.Buffer.DataType as
// BufferResponse sends it in one byte. The values are Java ordinals (NONE is 0), so unlike our
// other enums they start at 0; release-1.20 defines the twelve below.
type DataType uint8

// Buffer.DataType ordinals in release-1.20, in declaration order.
const (
	DataTypeNone                                DataType = 0
	DataTypeDataBuffer                          DataType = 1
	DataTypeEventBuffer                         DataType = 2
	DataTypePrioritizedEventBuffer              DataType = 3
	DataTypeAlignedCheckpointBarrier            DataType = 4
	DataTypeTimeoutableAlignedCheckpointBarrier DataType = 5
	DataTypeRecoveryCompletion                  DataType = 6
	DataTypeEndOfSegment                        DataType = 7
	DataTypeDataBufferWithClearEnd              DataType = 8
	DataTypeEndOfData                           DataType = 9
	DataTypeEndOfPartition                      DataType = 10
	DataTypeRecoveryMetadata                    DataType = 11

	// NumDataTypes is Buffer.DataType.values().length in release-1.20; a received ordinal must
	// be below it.
	NumDataTypes = 12
)

var dataTypeNames = [NumDataTypes]string{
	"NONE", "DATA_BUFFER", "EVENT_BUFFER", "PRIORITIZED_EVENT_BUFFER",
	"ALIGNED_CHECKPOINT_BARRIER", "TIMEOUTABLE_ALIGNED_CHECKPOINT_BARRIER",
	"RECOVERY_COMPLETION", "END_OF_SEGMENT", "DATA_BUFFER_WITH_CLEAR_END",
	"END_OF_DATA", "END_OF_PARTITION", "RECOVERY_METADATA",
}

// String is the Java constant's name, or "DataType(n)" for an ordinal Flink does not define.
func (t DataType) String() string {
	if int(t) < NumDataTypes {
		return dataTypeNames[t]
	}
	return fmt.Sprintf("DataType(%d)", uint8(t))
}

// IsBuffer reports Buffer.DataType.isBuffer(): true for DATA_BUFFER and
// DATA_BUFFER_WITH_CLEAR_END, the types that carry records rather than an event.
func (t DataType) IsBuffer() bool {
	return t == DataTypeDataBuffer || t == DataTypeDataBufferWithClearEnd
}

// --- wire helpers -------------------------------------------------------------------------

func appendInt32(dst []byte, v int32) []byte { return binary.BigEndian.AppendUint32(dst, uint32(v)) }

func appendAbstractID(dst []byte, id AbstractID) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(id.LowerPart))
	return binary.BigEndian.AppendUint64(dst, uint64(id.UpperPart))
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func appendResultPartitionID(dst []byte, id ResultPartitionID) []byte {
	dst = appendAbstractID(dst, AbstractID(id.PartitionID.IntermediateDataSetID))
	dst = appendInt32(dst, id.PartitionID.PartitionNum)
	dst = appendAbstractID(dst, AbstractID(id.ProducerID.ExecutionGraphID))
	dst = appendAbstractID(dst, AbstractID(id.ProducerID.ExecutionVertexID.JobVertexID))
	dst = appendInt32(dst, id.ProducerID.ExecutionVertexID.SubtaskIndex)
	return appendInt32(dst, id.ProducerID.AttemptNumber)
}

// Wire sizes of the composite identifiers.
const (
	inputChannelIDLength     = 16
	resultPartitionIDLength  = 16 + 4 + 16 + 16 + 4 + 4 // IntermediateResultPartitionID + ExecutionAttemptID
	subpartitionIndexSetSize = 8
)

// reader walks a body whose length the caller has already checked; it never reads past b.
type reader struct {
	b   []byte
	off int
}

func (r *reader) int32() int32 {
	v := int32(binary.BigEndian.Uint32(r.b[r.off : r.off+4]))
	r.off += 4
	return v
}

func (r *reader) int64() int64 {
	v := int64(binary.BigEndian.Uint64(r.b[r.off : r.off+8]))
	r.off += 8
	return v
}

func (r *reader) byte() byte {
	v := r.b[r.off]
	r.off++
	return v
}

func (r *reader) bytes(n int) []byte {
	if n == 0 {
		return nil
	}
	out := make([]byte, n)
	copy(out, r.b[r.off:r.off+n])
	r.off += n
	return out
}

func (r *reader) abstractID() AbstractID {
	lower := r.int64()
	upper := r.int64()
	return AbstractID{LowerPart: lower, UpperPart: upper}
}

func (r *reader) inputChannelID() InputChannelID { return InputChannelID(r.abstractID()) }

func (r *reader) resultPartitionID() ResultPartitionID {
	var id ResultPartitionID
	id.PartitionID.IntermediateDataSetID = IntermediateDataSetID(r.abstractID())
	id.PartitionID.PartitionNum = r.int32()
	id.ProducerID.ExecutionGraphID = ExecutionGraphID(r.abstractID())
	id.ProducerID.ExecutionVertexID.JobVertexID = JobVertexID(r.abstractID())
	id.ProducerID.ExecutionVertexID.SubtaskIndex = r.int32()
	id.ProducerID.AttemptNumber = r.int32()
	return id
}
