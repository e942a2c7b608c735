package netty

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

// unhex turns a hex literal with spaces and newlines into bytes; the vectors below are written
// out by hand, field by field, from NettyMessage's write methods in release-1.20, not produced by
// this package's encoder.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	s = strings.Join(strings.Fields(s), "")
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex literal %q: %v", s, err)
	}
	return b
}

// Shared IDs of the vectors; each field's bytes are spelled out where it is used.
var (
	// receiverId: lowerPart 0x0102030405060708, upperPart 0x1112131415161718.
	vecReceiver = InputChannelID{LowerPart: 0x0102030405060708, UpperPart: 0x1112131415161718}
	// ResultPartitionID: IntermediateDataSetID (0x2122..28, 0x3132..38), partitionNum 4;
	// ExecutionGraphID (0x4142..48, 0x5152..58), JobVertexID (0x6162..68, 0x7172..78),
	// subtaskIndex 9, attemptNumber 1.
	vecPartition = ResultPartitionID{
		PartitionID: IntermediateResultPartitionID{
			IntermediateDataSetID: IntermediateDataSetID{LowerPart: 0x2122232425262728, UpperPart: 0x3132333435363738},
			PartitionNum:          4,
		},
		ProducerID: ExecutionAttemptID{
			ExecutionGraphID: ExecutionGraphID{LowerPart: 0x4142434445464748, UpperPart: 0x5152535455565758},
			ExecutionVertexID: ExecutionVertexID{
				JobVertexID:  JobVertexID{LowerPart: 0x6162636465666768, UpperPart: 0x7172737475767778},
				SubtaskIndex: 9,
			},
			AttemptNumber: 1,
		},
	}
)

const (
	hexReceiver  = "0102030405060708 1112131415161718"
	hexPartition = "2122232425262728 3132333435363738 00000004" + // IntermediateResultPartitionID (20)
		" 4142434445464748 5152535455565758" + // ExecutionGraphID (16)
		" 6162636465666768 7172737475767778 00000009" + // ExecutionVertexID (20)
		" 00000001" // attemptNumber
)

type vector struct {
	name string
	give Message
	want string // the frame in hex: length, magic, id, body
}

func vectors() []vector {
	return []vector{
		{
			name: "BufferResponse",
			give: BufferResponse{
				ReceiverID: vecReceiver, SubpartitionID: 1, SequenceNumber: 42, Backlog: 3,
				DataType: DataTypeDataBuffer, IsCompressed: false, Buffer: []byte("abc"),
			},
			// 9 + 34 + 3 = 46 = 0x2e
			want: "0000002e badc0ffe 00 " + hexReceiver +
				" 00000001" + // subpartitionId
				" 0000002a" + // sequenceNumber 42
				" 00000003" + // backlog
				" 01" + // DataType.DATA_BUFFER ordinal
				" 00" + // isCompressed false
				" 00000003" + // bufferSize
				" 616263", // "abc"
		},
		{
			name: "BufferResponse/event-compressed-negative-seq",
			give: BufferResponse{
				ReceiverID: InputChannelID{LowerPart: -1, UpperPart: -2}, SubpartitionID: 0,
				SequenceNumber: -1, Backlog: 0, DataType: DataTypeRecoveryMetadata, IsCompressed: true,
				Buffer: []byte{0xca, 0xfe, 0xba, 0xbe, 0x00},
			},
			// 9 + 34 + 5 = 48 = 0x30
			want: "00000030 badc0ffe 00 ffffffffffffffff fffffffffffffffe" +
				" 00000000 ffffffff 00000000 0b 01 00000005 cafebabe00",
		},
		{
			name: "BufferResponse/empty-buffer",
			give: BufferResponse{ReceiverID: vecReceiver, SequenceNumber: 7, DataType: DataTypeDataBuffer},
			// 9 + 34 = 43 = 0x2b
			want: "0000002b badc0ffe 00 " + hexReceiver + " 00000000 00000007 00000000 01 00 00000000",
		},
		{
			name: "PartitionRequest",
			give: PartitionRequest{
				PartitionID:   vecPartition,
				QueueIndexSet: ResultSubpartitionIndexSet{StartIndex: 0, EndIndex: 2},
				ReceiverID:    vecReceiver,
				Credit:        2,
			},
			// 9 + 60 + 8 + 16 + 4 = 97 = 0x61
			want: "00000061 badc0ffe 02 " + hexPartition +
				" 00000000 00000002 " + // ResultSubpartitionIndexSet [0, 2]
				hexReceiver +
				" 00000002", // credit
		},
		{
			name: "TaskEventRequest",
			give: TaskEventRequest{Event: []byte{0xde, 0xad}, PartitionID: vecPartition, ReceiverID: vecReceiver},
			// 9 + 4 + 2 + 60 + 16 = 91 = 0x5b
			want: "0000005b badc0ffe 03 00000002 dead " + hexPartition + " " + hexReceiver,
		},
		{
			name: "CancelPartitionRequest",
			give: CancelPartitionRequest{ReceiverID: vecReceiver},
			want: "00000019 badc0ffe 04 " + hexReceiver, // 9 + 16 = 25
		},
		{
			name: "CloseRequest",
			give: CloseRequest{},
			want: "00000009 badc0ffe 05",
		},
		{
			name: "AddCredit",
			give: AddCredit{Credit: 3, ReceiverID: vecReceiver},
			want: "0000001d badc0ffe 06 00000003 " + hexReceiver, // 9 + 4 + 16 = 29
		},
		{
			name: "ResumeConsumption",
			give: ResumeConsumption{ReceiverID: vecReceiver},
			want: "00000019 badc0ffe 07 " + hexReceiver,
		},
		{
			name: "AckAllUserRecordsProcessed",
			give: AckAllUserRecordsProcessed{ReceiverID: vecReceiver},
			want: "00000019 badc0ffe 08 " + hexReceiver,
		},
		{
			name: "BacklogAnnouncement",
			give: BacklogAnnouncement{Backlog: 7, ReceiverID: vecReceiver},
			want: "0000001d badc0ffe 09 00000007 " + hexReceiver,
		},
		{
			name: "NewBufferSize",
			give: NewBufferSize{BufferSize: 32768, ReceiverID: vecReceiver},
			want: "0000001d badc0ffe 0a 00008000 " + hexReceiver,
		},
		{
			name: "SegmentId",
			give: SegmentID{SubpartitionID: 2, SegmentID: 5, ReceiverID: vecReceiver},
			want: "00000021 badc0ffe 0b 00000002 00000005 " + hexReceiver, // 9 + 4 + 4 + 16 = 33
		},
	}
}

