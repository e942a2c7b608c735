//go:build flinksim_nofence

package jobgraph

// FenceStaleAttempts: this build is deliberately broken (see fence.go): a
// zombie attempt's messages count as the current attempt's.
const FenceStaleAttempts = false

// NoFenceBuild: the tag of this broken build.
const NoFenceBuild = "flinksim_nofence"
