package tools

import (
	"fmt"
	"os"
	"path/filepath"
)

// spillDir returns the directory for spill files, creating it.
func (e *Env) spillDir() (string, error) {
	dir := e.SpillDir
	if dir == "" {
		dir = os.TempDir()
	} else if !filepath.IsAbs(dir) {
		dir = e.abs(dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("tools: creating spill directory %s: %w", dir, err)
	}
	return dir, nil
}

// spill saves text to a new file in the spill directory and returns its path.
func (e *Env) spill(prefix, text string) (string, error) {
	dir, err := e.spillDir()
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, prefix+"-*.txt")
	if err != nil {
		return "", fmt.Errorf("tools: creating spill file in %s: %w", dir, err)
	}
	if _, err := f.WriteString(text); err != nil {
		_ = f.Close()
		return "", fmt.Errorf("tools: writing spill file %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("tools: closing spill file %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}
