package netty

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// Every golden vector's fields tile its frame: contiguous from byte 0 to
// the frame length, and each int or ID field's value is what the vector's
// bytes hold at that offset (read here straight from the hand-written hex).
func TestFieldsTileTheGoldenFrames(t *testing.T) {
	for _, v := range vectors() {
		frame := unhex(t, v.want)
		fs := Fields(v.give)
		off := 0
		for _, f := range fs {
			if f.Offset != off {
				t.Errorf("%s: field %s at %d, want %d", v.name, f.Name, f.Offset, off)
			}
			off += f.Size
			b := frame[f.Offset : f.Offset+f.Size]
			switch {
			case f.Name == "magicNumber":
				if f.Value != "0xBADC0FFE" {
					t.Errorf("%s: magic %s", v.name, f.Value)
				}
			case f.Size == 4:
				if want := strconv.Itoa(int(int32(binary.BigEndian.Uint32(b)))); f.Value != want {
					t.Errorf("%s: %s = %s, the bytes hold %s", v.name, f.Name, f.Value, want)
				}
			case f.Size == 16:
				if want := hex.EncodeToString(b); f.Value != want {
					t.Errorf("%s: %s = %s, the bytes hold %s", v.name, f.Name, f.Value, want)
				}
			case f.Name == "buffer" || f.Name == "event":
				if want := hex.EncodeToString(b); f.Value != want {
					t.Errorf("%s: %s = %s, the bytes hold %s", v.name, f.Name, f.Value, want)
				}
			case f.Name == "msgId" || f.Name == "dataType":
				if !strings.HasPrefix(f.Value, strconv.Itoa(int(b[0]))+" (") {
					t.Errorf("%s: %s = %s, the byte is %d", v.name, f.Name, f.Value, b[0])
				}
			}
		}
		if off != len(frame) {
			t.Errorf("%s: fields end at %d, the frame is %d bytes", v.name, off, len(frame))
		}
	}
}

// A stream of every golden frame decodes frame by frame at the offsets the
// vectors' lengths give.
func TestDecodeStreamOfTheGoldenFrames(t *testing.T) {
	var stream []byte
	var starts []int
	for _, v := range vectors() {
		starts = append(starts, len(stream))
		stream = append(stream, unhex(t, v.want)...)
	}
	frames, err := DecodeStream(stream)
	if err != nil || len(frames) != len(vectors()) {
		t.Fatalf("%d frames, %v", len(frames), err)
	}
	for i, f := range frames {
		v := vectors()[i]
		if f.Offset != starts[i] || f.Length != len(unhex(t, v.want)) || f.Message.String() != v.give.String() {
			t.Errorf("frame %d: at %d, %d bytes, %s; want %d, %s", i+1, f.Offset, f.Length, f.Message, starts[i], v.give)
		}
	}
	if frames, err := DecodeStream(nil); err != nil || len(frames) != 0 {
		t.Errorf("an empty stream: %v, %v", frames, err)
	}
}

// A bad frame's error names the byte at fault: the field a check refuses,
// where the bytes end, or, in a stream, that byte counted from the
// stream's start.
func TestErrorOffsets(t *testing.T) {
	addCredit := "0000001d badc0ffe 06 00000003 " + hexReceiver
	buffer := "0000002e badc0ffe 00 " + hexReceiver + " 00000001 0000002a 00000003 01 00 00000003 616263"
	request := "00000061 badc0ffe 02 " + hexPartition + " 00000000 00000002 " + hexReceiver + " 00000002"
	patch := func(frame string, at int, b ...byte) string {
		f := unhex(t, frame)
		copy(f[at:], b)
		return hex.EncodeToString(f)
	}
	for _, c := range []struct {
		name   string
		give   string
		offset int
		err    error
	}{
		{"bad magic", patch(addCredit, 4, 0xde, 0xad), 4, ErrBadMagic},
		{"unknown id", patch(addCredit, 8, 0x0c), 8, ErrUnknownID},
		{"negative length", patch(addCredit, 0, 0xff), 0, ErrNegativeLength},
		{"credit 0", patch(addCredit, 9, 0, 0, 0, 0), 9, ErrInvalidField},
		{"body one byte short", addCredit[:len(addCredit)-2], 28, ErrIncomplete},
		{"dataType 12", patch(buffer, 37, 12), 37, ErrInvalidField},
		{"isCompressed 2", patch(buffer, 38, 2), 38, ErrInvalidField},
		{"bufferSize 4 of 3", patch(buffer, 39, 0, 0, 0, 4), 39, ErrBodyLength},
		{"subtaskIndex -1", patch(request, 9+16+4+16+16, 0xff, 0xff, 0xff, 0xff), 61, ErrInvalidField},
		{"attemptNumber -1", patch(request, 65, 0xff, 0xff, 0xff, 0xff), 65, ErrInvalidField},
		{"startIndex -1", patch(request, 69, 0xff, 0xff, 0xff, 0xff), 69, ErrInvalidField},
		{"endIndex below startIndex", patch(patch(request, 69, 0, 0, 0, 3), 73, 0, 0, 0, 2), 73, ErrInvalidField},
		{"the second frame", "00000009 badc0ffe 05 " + patch(addCredit, 9, 0, 0, 0, 0), 9 + 9, ErrInvalidField},
	} {
		_, err := DecodeStream(unhex(t, c.give))
		var se *StreamError
		if !errors.As(err, &se) || se.Offset != c.offset || !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want a %v at byte %d", c.name, err, c.err, c.offset)
			continue
		}
		if !strings.HasPrefix(err.Error(), "byte "+strconv.Itoa(c.offset)) {
			t.Errorf("%s: %q does not start with the byte", c.name, err)
		}
	}
	// Validate places its refusal the same way, in the frame Encode would write
	if err := Validate(AddCredit{ReceiverID: vecReceiver}); err == nil || err.(*FrameError).Offset != 9 {
		t.Errorf("Validate(AddCredit{credit 0}) = %v", err)
	}
}

