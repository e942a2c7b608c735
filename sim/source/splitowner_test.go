package source

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/flinksim/flinksim/sim/keygroup"
	"pgregory.net/rapid"
)

type splitOwnerCase struct {
	CaseID        string `json:"case_id"`
	Topic         string `json:"topic"`
	TopicHashCode int32  `json:"topic_hash_code"`
	Partition     int    `json:"partition"`
	NumReaders    int    `json:"num_readers"`
	Owner         int    `json:"owner"`
}

// TestSplitOwnerGolden runs every case of split_owner.json, computed by
// KafkaSourceEnumerator.getSplitOwner itself. A missing file or a file with no
// case fails.
func TestSplitOwnerGolden(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("../../testdata/golden", "split_owner.json"))
	if err != nil {
		t.Fatalf("golden file: %v", err)
	}
	var doc struct {
		CaseCount int              `json:"case_count"`
		Cases     []splitOwnerCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) == 0 || doc.CaseCount != len(doc.Cases) {
		t.Fatalf("split_owner.json: %d cases, case_count %d", len(doc.Cases), doc.CaseCount)
	}
	for _, c := range doc.Cases {
		if h := keygroup.StringHashCode(c.Topic); h != c.TopicHashCode {
			t.Errorf("%s: hashCode(%q) = %d, want %d", c.CaseID, c.Topic, h, c.TopicHashCode)
		}
		if got := SplitOwner(c.Topic, c.Partition, c.NumReaders); got != c.Owner {
			t.Errorf("%s: SplitOwner(%q, %d, %d) = %d, want %d", c.CaseID, c.Topic, c.Partition, c.NumReaders, got, c.Owner)
		}
	}
	t.Logf("%d cases", len(doc.Cases))
}

func TestSplitOwnerHandChecked(t *testing.T) {
	// "orders".hashCode() = -1008770331; * 31 = -31271880261, which wraps to
	// -1207109189 (-31271880261 + 8*2^32 = 3087858107, minus 2^32); & 0x7FFFFFFF
	// gives 940374459; 940374459 % 4 = 3. So partition 0 goes to reader 3 and
	// partitions 1, 2, 3, 4 to readers 0, 1, 2, 3.
	for p, want := range []int{3, 0, 1, 2, 3} {
		if got := SplitOwner("orders", p, 4); got != want {
			t.Errorf("SplitOwner(orders, %d, 4) = %d, want %d", p, got, want)
		}
	}
	if got := SplitOwner("orders", 0, 0); got != -1 {
		t.Errorf("SplitOwner with 0 readers = %d, want -1", got)
	}
	if got := SplitOwner("orders", 0, -2); got != -1 {
		t.Errorf("SplitOwner with -2 readers = %d, want -1", got)
	}
}

func TestSplitOwnerRoundRobin(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		topic := rapid.String().Draw(t, "topic")
		readers := rapid.IntRange(1, 64).Draw(t, "readers")
		p := rapid.IntRange(0, 10000).Draw(t, "partition")
		o := SplitOwner(topic, p, readers)
		if o < 0 || o >= readers {
			t.Fatalf("owner %d outside [0, %d)", o, readers)
		}
		if next := SplitOwner(topic, p+1, readers); next != (o+1)%readers {
			t.Fatalf("partition %d -> %d but partition %d -> %d: not round-robin", p, o, p+1, next)
		}
	})
}
