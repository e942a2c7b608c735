package checkpoint

import "sort"

// requestDecider is org.apache.flink.runtime.checkpoint.CheckpointRequestDecider: the queue
// of trigger requests waiting to start, in request.before order, bounded at
// maxQueuedRequests, and the choice of the next one to start. The Coordinator declines what
// it turns away and starts what it chooses.
type requestDecider struct {
	queue []*request // sorted by request.before
}

// enqueue queues r (chooseRequestToExecute's offer of a new request) and returns the request
// the bounded queue turns away with TOO_MANY_CHECKPOINT_REQUESTS, or nil: r itself when the
// queue is full of user requests (only those are kept), otherwise the last in queue order
// once r made the queue too long.
func (d *requestDecider) enqueue(r *request) (dropped *request) {
	if len(d.queue) >= maxQueuedRequests && !d.queue[len(d.queue)-1].periodic {
		return r
	}
	i := sort.Search(len(d.queue), func(i int) bool { return r.before(d.queue[i]) })
	d.queue = append(d.queue, nil)
	copy(d.queue[i+1:], d.queue[i:])
	d.queue[i] = r
	if len(d.queue) > maxQueuedRequests {
		last := d.queue[len(d.queue)-1]
		d.queue = d.queue[:len(d.queue)-1]
		return last
	}
	return nil
}

// chooseQueued is chooseRequestToExecute(isTriggering=false, ...): the first request in
// queue order, taken off the queue, when it may start with numPending checkpoints pending
// (only a forced one while maxConcurrent are); nil when none may. pauseLeft is how much of
// the min pause since the last completion is still to run: a periodic, unforced first
// request is then taken off and returned with tooEarly, to be declined with
// MINIMUM_TIME_BETWEEN_CHECKPOINTS.
func (d *requestDecider) chooseQueued(numPending, maxConcurrent int, pauseLeft int64) (r *request, tooEarly bool) {
	if len(d.queue) == 0 {
		return nil, false
	}
	first := d.queue[0]
	if numPending >= maxConcurrent {
		if first.force {
			d.queue = d.queue[1:]
			return first, false
		}
		return nil, false
	}
	d.queue = d.queue[1:]
	return first, !first.force && first.periodic && pauseLeft > 0
}

// takeAll empties the queue and returns what it held, in queue order (abortAll).
func (d *requestDecider) takeAll() []*request {
	q := d.queue
	d.queue = nil
	return q
}
