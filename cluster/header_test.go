package cluster

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/flinksim/flinksim/sim/config"
)

// The header carries the binary's fingerprint after the program version,
// and two headers of one recipe in one process are byte-identical.
func TestHeaderCarriesTheFingerprint(t *testing.T) {
	line := HeaderLine(config.Default(), Options{})
	var h struct {
		Program string `json:"program"`
		Build   string `json:"build"`
	}
	if err := json.Unmarshal(line, &h); err != nil || h.Build != BuildFingerprint() || h.Program != "flinksim 0.1.0" {
		t.Fatalf("header %s: %v", line, err)
	}
	if !bytes.Contains(line, []byte(`"program":"flinksim 0.1.0","build":"program=flinksim/0.1.0 `)) {
		t.Errorf("build does not follow program: %.200s", line)
	}
	if !bytes.Equal(line, HeaderLine(config.Default(), Options{})) {
		t.Error("two headers of one recipe differ")
	}
}
