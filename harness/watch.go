package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// waitForFile blocks until path exists, without polling: it watches the
// parent directory with inotify and checks once after the watch is in
// place, so a file created before the watch is not missed.
func waitForFile(ctx context.Context, path string) error {
	dir := filepath.Dir(path)
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return fmt.Errorf("waitForFile: inotify: %w", err)
	}
	f := os.NewFile(uintptr(fd), "inotify")
	defer func() { go f.Close() }() // not waited for: see dirWatch.close
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE); err != nil {
		return fmt.Errorf("waitForFile: watch %s: %w", dir, err)
	}
	found := make(chan error, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := os.Stat(path); err == nil {
				found <- nil
				return
			}
			if _, err := f.Read(buf); err != nil {
				found <- err
				return
			}
		}
	}()
	select {
	case err := <-found:
		if err != nil && !errors.Is(err, os.ErrClosed) {
			return fmt.Errorf("waitForFile %s: %w", path, err)
		}
		return err
	case <-ctx.Done():
		return fmt.Errorf("waitForFile %s: %w", path, ctx.Err())
	}
}

// dirWatch reports changes to the files of one directory (a file created,
// written, closed after writing or renamed into it), so a wait on a log the
// agent is writing wakes when the log changes instead of on a fixed tick.
type dirWatch struct {
	f       *os.File
	changed chan struct{}
}

// watchDir starts watching dir. The caller checks what it waits for after
// the watch is in place (a change before it is not reported) and closes
// the watch when done.
func watchDir(dir string) (*dirWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("watch %s: inotify: %w", dir, err)
	}
	f := os.NewFile(uintptr(fd), "inotify")
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE|unix.IN_MODIFY|unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO); err != nil {
		f.Close()
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	w := &dirWatch{f: f, changed: make(chan struct{}, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := f.Read(buf); err != nil {
				return // closed
			}
			select {
			case w.changed <- struct{}{}:
			default: // a wake is already pending
			}
		}
	}()
	return w, nil
}

// wait returns when the directory changed since the last wait, after
// fallback (a bound in case a change is not reported), or when ctx ends
// (false). A nil watch waits for fallback only.
func (w *dirWatch) wait(ctx context.Context, fallback time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	t := time.NewTimer(fallback)
	defer t.Stop()
	var changed chan struct{}
	if w != nil {
		changed = w.changed
	}
	select {
	case <-ctx.Done():
		return false
	case <-changed:
	case <-t.C:
	}
	return true
}

// close stops the watch; a nil watch is a no-op. It does not wait: closing
// an inotify file with a read pending takes milliseconds (the read has to
// be woken and return first), which every wait would otherwise add.
func (w *dirWatch) close() {
	if w != nil {
		go w.f.Close()
	}
}
