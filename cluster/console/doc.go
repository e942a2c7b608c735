// Package console is what `flinksim run` shows a person on a terminal: the
// person's view of a run (View on a Screen: one short line per notable
// event, a live status line, the closing summary table), the warnings that
// name a trap the run fell into with the setting that fixes it (Warner),
// and the filters and renderings of the JSON log (--only, --exclude,
// --log-format console). Each is an observer (cluster.Options.Observe) or a
// writer of the log's lines: it reads what a run logs and never changes
// it. Wall time paces the drawing of the status line only.
package console
