// Package xlog owns the XFS metadata log inside the data device: finding
// its head and tail, telling a clean log from one that needs recovery, and
// (in later issues) writing checkpoints and replaying them. The record
// format itself lives in xfs/format (log.go).
//
// The log is a circular array of 512-byte basic blocks (BB). The first word
// of every payload BB is overwritten with its record's cycle number, so a
// block's cycle is its first word, or word 1 of a header sector:
//
//	BB:    0        1..n      n+1       ...      head          size-1
//	       [hdr C]  [data C]  [hdr C]   ...  |  [old C-1 or 0]  ...
//
// The head is where the cycle number drops; a log is clean when the record
// just before the head is an unmount record.
package xlog
