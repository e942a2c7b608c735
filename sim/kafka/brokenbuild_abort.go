//go:build flinksim_broken_abort

package kafka

// BrokenBuild: this build is deliberately broken (see brokenbuild.go).
const BrokenBuild = "flinksim_broken_abort"

// brokenRecovery: the exactly-once writer, recovering, skips the abort of
// what the failed attempt left open and commits it instead.
const brokenRecovery = true
