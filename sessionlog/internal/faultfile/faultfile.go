// Package faultfile injects I/O errors into the files a session-log backend
// writes, in the manner of pebble's vfs/errorfs: a File is wrapped with an
// Injector, which is asked before every operation whether that operation
// fails. The package is for tests; nothing outside tests wraps a file.
//
// An injected error is ErrInjected itself, not an *fs.PathError: it names no
// file and no operation, so a test that finds the path and the operation in
// the error a backend returns knows the backend put them there.
package faultfile

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// ErrInjected is the error every injected fault returns.
var ErrInjected = errors.New("faultfile: injected error")

// Op is a kind of file operation.
type Op int

// The operations a File (or an opener, for OpOpen) can fail.
const (
	OpOpen Op = iota
	OpWrite
	OpSync
	OpTruncate
	OpClose
)

var opNames = [...]string{OpOpen: "open", OpWrite: "write", OpSync: "sync", OpTruncate: "truncate", OpClose: "close"}

// Ops lists every Op, in order.
var Ops = []Op{OpOpen, OpWrite, OpSync, OpTruncate, OpClose}

func (op Op) String() string {
	if op >= 0 && int(op) < len(opNames) {
		return opNames[op]
	}
	return fmt.Sprintf("Op(%d)", int(op))
}

// File is the part of *os.File that a log writer uses.
type File interface {
	Write(p []byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Close() error
}

// Injector decides which operations fail. MaybeError is called before each
// operation op on the file at path and returns the error it must fail
// with, or nil to let it run. It may be called from several goroutines.
type Injector interface {
	MaybeError(op Op, path string) error
}

// InjectorFunc is an Injector written as a function.
type InjectorFunc func(op Op, path string) error

// MaybeError calls f.
func (f InjectorFunc) MaybeError(op Op, path string) error { return f(op, path) }

// Nth fails the n-th operation of kind op (counting from 1, over every file
// the injector sees) with ErrInjected; every other operation runs. It fails
// exactly one operation, so what happens after the fault is the writer's
// doing, not a disk that keeps failing.
func Nth(op Op, n int) Injector {
	var count atomic.Int64
	return InjectorFunc(func(o Op, _ string) error {
		if o == op && count.Add(1) == int64(n) {
			return ErrInjected
		}
		return nil
	})
}

// Every fails every operation for which match reports true with ErrInjected.
func Every(match func(op Op, path string) bool) Injector {
	return InjectorFunc(func(op Op, path string) error {
		if match(op, path) {
			return ErrInjected
		}
		return nil
	})
}

// Any runs each injector in turn and returns the first error: every
// injector sees every operation (so Nth counters stay exact).
func Any(injs ...Injector) Injector {
	return InjectorFunc(func(op Op, path string) error {
		var first error
		for _, inj := range injs {
			if err := inj.MaybeError(op, path); err != nil && first == nil {
				first = err
			}
		}
		return first
	})
}

// Torn makes the writes inj fails torn: before returning the error, a
// failed Write writes the first half of its bytes (at least one byte, never
// all of them, for a write of two bytes or more), as a crash or a full disk
// in the middle of write(2) would leave them.
func Torn(inj Injector) Injector {
	return InjectorFunc(func(op Op, path string) error {
		err := inj.MaybeError(op, path)
		if err != nil && op == OpWrite {
			return &tornError{err}
		}
		return err
	})
}

type tornError struct{ err error }

func (e *tornError) Error() string { return e.err.Error() }
func (e *tornError) Unwrap() error { return e.err }

// Counter is an Injector that fails nothing and counts the operations of
// each kind, so that a test can learn how many operations a scenario does
// and then fail each of them in turn.
type Counter struct {
	n [len(opNames)]atomic.Int64
}

// MaybeError counts op and returns nil.
func (c *Counter) MaybeError(op Op, _ string) error {
	if op >= 0 && int(op) < len(c.n) {
		c.n[op].Add(1)
	}
	return nil
}

// Count returns how many operations of kind op were seen.
func (c *Counter) Count(op Op) int { return int(c.n[op].Load()) }

// Opener opens files whose operations pass through Inj first, and keeps a
// model of what a crash would leave of them: for each path, the file's
// length at its last successful Sync (Durable). A test cuts a copy of the
// file to that length to see the log as a power cut would leave it, with
// every write that no fsync covered gone. The model takes a truncation as
// durable at once (a real one may be undone by a crash before the next
// fsync) and the file as found at the first open as durable. An Opener is
// safe for concurrent use; its files are not.
type Opener struct {
	// Inj decides which operations fail. It must not be nil.
	Inj Injector
	// Open opens the real file at path (for a log writer, for appending).
	Open func(path string) (File, error)

	mu    sync.Mutex
	state map[string]*fileState
}

type fileState struct {
	size    int64 // the file's length as its writes and truncations left it
	durable int64 // its length at the last successful Sync
}

// OpenFile opens path with o.Open unless Inj fails OpOpen there.
func (o *Opener) OpenFile(path string) (File, error) {
	if err := o.Inj.MaybeError(OpOpen, path); err != nil {
		return nil, err
	}
	f, err := o.Open(path)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.state == nil {
		o.state = map[string]*fileState{}
	}
	st := o.state[path]
	if st == nil {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, errors.Join(err, f.Close())
		}
		st = &fileState{size: fi.Size(), durable: fi.Size()}
		o.state[path] = st
	}
	return &file{f: f, path: path, o: o, st: st}, nil
}

// Durable returns the length of the file at path that a successful Sync
// made durable, and false when no file at path was opened.
func (o *Opener) Durable(path string) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	st := o.state[path]
	if st == nil {
		return 0, false
	}
	return st.durable, true
}

type file struct {
	f    File
	path string
	o    *Opener
	st   *fileState
}

func (f *file) Write(p []byte) (int, error) {
	err := f.o.Inj.MaybeError(OpWrite, f.path)
	if err == nil {
		n, err := f.f.Write(p)
		f.grow(n)
		return n, err
	}
	var torn *tornError
	if errors.As(err, &torn) && len(p) > 0 {
		n, werr := f.f.Write(p[:max(1, len(p)/2)])
		f.grow(n)
		if werr != nil {
			return n, errors.Join(torn.err, werr)
		}
		return n, torn.err
	}
	return 0, err
}

func (f *file) grow(n int) {
	f.o.mu.Lock()
	f.st.size += int64(n)
	f.o.mu.Unlock()
}

func (f *file) Sync() error {
	if err := f.o.Inj.MaybeError(OpSync, f.path); err != nil {
		return err
	}
	if err := f.f.Sync(); err != nil {
		return err
	}
	f.o.mu.Lock()
	f.st.durable = f.st.size
	f.o.mu.Unlock()
	return nil
}

func (f *file) Truncate(size int64) error {
	if err := f.o.Inj.MaybeError(OpTruncate, f.path); err != nil {
		return err
	}
	if err := f.f.Truncate(size); err != nil {
		return err
	}
	f.o.mu.Lock()
	f.st.size = size
	f.st.durable = min(f.st.durable, size)
	f.o.mu.Unlock()
	return nil
}

// Close closes the underlying file even when it injects an error, so that
// a test leaks no descriptor; the caller still sees the failure.
func (f *file) Close() error {
	err := f.o.Inj.MaybeError(OpClose, f.path)
	cerr := f.f.Close()
	if err != nil {
		return err
	}
	return cerr
}
