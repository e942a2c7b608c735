package explain

import "github.com/flinksim/flinksim/sim/netty"

// NettyFrame is one frame in "explain netty" JSON: where it starts in the
// bytes given, its length, the NettyMessage it is (class name, id, its
// toString) and its fields in wire order.
type NettyFrame struct {
	Offset  int           `json:"offset"`
	Length  int           `json:"length"`
	Message string        `json:"message"`
	ID      int           `json:"id"`
	Text    string        `json:"text,omitempty"`
	Fields  []netty.Field `json:"fields"`
}

// Netty is the JSON of "explain netty": the frames of the bytes, in order.
type Netty struct {
	Bytes  int          `json:"bytes"`
	Frames []NettyFrame `json:"frames"`
}

// ExplainNetty decodes hex text as a stream of Flink's Netty frames
// (netty.ParseHex, netty.DecodeStream), or the one frame of the log's
// netty_frame "hex" field (netty.DecodeDump: its elided fields said so, and
// no toString). With a bad frame it returns the frames before it and a
// *netty.StreamError naming the byte at fault.
func ExplainNetty(text string) (Netty, error) {
	if netty.IsDump(text) {
		f, known, err := netty.DecodeDump(text)
		out := Netty{Bytes: known, Frames: []NettyFrame{}}
		if err == nil {
			out.Frames = append(out.Frames, NettyFrame{Length: f.Length, Message: f.Message.ID().String(),
				ID: int(f.Message.ID()), Text: f.Message.String(), Fields: f.Fields})
			if known < f.Length {
				out.Frames[0].Text = "" // the toString of a message the log shows in part would show the zeros put in for the rest
			}
		}
		return out, err
	}
	b, err := netty.ParseHex(text)
	if err != nil {
		return Netty{}, err
	}
	frames, err := netty.DecodeStream(b)
	out := Netty{Bytes: len(b), Frames: []NettyFrame{}}
	for _, f := range frames {
		out.Frames = append(out.Frames, NettyFrame{Offset: f.Offset, Length: f.Length, Message: f.Message.ID().String(),
			ID: int(f.Message.ID()), Text: f.Message.String(), Fields: f.Fields})
	}
	return out, err
}
