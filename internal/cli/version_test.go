package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFormatVersion(t *testing.T) {
	t.Parallel()
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/denar-mk/denar", Version: "v0.0.0-20261128021300-9487ebb0a1b2+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "9487ebb0a1b2c3d4e5f60718293a4b5c6d7e8f90"},
			{Key: "vcs.time", Value: "2026-11-28T02:13:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tt := range []struct {
		info *debug.BuildInfo
		want []string
	}{
		{stamped, []string{"denar v0.0.0-20261128021300-9487ebb0a1b2+dirty\n",
			"commit 9487ebb0a1b2c3d4e5f60718293a4b5c6d7e8f90 (2026-11-28T02:13:00Z, with uncommitted changes)\n", "go1.26.8 "}},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, []string{"denar (devel)\n", "commit unknown"}},
		{nil, []string{"denar (unknown)\n", "commit unknown"}},
	} {
		got := FormatVersion("denar", tt.info)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q lacks %q", got, w)
			}
		}
	}
}
