// Package integration holds end-to-end tests: the real binary on a real
// listener, real clients, and the kernel and xfsprogs as oracles. It may
// import anything. layers_test.go enforces the import rule of every other
// package (docs/design.md draws it). What the tests need and how to run
// them is in docs/testing.md.
package integration
