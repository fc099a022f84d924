package tools

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// versionOf is the version of the file fi describes.
func versionOf(fi fs.FileInfo) FileVersion {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return versionOfStat(st)
	}
	return FileVersion{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
}

// versionOfStat is the version a stat(2) reports.
func versionOfStat(st *syscall.Stat_t) FileVersion {
	return FileVersion{
		Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: st.Size,
		Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(),
	}
}

// versionOfUnix is the version an fstat(2) through x/sys/unix reports.
func versionOfUnix(st *unix.Stat_t) FileVersion {
	return FileVersion{
		Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: st.Size,
		Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(),
	}
}
