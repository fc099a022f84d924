package tools

// The file view: which version of a file the tools read and write when the
// editor offers its buffers (Env.FS). A session's reads and writes of a
// file must see one version of it, so that the model never edits text the
// write cannot see (see the package documentation, section File view).

// viewChanged is the refusal of a write or edit of p whose last read
// showed the editor's buffer while this write must go to the file on disk.
func viewChanged(verb, p string) string {
	return "cannot " + verb + ` "` + p + `": it was read from the editor's unsaved buffer, but the sandbox confines this ` + verb +
		" to the file on disk, which may differ — re-read the file, then retry"
}

// readsBuffer reports whether read shows p from the editor's buffer: only
// when there is one (Env.FS) and a write of p would go there too, that is
// when the Guard does not confine (or refuse) writes of p. Any other read
// shows the file on disk, which is where a confined write goes.
func (e *Env) readsBuffer(p string) bool {
	if e.FS == nil {
		return false
	}
	roots, err := e.writeRoots(p)
	return err == nil && len(roots) == 0
}

// unconfinedView is the Env an unconfined write or edit of a file last
// seen as o (seen says whether it was) goes through: the editor's buffer
// when the file was read from it or never read, the disk when it was read
// from the disk, so the change applies to the text the model was shown.
func (e *Env) unconfinedView(o Observation, seen bool) *Env {
	if e.FS == nil || !seen || !o.Present || o.Buffer {
		return e
	}
	d := *e
	d.FS = nil
	return &d
}
