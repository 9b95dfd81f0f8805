package dashboard

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// luminance is the WCAG 2 relative luminance of #rrggbb or #rgb.
func luminance(t *testing.T, hex string) float64 {
	t.Helper()
	if len(hex) == 4 {
		hex = "#" + string([]byte{hex[1], hex[1], hex[2], hex[2], hex[3], hex[3]})
	}
	v, err := strconv.ParseUint(hex[1:], 16, 32)
	if err != nil || len(hex) != 7 {
		t.Fatalf("colour %q", hex)
	}
	lin := func(c uint64) float64 {
		s := float64(c) / 255
		if s <= 0.03928 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(v>>16&0xff) + 0.7152*lin(v>>8&0xff) + 0.0722*lin(v&0xff)
}

func contrast(t *testing.T, fg, bg string) float64 {
	a, b := luminance(t, fg), luminance(t, bg)
	return (math.Max(a, b) + 0.05) / (math.Min(a, b) + 0.05)
}

// TestContrast checks every CSS rule of the layout that sets both a text
// colour and a background meets WCAG AA for normal text (4.5:1), and so do
// links and plain text on the page's white.
func TestDashboardContrast(t *testing.T) {
	t.Parallel()
	css, err := templateFS.ReadFile("templates/layout.html")
	if err != nil {
		t.Fatal(err)
	}
	rule := regexp.MustCompile(`([^{}]+)\{([^}]*)\}`)
	fgRe := regexp.MustCompile(`(?:^|;)color:(#[0-9a-fA-F]{3,6})`)
	bgRe := regexp.MustCompile(`background:(#[0-9a-fA-F]{3,6})`)
	pairs := 0
	for _, m := range rule.FindAllStringSubmatch(string(css), -1) {
		fg, bg := fgRe.FindStringSubmatch(m[2]), bgRe.FindStringSubmatch(m[2])
		switch {
		case fg != nil && bg != nil:
		case fg != nil && strings.HasPrefix(strings.TrimSpace(m[1]), "header"):
			bg = []string{"", "#12355b"} // on the header's background
		case fg != nil:
			bg = []string{"", "#fff"} // on the page's background
		default:
			continue
		}
		pairs++
		if r := contrast(t, fg[1], bg[1]); r < 4.5 {
			t.Errorf("%s: %s on %s is %.2f:1, under 4.5:1", m[1], fg[1], bg[1], r)
		}
	}
	if pairs < 8 {
		t.Fatalf("checked only %d colour pairs; did the stylesheet move?", pairs)
	}
}
