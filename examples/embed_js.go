//go:build js

package examples

import "embed"

// FS holds NAME/config.yaml, NAME/actions.txt, NAME/scenario.txt and
// NAME/command of every example directory; the WebAssembly build reads
// the events files (DataFiles) from the site.
//
//go:embed */config.yaml */actions.txt */scenario.txt */command
var FS embed.FS
