package netty

import (
	"fmt"
)

// MessageID is the one-byte message id that follows the magic number (NettyMessage.*.ID).
type MessageID uint8

// Message ids of release-1.20's NettyMessage subclasses. They are wire values, so they keep
// Flink's numbering (BufferResponse is 0).
const (
	IDBufferResponse             MessageID = 0
	IDErrorResponse              MessageID = 1
	IDPartitionRequest           MessageID = 2
	IDTaskEventRequest           MessageID = 3
	IDCancelPartitionRequest     MessageID = 4
	IDCloseRequest               MessageID = 5
	IDAddCredit                  MessageID = 6
	IDResumeConsumption          MessageID = 7
	IDAckAllUserRecordsProcessed MessageID = 8
	IDBacklogAnnouncement        MessageID = 9
	IDNewBufferSize              MessageID = 10
	IDSegmentID                  MessageID = 11
)

var messageIDNames = [...]string{
	"BufferResponse", "ErrorResponse", "PartitionRequest", "TaskEventRequest",
	"CancelPartitionRequest", "CloseRequest", "AddCredit", "ResumeConsumption",
	"AckAllUserRecordsProcessed", "BacklogAnnouncement", "NewBufferSize", "SegmentId",
}

// String is the Flink class name for a known id, or "MessageID(n)".
func (id MessageID) String() string {
	if int(id) < len(messageIDNames) {
		return messageIDNames[id]
	}
	return fmt.Sprintf("MessageID(%d)", uint8(id))
}

// Message is one NettyMessage that this package can encode and decode. The implementations are
// the value types below; the interface is sealed.
type Message interface {
	// ID is the message's wire id.
	ID() MessageID
	// String renders the message for logs, following the Flink class's toString where it has one.
	String() string
	// bodyLength is the number of bytes after the 9-byte frame header.
	bodyLength() int
	// appendBody appends the body in NettyMessage's field order.
	appendBody(dst []byte) []byte
	// validate checks the preconditions Flink's constructor enforces when it decodes the message.
	validate() error
}

// Fixed body lengths (bytes after the frame header) of the messages whose size does not vary.
const (
	// BufferResponseHeaderLength is BufferResponse.MESSAGE_HEADER_LENGTH in release-1.20: receiverId
	// (16), subpartitionId (4), sequenceNumber (4), backlog (4), dataType (1), isCompressed (1),
	// bufferSize (4). The buffer's bytes follow it.
	BufferResponseHeaderLength = 16 + 4 + 4 + 4 + 1 + 1 + 4

	partitionRequestBodyLength = resultPartitionIDLength + subpartitionIndexSetSize + inputChannelIDLength + 4
	// taskEventFixedLength is everything in a TaskEventRequest except the event's bytes.
	taskEventFixedLength = 4 + resultPartitionIDLength + inputChannelIDLength
)

// BufferResponse (id 0) carries one network buffer or one serialized event from a subpartition to
// the consuming input channel (NettyMessage.BufferResponse, release-1.20). Body: ReceiverID,
// SubpartitionID, SequenceNumber, Backlog, DataType ordinal (1 byte), IsCompressed (1 byte), the
// buffer size (int), then the buffer's bytes.
//
// SequenceNumber counts buffers per channel from 0; Backlog is the number of buffers still queued
// in the subpartition after this one (>= 0 when Flink sends it; not re-checked on receipt, as in
// Flink). An empty Buffer is legal (Flink sends it to return a credit) and decodes as nil.
type BufferResponse struct {
	ReceiverID     InputChannelID
	SubpartitionID int32
	SequenceNumber int32
	Backlog        int32
	DataType       DataType
	IsCompressed   bool
	// Buffer is the payload: serialized records for DATA_BUFFER, a serialized event otherwise.
	// Its length is the wire's bufferSize.
	Buffer []byte
}

// ID is IDBufferResponse.
func (BufferResponse) ID() MessageID { return IDBufferResponse }

func (m BufferResponse) bodyLength() int { return BufferResponseHeaderLength + len(m.Buffer) }

func (m BufferResponse) appendBody(dst []byte) []byte {
	dst = appendAbstractID(dst, AbstractID(m.ReceiverID))
	dst = appendInt32(dst, m.SubpartitionID)
	dst = appendInt32(dst, m.SequenceNumber)
	dst = appendInt32(dst, m.Backlog)
	dst = append(dst, byte(m.DataType))
	dst = appendBool(dst, m.IsCompressed)
	dst = appendInt32(dst, int32(len(m.Buffer)))
	return append(dst, m.Buffer...)
}

