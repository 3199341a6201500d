//go:build race

package dir_test

// raceEnabled shrinks the biggest randomized runs under the race detector,
// which slows this byte-crunching code about fivefold.
const raceEnabled = true
