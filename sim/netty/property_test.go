package netty

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

func genAbstractID(t *rapid.T, label string) AbstractID {
	return AbstractID{LowerPart: rapid.Int64().Draw(t, label+".lower"), UpperPart: rapid.Int64().Draw(t, label+".upper")}
}

func genReceiver(t *rapid.T) InputChannelID { return InputChannelID(genAbstractID(t, "receiver")) }

// genBytes draws a payload; an empty one is nil, as Decode returns it.
func genBytes(t *rapid.T, label string) []byte {
	b := rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, label)
	if len(b) == 0 {
		return nil
	}
	return b
}

func genResultPartitionID(t *rapid.T) ResultPartitionID {
	return ResultPartitionID{
		PartitionID: IntermediateResultPartitionID{
			IntermediateDataSetID: IntermediateDataSetID(genAbstractID(t, "dataset")),
			PartitionNum:          rapid.Int32().Draw(t, "partitionNum"),
		},
		ProducerID: ExecutionAttemptID{
			ExecutionGraphID: ExecutionGraphID(genAbstractID(t, "graph")),
			ExecutionVertexID: ExecutionVertexID{
				JobVertexID:  JobVertexID(genAbstractID(t, "jobVertex")),
				SubtaskIndex: rapid.Int32Range(0, math.MaxInt32).Draw(t, "subtaskIndex"),
			},
			AttemptNumber: rapid.Int32Range(0, math.MaxInt32).Draw(t, "attemptNumber"),
		},
	}
}

// genMessage draws a valid message of any supported id with random field values.
func genMessage(t *rapid.T) Message {
	positive := rapid.Int32Range(1, math.MaxInt32)
	switch rapid.IntRange(0, 10).Draw(t, "kind") {
	case 0:
		return BufferResponse{
			ReceiverID:     genReceiver(t),
			SubpartitionID: rapid.Int32().Draw(t, "subpartitionId"),
			SequenceNumber: rapid.Int32().Draw(t, "sequenceNumber"),
			Backlog:        rapid.Int32().Draw(t, "backlog"),
			DataType:       DataType(rapid.IntRange(0, NumDataTypes-1).Draw(t, "dataType")),
			IsCompressed:   rapid.Bool().Draw(t, "isCompressed"),
			Buffer:         genBytes(t, "buffer"),
		}
	case 1:
		start := rapid.Int32Range(0, math.MaxInt32).Draw(t, "startIndex")
		return PartitionRequest{
			PartitionID:   genResultPartitionID(t),
			QueueIndexSet: ResultSubpartitionIndexSet{StartIndex: start, EndIndex: rapid.Int32Range(start, math.MaxInt32).Draw(t, "endIndex")},
			ReceiverID:    genReceiver(t),
			Credit:        rapid.Int32().Draw(t, "credit"),
		}
	case 2:
		return TaskEventRequest{Event: genBytes(t, "event"), PartitionID: genResultPartitionID(t), ReceiverID: genReceiver(t)}
	case 3:
		return CancelPartitionRequest{ReceiverID: genReceiver(t)}
	case 4:
		return CloseRequest{}
	case 5:
		return AddCredit{Credit: positive.Draw(t, "credit"), ReceiverID: genReceiver(t)}
	case 6:
		return ResumeConsumption{ReceiverID: genReceiver(t)}
	case 7:
		return AckAllUserRecordsProcessed{ReceiverID: genReceiver(t)}
	case 8:
		return BacklogAnnouncement{Backlog: positive.Draw(t, "backlog"), ReceiverID: genReceiver(t)}
	case 9:
		return NewBufferSize{BufferSize: positive.Draw(t, "bufferSize"), ReceiverID: genReceiver(t)}
	default:
		return SegmentID{
			SubpartitionID: rapid.Int32().Draw(t, "subpartitionId"),
			SegmentID:      positive.Draw(t, "segmentId"),
			ReceiverID:     genReceiver(t),
		}
	}
}

// TestRoundTripProperty: Decode(Encode(m)) == m, consuming exactly FrameLength(m) bytes, and the
// frame's length field equals FrameLength(m).
func TestRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genMessage(t)
		if err := Validate(m); err != nil {
			t.Fatalf("generator made an invalid message %v: %v", m, err)
		}
		frame := Encode(m)
		if len(frame) != FrameLength(m) {
			t.Fatalf("len(Encode) = %d, FrameLength = %d", len(frame), FrameLength(m))
		}
		if got := int(uint32(frame[0])<<24 | uint32(frame[1])<<16 | uint32(frame[2])<<8 | uint32(frame[3])); got != len(frame) {
			t.Fatalf("length field %d, frame is %d bytes", got, len(frame))
		}
		got, n, err := Decode(frame)
		if err != nil {
			t.Fatalf("Decode(Encode(%v)): %v\n%s", m, err, HexDump(frame))
		}
		if n != len(frame) {
			t.Fatalf("consumed %d of %d", n, len(frame))
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip\n got %#v\nwant %#v", got, m)
		}
	})
}

