// Package examples holds the example runs README.md lists (examples/README.md:
// each directory's settings, actions and the one command that runs it) and
// embeds what `flinksim ui` needs to offer them as guided scenarios wherever
// the binary runs: each directory's config.yaml, actions.txt and
// scenario.txt, and the events file the scenarios read.
package examples

import "embed"

// FS holds NAME/config.yaml, NAME/actions.txt, NAME/scenario.txt and
// NAME/command of every example directory, and data/playground-clicks.jsonl.
//
//go:embed */config.yaml */actions.txt */scenario.txt */command data/playground-clicks.jsonl
var FS embed.FS
