// Package filerange reads WriteFiles' CSV and JSON-lines files as Doris'
// readers do: it cuts a file into ranges of whole records (Splitter), each
// one load, skips a UTF-8 byte-order mark at its start, checks that every
// record ends the same way, "\n" or "\r\n" (CheckLineEnds, StripCR),
// counts a file's records (Count), and lists a load body's records
// (Starts).
package filerange
