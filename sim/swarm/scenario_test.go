package swarm

import (
	"testing"
)

// Every seed's scenario is valid settings, and the same seed gives the same
// scenario.
func TestGenerateValid(t *testing.T) {
	for seed := uint64(1); seed <= 500; seed++ {
		s := Generate(seed)
		if _, err := s.Config(); err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, s.Describe())
		}
		if again := Generate(seed); again.Describe() != s.Describe() {
			t.Fatalf("seed %d: two scenarios", seed)
		}
	}
}
