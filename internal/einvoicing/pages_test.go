package einvoicing

import (
	"fmt"
	"slices"
	"testing"
)

// TestPageFills: rows the credential may not see are skipped and the page
// is read on until it holds limit+1 (a next page) or the rows run out,
// however the hidden rows are spread.
func TestPageFills(t *testing.T) {
	t.Parallel()
	var rows []string // newest first: r29 … r00
	for i := 29; i >= 0; i-- {
		rows = append(rows, fmt.Sprintf("r%02d", i))
	}
	read := func(after string, lim int) ([]string, error) {
		i := 0
		if after != "" {
			i = slices.Index(rows, after) + 1
		}
		return rows[i:min(i+lim, len(rows))], nil
	}
	id := func(r string) string { return r }
	for _, tc := range []struct {
		name    string
		visible func(string) bool
		limit   int
		want    int
	}{
		{"all visible", func(string) bool { return true }, 5, 6},
		{"one in seven visible", func(r string) bool { return r[2]%7 == 0 }, 2, 3},
		{"fewer visible than a page", func(r string) bool { return r == "r03" || r == "r21" }, 5, 2},
		{"none visible", func(string) bool { return false }, 5, 0},
	} {
		got, err := page(tc.limit, "", read, id, tc.visible, plain(id))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.want || slices.ContainsFunc(got, func(r string) bool { return !tc.visible(r) }) {
			t.Errorf("%s: %v, want %d visible rows", tc.name, got, tc.want)
		}
	}
}
