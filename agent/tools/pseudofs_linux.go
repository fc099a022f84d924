package tools

import "golang.org/x/sys/unix"

// pseudoFS reports whether the descriptor fd is on procfs or sysfs, whose
// "regular" files are the kernel's views of processes and devices (a
// process's environment among them), not files to read as text.
func pseudoFS(fd int) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return true
	}
	return st.Type == unix.PROC_SUPER_MAGIC || st.Type == unix.SYSFS_MAGIC
}
