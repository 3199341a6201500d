//go:build !race

package dir_test

const raceEnabled = false
