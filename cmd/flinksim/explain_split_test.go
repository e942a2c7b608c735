package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func TestExplainSplitGolden(t *testing.T) {
	type soCase struct {
		CaseID     string `json:"case_id"`
		Topic      string `json:"topic"`
		Partition  int    `json:"partition"`
		NumReaders int    `json:"num_readers"`
		Owner      int    `json:"owner"`
	}
	type group struct {
		topic   string
		readers int
	}
	byGroup := map[group][]soCase{}
	var groups []group
	for _, c := range loadExplainGolden[soCase](t, "split_owner.json") {
		g := group{c.Topic, c.NumReaders}
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], c)
	}
	checked := 0
	for _, g := range groups {
		cases := byGroup[g]
		partitions := 0
		for _, c := range cases {
			partitions = max(partitions, c.Partition+1)
		}
		args := []string{"split", "--topic", g.topic, "--partitions", strconv.Itoa(partitions),
			"--readers", strconv.Itoa(g.readers)}
		if g.topic == "" {
			// Kafka has no topic named "": the CLI refuses it (SplitOwner's own
			// test runs these cases).
			_, err := runExplain(t, args...)
			if !errors.As(err, new(usageError)) || err.Error() != "--topic \"\": Topic name is illegal, it can't be empty" {
				t.Errorf("%s: got %v", cases[0].CaseID, err)
			}
			continue
		}
		var got splitJSON
		runExplainJSON(t, &got, args...)
		if len(got.Assignments) != partitions {
			t.Fatalf("%q R=%d: %d assignments, want %d", g.topic, g.readers, len(got.Assignments), partitions)
		}
		for i, a := range got.Assignments {
			if a.Partition != i || a.Reader < 0 || a.Reader >= g.readers {
				t.Errorf("%q R=%d: assignment %d = %+v", g.topic, g.readers, i, a)
			}
		}
		for _, c := range cases {
			if r := got.Assignments[c.Partition].Reader; r != c.Owner {
				t.Errorf("%s: %q partition %d of %d readers: reader %d, want %d", c.CaseID, c.Topic, c.Partition, c.NumReaders, r, c.Owner)
			}
			checked++
		}
		// Idle readers are exactly the readers that own no partition.
		owns := make([]bool, g.readers)
		for _, a := range got.Assignments {
			owns[a.Reader] = true
		}
		idle := []int{}
		for r, o := range owns {
			if !o {
				idle = append(idle, r)
			}
		}
		if fmt.Sprint(idle) != fmt.Sprint(got.IdleReaders) {
			t.Errorf("%q R=%d: idle_readers %v, want %v", g.topic, g.readers, got.IdleReaders, idle)
		}
		if got.IdleReaders == nil {
			t.Errorf("%q R=%d: idle_readers is null, want a list", g.topic, g.readers)
		}
	}
	if checked == 0 {
		t.Fatal("no split_owner case checked")
	}
	t.Logf("%d cases checked in %d runs", checked, len(groups))
}

func TestExplainSplitIdleReaders(t *testing.T) {
	// Hand-checked: "orders".hashCode() = -1008770331; *31 wraps to -1207109189;
	// & 0x7FFFFFFF = 940374459; % 6 = 3. Partitions 0..3 go to readers 3, 4, 5, 0,
	// so readers 1 and 2 own no split.
	var got splitJSON
	runExplainJSON(t, &got, "split", "--topic", "orders", "--partitions", "4", "--readers", "6")
	var readers []int
	for _, a := range got.Assignments {
		readers = append(readers, a.Reader)
	}
	if fmt.Sprint(readers) != "[3 4 5 0]" || fmt.Sprint(got.IdleReaders) != "[1 2]" {
		t.Errorf("readers %v idle %v; want [3 4 5 0] idle [1 2]", readers, got.IdleReaders)
	}
	if !strings.Contains(got.Note, "Long.MIN_VALUE") || !strings.Contains(got.Note, "withIdleness") {
		t.Errorf("note %q does not explain the watermark trap", got.Note)
	}

	out, err := runExplain(t, "split", "--topic", "orders", "--partitions", "4", "--readers", "6")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"idle readers: 1, 2", "Long.MIN_VALUE", "withIdleness", "(none: idle)",
		"start index = ((-1008770331 * 31) & 0x7FFFFFFF) % 6 = 3"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}

	// As many readers as partitions: nobody is idle, and there is no note.
	runExplainJSON(t, &got, "split", "--topic", "orders", "--partitions", "6", "--readers", "6")
	if len(got.IdleReaders) != 0 || got.IdleReaders == nil {
		t.Errorf("idle_readers = %#v, want []", got.IdleReaders)
	}
}

func TestExplainSplitJSONFields(t *testing.T) {
	out, err := runExplain(t, "split", "--topic", "orders", "--partitions", "2", "--readers", "3", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"assignments", "idle_readers"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, out)
		}
	}
	as, _ := m["assignments"].([]any)
	if len(as) != 2 {
		t.Fatalf("assignments = %v", m["assignments"])
	}
	a0, _ := as[0].(map[string]any)
	var keys []string
	for k := range a0 {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if fmt.Sprint(keys) != "[partition reader]" {
		t.Errorf("assignment fields %v, want [partition reader]", keys)
	}
}
