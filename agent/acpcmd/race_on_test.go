//go:build race

package acpcmd_test

// raceBuild is set when the tests run under the race detector: reel is
// then built with it too, so the races of the processes the tests drive
// (background subagents, inbox turns) fail the tests as well.
const raceBuild = true

// raceEnv is the race runtime's setting for every reel process the tests
// start (and the supervisors, hooks and servers reel starts in turn, which
// inherit it). A race-built process otherwise sleeps a whole second when
// it exits (atexit_sleep_ms defaults to 1000), and the tests start
// hundreds of them: every bash call's supervisor, every reel acp. Races
// are still reported while a process runs and at its exit; only the idle
// second after main returns is gone.
const raceEnv = "GORACE=atexit_sleep_ms=0"
