package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/xfs3/xfs3/s3api/admin"
)

// releaseVersion is set at link time for releases
// (-ldflags "-X main.releaseVersion=v1.2.3"); otherwise the module
// version in the build info is used ("(devel)" in a work tree).
var releaseVersion string

// buildVersion reads the version, VCS revision and Go version from the
// build info the Go toolchain embeds (VCS fields need a build in a Git
// work tree without -buildvcs=false).
func buildVersion() admin.Version {
	v := admin.Version{Version: releaseVersion, Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if v.Version == "" {
			v.Version = "unknown"
		}
		return v
	}
	if v.Version == "" {
		v.Version = bi.Main.Version
	}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.RevisionTime = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// versionLine is the one-line form: "xfs3 VERSION (REVISION TIME[, modified]) GO".
func versionLine(v admin.Version) string {
	rev := "revision unknown"
	if v.Revision != "" {
		rev = v.Revision
		if v.RevisionTime != "" {
			rev += " " + v.RevisionTime
		}
		if v.Modified {
			rev += ", modified"
		}
	}
	return fmt.Sprintf("xfs3 %s (%s) %s", v.Version, rev, v.Go)
}

const versionUsage = `Usage: xfs3 version   (also: xfs3 --version)

Print the release version, the VCS revision and its time, and the Go
version the binary was built with (from its build info).
`

func runVersion(args []string, e *env) int {
	if len(args) > 0 {
		if isHelp(args[0]) {
			fmt.Fprint(e.stdout, versionUsage)
			return exitOK
		}
		fmt.Fprintf(e.stderr, "xfs3: version: unexpected argument %q\n", args[0])
		return exitUsage
	}
	fmt.Fprintln(e.stdout, versionLine(buildVersion()))
	return exitOK
}
