//go:build race

package dabtree_test

const raceEnabled = true
