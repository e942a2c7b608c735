//go:build !js

// (A GOOS=js build of the CLI has neither `ui` nor `site`: the session
// package leaves its HTTP server out of that build.)

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/cluster/session"
)

func init() {
	var source string
	cmd := &cobra.Command{
		Use:   "site DIR",
		Short: "Write the live diagram as a static site, the simulator inside the page (WebAssembly)",
		Long: `Write to DIR a static site of the live diagram: the page of 'flinksim ui' whose
simulator runs in the browser, in a Web Worker (index.html, assets/, flinksim.wasm,
wasm_exec.js, examples/data/). Any static file server serves it, and it makes no
other request: python3 -m http.server -d DIR, GitHub Pages, a bucket.

The address takes settings, a seed and a scenario, so that a link opens a prepared
run: index.html?set=job.window.size%3D15s&seed=7&scenario=backpressure.

Building flinksim.wasm needs the Go toolchain on PATH now, and flinksim's source:
found with go list from the current directory (a checkout), for a binary installed
with go install its version's source in the module cache, or given with --source.`,
		Example: `  flinksim site /tmp/flinksim-site && python3 -m http.server -d /tmp/flinksim-site 8000`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			site, err := session.WriteSite(args[0], source)
			if err != nil {
				return badInput("%v", err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "wrote %s: %d files; flinksim.wasm %.2f MB (%.2f MB gzip), built by %s from %s\n",
				site.Dir, len(site.Files), float64(site.WasmBytes)/1e6, float64(site.WasmGzip)/1e6, site.GoVersion, site.SourceDir)
			fmt.Fprintf(w, "serve it with: python3 -m http.server -d %s 8000   (then open http://127.0.0.1:8000/)\n", site.Dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&source, "source", "", "flinksim's source directory to build flinksim.wasm from (default: found with go list)")
	rootCmd.AddCommand(cmd)
}
