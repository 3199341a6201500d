// Package integration holds end-to-end tests: the real binary, real
// clients, and the kernel and xfsprogs as oracles. It may import anything.
package integration