func (m BufferResponse) validate() error {
	if int(m.DataType) >= NumDataTypes {
		// Buffer.DataType.values()[b] fails with Java's array-index message.
		return invalidField("dataType", fmt.Sprintf("Index %d out of bounds for length %d", int8(m.DataType), NumDataTypes))
	}
	return nil
}

// String renders "BufferResponse(<receiver> sub=<n> seq=<n> backlog=<n> <DataType> compressed=<b> size=<n>)";
// Flink's BufferResponse has no toString.
func (m BufferResponse) String() string {
	return fmt.Sprintf("BufferResponse(%s sub=%d seq=%d backlog=%d %s compressed=%t size=%d)",
		m.ReceiverID, m.SubpartitionID, m.SequenceNumber, m.Backlog, m.DataType, m.IsCompressed, len(m.Buffer))
}

// PartitionRequest (id 2) asks a TaskManager's server to start sending a partition's
// subpartitions to an input channel (NettyMessage.PartitionRequest, release-1.20). Body:
// PartitionID (ResultPartitionID, 60 bytes), QueueIndexSet (8), ReceiverID (16), Credit (4):
// 88 bytes. Credit is the channel's initial credit (its exclusive buffers); Flink does not check it.
type PartitionRequest struct {
	PartitionID   ResultPartitionID
	QueueIndexSet ResultSubpartitionIndexSet
	ReceiverID    InputChannelID
	Credit        int32
}

// ID is IDPartitionRequest.
func (PartitionRequest) ID() MessageID { return IDPartitionRequest }

func (PartitionRequest) bodyLength() int { return partitionRequestBodyLength }

func (m PartitionRequest) appendBody(dst []byte) []byte {
	dst = appendResultPartitionID(dst, m.PartitionID)
	dst = appendInt32(dst, m.QueueIndexSet.StartIndex)
	dst = appendInt32(dst, m.QueueIndexSet.EndIndex)
	dst = appendAbstractID(dst, AbstractID(m.ReceiverID))
	return appendInt32(dst, m.Credit)
}

func (m PartitionRequest) validate() error {
	if err := validateResultPartitionID(m.PartitionID); err != nil {
		return err
	}
	s := m.QueueIndexSet
	if s.StartIndex < 0 || s.EndIndex < s.StartIndex {
		// IndexRange's checkArgument calls carry no message.
		return invalidField(badIndexField(s), fmt.Sprintf("IllegalArgumentException: IndexRange needs 0 <= startIndex <= endIndex, got %s", s))
	}
	return nil
}

// String follows PartitionRequest.toString: "PartitionRequest(<partitionId>:<indexSet>:<credit>)".
func (m PartitionRequest) String() string {
	return fmt.Sprintf("PartitionRequest(%s:%s:%d)", m.PartitionID, m.QueueIndexSet, m.Credit)
}

// TaskEventRequest (id 3) sends a task event upstream to a producer (NettyMessage.TaskEventRequest,
// release-1.20). Body: the event's length (int), the event's bytes, PartitionID (60), ReceiverID
// (16). Event holds EventSerializer.toSerializedEvent's output and is kept opaque here (Flink
// deserializes it on receipt); an empty Event decodes as nil.
type TaskEventRequest struct {
	Event       []byte
	PartitionID ResultPartitionID
	ReceiverID  InputChannelID
}

// ID is IDTaskEventRequest.
func (TaskEventRequest) ID() MessageID { return IDTaskEventRequest }

func (m TaskEventRequest) bodyLength() int { return taskEventFixedLength + len(m.Event) }

func (m TaskEventRequest) appendBody(dst []byte) []byte {
	dst = appendInt32(dst, int32(len(m.Event)))
	dst = append(dst, m.Event...)
	dst = appendResultPartitionID(dst, m.PartitionID)
	return appendAbstractID(dst, AbstractID(m.ReceiverID))
}

func (m TaskEventRequest) validate() error { return validateResultPartitionID(m.PartitionID) }

// String renders "TaskEventRequest(<partitionId> -> <receiver>, event=<n> bytes)"; Flink's class
// has no toString.
func (m TaskEventRequest) String() string {
	return fmt.Sprintf("TaskEventRequest(%s -> %s, event=%d bytes)", m.PartitionID, m.ReceiverID, len(m.Event))
}

// CancelPartitionRequest (id 4) cancels the partition request of one input channel
// (NettyMessage.CancelPartitionRequest). Body: ReceiverID (16).
type CancelPartitionRequest struct {
	ReceiverID InputChannelID
}

