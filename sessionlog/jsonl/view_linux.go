package jsonl

import (
	"os"
	"syscall"
)

// mapFile maps n bytes of f from offset off (a multiple of the page
// size) read-only and shared: the file's own pages.
func mapFile(f *os.File, off int64, n int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), off, n, syscall.PROT_READ, syscall.MAP_SHARED)
}

// unmapFile unmaps a mapping no view refers to.
func unmapFile(m []byte) error { return syscall.Munmap(m) }

// releaseMapped drops m's pages from the process; the next read faults
// them in again from the file.
func releaseMapped(m []byte) { _ = syscall.Madvise(m, syscall.MADV_DONTNEED) }
