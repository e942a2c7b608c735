//go:build !flinksim_broken_abort

package actors

// BrokenBuild names the build tag of a deliberately broken build ("" in
// every real build). The swarm's honesty test builds with
// -tags flinksim_broken_abort, whose exactly-once sink, recovering, commits
// the transaction the failed attempt left open instead of aborting it
// (TransactionAborter skipped), and requires the swarm to catch it.
const BrokenBuild = ""

// brokenRecovery is the broken build's switch (brokenbuild_abort.go).
const brokenRecovery = false
