package denar_test

import (
	"strings"
	"testing"

	"github.com/denar-mk/denar"
)

func TestNewIDOrdered(t *testing.T) {
	t.Parallel()
	prev := denar.NewID("x")
	for range 10000 {
		id := denar.NewID("x")
		if id <= prev {
			t.Fatalf("id %s made after %s sorts before it", id, prev)
		}
		if len(id) != len("x_")+26 || !strings.HasPrefix(id, "x_") {
			t.Fatalf("malformed id %q", id)
		}
		prev = id
	}
}
