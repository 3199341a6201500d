//go:build !race

package attr

const raceEnabled = false
