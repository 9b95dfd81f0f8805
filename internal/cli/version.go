package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is what "COMMAND version" prints for the running binary: see
// FormatVersion.
func Version(command string) string {
	info, _ := debug.ReadBuildInfo()
	return FormatVersion(command, info)
}

// FormatVersion words a binary's build: the module's version, the commit it
// was built from with the commit's time and whether the working tree had
// changes (vcs.revision, vcs.time, vcs.modified, stamped by go build in a
// git checkout), and the Go version and platform. What the build did not
// record is said so, not left out.
//
//	denar v0.0.0-20261128021300-9487ebb0a1b2+dirty
//	commit 9487ebb0a1b2c3d4e5f60718293a4b5c6d7e8f90 (2026-11-28T02:13:00Z, with uncommitted changes)
//	go1.26.8 linux/amd64
func FormatVersion(command string, info *debug.BuildInfo) string {
	version, goVersion := "(unknown)", runtime.Version()
	settings := map[string]string{}
	if info != nil {
		if v := info.Main.Version; v != "" {
			version = v
		}
		if info.GoVersion != "" {
			goVersion = info.GoVersion
		}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", command, version)
	if rev := settings["vcs.revision"]; rev != "" {
		var notes []string
		if t := settings["vcs.time"]; t != "" {
			notes = append(notes, t)
		}
		switch settings["vcs.modified"] {
		case "true":
			notes = append(notes, "with uncommitted changes")
		case "false":
			notes = append(notes, "clean")
		}
		fmt.Fprintf(&b, "commit %s", rev)
		if len(notes) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(notes, ", "))
		}
		b.WriteByte('\n')
	} else {
		b.WriteString("commit unknown (not built with go build from a git checkout)\n")
	}
	fmt.Fprintf(&b, "%s %s/%s\n", goVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}
