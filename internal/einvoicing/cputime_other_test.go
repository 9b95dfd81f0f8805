//go:build !unix

package einvoicing

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