func TestVectorsEncode(t *testing.T) {
	for _, v := range vectors() {
		t.Run(v.name, func(t *testing.T) {
			want := unhex(t, v.want)
			got := Encode(v.give)
			if !bytes.Equal(got, want) {
				t.Fatalf("Encode(%v)\n got %x\nwant %x", v.give, got, want)
			}
			if n := FrameLength(v.give); n != len(want) {
				t.Errorf("FrameLength = %d, want %d", n, len(want))
			}
			if got := AppendFrame([]byte{0xee}, v.give); !bytes.Equal(got, append([]byte{0xee}, want...)) {
				t.Errorf("AppendFrame did not append after the prefix: %x", got)
			}
		})
	}
}

func TestVectorsDecode(t *testing.T) {
	for _, v := range vectors() {
		t.Run(v.name, func(t *testing.T) {
			frame := unhex(t, v.want)
			// A trailing frame must be left alone: Decode consumes exactly one frame.
			in := append(append([]byte{}, frame...), unhex(t, "00000009 badc0ffe 05")...)
			got, n, err := Decode(in)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if n != len(frame) {
				t.Errorf("consumed %d, want %d", n, len(frame))
			}
			if !reflect.DeepEqual(got, v.give) {
				t.Errorf("Decode\n got %#v\nwant %#v", got, v.give)
			}
			if got.ID() != MessageID(frame[8]) {
				t.Errorf("ID() = %d, want %d", got.ID(), frame[8])
			}
		})
	}
}

// TestVectorsCoverEveryID makes sure each id this package decodes has a hand-written vector.
func TestVectorsCoverEveryID(t *testing.T) {
	seen := map[MessageID]bool{}
	for _, v := range vectors() {
		seen[v.give.ID()] = true
	}
	for id := MessageID(0); int(id) < len(messageIDNames); id++ {
		if id == IDErrorResponse {
			continue
		}
		if !seen[id] {
			t.Errorf("no vector for %s (id %d)", id, id)
		}
	}
}

func TestBufferResponseFrameLength(t *testing.T) {
	tests := []struct {
		give, want int
	}{
		{give: 0, want: 43},
		{give: 3, want: 46},
		{give: 32768, want: 32811},
		{give: -5, want: 43},
	}
	for _, tt := range tests {
		if got := BufferResponseFrameLength(tt.give); got != tt.want {
			t.Errorf("BufferResponseFrameLength(%d) = %d, want %d", tt.give, got, tt.want)
		}
	}
	m := BufferResponse{Buffer: make([]byte, 32768)}
	if FrameLength(m) != BufferResponseFrameLength(32768) {
		t.Errorf("FrameLength and BufferResponseFrameLength disagree")
	}
}

