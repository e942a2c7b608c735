//go:build flinksim_broken_abort

package actors

// BrokenBuild: this build is deliberately broken (see brokenbuild.go).
const BrokenBuild = "flinksim_broken_abort"

// brokenRecovery: the exactly-once sink, recovering, skips the abort of
// what the failed attempt left open and commits it instead.
const brokenRecovery = true
