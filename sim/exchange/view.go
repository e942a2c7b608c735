package exchange

import (
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/vt"
)

// InputChannelView is one InputChannel with its BufferManager.
type InputChannelView struct {
	Name         string `json:"name"`
	Consumer     string `json:"consumer"`
	Index        int    `json:"index"`
	Producer     string `json:"producer"`
	Subpartition int    `json:"subpartition"`
	Kind         string `json:"channel"` // LocalInputChannel or RemoteInputChannel
	Exclusive    int    `json:"exclusive_buffers"`
	Floating     int    `json:"floating_buffers"`
	Credit       int    `json:"credit"`         // free buffers, each announced to the producer
	InUse        int    `json:"buffers_in_use"` // holding data handed to the task
	Required     int    `json:"required_buffers"`
	Backlog      int    `json:"backlog"` // the producer's last announced backlog
	NextSequence int32  `json:"next_sequence_number"`
	BuffersIn    int64  `json:"buffers_in"`
	RecordsIn    int64  `json:"records_in"`
}

// Inspect implements kernel.Inspector.
func (c *InputChannel) Inspect(now vt.Time) any {
	kind := "RemoteInputChannel"
	if c.local {
		kind = "LocalInputChannel"
	}
	return &InputChannelView{Name: jobgraph.ChannelName(c.consumer, c.index), Consumer: c.consumer, Index: c.index,
		Producer: c.producer, Subpartition: c.subpartition, Kind: kind, Exclusive: c.bm.Exclusive, Floating: c.bm.Floating,
		Credit: c.bm.Available, InUse: c.bm.InUse, Required: c.bm.Required, Backlog: max(0, c.bm.Required-c.bm.Exclusive),
		NextSequence: c.nextSeq, BuffersIn: c.buffersIn, RecordsIn: c.recordsIn}
}
