package filing

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestAcceptedFiles: the МПИН files UJP accepted (testdata/accepted,
// copies of shared/reference/ujp/accepted-mpin) validate from the requests
// that describe them with no blocking issue and no force, and regenerate
// byte for byte (issue 16, defects 1 and 6: the May 2026 fund of 168
// hours and the self-employed payer with exemption 001).
func TestAcceptedFiles(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"obvrznik-110", "obvrznik-111"} {
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "accepted", name+".request.json"))
			if err != nil {
				t.Fatal(err)
			}
			req, err := DecodeMpin(body)
			if err != nil {
				t.Fatal(err)
			}
			res := Validate(req, stat2026{})
			if !res.OK || len(res.Issues) != 0 {
				t.Fatalf("issues: %+v", res.Issues)
			}
			got, err := MpinXML(req, stat2026{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join("testdata", "accepted", name+".xml"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s.xml differs at byte %d:\n%s", name, firstDiff(got, want), got)
			}
			xmllint(t, filepath.Join("accepted", name+".xml"), "mpin.xsd")
		})
	}
}
