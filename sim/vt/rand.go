package vt

import (
	"hash/fnv"
	"math/rand/v2"
)

// NewRand returns the random generator of one actor: a PCG seeded from the
// run seed and a hash of the actor's name, so that each actor's draws depend
// only on (seed, name) and never on another actor's or on scheduling.
func NewRand(seed uint64, actor string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(actor))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}
