package window

// len is the number of live timers.
func (q *timerQueue) len() int { return len(q.live) }
