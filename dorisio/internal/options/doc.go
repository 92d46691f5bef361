// Package options holds the values a Write or WriteFiles is planned with,
// after dorisio's With... options have set and checked them: Options (the
// plan's serializable settings, with their defaults), the load formats
// (Format, CSV, JSON, Arrow: their Stream Load headers and how dorisio
// names them), the delivery modes (Delivery) and the stream batching mode.
// dorisio re-exports the enums under the same names; the engine packages
// (sink, streambatch, fileload) read them. No I/O, no Beam: what a Write
// will do, not how.
package options