func TestStringers(t *testing.T) {
	tests := []struct {
		give fmtStringer
		want string
	}{
		{give: vecReceiver, want: "01020304050607081112131415161718"},
		{give: vecPartition.PartitionID, want: "21222324252627283132333435363738#4"},
		{give: vecPartition.ProducerID.ExecutionVertexID, want: "61626364656667687172737475767778_9"},
		{give: ResultSubpartitionIndexSet{StartIndex: 0, EndIndex: 2}, want: "[0, 2]"},
		{give: AddCredit{Credit: 3, ReceiverID: vecReceiver}, want: "AddCredit(01020304050607081112131415161718 : 3)"},
		{give: BacklogAnnouncement{Backlog: 7, ReceiverID: vecReceiver}, want: "BacklogAnnouncement(7 : 01020304050607081112131415161718)"},
		{give: SegmentID{SegmentID: 5, ReceiverID: vecReceiver}, want: "SegmentId(01020304050607081112131415161718 : 5)"},
		{give: DataTypeTimeoutableAlignedCheckpointBarrier, want: "TIMEOUTABLE_ALIGNED_CHECKPOINT_BARRIER"},
		{give: DataType(12), want: "DataType(12)"},
		{give: IDSegmentID, want: "SegmentId"},
		{give: MessageID(12), want: "MessageID(12)"},
		{give: CloseRequest{}, want: "CloseRequest()"},
		{give: CancelPartitionRequest{ReceiverID: vecReceiver}, want: "CancelPartitionRequest(01020304050607081112131415161718)"},
		{give: ResumeConsumption{ReceiverID: vecReceiver}, want: "ResumeConsumption(01020304050607081112131415161718)"},
		{give: AckAllUserRecordsProcessed{ReceiverID: vecReceiver}, want: "AckAllUserRecordsProcessed(01020304050607081112131415161718)"},
		{give: NewBufferSize{BufferSize: 4096, ReceiverID: vecReceiver}, want: "NewBufferSize(01020304050607081112131415161718 : 4096)"},
		{
			give: TaskEventRequest{Event: []byte{1, 2}, PartitionID: vecPartition, ReceiverID: vecReceiver},
			want: "TaskEventRequest(21222324252627283132333435363738#4@41424344454647485152535455565758_61626364656667687172737475767778_9_1 -> 01020304050607081112131415161718, event=2 bytes)",
		},
		{
			give: BufferResponse{ReceiverID: vecReceiver, SubpartitionID: 1, SequenceNumber: 42, Backlog: 3, DataType: DataTypeEventBuffer, IsCompressed: true, Buffer: []byte("ab")},
			want: "BufferResponse(01020304050607081112131415161718 sub=1 seq=42 backlog=3 EVENT_BUFFER compressed=true size=2)",
		},
	}
	for _, tt := range tests {
		if got := tt.give.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
	pr := PartitionRequest{PartitionID: vecPartition, QueueIndexSet: ResultSubpartitionIndexSet{EndIndex: 2}, Credit: 2}.String()
	if !strings.HasPrefix(pr, "PartitionRequest(21222324252627283132333435363738#4@41424344454647485152535455565758_61626364656667687172737475767778_9_1:[0, 2]:2)") {
		t.Errorf("PartitionRequest.String() = %q", pr)
	}
}

type fmtStringer interface{ String() string }

func TestDataTypeIsBuffer(t *testing.T) {
	for dt := DataType(0); dt < NumDataTypes; dt++ {
		want := dt == DataTypeDataBuffer || dt == DataTypeDataBufferWithClearEnd
		if dt.IsBuffer() != want {
			t.Errorf("%s.IsBuffer() = %t, want %t", dt, dt.IsBuffer(), want)
		}
	}
}

func TestHexDump(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{
			name: "AddCredit",
			give: "0000001d badc0ffe 06 00000003 " + hexReceiver,
			want: "len=29 magic=0xBADC0FFE id=6(AddCredit) body[20]=00000003 01020304 05060708 11121314 15161718",
		},
		{
			name: "CloseRequest",
			give: "00000009 badc0ffe 05",
			want: "len=9 magic=0xBADC0FFE id=5(CloseRequest) body[0]=",
		},
		{
			name: "short",
			give: "0000001d ba",
			want: "short[5]=0000001d ba",
		},
		{
			name: "bad magic and trailing",
			give: "00000009 deadbeef 05 0102",
			want: "len=9 magic=0xDEADBEEF id=5(CloseRequest)!badmagic body[0]= +2 trailing bytes",
		},
		{
			name: "incomplete",
			give: "0000001d badc0ffe 06 000000",
			want: "len=29 magic=0xBADC0FFE id=6(AddCredit) body[3]=000000 (incomplete: 12 of 29 bytes)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HexDump(unhex(t, tt.give)); got != tt.want {
				t.Errorf("HexDump\n got %q\nwant %q", got, tt.want)
			}
		})
	}
	long := HexDump(Encode(BufferResponse{ReceiverID: vecReceiver, DataType: DataTypeDataBuffer, Buffer: make([]byte, 100)}))
	if !strings.HasSuffix(long, " ...(+70 bytes)") {
		t.Errorf("long body not elided: %q", long)
	}
}
