//go:build !flinksim_broken_abort

package actors

// BrokenBuild names the build tag of a deliberately broken build ("" in
// every real build). The swarm's honesty test builds with
// -tags flinksim_broken_abort, whose exactly-once sink skips the abort of
// lingering transactions on recovery, and requires the swarm to catch it.
const BrokenBuild = ""

// skipAbortOnRecovery is the broken build's switch (brokenbuild_abort.go).
const skipAbortOnRecovery = false
