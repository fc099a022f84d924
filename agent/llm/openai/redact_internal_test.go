package openai

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// redactKey has a slash and mixed case, so JSON's \/ and hex case matter.
const redactKey = "sk-reel-Fake/0123456789abcdefXYZ"

// jsonEscape escapes every character of s as \uXXXX, hex in upper or lower
// case; every keep-th character (0: none) stays raw.
func jsonEscape(s string, upper bool, keep int) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case keep > 0 && i%keep == 0:
			b.WriteRune(r)
		case upper:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// percentEscape escapes every character of s as %XX; every keep-th stays
// raw; prefix goes between the % and the hex digits ("25" escapes twice).
func percentEscape(s string, upper bool, keep int, prefix string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case keep > 0 && i%keep == 0:
			b.WriteByte(s[i])
		case upper:
			fmt.Fprintf(&b, "%%%s%02X", prefix, s[i])
		default:
			fmt.Fprintf(&b, "%%%s%02x", prefix, s[i])
		}
	}
	return b.String()
}

// leaksKey reports whether s still holds the key in a form the test can
// decode on its own: raw after undoing JSON and percent escapes, or inside
// the base64 decoding of any run of s, at any offset, in either alphabet.
func leaksKey(s, key string) bool {
	plain := s
	for range 3 { // undo up to three levels of escaping
		plain = unescape(plain)
	}
	plain = strings.ReplaceAll(plain, `\/`, "/")
	if strings.Contains(plain, key) {
		return true
	}
	for i := range len(plain) {
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			j := i
			for j < len(plain) && strings.IndexByte(alphabet(enc), plain[j]) >= 0 {
				j++
			}
			run := plain[i:j]
			if len(run)%4 == 1 {
				run = run[:len(run)-1]
			}
			if b, err := enc.DecodeString(run); err == nil && strings.Contains(string(b), key) {
				return true
			}
		}
	}
	return false
}

func alphabet(enc *base64.Encoding) string {
	if enc == base64.RawURLEncoding {
		return "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	}
	return "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
}

// unescape undoes one level of \uXXXX (any number of backslashes) and %XX.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '\\' {
			j := i
			for j < len(s) && s[j] == '\\' {
				j++
			}
			if j+5 <= len(s) && s[j] == 'u' {
				var r rune
				if _, err := fmt.Sscanf(s[j+1:j+5], "%04x", &r); err == nil {
					b.WriteRune(r)
					i = j + 5
					continue
				}
			}
		}
		if s[i] == '%' && i+3 <= len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+3], "%02x", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// TestRedactEveryEncoding: the key is removed from provider messages in
// every encoding it can arrive in, and the text around it is kept.
func TestRedactEveryEncoding(t *testing.T) {
	k := redactKey
	blob := func(enc *base64.Encoding, before, after string) string {
		return enc.EncodeToString([]byte(before + k + after))
	}
	tests := []struct{ name, in string }{
		{"raw", k},
		{"JSON-escaped, lower hex", jsonEscape(k, false, 0)},
		{"JSON-escaped, upper hex", jsonEscape(k, true, 0)},
		{"JSON-escaped, mixed with raw characters", jsonEscape(k, false, 3)},
		{"JSON-escaped, mixed case", strings.Replace(jsonEscape(k, false, 0), `\u002f`, `\u002F`, 1)},
		{"JSON-escaped twice", strings.ReplaceAll(jsonEscape(k, true, 2), `\u`, `\\u`)},
		{"JSON slash escape", strings.ReplaceAll(k, "/", `\/`)},
		{"percent-escaped, upper", percentEscape(k, true, 0, "")},
		{"percent-escaped, lower", percentEscape(k, false, 0, "")},
		{"percent-escaped, mixed with raw", percentEscape(k, true, 2, "")},
		{"percent-escaped twice", percentEscape(k, false, 0, "25")},
		{"JSON and percent mixed", jsonEscape(k[:10], false, 0) + percentEscape(k[10:], true, 0, "")},
		{"base64 std, padded", base64.StdEncoding.EncodeToString([]byte(k))},
		{"base64 std, unpadded", base64.RawStdEncoding.EncodeToString([]byte(k))},
		{"base64 URL, padded", base64.URLEncoding.EncodeToString([]byte(k))},
		{"base64 URL, unpadded", base64.RawURLEncoding.EncodeToString([]byte(k))},
		{"base64 std in a blob, alignment 1", blob(base64.StdEncoding, "x", "tail")},
		{"base64 std in a blob, alignment 2", blob(base64.StdEncoding, "xy", "tail!")},
		{"base64 std in a blob, alignment 0", blob(base64.StdEncoding, "xyz", "t")},
		{"base64 URL in a blob, alignment 1", blob(base64.RawURLEncoding, "user:", "")},
		{"base64 URL in a blob, alignment 2", blob(base64.URLEncoding, `{"k":"`, `"}`)},
		{"base64 URL in a blob, alignment 0", blob(base64.RawURLEncoding, "Bearer", "?")},
		{"base64 with a JSON-escaped slash", strings.ReplaceAll(blob(base64.StdEncoding, "\xff\xfe", "\xff"), "/", `\/`)},
		{"base64 percent-escaped", strings.NewReplacer("+", "%2B", "/", "%2f", "=", "%3D").Replace(blob(base64.StdEncoding, "a", "\xfb\xff"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := `{"error":{"message":"bad key","received":"` + tt.in + `"}} and more`
			if !leaksKey(in, k) {
				t.Fatalf("the test's own decoder does not find the key in %s", in)
			}
			got := redact(in, k)
			if leaksKey(got, k) {
				t.Errorf("redact left the key in\n%s\n(from %s)", got, in)
			}
			if !strings.Contains(got, redacted) || !strings.HasPrefix(got, `{"error":{"message":"bad key","received":"`) || !strings.HasSuffix(got, `"}} and more`) {
				t.Errorf("redact(%s) = %s, want the key replaced and the rest kept", in, got)
			}
		})
	}
}

// TestRedactLeavesOtherText: text without the key is unchanged, also text
// that shares a short run with it; a short key is redacted raw only.
func TestRedactLeavesOtherText(t *testing.T) {
	for _, s := range []string{
		"Incorrect API key provided",
		`{"error":{"message":"rate limited","code":"\u0073lo\u0077"}}`,
		"sk-reel-other " + base64.StdEncoding.EncodeToString([]byte("sk-reel-other")),
		"%73%6b-",
	} {
		if got := redact(s, redactKey); got != s {
			t.Errorf("redact(%q) = %q, want it unchanged", s, got)
		}
	}
	if got := redact(`key abc, \u0061bc`, "abc"); got != `key [redacted], \u0061bc` {
		t.Errorf("short key: %q", got)
	}
	if got := redact("anything", ""); got != "anything" {
		t.Errorf("empty key: %q", got)
	}
}
