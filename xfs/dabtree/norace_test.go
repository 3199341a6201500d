//go:build !race

package dabtree_test

const raceEnabled = false
