// Package filerange reads WriteFiles' CSV and JSON-lines files as Doris'
// readers do: it cuts a file into ranges of whole records (Splitter), each
// one load, counts a file's records (Count), lists a load body's records
// (Starts), and notices a CRLF file read with "\n" (SniffCRLF).
package filerange
