//go:build !(crashpoints && unix)

package crashpoint

// Hit does nothing: this build has no crash points.
func Hit(string) {}

// Enabled reports whether this build has crash points.
const Enabled = false
