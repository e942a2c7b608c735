package netty

// What the tests check of a message beyond what decoding checks.

// Validate reports whether Flink would accept m's fields: the preconditions its constructors
// check when a frame is decoded (AddCredit credit > 0, BacklogAnnouncement backlog > 0,
// NewBufferSize bufferSize > 0, SegmentId segmentId > 0, subtaskIndex >= 0, attemptNumber >= 0,
// 0 <= startIndex <= endIndex, a known Buffer.DataType). The error wraps ErrInvalidField and
// carries Flink's message.
func Validate(m Message) error {
	if m == nil {
		return &FrameError{Err: ErrInvalidField, Msg: "netty: nil message"}
	}
	return placed(m, m.validate())
}

// Err is the error that ended the stream, or nil.
func (d *Decoder) Err() error { return d.err }
