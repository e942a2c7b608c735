package netty

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Frame constants of NettyMessage (release-1.20).
const (
	// FrameHeaderLength is NettyMessage.FRAME_HEADER_LENGTH: frame length (4), magic number (4),
	// message id (1). The shortest frame (CloseRequest) is exactly this long.
	FrameHeaderLength = 4 + 4 + 1
	// MagicNumber is NettyMessage.MAGIC_NUMBER, the second int of every frame.
	MagicNumber uint32 = 0xBADC0FFE
	// DefaultMaxFrameLength is the largest frame Flink's frame decoder accepts:
	// LengthFieldBasedFrameDecoder's maxFrameLength, Integer.MAX_VALUE bytes.
	DefaultMaxFrameLength = math.MaxInt32
)

// Sentinel errors. Every error this package returns is a *FrameError that wraps exactly one of
// them, so callers test with errors.Is; the FrameError's text is Flink's (or Netty's) own message
// where Flink has one.
var (
	// ErrIncomplete: the bytes end before the frame does. Decode returns it; Decoder waits instead.
	ErrIncomplete = errors.New("netty: incomplete frame")
	// ErrNegativeLength: the frame length field, read as a Java int, is negative.
	ErrNegativeLength = errors.New("netty: negative frame length")
	// ErrFrameTooShort: the frame length field is below the 9-byte header.
	ErrFrameTooShort = errors.New("netty: frame shorter than its header")
	// ErrFrameTooLong: the frame length field exceeds the configured maximum.
	ErrFrameTooLong = errors.New("netty: frame too long")
	// ErrBadMagic: the second int is not 0xBADC0FFE.
	ErrBadMagic = errors.New("netty: wrong magic number")
	// ErrUnknownID: the message id is not one release-1.20 defines.
	ErrUnknownID = errors.New("netty: unknown message id")
	// ErrUnsupported: a message id Flink defines that this package does not decode (ErrorResponse).
	ErrUnsupported = errors.New("netty: unsupported message id")
	// ErrBodyLength: the body is shorter or longer than its message id and length fields require.
	ErrBodyLength = errors.New("netty: body length does not fit message")
	// ErrInvalidField: a field breaks a precondition Flink checks when it builds the message.
	ErrInvalidField = errors.New("netty: invalid field value")
)

// FrameError is the error type of every failure here. Err is one of the sentinels above and Msg
// the human text (Flink's message where Flink refuses the same input). Offset is the byte of the
// frame, from its first, where the fault lies: the field that is wrong, or where the bytes end
// for ErrIncomplete.
type FrameError struct {
	Err    error
	Msg    string
	Offset int
	field  string // the field a validation refused (Fields' name), until Offset is known
}

// Error returns Msg.
func (e *FrameError) Error() string { return e.Msg }

// Unwrap returns the sentinel, for errors.Is.
func (e *FrameError) Unwrap() error { return e.Err }

func frameErr(kind error, offset int, format string, args ...any) error {
	return &FrameError{Err: kind, Msg: fmt.Sprintf(format, args...), Offset: offset}
}

// invalidField is a validation's refusal of field (a name Fields gives).
func invalidField(field, msg string) error {
	return &FrameError{Err: ErrInvalidField, Msg: msg, field: field}
}

// placed gives a validation's error the offset of its field in m's frame.
func placed(m Message, err error) error {
	var fe *FrameError
	if errors.As(err, &fe) && fe.field != "" {
		for _, f := range Fields(m) {
			if f.Name == fe.field {
				fe.Offset = f.Offset
			}
		}
	}
	return err
}

// FrameLength is the number of bytes Encode(m) produces, header included, computed without
// encoding: 9 + the body length. It is 0 for a nil m. Cost O(1).
func FrameLength(m Message) int {
	if m == nil {
		return 0
	}
	return FrameHeaderLength + m.bodyLength()
}

// BufferResponseFrameLength is FrameLength of a BufferResponse whose buffer holds bufferSize bytes
// (9 + 34 + bufferSize), for byte accounting of buffers the simulator does not materialize.
// A negative bufferSize counts as 0.
func BufferResponseFrameLength(bufferSize int) int {
	return FrameHeaderLength + BufferResponseHeaderLength + max(bufferSize, 0)
}

// AppendFrame appends m's whole frame to dst and returns the extended slice, writing the fields
// in NettyMessage's order, big-endian. It does not check m's fields (Decode refuses what Flink
// refuses); a nil m appends nothing. Cost O(FrameLength(m)), at most one allocation.
func AppendFrame(dst []byte, m Message) []byte {
	if m == nil {
		return dst
	}
	n := FrameLength(m)
	dst = slices.Grow(dst, n)
	dst = appendInt32(dst, int32(n))
	dst = binary.BigEndian.AppendUint32(dst, MagicNumber)
	dst = append(dst, byte(m.ID()))
	return m.appendBody(dst)
}

