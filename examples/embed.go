//go:build !js

package examples

import "embed"

// FS holds NAME/config.yaml, NAME/actions.txt, NAME/scenario.txt and
// NAME/command of every example directory, and data/playground-clicks.jsonl.
//
// In the WebAssembly build of `flinksim site` (GOOS=js) the events file is
// left out: the page's worker reads it from the site (DataFiles) when a
// scenario asks for it, which keeps 4.5 MB out of flinksim.wasm.
//
//go:embed */config.yaml */actions.txt */scenario.txt */command data/playground-clicks.jsonl
var FS embed.FS
