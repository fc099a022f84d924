// Package acpcmd implements `reel acp`: it turns flags and environment into
// an agent.Config (store, provider or replay, sandbox) and serves ACP on
// stdin/stdout, with diagnostics on stderr.
package acpcmd