// Encode returns m's frame in a new slice of exactly FrameLength(m) bytes (nil for a nil m).
// It does not check m's fields: Decode refuses what Flink refuses, so encode only valid messages.
func Encode(m Message) []byte {
	if m == nil {
		return nil
	}
	return AppendFrame(make([]byte, 0, FrameLength(m)), m)
}

// fixedBodyLength is the body length of ids whose size never varies; ok is false for variable
// ones (BufferResponse, TaskEventRequest) and for ids not decoded here.
func fixedBodyLength(id MessageID) (n int, ok bool) {
	switch id {
	case IDPartitionRequest:
		return partitionRequestBodyLength, true
	case IDCancelPartitionRequest, IDResumeConsumption, IDAckAllUserRecordsProcessed:
		return inputChannelIDLength, true
	case IDCloseRequest:
		return 0, true
	case IDAddCredit, IDBacklogAnnouncement, IDNewBufferSize:
		return 4 + inputChannelIDLength, true
	case IDSegmentID:
		return 8 + inputChannelIDLength, true
	}
	return 0, false
}

// checkHeader inspects the frame that starts at b and returns its length once the 9-byte header
// is present and acceptable. It fails with ErrIncomplete while fewer bytes than it needs to decide
// are present, and reports a fault as soon as the bytes at hand prove it (the length field after
// 4 bytes, magic and id after 9), so a stream decoder never waits for a frame it will refuse.
func checkHeader(b []byte, maxFrameLength int) (int, error) {
	if len(b) < 4 {
		return 0, frameErr(ErrIncomplete, len(b), "netty: incomplete frame: have %d of the 4 length bytes", len(b))
	}
	raw := int32(binary.BigEndian.Uint32(b))
	if raw < 0 {
		// NettyMessageClientDecoderDelegate's checkState message.
		return 0, frameErr(ErrNegativeLength, 0,
			"The length field of current message must be non-negative (frame length field %d)", raw)
	}
	n := int(raw)
	if n > maxFrameLength {
		// LengthFieldBasedFrameDecoder's TooLongFrameException message.
		return 0, frameErr(ErrFrameTooLong, 0, "Adjusted frame length exceeds %d: %d - discarded", maxFrameLength, n)
	}
	if n < FrameHeaderLength {
		return 0, frameErr(ErrFrameTooShort, 0,
			"frame length %d is shorter than the %d-byte frame header", n, FrameHeaderLength)
	}
	if len(b) < FrameHeaderLength {
		return 0, frameErr(ErrIncomplete, len(b), "netty: incomplete frame: have %d of the %d header bytes", len(b), FrameHeaderLength)
	}
	if magic := binary.BigEndian.Uint32(b[4:]); magic != MagicNumber {
		return 0, frameErr(ErrBadMagic, 4,
			"Network stream corrupted: received incorrect magic number. (wrong magic number: 0x%08X)", magic)
	}
	id := MessageID(b[8])
	switch {
	case id == IDErrorResponse:
		return 0, frameErr(ErrUnsupported, 8,
			"ErrorResponse (id 1) is not supported by flinksim: its body is a Java-serialized Throwable")
	case int(id) >= len(messageIDNames):
		// NonBufferResponseDecoder's ProtocolException message.
		return 0, frameErr(ErrUnknownID, 8, "Received unknown message from producer: %d", int8(id))
	}
	if want, ok := fixedBodyLength(id); ok && n-FrameHeaderLength != want {
		return 0, frameErr(ErrBodyLength, 0, "%s (id %d) body is %d bytes, want %d", id, id, n-FrameHeaderLength, want)
	}
	return n, nil
}

// Decode decodes the first frame in b, refusing frames longer than DefaultMaxFrameLength. It
// returns the message and the number of bytes it consumed (the frame length); b may hold more
// frames after it. Decoded byte slices are copies, so b may be reused. Errors wrap one of the
// sentinels: ErrIncomplete if b ends before the frame does; otherwise the frame is bad and
// consumed is 0. Never panics. Cost O(frame length).
func Decode(b []byte) (Message, int, error) { return DecodeLimit(b, DefaultMaxFrameLength) }

// DecodeLimit is Decode with a maximum frame length in bytes (header included); a value <= 0 or
// above DefaultMaxFrameLength means DefaultMaxFrameLength. A maximum below 9 refuses every frame.
func DecodeLimit(b []byte, maxFrameLength int) (Message, int, error) {
	maxFrameLength = normalizeMax(maxFrameLength)
	n, err := checkHeader(b, maxFrameLength)
	if err != nil {
		return nil, 0, err
	}
	if len(b) < n {
		return nil, 0, frameErr(ErrIncomplete, len(b), "netty: incomplete frame: have %d of %d bytes", len(b), n)
	}
	m, err := decodeBody(MessageID(b[8]), b[FrameHeaderLength:n])
	if err != nil {
		return nil, 0, err
	}
	if err := m.validate(); err != nil {
		return nil, 0, placed(m, err)
	}
	return m, n, nil
}

