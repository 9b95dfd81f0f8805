package httpx

import (
	"strings"
	"testing"
)

// FuzzLogPath: whatever the path, nothing after a "mandates" segment
// survives into the access log but the redaction mark.
func FuzzLogPath(f *testing.F) {
	for _, p := range []string{"/mandates/mdt_x", "//Mandates//mdt_x/y", "/v1/companies/cmp_1", "/mandates", "/mandates/", "mandates/x", ""} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		out := logPath(p)
		segs := strings.Split(out, "/")
		for i, s := range segs {
			if !strings.EqualFold(s, "mandates") {
				continue
			}
			for _, after := range segs[i+1:] {
				if after != "" && after != redacted {
					t.Fatalf("logPath(%q) = %q keeps %q", p, out, after)
				}
			}
			return
		}
		if out != p {
			t.Fatalf("logPath(%q) = %q changed a path without a mandates segment", p, out)
		}
	})
}
