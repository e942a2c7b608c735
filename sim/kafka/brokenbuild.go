//go:build !flinksim_broken_abort

package kafka

// BrokenBuild names the build tag of a deliberately broken build ("" in
// every real build). The swarm's honesty test builds with
// -tags flinksim_broken_abort, whose exactly-once writer, recovering, skips
// the abort of what the failed attempt left open (TransactionAborter) and
// commits it instead, and requires the swarm to catch it.
const BrokenBuild = ""

// brokenRecovery is the broken build's switch (brokenbuild_abort.go).
const brokenRecovery = false
