package exchange

import (
	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/kernel"
)

// A network partition (partition-network) drops what crosses the cut and
// tells both ends of a pair of actors that lost an envelope
// (ConnectionLost, once per cut; sim/kernel/network.go). A
// RemoteInputChannel whose connection to its producer broke fails its task
// with the RemoteTransportException that CreditBasedPartitionRequestClientHandler
// hands every channel of a broken connection (notifyAllChannelsOfErrorAndClose)
// and from then on ignores the connection. The producer's end
// (PartitionRequestQueue) only closes the connection: the producer task
// runs on until the failover cancels it.

// RemoteTransportException is the text CreditBasedPartitionRequestClientHandler.exceptionCaught
// gives a channel whose connection to the TaskManager tm was lost.
func RemoteTransportException(connection, tm string) string {
	return "org.apache.flink.runtime.io.network.netty.exception.RemoteTransportException: Lost connection to task manager '" +
		connection + " [ " + tm + " ] '. This indicates that the remote task manager was lost."
}

// connectionLost is the channel learning that its connection to peer broke.
func (c *InputChannel) connectionLost(o *kernel.Out, peer string) {
	if c.local || c.broken || peer != c.producer {
		return
	}
	c.broken = true
	cause := RemoteTransportException(c.connection, c.producerTM)
	o.Log(eventlog.ChannelError{Producer: c.producer, ConnectionID: c.connection, Cause: cause})
	o.Send(c.consumer, 0, &messages.Envelope_FailTask{FailTask: &messages.FailTask{Cause: cause}})
}
