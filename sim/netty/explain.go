package netty

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Field is one field of a frame as NettyMessage writes it: where it is, how
// long, Flink's name for it (dotted inside a composite ID) and its value as
// text.
type Field struct {
	Offset int    `json:"offset"` // from the frame's first byte
	Size   int    `json:"size"`
	Name   string `json:"name"`
	Value  string `json:"value"`
}

// fieldValueMax is how many bytes of a buffer or an event Fields shows in
// hex before eliding the rest.
const fieldValueMax = 64

// layout builds a frame's fields in wire order.
type layout struct {
	fields []Field
	off    int
}

func (l *layout) add(name string, size int, value string) {
	l.fields = append(l.fields, Field{Offset: l.off, Size: size, Name: name, Value: value})
	l.off += size
}

func (l *layout) int32(name string, v int32) { l.add(name, 4, strconv.Itoa(int(v))) }

func (l *layout) id(name string, id AbstractID) { l.add(name, 16, id.String()) }

func (l *layout) bytes(name string, b []byte) {
	v := hex.EncodeToString(b[:min(len(b), fieldValueMax)])
	if len(b) > fieldValueMax {
		v += fmt.Sprintf("...(+%d bytes)", len(b)-fieldValueMax)
	}
	l.add(name, len(b), v)
}

func (l *layout) resultPartitionID(name string, id ResultPartitionID) {
	l.id(name+".partitionId.intermediateDataSetId", AbstractID(id.PartitionID.IntermediateDataSetID))
	l.int32(name+".partitionId.partitionNum", id.PartitionID.PartitionNum)
	l.id(name+".producerId.executionGraphId", AbstractID(id.ProducerID.ExecutionGraphID))
	l.id(name+".producerId.jobVertexId", AbstractID(id.ProducerID.ExecutionVertexID.JobVertexID))
	l.int32(name+".producerId.subtaskIndex", id.ProducerID.ExecutionVertexID.SubtaskIndex)
	l.int32(name+".producerId.attemptNumber", id.ProducerID.AttemptNumber)
}

// Fields lays out m's frame field by field, in the order NettyMessage
// writes them: the header's frame length, magic number and message id,
// then the body's fields (nil for a nil m).
func Fields(m Message) []Field {
	if m == nil {
		return nil
	}
	l := &layout{}
	l.add("frameLength", 4, strconv.Itoa(FrameLength(m)))
	l.add("magicNumber", 4, fmt.Sprintf("0x%08X", MagicNumber))
	l.add("msgId", 1, fmt.Sprintf("%d (%s)", uint8(m.ID()), m.ID()))
	switch m := m.(type) {
	case BufferResponse:
		l.id("receiverId", AbstractID(m.ReceiverID))
		l.int32("subpartitionId", m.SubpartitionID)
		l.int32("sequenceNumber", m.SequenceNumber)
		l.int32("backlog", m.Backlog)
		l.add("dataType", 1, fmt.Sprintf("%d (%s)", uint8(m.DataType), m.DataType))
		l.add("isCompressed", 1, strconv.FormatBool(m.IsCompressed))
		l.int32("bufferSize", int32(len(m.Buffer)))
		l.bytes("buffer", m.Buffer)
	case PartitionRequest:
		l.resultPartitionID("partitionId", m.PartitionID)
		l.int32("queueIndexSet.startIndex", m.QueueIndexSet.StartIndex)
		l.int32("queueIndexSet.endIndex", m.QueueIndexSet.EndIndex)
		l.id("receiverId", AbstractID(m.ReceiverID))
		l.int32("credit", m.Credit)
	case TaskEventRequest:
		l.int32("event.length", int32(len(m.Event)))
		l.bytes("event", m.Event)
		l.resultPartitionID("partitionId", m.PartitionID)
		l.id("receiverId", AbstractID(m.ReceiverID))
	case CancelPartitionRequest:
		l.id("receiverId", AbstractID(m.ReceiverID))
	case CloseRequest:
	case AddCredit:
		l.int32("credit", m.Credit)
		l.id("receiverId", AbstractID(m.ReceiverID))
	case ResumeConsumption:
		l.id("receiverId", AbstractID(m.ReceiverID))
	case AckAllUserRecordsProcessed:
		l.id("receiverId", AbstractID(m.ReceiverID))
	case BacklogAnnouncement:
		l.int32("backlog", m.Backlog)
		l.id("receiverId", AbstractID(m.ReceiverID))
	case NewBufferSize:
		l.int32("bufferSize", m.BufferSize)
		l.id("receiverId", AbstractID(m.ReceiverID))
	case SegmentID:
		l.int32("subpartitionId", m.SubpartitionID)
		l.int32("segmentId", m.SegmentID)
		l.id("receiverId", AbstractID(m.ReceiverID))
	}
	return l.fields
}

