package reconcile

import (
	"testing"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestLinksRegistered: building the room registers the handlers of its
// link types with the core (a run's reads, made by the query job; the
// go-live check's probes, which it reads itself), so that with the rooms
// it stands on every link type has its follow-up.
func TestLinksRegistered(t *testing.T) {
	t.Parallel()
	s := newRoom(storetest.SQLite(t), Deps{}, Config{})
	if err := s.core.CheckLinks(); err != nil {
		t.Fatal(err)
	}
	if l, ok := s.core.Link(einvoicing.LinkReconciliation); !ok || l.Signed == nil || l.Read == nil {
		t.Errorf("%s: registered %v, signed %v, read %v", einvoicing.LinkReconciliation, ok, l.Signed != nil, l.Read != nil)
	}
	if l, ok := s.core.Link(einvoicing.LinkUJPCheck); !ok || l.Signed == nil || l.Read != nil {
		t.Errorf("%s: registered %v, signed %v, read %v (the check reads itself)", einvoicing.LinkUJPCheck, ok, l.Signed != nil, l.Read != nil)
	}
}
