//go:build !(crashpoints && unix)

package crashpoint

import "testing"

// TestProductionBuildHasNoHook: without the build tag an armed point does
// nothing — the process survives a hit that a crashpoints build would die
// at.
func TestProductionBuildHasNoHook(t *testing.T) {
	t.Setenv(Env, StoreAfterCommit+"@hit=1")
	if Enabled {
		t.Fatal("Enabled in a build without the crashpoints tag")
	}
	for range 3 {
		Hit(StoreAfterCommit)
	}
}
