package netty

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to Decode and to a Decoder. Neither may panic; whatever Decode
// accepts must re-encode to exactly the bytes it consumed, and the streaming Decoder, given the
// same bytes in two chunks, must agree with Decode on the first message. The seed corpus is the
// hand-written vectors plus testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	for _, v := range vectors() {
		f.Add(unhex(f, v.want), uint16(5))
	}
	f.Add(unhex(f, "00000009 deadbeef 05"), uint16(0))
	f.Add(unhex(f, "0000000a badc0ffe 01 00"), uint16(3))
	f.Add([]byte{}, uint16(0))
	// hostile inputs (issue 12): a frame that claims 4 GiB, one that claims
	// less than its header, zeros as from /dev/zero
	f.Add(unhex(f, "ffffffff badc0ffe 00"), uint16(9))
	f.Add(unhex(f, "00000003 badc0ffe 00"), uint16(9))
	f.Add(make([]byte, 4096), uint16(100))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		m, n, err := DecodeLimit(data, 1<<16)
		if err != nil {
			var fe *FrameError
			if !errors.As(err, &fe) || fe.Err == nil || m != nil || n != 0 {
				t.Fatalf("bad error shape: %v, %v, %d", err, m, n)
			}
		} else {
			if n < FrameHeaderLength || n > len(data) {
				t.Fatalf("consumed %d of %d", n, len(data))
			}
			if re := Encode(m); !bytes.Equal(re, data[:n]) {
				t.Fatalf("re-encode differs\n in %x\nout %x", data[:n], re)
			}
			if FrameLength(m) != n {
				t.Fatalf("FrameLength %d, consumed %d", FrameLength(m), n)
			}
			if Validate(m) != nil {
				t.Fatalf("decoded message fails Validate: %v", Validate(m))
			}
		}
		_ = HexDump(data)

		k := int(cut) % (len(data) + 1)
		d := NewDecoder(1 << 16)
		out1, err1 := d.Feed(data[:k])
		out2, err2 := d.Feed(data[k:])
		out := append(out1, out2...)
		switch {
		case err == nil:
			if len(out) == 0 || !reflect.DeepEqual(out[0], m) {
				t.Fatalf("Decoder first message %v, Decode %v (errs %v, %v)", out, m, err1, err2)
			}
		case errors.Is(err, ErrIncomplete):
			if err1 != nil || err2 != nil || len(out) != 0 || d.Buffered() != len(data) {
				t.Fatalf("incomplete input: Decoder gave %v, %v, %v, buffered %d", out, err1, err2, d.Buffered())
			}
		default:
			derr := err1
			if derr == nil {
				derr = err2
			}
			if len(out) != 0 || derr == nil || derr.Error() != err.Error() {
				t.Fatalf("Decode error %v, Decoder gave %v, %v", err, out, derr)
			}
		}
	})
}