func TestParseHex(t *testing.T) {
	want := unhex(t, "00000009 badc0ffe 05")
	for _, give := range []string{"00000009badc0ffe05", "0x00000009 BADC0FFE 05", " 00:00:00:09\nba:dc:0f:fe\t05 "} {
		if got, err := ParseHex(give); err != nil || !bytes.Equal(got, want) {
			t.Errorf("ParseHex(%q) = %x, %v", give, got, err)
		}
	}
	for give, msg := range map[string]string{
		"0000 00g9":  `hex: character 8 ('g') is not a hex digit`,
		"00000009 b": "hex: an odd number of hex digits (9): the digit at character 10 has no pair",
		"0x 0x00":    `hex: character 5 ('x') is not a hex digit`,
	} {
		if _, err := ParseHex(give); err == nil || !strings.HasPrefix(err.Error(), msg) {
			t.Errorf("ParseHex(%q) error %v, want %q", give, err, msg)
		}
	}
}

// The log's one-line dump decodes to the frame's message and fields; what
// it elides is said, and only the checks of what it shows apply.
func TestDecodeDump(t *testing.T) {
	for _, v := range vectors() {
		frame := unhex(t, v.want)
		f, known, err := DecodeDump(HexDump(frame))
		if err != nil || f.Length != len(frame) || known != min(len(frame), FrameHeaderLength+hexDumpBodyMax) {
			t.Errorf("%s: %+v, known %d, %v", v.name, f, known, err)
			continue
		}
		whole := Fields(v.give)
		for i, x := range f.Fields {
			switch {
			case x.Offset+x.Size <= known:
				if x != whole[i] {
					t.Errorf("%s: field %+v, want %+v", v.name, x, whole[i])
				}
			case x.Offset >= known:
				if x.Value != "(elided in the log)" {
					t.Errorf("%s: elided field %+v", v.name, x)
				}
			default:
				if !strings.HasSuffix(x.Value, "bytes elided in the log)") {
					t.Errorf("%s: a field cut by the elision: %+v", v.name, x)
				}
			}
		}
		if known == len(frame) && f.Message.String() != v.give.String() {
			t.Errorf("%s: %s, want %s", v.name, f.Message, v.give)
		}
	}
	// a PartitionRequest whose endIndex the dump elides is not refused for it
	req := PartitionRequest{QueueIndexSet: ResultSubpartitionIndexSet{StartIndex: 2, EndIndex: 3}, Credit: 2}
	if _, _, err := DecodeDump(HexDump(Encode(req))); err != nil {
		t.Errorf("an elided endIndex was checked: %v", err)
	}
	// what the dump shows is checked, at its byte
	bad := Encode(AddCredit{ReceiverID: vecReceiver})
	var se *StreamError
	if _, _, err := DecodeDump(HexDump(bad)); !errors.As(err, &se) || se.Offset != 9 || !errors.Is(err, ErrInvalidField) {
		t.Errorf("credit 0 in a dump: %v", err)
	}
	for give, msg := range map[string]string{
		"len=9 magic": `hex: "len=9 magic" is not a hex dump of the log`,
		"len=29 magic=0xBADC0FFE id=6 body[21]=00": "hex: body[21]=00: not the body length of a frame of 29 bytes",
		"len=29 magic=0xBADC0FFE id=6 body[20]=0g": `hex: character 2 ('g') is not a hex digit`,
	} {
		if _, _, err := DecodeDump(give); err == nil || !strings.HasPrefix(err.Error(), msg) {
			t.Errorf("DecodeDump(%q) error %v, want %q", give, err, msg)
		}
	}
}
