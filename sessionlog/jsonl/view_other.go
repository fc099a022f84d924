//go:build !linux

package jsonl

import (
	"errors"
	"os"
)

// mapFile is not available here: the session keeps its data in memory.
func mapFile(*os.File, int64, int) ([]byte, error) {
	return nil, errors.New("mapping a log file is supported on Linux only")
}

func unmapFile([]byte) error { return nil }

func releaseMapped([]byte) {}
