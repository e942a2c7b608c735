package netty

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// hexDumpBodyMax is how many body bytes HexDump prints before eliding the rest.
const hexDumpBodyMax = 64

// HexDump renders a frame on one line for the console log: the header annotated, then the body
// in 4-byte groups, elided after 64 bytes. It accepts any bytes (short, corrupt or several frames)
// and never fails:
//
//	len=29 magic=0xBADC0FFE id=6(AddCredit) body[20]=00000003 01020304 05060708 11121314 15161718
//
// Bytes past the frame length are reported as "+N trailing bytes"; a short input is dumped raw.
func HexDump(frame []byte) string {
	var sb strings.Builder
	if len(frame) < FrameHeaderLength {
		sb.WriteString(fmt.Sprintf("short[%d]=", len(frame)))
		writeGroups(&sb, frame)
		return sb.String()
	}
	n := int64(int32(binary.BigEndian.Uint32(frame)))
	magic := binary.BigEndian.Uint32(frame[4:])
	id := MessageID(frame[8])
	fmt.Fprintf(&sb, "len=%d magic=0x%08X id=%d(%s)", n, magic, uint8(id), id)
	if magic != MagicNumber {
		sb.WriteString("!badmagic")
	}
	end := int64(len(frame))
	if n >= FrameHeaderLength && n < end {
		end = n
	}
	body := frame[FrameHeaderLength:end]
	fmt.Fprintf(&sb, " body[%d]=", len(body))
	shown := body
	if len(shown) > hexDumpBodyMax {
		shown = shown[:hexDumpBodyMax]
	}
	writeGroups(&sb, shown)
	if len(body) > len(shown) {
		fmt.Fprintf(&sb, " ...(+%d bytes)", len(body)-len(shown))
	}
	if n >= FrameHeaderLength && n < int64(len(frame)) {
		fmt.Fprintf(&sb, " +%d trailing bytes", int64(len(frame))-n)
	} else if n > int64(len(frame)) {
		fmt.Fprintf(&sb, " (incomplete: %d of %d bytes)", len(frame), n)
	}
	return sb.String()
}

func writeGroups(sb *strings.Builder, b []byte) {
	for i := 0; i < len(b); i += 4 {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(sb, "%x", b[i:min(i+4, len(b))])
	}
}