// ID is IDCancelPartitionRequest.
func (CancelPartitionRequest) ID() MessageID { return IDCancelPartitionRequest }

func (CancelPartitionRequest) bodyLength() int { return inputChannelIDLength }

func (m CancelPartitionRequest) appendBody(dst []byte) []byte {
	return appendAbstractID(dst, AbstractID(m.ReceiverID))
}

func (CancelPartitionRequest) validate() error { return nil }

// String renders "CancelPartitionRequest(<receiver>)"; Flink's class has no toString.
func (m CancelPartitionRequest) String() string {
	return fmt.Sprintf("CancelPartitionRequest(%s)", m.ReceiverID)
}

// CloseRequest (id 5) tells the server the client closes the connection
// (NettyMessage.CloseRequest). Empty body: the frame is the 9-byte header alone.
type CloseRequest struct{}

// ID is IDCloseRequest.
func (CloseRequest) ID() MessageID { return IDCloseRequest }

func (CloseRequest) bodyLength() int { return 0 }

func (CloseRequest) appendBody(dst []byte) []byte { return dst }

func (CloseRequest) validate() error { return nil }

// String is "CloseRequest()".
func (CloseRequest) String() string { return "CloseRequest()" }

// AddCredit (id 6) announces Credit more buffers (> 0) that the input channel can receive
// (NettyMessage.AddCredit). Body: Credit (4), ReceiverID (16).
type AddCredit struct {
	Credit     int32
	ReceiverID InputChannelID
}

// ID is IDAddCredit.
func (AddCredit) ID() MessageID { return IDAddCredit }

func (AddCredit) bodyLength() int { return 4 + inputChannelIDLength }

func (m AddCredit) appendBody(dst []byte) []byte {
	dst = appendInt32(dst, m.Credit)
	return appendAbstractID(dst, AbstractID(m.ReceiverID))
}

func (m AddCredit) validate() error {
	if m.Credit <= 0 {
		return invalidField("credit", "The announced credit should be greater than 0")
	}
	return nil
}

// String follows AddCredit.toString: "AddCredit(<receiver> : <credit>)".
func (m AddCredit) String() string { return fmt.Sprintf("AddCredit(%s : %d)", m.ReceiverID, m.Credit) }

// ResumeConsumption (id 7) unblocks a subpartition after a checkpoint barrier was aligned
// (NettyMessage.ResumeConsumption). Body: ReceiverID (16).
type ResumeConsumption struct {
	ReceiverID InputChannelID
}

// ID is IDResumeConsumption.
func (ResumeConsumption) ID() MessageID { return IDResumeConsumption }

func (ResumeConsumption) bodyLength() int { return inputChannelIDLength }

func (m ResumeConsumption) appendBody(dst []byte) []byte {
	return appendAbstractID(dst, AbstractID(m.ReceiverID))
}

func (ResumeConsumption) validate() error { return nil }

// String follows ResumeConsumption.toString: "ResumeConsumption(<receiver>)".
func (m ResumeConsumption) String() string { return fmt.Sprintf("ResumeConsumption(%s)", m.ReceiverID) }

// AckAllUserRecordsProcessed (id 8) acknowledges that the consumer processed all user records
// before EndOfData (NettyMessage.AckAllUserRecordsProcessed). Body: ReceiverID (16).
type AckAllUserRecordsProcessed struct {
	ReceiverID InputChannelID
}

// ID is IDAckAllUserRecordsProcessed.
func (AckAllUserRecordsProcessed) ID() MessageID { return IDAckAllUserRecordsProcessed }

func (AckAllUserRecordsProcessed) bodyLength() int { return inputChannelIDLength }

func (m AckAllUserRecordsProcessed) appendBody(dst []byte) []byte {
	return appendAbstractID(dst, AbstractID(m.ReceiverID))
}

func (AckAllUserRecordsProcessed) validate() error { return nil }

// String follows AckAllUserRecordsProcessed.toString: "AckAllUserRecordsProcessed(<receiver>)".
func (m AckAllUserRecordsProcessed) String() string {
	return fmt.Sprintf("AckAllUserRecordsProcessed(%s)", m.ReceiverID)
}

// BacklogAnnouncement (id 9) tells a consumer with no credit how many buffers (Backlog > 0) wait
// in its subpartition, so it can assign floating buffers (NettyMessage.BacklogAnnouncement).
// Body: Backlog (4), ReceiverID (16).
type BacklogAnnouncement struct {
	Backlog    int32
	ReceiverID InputChannelID
}

