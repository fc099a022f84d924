package harness

import "testing"

// TestMayHoldSecretKeepsEveryMatch: the literal prefilter of the secrets
// guard passes every text the secret pattern matches (one case per
// alternative and spelling), and skips texts without any of its literals.
func TestMayHoldSecretKeepsEveryMatch(t *testing.T) {
	for _, tc := range []struct {
		text   string
		secret bool
	}{
		{"key sk-0123456789abcdefXYZ here", true},
		{`{"authorization":"Bearer 0123456789abcdef.XYZ"}`, true},
		{"bearer\t0123456789abcdef~XYZ", true},
		{"export DEEPSEEK_API_KEY=0123456789abcdefXYZ", true},
		{`{"apiKey": "0123456789abcdefXYZ"}`, true},
		{"Api-Key: '0123456789abcdefXYZ'", true},
		{"APIKEY=0123456789abcdefXYZ", true},
		{"a session log with no credential in it", false},
		{"sk-short", false},
	} {
		matched := secretPattern.get().Find([]byte(tc.text)) != nil
		if matched != tc.secret {
			t.Fatalf("the case %q is wrong: the pattern matches it: %v", tc.text, matched)
		}
		if got := mayHoldSecret([]byte(tc.text)); matched && !got {
			t.Errorf("mayHoldSecret(%q) = false, but the secret pattern matches it: the guard would miss it", tc.text)
		}
	}
	if mayHoldSecret([]byte("a session log with no credential in it")) {
		t.Error("mayHoldSecret passes a text with none of the literals")
	}
}
