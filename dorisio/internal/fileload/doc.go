// Package fileload is WriteFiles' engine: it lists the files that patterns
// match, cuts each into ranges of whole records (internal/filerange), and
// loads each range on its own under a label derived from its identity, on
// the sink's WriteFn (its batcher, uploads and failure path). Compressed
// files are one load each. docs/design.md, "File loading", says why.
package fileload
