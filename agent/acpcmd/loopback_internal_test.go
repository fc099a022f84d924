package acpcmd

import (
	"errors"
	"testing"
)

// TestLoopbackURL: only loopback hosts (127.0.0.0/8, ::1, localhost) are
// exempt from the key; a relative or host-less URL is a usage error.
func TestLoopbackURL(t *testing.T) {
	t.Parallel()
	for base, want := range map[string]bool{
		"http://127.0.0.1:8080/v1":  true,
		"http://127.3.4.5/v1":       true,
		"http://[::1]:9000/v1":      true,
		"http://localhost:11434/v1": true,
		"http://LocalHost/v1":       true,
		"https://api.deepseek.com":  false,
		"http://10.0.0.1/v1":        false,
		"http://[::ffff:8.8.8.8]/":  false,
		"http://localhost.evil.com": false,
		"http://127.0.0.1.nip.io/":  false,
	} {
		got, err := loopbackURL(base)
		if err != nil || got != want {
			t.Errorf("loopbackURL(%q) = %v, %v; want %v", base, got, err, want)
		}
	}
	for _, bad := range []string{"api.example.com", "/v1", "http://", "::"} {
		if _, err := loopbackURL(bad); !errors.Is(err, ErrUsage) {
			t.Errorf("loopbackURL(%q): %v, want a usage error", bad, err)
		}
	}
}