// ID is IDBacklogAnnouncement.
func (BacklogAnnouncement) ID() MessageID { return IDBacklogAnnouncement }

func (BacklogAnnouncement) bodyLength() int { return 4 + inputChannelIDLength }

func (m BacklogAnnouncement) appendBody(dst []byte) []byte {
	dst = appendInt32(dst, m.Backlog)
	return appendAbstractID(dst, AbstractID(m.ReceiverID))
}

func (m BacklogAnnouncement) validate() error {
	if m.Backlog <= 0 {
		return invalidField("backlog", "Must be positive.")
	}
	return nil
}

// String follows BacklogAnnouncement.toString: "BacklogAnnouncement(<backlog> : <receiver>)".
func (m BacklogAnnouncement) String() string {
	return fmt.Sprintf("BacklogAnnouncement(%d : %s)", m.Backlog, m.ReceiverID)
}

// NewBufferSize (id 10) tells the producer the buffer size in bytes (> 0) that buffer debloating
// chose for this channel (NettyMessage.NewBufferSize). Body: BufferSize (4), ReceiverID (16).
type NewBufferSize struct {
	BufferSize int32
	ReceiverID InputChannelID
}

// ID is IDNewBufferSize.
func (NewBufferSize) ID() MessageID { return IDNewBufferSize }

func (NewBufferSize) bodyLength() int { return 4 + inputChannelIDLength }

func (m NewBufferSize) appendBody(dst []byte) []byte {
	dst = appendInt32(dst, m.BufferSize)
	return appendAbstractID(dst, AbstractID(m.ReceiverID))
}

func (m NewBufferSize) validate() error {
	if m.BufferSize <= 0 {
		return invalidField("bufferSize", "The new buffer size should be greater than 0")
	}
	return nil
}

// String follows NewBufferSize.toString: "NewBufferSize(<receiver> : <bufferSize>)".
func (m NewBufferSize) String() string {
	return fmt.Sprintf("NewBufferSize(%s : %d)", m.ReceiverID, m.BufferSize)
}

// SegmentID (id 11) asks a hybrid-shuffle producer for segment SegmentID (> 0) of subpartition
// SubpartitionID (NettyMessage.SegmentId). Body: SubpartitionID (4), SegmentID (4), ReceiverID (16).
type SegmentID struct {
	SubpartitionID int32
	SegmentID      int32
	ReceiverID     InputChannelID
}

// ID is IDSegmentID.
func (SegmentID) ID() MessageID { return IDSegmentID }

func (SegmentID) bodyLength() int { return 4 + 4 + inputChannelIDLength }

func (m SegmentID) appendBody(dst []byte) []byte {
	dst = appendInt32(dst, m.SubpartitionID)
	dst = appendInt32(dst, m.SegmentID)
	return appendAbstractID(dst, AbstractID(m.ReceiverID))
}

func (m SegmentID) validate() error {
	if m.SegmentID <= 0 {
		return invalidField("segmentId", "The segmentId should be greater than 0")
	}
	return nil
}

// String follows SegmentId.toString: "SegmentId(<receiver> : <segmentId>)".
func (m SegmentID) String() string {
	return fmt.Sprintf("SegmentId(%s : %d)", m.ReceiverID, m.SegmentID)
}

func validateResultPartitionID(id ResultPartitionID) error {
	if id.ProducerID.ExecutionVertexID.SubtaskIndex < 0 {
		return invalidField("partitionId.producerId.subtaskIndex", "subtaskIndex must be greater than or equal to 0")
	}
	if id.ProducerID.AttemptNumber < 0 {
		// ExecutionAttemptID's checkArgument(attemptNumber >= 0) carries no message.
		return invalidField("partitionId.producerId.attemptNumber", fmt.Sprintf("IllegalArgumentException: attemptNumber must be >= 0, got %d", id.ProducerID.AttemptNumber))
	}
	return nil
}

// Compile-time checks that every message type implements Message.
var (
	_ Message = BufferResponse{}
	_ Message = PartitionRequest{}
	_ Message = TaskEventRequest{}
	_ Message = CancelPartitionRequest{}
	_ Message = CloseRequest{}
	_ Message = AddCredit{}
	_ Message = ResumeConsumption{}
	_ Message = AckAllUserRecordsProcessed{}
	_ Message = BacklogAnnouncement{}
	_ Message = NewBufferSize{}
	_ Message = SegmentID{}
)
