//go:build race

package acpcmd_test

// raceBuild is set when the tests run under the race detector: reel is
// then built with it too, so the races of the processes the tests drive
// (background subagents, inbox turns) fail the tests as well.
const raceBuild = true
