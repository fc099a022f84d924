package terminal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
)

// Manager holds one session's terminals. The zero value is ready to use;
// it is safe for concurrent use.
type Manager struct {
	mu      sync.Mutex
	next    int
	order   []*Terminal
	opening int // terminals being started
	closed  bool
	// narrowed counts the narrowings (CloseWider); ceiling is the mode of
	// the latest. A terminal whose start spans a narrowing below its mode
	// is closed when it is ready.
	narrowed int
	ceiling  sandbox.Mode
}

// Scope is what a call of the terminal tools works with: its session's
// Manager, the mode the session runs under now, the session's working
// directory and the command builder of that mode (see [Host]).
type Scope struct {
	Manager *Manager
	Mode    sandbox.Mode
	Cwd     string
	// Command builds the shell's command under Mode (nil: bash directly,
	// unconfined, with the environment Env).
	Command tools.CommandFunc
	Env     []string
}

// Host is implemented by the tools.Env Owner of a session that offers
// terminals.
type Host interface {
	// Terminals returns the calling session's terminal scope.
	Terminals() Scope
}

// errClosed reports a call after the session closed its terminals.
var errClosed = errors.New("the session's terminals are closed")

// ShellType is the one backend type.
const ShellType = "shell"

// Open starts a terminal of type typ (only "shell"), named name ("" for
// none), in dir (relative to the scope's cwd; "" for the cwd), and
// returns it with its startup output.
func (s Scope) Open(ctx context.Context, typ, name, dir string) (*Terminal, string, error) {
	m := s.Manager
	if typ != ShellType {
		return nil, "", fmt.Errorf("no PTY backend registered for %q", typ)
	}
	switch {
	case dir == "":
		dir = s.Cwd
	case !filepath.IsAbs(dir):
		dir = filepath.Join(s.Cwd, dir)
	}
	if fi, err := os.Stat(dir); err != nil {
		return nil, "", fmt.Errorf("working directory %s: %w", dir, err)
	} else if !fi.IsDir() {
		return nil, "", fmt.Errorf("working directory %s is not a directory", dir)
	}
	m.mu.Lock()
	switch {
	case m.closed:
		m.mu.Unlock()
		return nil, "", errClosed
	case len(m.order)+m.opening >= MaxTerminals:
		m.mu.Unlock()
		return nil, "", fmt.Errorf("terminal limit reached for this session (limit: %d); close a terminal with terminal_close first", MaxTerminals)
	}
	for _, t := range m.order {
		if name != "" && t.Name == name {
			m.mu.Unlock()
			return nil, "", fmt.Errorf("PTY session name %q already exists for this owner", name)
		}
	}
	m.next++
	id := fmt.Sprintf("pty-%d", m.next)
	m.opening++
	gen := m.narrowed
	m.mu.Unlock()
	t, motd, err := start(ctx, s.Command, s.Env, dir, "REEL_PTY_SESSION_ID="+id)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opening--
	if err != nil {
		return nil, "", err
	}
	t.ID, t.Name, t.Type, t.Mode = id, name, typ, s.Mode
	if m.closed || m.narrowed != gen && s.Mode.Wider(m.ceiling) {
		go t.Close()
		return nil, "", fmt.Errorf("the session's sandbox mode narrowed while terminal %s was starting; it was closed", id)
	}
	m.order = append(m.order, t)
	return t, motd, nil
}

// Get returns the terminal id.
func (m *Manager) Get(id string) (*Terminal, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.order {
		if t.ID == id {
			return t, nil
		}
	}
	return nil, fmt.Errorf("unknown PTY session %s", id)
}

// List returns the open terminals in the order they were opened.
func (m *Manager) List() []*Terminal {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*Terminal(nil), m.order...)
}

// Close closes the terminal id, waiting until its tree ended.
func (m *Manager) Close(id string) error {
	t, err := m.Get(id)
	if err != nil {
		return err
	}
	t.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, o := range m.order {
		if o == t {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
	return nil
}

// closeWhere closes (and forgets) the terminals match selects and returns
// how many.
func (m *Manager) closeWhere(match func(*Terminal) bool) int {
	m.mu.Lock()
	var gone []*Terminal
	kept := m.order[:0]
	for _, t := range m.order {
		if match(t) {
			gone = append(gone, t)
		} else {
			kept = append(kept, t)
		}
	}
	m.order = kept
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, t := range gone {
		wg.Go(t.Close)
	}
	wg.Wait()
	return len(gone)
}

// CloseAll closes every terminal and refuses new ones: the session is
// going away.
func (m *Manager) CloseAll() int {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	return m.closeWhere(func(*Terminal) bool { return true })
}

// CloseWider closes the terminals opened under a mode wider than mode
// (the session's, after it narrowed) and returns how many.
func (m *Manager) CloseWider(mode sandbox.Mode) int {
	m.mu.Lock()
	m.narrowed++
	m.ceiling = mode
	m.mu.Unlock()
	return m.closeWhere(func(t *Terminal) bool { return t.Mode.Wider(mode) })
}
