package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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
	defer f.Close()
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
