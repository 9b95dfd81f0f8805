package reconcile

import (
	"strings"
	"testing"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestLinksRegistered: building the room registers the handlers of its
// link types with the core, so the core's CheckLinks no longer names
// them and a signature of a run's read or of a go-live probe always has
// its follow-up.
func TestLinksRegistered(t *testing.T) {
	t.Parallel()
	s := newRoom(storetest.SQLite(t), Deps{}, Config{})
	// Other rooms' types may be missing here; the error lists those
	// handled.
	err := s.core.CheckLinks()
	if err == nil {
		return
	}
	_, handled, _ := strings.Cut(err.Error(), "(handled: ")
	for _, typ := range []string{einvoicing.LinkReconciliation, einvoicing.LinkUJPCheck} {
		if !strings.Contains(handled, typ) {
			t.Errorf("%s is not handled: %v", typ, err)
		}
	}
}
