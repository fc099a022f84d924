//go:build !race

package acpcmd_test

// raceBuild is set when the tests run under the race detector.
const raceBuild = false

// raceEnv is empty without the race detector (see race_on_test.go).
const raceEnv = ""
