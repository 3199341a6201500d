// Package gc will hold the background workers: per-CPU inode inactivation
// queues (inodegc), the periodic sub-AG trim scheduler and the single-runner
// cache reclaimer (design.md section 6).
//
// It may import xfs, through small interfaces.
package gc
