//go:build !unix

package einvoicingtest

import "time"

// ProcessCPU is not measured here.
func ProcessCPU() time.Duration { return 0 }
