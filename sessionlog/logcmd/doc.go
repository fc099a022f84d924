// Package logcmd implements the `reel log` subcommands: verify, show,
// surface, request, encode, convert and repair. It reads and writes logs
// through the backends and prints to the writers it is given.
package logcmd
