//go:build unix

package store

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// mapCounter maps the first eight bytes of f shared: an atomic add in one
// process is seen by a load in every other on the same host.
func mapCounter(f *os.File) (*epoch, error) {
	mem, err := syscall.Mmap(int(f.Fd()), 0, 8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("store: access epoch: %w", err)
	}
	// A mapping starts on a page boundary, so the counter is 8-aligned.
	return &epoch{counter: (*atomic.Uint64)(unsafe.Pointer(&mem[0])), unmap: func() error { return syscall.Munmap(mem) }}, nil
}
