package trans

import (
	"flag"
	"sync"
	"testing"
)

// testChecks reports whether the cache runs the checks meant for test
// binaries: views are checksummed to catch a write through one, recycled
// copies are poisoned to catch a reader that kept one. Test binaries run
// them, except when asked for benchmarks, which measure the code the
// server runs. Decided once, at first use, after the flags are parsed.
var testChecks = sync.OnceValue(func() bool {
	if !testing.Testing() {
		return false
	}
	bench := flag.Lookup("test.bench")
	return bench == nil || bench.Value.String() == ""
})