func normalizeMax(maxFrameLength int) int {
	if maxFrameLength <= 0 || maxFrameLength > DefaultMaxFrameLength {
		return DefaultMaxFrameLength
	}
	return maxFrameLength
}

// decodeBody parses a body whose fixed length, if any, checkHeader already confirmed.
func decodeBody(id MessageID, body []byte) (Message, error) {
	r := &reader{b: body}
	switch id {
	case IDBufferResponse:
		if len(body) < BufferResponseHeaderLength {
			return nil, frameErr(ErrBodyLength, 0, "BufferResponse (id 0) body is %d bytes, needs at least %d",
				len(body), BufferResponseHeaderLength)
		}
		var m BufferResponse
		m.ReceiverID = r.inputChannelID()
		m.SubpartitionID = r.int32()
		m.SequenceNumber = r.int32()
		m.Backlog = r.int32()
		m.DataType = DataType(r.byte())
		compressed, err := readBool(r, "isCompressed")
		if err != nil {
			return nil, err
		}
		m.IsCompressed = compressed
		size := r.int32()
		if int64(size) != int64(len(body)-BufferResponseHeaderLength) {
			return nil, frameErr(ErrBodyLength, FrameHeaderLength+r.off-4, "BufferResponse (id 0) bufferSize is %d but the frame carries %d buffer bytes",
				size, len(body)-BufferResponseHeaderLength)
		}
		m.Buffer = r.bytes(int(size))
		return m, nil
	case IDPartitionRequest:
		var m PartitionRequest
		m.PartitionID = r.resultPartitionID()
		m.QueueIndexSet.StartIndex = r.int32()
		m.QueueIndexSet.EndIndex = r.int32()
		m.ReceiverID = r.inputChannelID()
		m.Credit = r.int32()
		return m, nil
	case IDTaskEventRequest:
		if len(body) < taskEventFixedLength {
			return nil, frameErr(ErrBodyLength, 0, "TaskEventRequest (id 3) body is %d bytes, needs at least %d",
				len(body), taskEventFixedLength)
		}
		size := r.int32()
		if int64(size) != int64(len(body)-taskEventFixedLength) {
			return nil, frameErr(ErrBodyLength, FrameHeaderLength, "TaskEventRequest (id 3) event length is %d but the frame carries %d event bytes",
				size, len(body)-taskEventFixedLength)
		}
		var m TaskEventRequest
		m.Event = r.bytes(int(size))
		m.PartitionID = r.resultPartitionID()
		m.ReceiverID = r.inputChannelID()
		return m, nil
	case IDCancelPartitionRequest:
		return CancelPartitionRequest{ReceiverID: r.inputChannelID()}, nil
	case IDCloseRequest:
		return CloseRequest{}, nil
	case IDAddCredit:
		credit := r.int32()
		return AddCredit{Credit: credit, ReceiverID: r.inputChannelID()}, nil
	case IDResumeConsumption:
		return ResumeConsumption{ReceiverID: r.inputChannelID()}, nil
	case IDAckAllUserRecordsProcessed:
		return AckAllUserRecordsProcessed{ReceiverID: r.inputChannelID()}, nil
	case IDBacklogAnnouncement:
		backlog := r.int32()
		return BacklogAnnouncement{Backlog: backlog, ReceiverID: r.inputChannelID()}, nil
	case IDNewBufferSize:
		size := r.int32()
		return NewBufferSize{BufferSize: size, ReceiverID: r.inputChannelID()}, nil
	case IDSegmentID:
		sub := r.int32()
		seg := r.int32()
		return SegmentID{SubpartitionID: sub, SegmentID: seg, ReceiverID: r.inputChannelID()}, nil
	}
	// checkHeader filtered every other id; keep a clean error rather than trust that.
	return nil, frameErr(ErrUnknownID, 8, "Received unknown message from producer: %d", int8(id))
}

// readBool reads a Java boolean. Netty takes any non-zero byte as true; we accept only 0 and 1 so
// that a decoded frame re-encodes to the same bytes.
func readBool(r *reader, field string) (bool, error) {
	switch b := r.byte(); b {
	case 0:
		return false, nil
	case 1:
		return true, nil
	default:
		return false, frameErr(ErrInvalidField, FrameHeaderLength+r.off-1, "%s byte must be 0 or 1, got 0x%02X", field, b)
	}
}
