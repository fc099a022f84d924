//go:build !linux

package tools

import (
	"io/fs"
	"syscall"
)

// versionOf is the version of the file fi describes. Outside Linux it is
// the inode and size only.
func versionOf(fi fs.FileInfo) FileVersion {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return versionOfStat(st)
	}
	return FileVersion{Size: fi.Size()}
}

// versionOfStat is the version a stat(2) reports: its inode and size.
func versionOfStat(st *syscall.Stat_t) FileVersion {
	return FileVersion{Ino: uint64(st.Ino), Size: st.Size}
}
