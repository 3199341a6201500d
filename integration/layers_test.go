package integration

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/xfs3/xfs3"

// allowed lists, per package prefix, the packages of ours it may import:
// imports only point down the layers of design.md. The most specific
// prefix wins.
var allowed = map[string][]string{
	"cmd/":           {""}, // everything
	"integration":    {""},
	"config":         {},
	"s3api":          {"s3api", "store"},
	"s3api/iam":      {},
	"s3api/identity": {"s3api/iam"},
	"s3api/sigv4":    {},
	"s3api/h1":       {},
	"store":          {"store", "xfs", "gc"},
	"gc":             {"gc", "xfs"},
	"xfs":            {"xfs"},
	"xfs/format":     {},
	"xfs/dev":        {},
	"xfs/reclaim":    {},
	"xfs/xlog":       {"xfs/format"},
	"xfs/oracle":     {},
	"xfs/btree":      {"xfs/format"},
	"xfs/fork":       {"xfs/format", "xfs/trans"},
	"xfs/trans":      {"xfs/format", "xfs/dev", "xfs/xlog", "xfs/reclaim"}, // commits go through the log
	"xfs/dir":        {"xfs/format", "xfs/fork", "xfs/trans", "xfs/dabtree"},
	"xfs/dabtree":    {"xfs/format", "xfs/fork", "xfs/trans"},
	"xfs/attr":       {"xfs/format", "xfs/fork", "xfs/trans", "xfs/dabtree"},
	"xfs/mkfs":       {"xfs/format", "xfs/dev"},
	"xfs/alloc":      {"xfs/format", "xfs/btree", "xfs/trans"},
	"xfs/ialloc":     {"xfs/format", "xfs/btree", "xfs/trans", "xfs/alloc"},
	"xfs/refcount":   {"xfs/format", "xfs/btree", "xfs/trans", "xfs/alloc"},
	"xfs/quota":      {"xfs/format", "xfs/trans", "xfs/xlog"}, // dquot log items, formatted by their owner
	// Lifecycle rules: a computation over a version and the time.
	"store/lifecycle": {},
	// Cryptography alone; its outside modules are listed in outside.
	"s3api/admin/sealed": {},
	// Test fixtures: only tests import them.
	"xfs/trans/transtest": {"xfs/format", "xfs/dev", "xfs/trans", "xfs/mkfs"},
}

// pure are the packages of the standard library alone, so that they can
// never reach the store, the engine, the network or a logger; of them,
// noIO may not even import I/O (policy evaluation is a computation).
var (
	pure = []string{"s3api/iam", "s3api/sigv4", "s3api/h1", "store/lifecycle"}
	noIO = map[string][]string{"s3api/iam": {"net/http", "os", "io"}, "store/lifecycle": {"net/http", "os", "io"}}
)

// outside lists, for a package held to a few outside modules, the only
// ones it may import beyond the standard library.
var outside = map[string][]string{
	"s3api/admin/sealed": {"golang.org/x/crypto", "golang.org/x/sys/cpu", "github.com/secure-io/sio-go"},
}

// forbiddenInEngine are outside packages the engine must never need.
var forbiddenInEngine = []string{"net/http", "github.com/rs/zerolog", "github.com/gorilla/mux"}

func TestImportLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		rule, ok := ruleFor(pkg)
		if !ok {
			t.Errorf("package %q has no layer rule; add it to allowed", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			first, _, _ := strings.Cut(imp, "/")
			if slices.Contains(pure, pkg) && strings.Contains(first, ".") {
				t.Errorf("%s imports %s: only the standard library is allowed", pkg, imp)
			}
			if mods, ok := outside[pkg]; ok && strings.Contains(first, ".") && !permitted(mods, imp) {
				t.Errorf("%s imports %s: only the standard library and %s are allowed", pkg, imp, strings.Join(mods, ", "))
			}
			if slices.Contains(noIO[pkg], imp) {
				t.Errorf("%s imports %s: the package does no I/O", pkg, imp)
			}
			if strings.HasPrefix(pkg, "xfs") {
				for _, bad := range forbiddenInEngine {
					if imp == bad || strings.HasPrefix(imp, bad+"/") {
						t.Errorf("%s imports %s: the engine must not know HTTP or logging", pkg, imp)
					}
				}
			}
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if !permitted(rule, dep) {
				t.Errorf("%s imports %s, which its layer may not", pkg, dep)
			}
		}
	}
}

func ruleFor(pkg string) ([]string, bool) {
	best, found := "", false
	for prefix := range allowed {
		if (pkg == prefix || strings.HasPrefix(pkg, strings.TrimSuffix(prefix, "/")+"/") || strings.HasPrefix(pkg, prefix) && strings.HasSuffix(prefix, "/")) && len(prefix) >= len(best) {
			best, found = prefix, true
		}
	}
	return allowed[best], found
}

func permitted(rule []string, dep string) bool {
	for _, p := range rule {
		if p == "" || dep == p || strings.HasPrefix(dep, p+"/") {
			return true
		}
	}
	return false
}