// badIndexField names the bound of an index set that IndexRange refuses.
func badIndexField(s ResultSubpartitionIndexSet) string {
	if s.StartIndex < 0 {
		return "queueIndexSet.startIndex"
	}
	return "queueIndexSet.endIndex"
}

// Frame is one decoded frame of a byte stream: where it starts, its
// length, the message and its fields.
type Frame struct {
	Offset  int     // of the frame's first byte in the stream
	Length  int     // the frame length, header included
	Message Message //
	Fields  []Field // Fields(Message)
}

// StreamError is a bad frame in a stream: the frame's number (from 1) and
// its first byte, and the byte of the stream where the fault lies. Err is
// the frame's *FrameError.
type StreamError struct {
	Frame  int
	Start  int
	Offset int
	Err    error
}

func (e *StreamError) Error() string {
	if e.Frame == 1 && e.Start == 0 {
		return fmt.Sprintf("byte %d: %v", e.Offset, e.Err)
	}
	return fmt.Sprintf("byte %d (frame %d, from byte %d): %v", e.Offset, e.Frame, e.Start, e.Err)
}

// Unwrap is the frame's error.
func (e *StreamError) Unwrap() error { return e.Err }

// DecodeStream decodes every frame of b, one after another, as a
// channel's Decoder does; a frame cut short at the end of b is an
// ErrIncomplete. The first bad frame ends it with a *StreamError naming the
// byte of b at fault. Empty b holds no frame.
func DecodeStream(b []byte) ([]Frame, error) {
	d := NewDecoder(DefaultMaxFrameLength)
	ms, err := d.Feed(b)
	out := make([]Frame, 0, len(ms))
	off := 0
	for _, m := range ms {
		n := FrameLength(m) // a frame decodes only when it re-encodes to its own bytes
		out = append(out, Frame{Offset: off, Length: n, Message: m, Fields: Fields(m)})
		off += n
	}
	if err == nil && d.Buffered() > 0 {
		_, _, err = Decode(b[off:]) // the ErrIncomplete of the frame cut short
	}
	if err != nil {
		at := off
		var fe *FrameError
		if errors.As(err, &fe) {
			at += fe.Offset
		}
		return out, &StreamError{Frame: len(out) + 1, Start: off, Offset: at, Err: err}
	}
	return out, nil
}

// ParseHex reads bytes written in hex: pairs of hex digits, with any
// spaces, newlines, colons or a leading 0x between them. Errors name the
// character at fault (from 1).
func ParseHex(s string) ([]byte, error) {
	lead := len(s) - len(strings.TrimLeft(s, " \t\r\n"))
	prefix := lead // the end of a leading 0x
	if strings.HasPrefix(s[lead:], "0x") || strings.HasPrefix(s[lead:], "0X") {
		prefix += 2
	}
	var digits []byte
	var first int // the position (from 1) of the last digit that began a pair
	for i, c := range s {
		switch {
		case i >= lead && i < prefix:
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ':':
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			if len(digits)%2 == 0 {
				first = i + 1
			}
			digits = append(digits, byte(c))
		default:
			return nil, fmt.Errorf("hex: character %d (%q) is not a hex digit", i+1, c)
		}
	}
	if len(digits)%2 != 0 {
		return nil, fmt.Errorf("hex: an odd number of hex digits (%d): the digit at character %d has no pair", len(digits), first)
	}
	b := make([]byte, len(digits)/2)
	if _, err := hex.Decode(b, digits); err != nil {
		return nil, fmt.Errorf("hex: %v", err)
	}
	return b, nil
}

// maxDumpBody bounds the body DecodeDump rebuilds (64 MiB; Flink's network
// buffers are 32 KiB by default).
const maxDumpBody = 64 << 20

// IsDump reports whether s is the one-line form HexDump writes in the log
// (len=N magic=0x... id=N(...) body[N]=...).
func IsDump(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "len=") }

