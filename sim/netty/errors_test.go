package netty

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name    string
		give    string // frame in hex, written by hand
		max     int    // 0: default
		wantErr error
		wantMsg string // exact Error() text
	}{
		{
			name: "empty", give: "", wantErr: ErrIncomplete,
			wantMsg: "netty: incomplete frame: have 0 of the 4 length bytes",
		},
		{
			name: "less than the 9-byte header", give: "0000001d badc0f", wantErr: ErrIncomplete,
			wantMsg: "netty: incomplete frame: have 7 of the 9 header bytes",
		},
		{
			name: "body not all there", give: "0000001d badc0ffe 06 00000003 0102", wantErr: ErrIncomplete,
			wantMsg: "netty: incomplete frame: have 15 of 29 bytes",
		},
		{
			name: "negative length", give: "fffffff0 badc0ffe 05", wantErr: ErrNegativeLength,
			wantMsg: "The length field of current message must be non-negative (frame length field -16)",
		},
		{
			name: "length shorter than header", give: "00000008 badc0ffe 05", wantErr: ErrFrameTooShort,
			wantMsg: "frame length 8 is shorter than the 9-byte frame header",
		},
		{
			name: "length zero", give: "00000000", wantErr: ErrFrameTooShort,
			wantMsg: "frame length 0 is shorter than the 9-byte frame header",
		},
		{
			name: "beyond max", give: "0000001d badc0ffe 06", max: 28, wantErr: ErrFrameTooLong,
			wantMsg: "Adjusted frame length exceeds 28: 29 - discarded",
		},
		{
			name: "beyond default max is impossible, at max is fine until body", give: "7fffffff badc0ffe 00", wantErr: ErrIncomplete,
			wantMsg: "netty: incomplete frame: have 9 of 2147483647 bytes",
		},
		{
			name: "bad magic", give: "00000009 deadbeef 05", wantErr: ErrBadMagic,
			wantMsg: "Network stream corrupted: received incorrect magic number. (wrong magic number: 0xDEADBEEF)",
		},
		{
			name: "unknown id 12", give: "00000009 badc0ffe 0c", wantErr: ErrUnknownID,
			wantMsg: "Received unknown message from producer: 12",
		},
		{
			name: "unknown id 0xff", give: "00000009 badc0ffe ff", wantErr: ErrUnknownID,
			wantMsg: "Received unknown message from producer: -1",
		},
		{
			name: "ErrorResponse unsupported", give: "0000000a badc0ffe 01 00", wantErr: ErrUnsupported,
			wantMsg: "ErrorResponse (id 1) is not supported by flinksim: its body is a Java-serialized Throwable",
		},
		{
			name: "AddCredit body too short", give: "0000001c badc0ffe 06 00000003 " + "0102030405060708 11121314151617", wantErr: ErrBodyLength,
			wantMsg: "AddCredit (id 6) body is 19 bytes, want 20",
		},
		{
			name: "AddCredit body too long", give: "0000001e badc0ffe 06 00000003 " + hexReceiver + " 00", wantErr: ErrBodyLength,
			wantMsg: "AddCredit (id 6) body is 21 bytes, want 20",
		},
		{
			name: "CloseRequest with a body", give: "0000000a badc0ffe 05 00", wantErr: ErrBodyLength,
			wantMsg: "CloseRequest (id 5) body is 1 bytes, want 0",
		},
		{
			name: "PartitionRequest short", give: "00000060 badc0ffe 02", wantErr: ErrBodyLength,
			wantMsg: "PartitionRequest (id 2) body is 87 bytes, want 88",
		},
		{
			name: "SegmentId long", give: "00000022 badc0ffe 0b", wantErr: ErrBodyLength,
			wantMsg: "SegmentId (id 11) body is 25 bytes, want 24",
		},
		{
			name: "BufferResponse shorter than its header", give: "0000000d badc0ffe 00 01020304", wantErr: ErrBodyLength,
			wantMsg: "BufferResponse (id 0) body is 4 bytes, needs at least 34",
		},
		{
			name:    "BufferResponse bufferSize larger than frame",
			give:    "0000002d badc0ffe 00 " + hexReceiver + " 00000000 00000000 00000000 01 00 00000003 6162",
			wantErr: ErrBodyLength,
			wantMsg: "BufferResponse (id 0) bufferSize is 3 but the frame carries 2 buffer bytes",
		},
		{
			name:    "BufferResponse bufferSize smaller than frame",
			give:    "0000002e badc0ffe 00 " + hexReceiver + " 00000000 00000000 00000000 01 00 00000002 616263",
			wantErr: ErrBodyLength,
			wantMsg: "BufferResponse (id 0) bufferSize is 2 but the frame carries 3 buffer bytes",
		},
		{
			name:    "BufferResponse negative bufferSize",
			give:    "0000002b badc0ffe 00 " + hexReceiver + " 00000000 00000000 00000000 01 00 ffffffff",
			wantErr: ErrBodyLength,
			wantMsg: "BufferResponse (id 0) bufferSize is -1 but the frame carries 0 buffer bytes",
		},
		{
			name:    "BufferResponse unknown DataType",
			give:    "0000002b badc0ffe 00 " + hexReceiver + " 00000000 00000000 00000000 0c 00 00000000",
			wantErr: ErrInvalidField,
			wantMsg: "Index 12 out of bounds for length 12",
		},
		{
			name:    "BufferResponse negative DataType byte",
			give:    "0000002b badc0ffe 00 " + hexReceiver + " 00000000 00000000 00000000 80 00 00000000",
			wantErr: ErrInvalidField,
			wantMsg: "Index -128 out of bounds for length 12",
		},
		{
			name:    "BufferResponse isCompressed not 0 or 1",
			give:    "0000002b badc0ffe 00 " + hexReceiver + " 00000000 00000000 00000000 01 02 00000000",
			wantErr: ErrInvalidField,
			wantMsg: "isCompressed byte must be 0 or 1, got 0x02",
		},
		{
			name: "TaskEventRequest shorter than fixed part", give: "0000000d badc0ffe 03 00000000", wantErr: ErrBodyLength,
			wantMsg: "TaskEventRequest (id 3) body is 4 bytes, needs at least 80",
		},
		{
			name:    "TaskEventRequest event length disagrees",
			give:    "0000005b badc0ffe 03 00000003 dead " + hexPartition + " " + hexReceiver,
			wantErr: ErrBodyLength,
			wantMsg: "TaskEventRequest (id 3) event length is 3 but the frame carries 2 event bytes",
		},
		{
			name:    "TaskEventRequest negative event length",
			give:    "00000059 badc0ffe 03 80000000 " + hexPartition + " " + hexReceiver,
			wantErr: ErrBodyLength,
			wantMsg: "TaskEventRequest (id 3) event length is -2147483648 but the frame carries 0 event bytes",
		},
		{
			name: "AddCredit zero credit", give: "0000001d badc0ffe 06 00000000 " + hexReceiver, wantErr: ErrInvalidField,
			wantMsg: "The announced credit should be greater than 0",
		},
		{
			name: "AddCredit negative credit", give: "0000001d badc0ffe 06 ffffffff " + hexReceiver, wantErr: ErrInvalidField,
			wantMsg: "The announced credit should be greater than 0",
		},
		{
			name: "BacklogAnnouncement zero backlog", give: "0000001d badc0ffe 09 00000000 " + hexReceiver, wantErr: ErrInvalidField,
			wantMsg: "Must be positive.",
		},
		{
			name: "NewBufferSize zero", give: "0000001d badc0ffe 0a 00000000 " + hexReceiver, wantErr: ErrInvalidField,
			wantMsg: "The new buffer size should be greater than 0",
		},
		{
			name: "SegmentId zero", give: "00000021 badc0ffe 0b 00000002 00000000 " + hexReceiver, wantErr: ErrInvalidField,
			wantMsg: "The segmentId should be greater than 0",
		},
		{
			name: "PartitionRequest negative subtaskIndex",
			give: "00000061 badc0ffe 02 2122232425262728 3132333435363738 00000004 4142434445464748 5152535455565758" +
				" 6162636465666768 7172737475767778 ffffffff 00000001 00000000 00000002 " + hexReceiver + " 00000002",
			wantErr: ErrInvalidField,
			wantMsg: "subtaskIndex must be greater than or equal to 0",
		},
		{
			name: "PartitionRequest negative attemptNumber",
			give: "00000061 badc0ffe 02 2122232425262728 3132333435363738 00000004 4142434445464748 5152535455565758" +
				" 6162636465666768 7172737475767778 00000009 ffffffff 00000000 00000002 " + hexReceiver + " 00000002",
			wantErr: ErrInvalidField,
			wantMsg: "IllegalArgumentException: attemptNumber must be >= 0, got -1",
		},
		{
			name:    "PartitionRequest index set end before start",
			give:    "00000061 badc0ffe 02 " + hexPartition + " 00000003 00000001 " + hexReceiver + " 00000002",
			wantErr: ErrInvalidField,
			wantMsg: "IllegalArgumentException: IndexRange needs 0 <= startIndex <= endIndex, got [3, 1]",
		},
		{
			name:    "PartitionRequest negative start index",
			give:    "00000061 badc0ffe 02 " + hexPartition + " ffffffff 00000001 " + hexReceiver + " 00000002",
			wantErr: ErrInvalidField,
			wantMsg: "IllegalArgumentException: IndexRange needs 0 <= startIndex <= endIndex, got [-1, 1]",
		},
		{
			name:    "TaskEventRequest negative subtaskIndex",
			give:    "0000005b badc0ffe 03 00000002 dead 2122232425262728 3132333435363738 00000004 4142434445464748 5152535455565758 6162636465666768 7172737475767778 80000000 00000001 " + hexReceiver,
			wantErr: ErrInvalidField,
			wantMsg: "subtaskIndex must be greater than or equal to 0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, n, err := DecodeLimit(unhex(t, tt.give), tt.max)
			if err == nil {
				t.Fatalf("Decode = %v, %d, nil; want error %v", m, n, tt.wantErr)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("error %q is not %v", err, tt.wantErr)
			}
			var fe *FrameError
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not a *FrameError", err)
			}
			if err.Error() != tt.wantMsg {
				t.Errorf("error text\n got %q\nwant %q", err.Error(), tt.wantMsg)
			}
			if m != nil || n != 0 {
				t.Errorf("on error got message %v and consumed %d, want nil and 0", m, n)
			}
		})
	}
}

