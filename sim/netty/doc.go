// Package netty encodes and decodes the frames that Flink 1.20's network stack exchanges between
// a result partition's server (PartitionRequestServerHandler) and an input channel's client
// (CreditBasedPartitionRequestClientHandler), byte for byte as
// org.apache.flink.runtime.io.network.netty.NettyMessage (release-1.20) writes them.
//
// Every frame is
//
//	+------------------+------------------+--------+-------------------+
//	| FRAME LENGTH (4) | MAGIC NUMBER (4) | ID (1) | BODY (length - 9) |
//	+------------------+------------------+--------+-------------------+
//
// big-endian as Netty's ByteBuf writes; the frame length counts itself, the magic number is
// 0xBADC0FFE (NettyMessage.FRAME_HEADER_LENGTH, MAGIC_NUMBER; the frame decoder is
// LengthFieldBasedFrameDecoder(Integer.MAX_VALUE, 0, 4, -4, 4)).
//
// Message ids in release-1.20 (NettyMessage.*.ID):
//
//	0 BufferResponse              server -> client, decoded by BufferResponseDecoder
//	1 ErrorResponse               server -> client; NOT supported here (Java-serialized Throwable)
//	2 PartitionRequest            client -> server, NettyMessage.NettyMessageDecoder
//	3 TaskEventRequest            client -> server (event bytes kept opaque)
//	4 CancelPartitionRequest      client -> server
//	5 CloseRequest                client -> server
//	6 AddCredit                   client -> server
//	7 ResumeConsumption           client -> server
//	8 AckAllUserRecordsProcessed  client -> server
//	9 BacklogAnnouncement         server -> client, NonBufferResponseDecoder
//	10 NewBufferSize              client -> server
//	11 SegmentId                  client -> server
//
// Identifiers are written as NettyMessage writes them: an AbstractID (InputChannelID,
// IntermediateDataSetID, JobVertexID, ExecutionGraphID) as lowerPart then upperPart (two longs);
// IntermediateResultPartitionID as its IntermediateDataSetID then partitionNum (int, 20 bytes);
// ExecutionAttemptID as ExecutionGraphID, ExecutionVertexID (JobVertexID then subtaskIndex), then
// attemptNumber (40 bytes); ResultSubpartitionIndexSet as startIndex then endIndex.
//
// The decoder is stricter than Flink in three documented ways, so that every frame it accepts
// re-encodes to the same bytes: a body longer than its id needs is refused (Flink ignores the
// surplus), a boolean byte other than 0 or 1 is refused (Netty's readBoolean takes any non-zero
// as true), and a BufferResponse whose frame length disagrees with its bufferSize is refused
// (BufferResponseDecoder trusts bufferSize alone).
//
// Everything here is pure: no goroutines, no clocks, no randomness; no input makes it panic.
package netty
