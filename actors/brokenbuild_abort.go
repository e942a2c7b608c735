//go:build flinksim_broken_abort

package actors

// BrokenBuild: this build is deliberately broken (see brokenbuild.go).
const BrokenBuild = "flinksim_broken_abort"

// skipAbortOnRecovery: the exactly-once sink does not abort what the failed
// attempt left open when it recovers (TransactionAborter skipped).
const skipAbortOnRecovery = true
