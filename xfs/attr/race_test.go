//go:build race

package attr

// raceEnabled makes the slowest tests check less often: the race detector
// multiplies the cost of every block copy.
const raceEnabled = true
