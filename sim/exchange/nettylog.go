package exchange

import (
	"hash/fnv"

	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/kernel"
	"github.com/flinksim/flinksim/sim/netty"
)

// ChannelID derives the InputChannelID (a 16-byte AbstractID in Flink) of a
// channel from its actor name, so frames are the same in every run.
func ChannelID(name string) netty.InputChannelID {
	h := fnv.New128a()
	h.Write([]byte(name))
	b := h.Sum(nil)
	var lo, hi int64
	for i := 0; i < 8; i++ {
		lo = lo<<8 | int64(b[i])
		hi = hi<<8 | int64(b[8+i])
	}
	return netty.InputChannelID{LowerPart: lo, UpperPart: hi}
}

// LogFrame logs one NettyMessage of a remote channel as its encoded bytes
// (sim.log.netty-frames): direction "out" from this actor to peer.
func LogFrame(o *kernel.Out, peer string, m netty.Message) {
	frame := netty.Encode(m)
	o.Log(eventlog.NettyFrame{Peer: peer, Message: m.ID().String(), FrameLength: int64(len(frame)), Hex: netty.HexDump(frame)})
}
