//go:build !linux

package sandbox

// dropCapabilities is a no-op where there are no Linux capabilities (no
// confining mode runs there: Landlock is Linux-only).
func dropCapabilities() error { return nil }
