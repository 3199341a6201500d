//go:build !unix

package s3api

import "time"

// processCPU is not measured here: 0.
func processCPU() time.Duration { return 0 }
