package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/reel-agent/reel/agent/llm"
)

// ErrExhausted reports a model call beyond the end of the script.
var ErrExhausted = errors.New("replay: script exhausted")

// ErrBusy reports a second stream opened while one is in flight.
var ErrBusy = errors.New("replay: a stream is already in flight")

// Provider serves a script positionally. It is safe for concurrent use, but
// only one stream may be in flight at a time.
type Provider struct {
	mu       sync.Mutex
	script   []Entry
	next     int
	inFlight bool
	readyDir string
	// titles is the title-call script (titles.go).
	titles        []Entry
	nextTitle     int
	titleInFlight bool
	// match compares each request with the recorded one (match.go); nil
	// compares nothing. unchecked hears of what it could not compare.
	match     *Matcher
	unchecked func(where string, what []string)
	mismatch  func(err *MismatchError)
	// wants are the recorded requests by turn and step (Wants), for the
	// calls an override scripts whole (their entries carry none).
	wants map[string]*Want
}

// WithWants gives the provider the recorded requests (Wants) by turn and
// step: a call whose script entry carries no request (a whole-script
// override's) is matched with the recorded request of its turn and step,
// or of the compaction it summarizes for. It returns p.
func (p *Provider) WithWants(wants map[string]*Want) *Provider {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wants = wants
	return p
}

// WithMatcher makes the provider compare every request with the one the
// recording sent at that call before answering it: a mismatch fails the
// call with a *MismatchError, which mismatch (when non-nil) hears of too.
// unchecked, when non-nil, is told of each call (or field) the recording
// cannot provide a request for.
func (p *Provider) WithMatcher(m *Matcher, unchecked func(where string, what []string), mismatch func(err *MismatchError)) *Provider {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.match, p.unchecked, p.mismatch = m, unchecked, mismatch
	return p
}

// note reports what a call could not compare.
func (p *Provider) note(where string, what ...string) {
	if p.unchecked != nil && len(what) > 0 {
		p.unchecked(where, what)
	}
}

// New returns a provider serving script from position start (the number of
// calls a loaded session already made). readyDir resolves hang ready files.
func New(script []Entry, start int, readyDir string) *Provider {
	return &Provider{script: script, next: start, readyDir: readyDir}
}

// Served is the number of script entries consumed so far.
func (p *Provider) Served() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.next
}

// Stream implements llm.Provider.
func (p *Provider) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if req.Purpose == llm.PurposeTitle {
		s, err := p.titleStream()
		if err != nil {
			return nil, err
		}
		if err := p.check(s.e, req); err != nil {
			p.nextTitle--
			p.titleInFlight = false
			return nil, err
		}
		s.ctx = ctx
		return s, nil
	}
	if p.inFlight {
		return nil, ErrBusy
	}
	if p.next >= len(p.script) {
		return nil, fmt.Errorf("%w: model call %d requested, but the recording has only %d", ErrExhausted, p.next+1, len(p.script))
	}
	e := p.script[p.next]
	if e.Kind == KindIncomplete {
		return nil, fmt.Errorf("replay: model call %d (%s) ended without a finish chunk in the recording (the stream threw or was cancelled); patch it in replay.override.json", p.next+1, e.Where)
	}
	if err := p.check(e, req); err != nil {
		return nil, err
	}
	p.next++
	p.inFlight = true
	return &stream{p: p, ctx: ctx, e: e, closed: make(chan struct{})}, nil
}

// check compares req with the request e answers (its Want, or the
// recorded request of req's turn and step). p.mu is held.
func (p *Provider) check(e Entry, req llm.Request) error {
	if p.match == nil || p.match.Mode == MatchOff {
		return nil
	}
	w, where := e.Want, e.Where
	if w == nil && req.Purpose != llm.PurposeTitle {
		key := requestKey(req)
		if w = p.wants[key]; w != nil {
			where = key + " (" + e.Where + ")"
		}
	}
	if w == nil {
		p.note(where, "the recording holds no request for this call")
		return nil
	}
	unchecked, err := p.match.Check(where, w, req)
	p.note(where, unchecked...)
	if err != nil {
		if me, ok := err.(*MismatchError); ok && p.mismatch != nil {
			p.mismatch(me)
		}
		return err
	}
	return nil
}

// stream serves one entry. Next runs on one goroutine at a time; Close may
// run on any goroutine.
type stream struct {
	p      *Provider
	ctx    context.Context
	e      Entry
	title  bool // a title call (titles.go)
	i      int
	ready  bool
	err    error // terminal: io.EOF or a failure, returned again by every later Next
	once   sync.Once
	closed chan struct{} // closed by Close
}

// errClosed is what Next returns once the stream is closed.
var errClosed = fmt.Errorf("replay: %w", llm.ErrClosed)

// Next implements llm.Stream. The end is sticky: once it returned io.EOF or
// an error it returns that again, until Close, after which it returns
// llm.ErrClosed.
func (s *stream) Next() (llm.Chunk, error) {
	select {
	case <-s.closed:
		return llm.Chunk{}, errClosed
	default:
	}
	if s.err != nil {
		return llm.Chunk{}, s.err
	}
	c, err := s.next()
	if err != nil {
		s.err = err
	}
	return c, err
}

func (s *stream) next() (llm.Chunk, error) {
	if err := s.ctx.Err(); err != nil {
		return llm.Chunk{}, fmt.Errorf("replay: %w", err)
	}
	if s.i < len(s.e.Chunks) {
		c := s.e.Chunks[s.i]
		s.i++
		return c, nil
	}
	switch s.e.Kind {
	case KindThrow:
		return llm.Chunk{}, &llm.ProviderError{Code: s.e.Code, Message: s.e.Message}
	case KindHang:
		if s.e.ReadyFile != "" && !s.ready {
			s.ready = true
			path := s.e.ReadyFile
			if !filepath.IsAbs(path) {
				path = filepath.Join(s.p.readyDir, path)
			}
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				return llm.Chunk{}, fmt.Errorf("replay: hang ready file: %w", err)
			}
		}
		select {
		case <-s.ctx.Done():
			return llm.Chunk{}, fmt.Errorf("replay: %w", s.ctx.Err())
		case <-s.closed:
			return llm.Chunk{}, errClosed
		}
	}
	return llm.Chunk{}, io.EOF
}

// Close implements llm.Stream. It unblocks a hanging Next and lets the
// provider open the next stream.
func (s *stream) Close() error {
	s.once.Do(func() {
		close(s.closed)
		s.p.mu.Lock()
		if s.title {
			s.p.titleInFlight = false
		} else {
			s.p.inFlight = false
		}
		s.p.mu.Unlock()
	})
	return nil
}
