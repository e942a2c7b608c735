package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/cluster/explain"
)

var explainNettyCmd = &cobra.Command{
	Use:   "netty HEX...",
	Short: "Decode frames of Flink's Netty protocol (NettyMessage) from hex and show their fields",
	Long: `explain netty decodes bytes given in hex as the frames Flink 1.20's network stack
exchanges between a result partition's server and an input channel's client
(org.apache.flink.runtime.io.network.netty.NettyMessage): frame length, magic number
0xBADC0FFE, message id, then the body. It prints each frame's message, its toString
and every field with its offset and size: BufferResponse, PartitionRequest,
TaskEventRequest, CancelPartitionRequest, CloseRequest, AddCredit, ResumeConsumption,
AckAllUserRecordsProcessed, BacklogAnnouncement, NewBufferSize, SegmentId.

The hex may hold several frames one after another, spaces, newlines and colons
between digits, and a leading 0x; the arguments are read as one text. The "hex"
field of the log's netty_frame events (sim.log.netty-frames) is read as it is: the
fields past the 64 body bytes it shows are marked elided. A bad frame is refused with the byte at fault and
Flink's own message where Flink refuses the same bytes (exit 2).`,
	Example: `  flinksim explain netty 0000001d badc0ffe 06 00000003 0102030405060708 1112131415161718
  flinksim explain netty 00000009badc0ffe05 --json
  flinksim explain netty "len=29 magic=0xBADC0FFE id=6(AddCredit) body[20]=00000003 01020304 05060708 11121314 15161718"`,
	Args: func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return badInput("explain netty needs the frame in hex, e.g. 'explain netty 00000009badc0ffe05'")
		}
		return nil
	},
	RunE: runExplainNetty,
}

func init() { explainCmd.AddCommand(explainNettyCmd) }

func runExplainNetty(cmd *cobra.Command, args []string) error {
	out, err := explain.ExplainNetty(strings.Join(args, " "))
	if len(out.Frames) > 0 || err == nil {
		var werr error
		if explainWantsJSON(cmd) {
			werr = writeExplainJSON(cmd.OutOrStdout(), out)
		} else {
			werr = printNetty(cmd.OutOrStdout(), out)
		}
		if werr != nil {
			return werr
		}
	}
	if err != nil {
		return badInput("explain netty: %v", err)
	}
	if len(out.Frames) == 0 {
		return badInput("explain netty: no bytes given")
	}
	return nil
}

// printNetty writes each frame as a header line, its toString and a table
// of its fields.
func printNetty(w io.Writer, out explain.Netty) error {
	for i, f := range out.Frames {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "frame %d at byte %d: %s (id %d), %d bytes\n", i+1, f.Offset, f.Message, f.ID, f.Length)
		if f.Text != "" {
			fmt.Fprintf(w, "  %s\n", f.Text)
		} else {
			fmt.Fprintf(w, "  the log shows %d of its bytes\n", out.Bytes)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  offset\tsize\tfield\tvalue")
		for _, x := range f.Fields {
			fmt.Fprintf(tw, "  %d\t%d\t%s\t%s\n", x.Offset, x.Size, x.Name, x.Value)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