// DecodeDump decodes the frame of one HexDump line, as the log's
// netty_frame events carry it. HexDump shows at most 64 body bytes: the
// fields past what it shows are given as elided (Field.Value "(elided in
// the log)"), and only the checks of the fields it shows apply. known is
// how many of the frame's bytes the line holds.
func DecodeDump(s string) (f Frame, known int, err error) {
	b, known, err := parseHexDump(strings.TrimSpace(s))
	if err != nil {
		return Frame{}, 0, err
	}
	n, err := checkHeader(b, DefaultMaxFrameLength)
	if err == nil && len(b) < n {
		err = frameErr(ErrIncomplete, len(b), "netty: incomplete frame: have %d of %d bytes", len(b), n)
	}
	if err != nil {
		return Frame{}, known, &StreamError{Frame: 1, Offset: err.(*FrameError).Offset, Err: err}
	}
	m, err := decodeBody(MessageID(b[8]), b[FrameHeaderLength:n])
	if err == nil {
		err = placed(m, m.validate())
	}
	if fe, ok := err.(*FrameError); ok && (fe.Offset < known || m == nil) {
		return Frame{}, known, &StreamError{Frame: 1, Offset: fe.Offset, Err: err}
	}
	fields := Fields(m)
	for i, x := range fields {
		switch {
		case x.Offset+x.Size <= known:
		case x.Offset >= known:
			fields[i].Value = "(elided in the log)"
		case x.Offset+x.Size > known:
			fields[i].Value = hex.EncodeToString(b[x.Offset:known]) + fmt.Sprintf("...(+%d bytes elided in the log)", x.Offset+x.Size-known)
		}
	}
	return Frame{Length: n, Message: m, Fields: fields}, known, nil
}

// parseHexDump rebuilds a frame from HexDump's line: the length, magic
// number and id as written, then the body's groups, and zeros for what the
// line elides; known is how many bytes are the line's.
func parseHexDump(s string) (b []byte, known int, err error) {
	f := strings.Fields(s)
	if len(f) < 4 || !strings.HasPrefix(f[1], "magic=0x") || !strings.HasPrefix(f[2], "id=") || !strings.HasPrefix(f[3], "body[") {
		return nil, 0, fmt.Errorf("hex: %q is not a hex dump of the log (len=N magic=0x... id=N(...) body[N]=...)", s)
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(f[0], "len="), 10, 32)
	if err != nil {
		return nil, 0, fmt.Errorf("hex: %s: not a frame length", f[0])
	}
	magic, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(f[1], "magic=0x"), "!badmagic"), 16, 32)
	if err != nil {
		return nil, 0, fmt.Errorf("hex: %s: not a magic number", f[1])
	}
	idText, _, _ := strings.Cut(strings.TrimPrefix(f[2], "id="), "(")
	id, err := strconv.ParseUint(idText, 10, 8)
	if err != nil {
		return nil, 0, fmt.Errorf("hex: %s: not a message id", f[2])
	}
	size, first, _ := strings.Cut(strings.TrimPrefix(f[3], "body["), "]=")
	bodyLen, err := strconv.Atoi(size)
	if err != nil || bodyLen < 0 || bodyLen != int(n)-FrameHeaderLength && int(n) >= FrameHeaderLength {
		return nil, 0, fmt.Errorf("hex: %s: not the body length of a frame of %d bytes", f[3], n)
	}
	if bodyLen > maxDumpBody {
		return nil, 0, fmt.Errorf("hex: %s: a frame of the log holds at most %d body bytes", f[3], maxDumpBody)
	}
	var groups []string
	for _, g := range append([]string{first}, f[4:]...) {
		if strings.HasPrefix(g, "+") || strings.HasPrefix(g, "(") || strings.HasPrefix(g, "...") {
			break // "...(+N bytes)", "+N trailing bytes", "(incomplete: ...)": not frame bytes
		}
		groups = append(groups, g)
	}
	body, err := ParseHex(strings.Join(groups, " "))
	if err != nil {
		return nil, 0, err
	}
	if len(body) > bodyLen {
		return nil, 0, fmt.Errorf("hex: %s but the line shows %d body bytes", f[3], len(body))
	}
	b = appendInt32(nil, int32(n))
	b = append(b, byte(magic>>24), byte(magic>>16), byte(magic>>8), byte(magic))
	b = append(b, byte(id))
	b = append(b, body...)
	known = len(b)
	return append(b, make([]byte, bodyLen-len(body))...), known, nil
}
