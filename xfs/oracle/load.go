package oracle

import (
	"os"
	"strings"
)

// LoadAverage is the first three fields of /proc/loadavg ("unknown"
// without it): benchmarks print it beside their figures, since on a
// shared machine a figure means little without the load it was taken
// under.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
