// Package acpcmd implements `reel acp`: it turns flags and environment into
// an agent.Config (store, provider or replay, sandbox) and serves ACP on
// stdin/stdout, with diagnostics on stderr.
//
// The model is one of: a live OpenAI-compatible provider (key from
// DEEPSEEK_API_KEY or OPENAI_API_KEY; none needed for a loopback
// --base-url, which gets the placeholder key "local"); the stand-in of
// --standin SCRIPT, served in process on 127.0.0.1; or the recorded calls of
// --replay. Without a key for a remote endpoint, reel acp says so on stderr
// at start-up and the agent answers session/new and session/prompt with ACP
// auth-required naming the variable (agent.Config.MissingKey). -h prints the
// flags, the environment and examples, and exits 0.
package acpcmd