func TestDecodeLimitNormalizesMax(t *testing.T) {
	frame := unhex(t, "00000009 badc0ffe 05")
	for _, max := range []int{0, -1, DefaultMaxFrameLength + 1, 9} {
		if _, _, err := DecodeLimit(frame, max); err != nil {
			t.Errorf("max %d: %v", max, err)
		}
	}
	if _, _, err := DecodeLimit(frame, 8); !errors.Is(err, ErrFrameTooLong) {
		t.Errorf("max 8: got %v, want ErrFrameTooLong", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		give Message
		want string // "" for valid
	}{
		{name: "nil", give: nil, want: "netty: nil message"},
		{name: "AddCredit ok", give: AddCredit{Credit: 1}},
		{name: "AddCredit zero", give: AddCredit{}, want: "The announced credit should be greater than 0"},
		{name: "Backlog zero", give: BacklogAnnouncement{}, want: "Must be positive."},
		{name: "NewBufferSize negative", give: NewBufferSize{BufferSize: -3}, want: "The new buffer size should be greater than 0"},
		{name: "SegmentId zero", give: SegmentID{}, want: "The segmentId should be greater than 0"},
		{name: "BufferResponse DataType", give: BufferResponse{DataType: 200}, want: "Index -56 out of bounds for length 12"},
		{name: "BufferResponse NONE ok", give: BufferResponse{}},
		{name: "PartitionRequest zero value ok", give: PartitionRequest{}},
		{name: "CloseRequest", give: CloseRequest{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.give)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want || !errors.Is(err, ErrInvalidField)):
				t.Errorf("Validate = %v, want %q wrapping ErrInvalidField", err, tt.want)
			}
		})
	}
}

func TestNilMessage(t *testing.T) {
	if Encode(nil) != nil || FrameLength(nil) != 0 || len(AppendFrame([]byte{1}, nil)) != 1 {
		t.Errorf("nil message must encode to nothing")
	}
}

// TestDecodedBytesAreCopies checks that the decoded buffer does not alias the input.
func TestDecodedBytesAreCopies(t *testing.T) {
	frame := Encode(BufferResponse{ReceiverID: vecReceiver, DataType: DataTypeDataBuffer, Buffer: []byte("abc")})
	m, _, err := Decode(frame)
	if err != nil {
		t.Fatal(err)
	}
	for i := range frame {
		frame[i] = 0
	}
	if got := string(m.(BufferResponse).Buffer); got != "abc" {
		t.Errorf("decoded buffer changed with the input: %q", got)
	}
	if !strings.Contains(m.String(), "size=3") {
		t.Errorf("String() = %q", m.String())
	}
}
