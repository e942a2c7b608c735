// Package examples holds the example runs README.md lists (examples/README.md:
// each directory's settings, actions and the one command that runs it) and
// embeds what `flinksim ui` needs to offer them as guided scenarios wherever
// the binary runs: each directory's config.yaml, actions.txt and
// scenario.txt, and the events file the scenarios read.
package examples

// DataFiles are the events files the scenarios read, which `flinksim site`
// writes beside the page (the WebAssembly build does not embed them).
var DataFiles = []string{"data/playground-clicks.jsonl"}
