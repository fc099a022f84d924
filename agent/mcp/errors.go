package mcp

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrInvalidConfig reports a ServerConfig that cannot be used: no
	// name, a duplicate name, an unknown transport, a missing command or
	// URL, fields of another transport, an invalid header or variable.
	ErrInvalidConfig = errors.New("mcp: invalid server configuration")
	// ErrTimeout reports a server that did not finish connecting within
	// Options.ConnectTimeout. The error also matches
	// context.DeadlineExceeded.
	ErrTimeout = errors.New("mcp: connect timeout")
)

// Stage is the step of connecting a server that failed.
type Stage string

// The stages of connecting one server, in order.
const (
	// StageConfig is the check of the server's configuration.
	StageConfig Stage = "config"
	// StageStart is starting the process (stdio) or opening the
	// connection (HTTP, SSE).
	StageStart Stage = "start"
	// StageInitialize is the MCP initialize handshake.
	StageInitialize Stage = "initialize"
	// StageListTools is listing the server's tools.
	StageListTools Stage = "list tools"
)

// ServerError is the failure of one server to connect. The other servers
// of the same Connect are not affected.
type ServerError struct {
	// Server is the server's configured name.
	Server string
	// Transport is the server's transport.
	Transport Transport
	// Stage is what failed.
	Stage Stage
	// Err is the cause.
	Err error
	// Exit, for a stdio server that exited while connecting, is how it
	// ended ("exit status 3", "signal: killed"); empty otherwise.
	Exit string
	// Stderr is the end of what a stdio server wrote to stderr (at most
	// 2 KiB), to explain the failure; empty otherwise.
	Stderr string
}

// Error implements error.
func (e *ServerError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcp: server %s: %s failed: %v", strconv.Quote(e.Server), e.Stage, e.Err)
	if e.Exit != "" {
		fmt.Fprintf(&b, " (the server exited: %s)", e.Exit)
	}
	if e.Stderr != "" {
		fmt.Fprintf(&b, "; its stderr ends with: %s", strconv.Quote(e.Stderr))
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *ServerError) Unwrap() error { return e.Err }

// ConnectError lists the servers that failed to connect. It is returned by
// [Connect] next to a usable Set holding the servers that did connect.
type ConnectError struct {
	// Failures are the failed servers, in configuration order.
	Failures []*ServerError
}

// Error implements error.
func (e *ConnectError) Error() string {
	if len(e.Failures) == 1 {
		return e.Failures[0].Error()
	}
	msgs := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		msgs[i] = f.Error()
	}
	return fmt.Sprintf("mcp: %d servers failed to connect:\n%s", len(e.Failures), strings.Join(msgs, "\n"))
}

// Unwrap returns the failures, so errors.As finds a *ServerError and
// errors.Is finds their causes.
func (e *ConnectError) Unwrap() []error {
	errs := make([]error, len(e.Failures))
	for i, f := range e.Failures {
		errs[i] = f
	}
	return errs
}