// TestDecoderChunksProperty: a stream of frames cut at random points decodes, through Decoder, to
// the same messages in the same order, with nothing left over.
func TestDecoderChunksProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		msgs := rapid.SliceOfN(rapid.Custom(genMessage), 0, 8).Draw(t, "messages")
		var stream []byte
		for _, m := range msgs {
			stream = AppendFrame(stream, m)
		}
		d := NewDecoder(0)
		var got []Message
		for rest := stream; len(rest) > 0; {
			k := rapid.IntRange(0, len(rest)).Draw(t, "chunk")
			out, err := d.Feed(rest[:k])
			if err != nil {
				t.Fatalf("Feed: %v", err)
			}
			got = append(got, out...)
			rest = rest[k:]
		}
		if d.Buffered() != 0 {
			t.Fatalf("%d bytes left buffered", d.Buffered())
		}
		if len(got) != len(msgs) {
			t.Fatalf("decoded %d messages, sent %d", len(got), len(msgs))
		}
		for i := range msgs {
			if !reflect.DeepEqual(got[i], msgs[i]) {
				t.Fatalf("message %d\n got %#v\nwant %#v", i, got[i], msgs[i])
			}
		}
	})
}

func TestDecoderOneByteAtATime(t *testing.T) {
	var stream []byte
	var want []Message
	for _, v := range vectors() {
		stream = append(stream, unhex(t, v.want)...)
		want = append(want, v.give)
	}
	d := NewDecoder(0)
	var got []Message
	for i := range stream {
		out, err := d.Feed(stream[i : i+1])
		if err != nil {
			t.Fatalf("byte %d: %v", i, err)
		}
		got = append(got, out...)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestDecoderErrors(t *testing.T) {
	good := unhex(t, "0000001d badc0ffe 06 00000003 "+hexReceiver)
	t.Run("bad frame after a good one", func(t *testing.T) {
		d := NewDecoder(0)
		in := append(append([]byte{}, good...), unhex(t, "00000009 deadbeef 05")...)
		out, err := d.Feed(in)
		if !errors.Is(err, ErrBadMagic) {
			t.Fatalf("err = %v, want ErrBadMagic", err)
		}
		if len(out) != 1 || !reflect.DeepEqual(out[0], AddCredit{Credit: 3, ReceiverID: vecReceiver}) {
			t.Fatalf("messages before the bad frame = %v", out)
		}
		// The stream stays broken.
		if out, err2 := d.Feed(good); err2 != err || out != nil {
			t.Fatalf("after error: %v, %v", out, err2)
		}
		if d.Err() != err || d.Buffered() != 0 {
			t.Fatalf("Err() = %v, Buffered() = %d", d.Err(), d.Buffered())
		}
	})
	t.Run("too long detected from the length field alone", func(t *testing.T) {
		d := NewDecoder(28)
		if out, err := d.Feed(good[:3]); err != nil || out != nil {
			t.Fatalf("3 bytes: %v, %v", out, err)
		}
		if _, err := d.Feed(good[3:4]); !errors.Is(err, ErrFrameTooLong) {
			t.Fatalf("err = %v, want ErrFrameTooLong", err)
		}
	})
	t.Run("wrong fixed length detected from the header alone", func(t *testing.T) {
		d := NewDecoder(0)
		if _, err := d.Feed(unhex(t, "7fffff00 badc0ffe 06")); !errors.Is(err, ErrBodyLength) {
			t.Fatalf("err = %v, want ErrBodyLength", err)
		}
	})
	t.Run("unknown id detected from the header alone", func(t *testing.T) {
		d := NewDecoder(0)
		if _, err := d.Feed(unhex(t, "00001000 badc0ffe 20")); !errors.Is(err, ErrUnknownID) {
			t.Fatalf("err = %v, want ErrUnknownID", err)
		}
	})
	t.Run("partial frame is kept", func(t *testing.T) {
		d := NewDecoder(0)
		out, err := d.Feed(append(append([]byte{}, good...), good[:10]...))
		if err != nil || len(out) != 1 || d.Buffered() != 10 {
			t.Fatalf("out=%v err=%v buffered=%d", out, err, d.Buffered())
		}
		out, err = d.Feed(good[10:])
		if err != nil || len(out) != 1 || d.Buffered() != 0 {
			t.Fatalf("out=%v err=%v buffered=%d", out, err, d.Buffered())
		}
	})
}

// TestEncodeIsAppendOnly: AppendFrame never disturbs the bytes already in dst.
func TestEncodeIsAppendOnly(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		prefix := rapid.SliceOfN(rapid.Byte(), 0, 20).Draw(t, "prefix")
		m := genMessage(t)
		out := AppendFrame(append([]byte{}, prefix...), m)
		if !bytes.Equal(out[:len(prefix)], prefix) || !bytes.Equal(out[len(prefix):], Encode(m)) {
			t.Fatalf("AppendFrame disturbed the prefix or differs from Encode")
		}
	})
}
