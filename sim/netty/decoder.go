package netty

import "errors"

// Decoder turns a byte stream cut into arbitrary chunks back into whole messages, as Netty's
// LengthFieldBasedFrameDecoder followed by NettyMessage's decoders do on a channel. It holds at
// most one partial frame (bounded by its maximum frame length) between calls.
//
// A Decoder is not safe for concurrent use. After it reports an error the stream is corrupt, as
// when Flink closes the channel: every later Feed returns that same error.
type Decoder struct {
	maxFrameLength int
	buf            []byte // unconsumed bytes; buf[0] starts a frame
	err            error
}

// NewDecoder returns a Decoder that refuses frames longer than maxFrameLength bytes (header
// included); a value <= 0 or above DefaultMaxFrameLength means DefaultMaxFrameLength.
func NewDecoder(maxFrameLength int) *Decoder {
	return &Decoder{maxFrameLength: normalizeMax(maxFrameLength)}
}

// Feed appends chunk (which may be empty, or end anywhere inside a frame) and returns, in stream
// order, every message completed by it. A bad frame is reported as soon as its header proves it;
// messages completed before the bad frame in the same call are returned together with the error.
// The decoder copies what it keeps, so chunk may be reused. Cost O(len(chunk) + bytes kept).
func (d *Decoder) Feed(chunk []byte) ([]Message, error) {
	if d.err != nil {
		return nil, d.err
	}
	d.buf = append(d.buf, chunk...)
	var out []Message
	off := 0
	for {
		m, n, err := DecodeLimit(d.buf[off:], d.maxFrameLength)
		if err != nil {
			if errors.Is(err, ErrIncomplete) {
				break
			}
			d.err = err
			d.buf = nil
			return out, err
		}
		out = append(out, m)
		off += n
	}
	// Keep only the partial frame; reuse the array when it is small relative to what was consumed.
	rest := len(d.buf) - off
	if rest == 0 {
		d.buf = d.buf[:0]
	} else if off > 0 {
		copy(d.buf, d.buf[off:])
		d.buf = d.buf[:rest]
	}
	return out, nil
}

// Buffered is the number of bytes of an incomplete frame the decoder holds.
func (d *Decoder) Buffered() int { return len(d.buf) }
