// Package termtext owns how text that a model or a tool controls is made
// safe to print on a human's terminal: every character a terminal would act
// on, or that hides or reorders text, is shown as a visible escape, and the
// escaping is unambiguous, so what is shown can be read back exactly.
//
// # What is escaped
//
// Newline and tab stay as they are (multi-line text is shown as a block).
// Escaped are: every other C0 control (U+0000–U+001F: ESC, CR, NUL, BEL…),
// DEL (U+007F), every C1 control (U+0080–U+009F, among them U+009B, a
// one-character CSI to some terminals), every Unicode format character
// (category Cf: the bidi embeddings, overrides and isolates
// U+202A–U+202E and U+2066–U+2069, the marks U+200E, U+200F and U+061C,
// zero-width characters, U+FEFF, the tag characters U+E0000–U+E007F),
// the line and paragraph separators U+2028 and U+2029, and each byte that is
// not part of valid UTF-8.
//
// # Form
//
// A single byte — a C0 control, DEL, or a byte of invalid UTF-8 — is
// written \x{HH} (two lowercase hex digits: ESC is \x{1b}, CR \x{0d}, a stray
// 0xff \x{ff}). A multi-byte character is written \u{H…} (its code point in
// lowercase hex, no padding: U+009B is \u{9b}, U+202E \u{202e}).
//
// The braces keep the escaping out of the way of ordinary text: the
// backslash sequences of code, paths and JSON (\n, \\, \u001b, C:\x) pass
// unchanged. A literal backslash is itself escaped, as \x{5c}, only where it
// is directly followed by "x{" or "u{" — the one place it could be read as
// the start of an escape. So each shown text has exactly one original:
// Unescape(Escape(s)) == s for every s, valid UTF-8 or not.
//
// # Entry points
//
// Escape escapes a string. Writer escapes a stream, for the stdout and
// stderr of human-facing commands, holding back a trailing partial
// character or backslash between writes so that the result does not
// depend on how the stream is cut. EscapeJSON is for JSON text shown to a
// human: it rewrites the same characters as \uXXXX JSON escapes, so the
// output decodes to exactly the same values.
package termtext
