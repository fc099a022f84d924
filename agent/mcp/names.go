package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// NamePrefix begins the name of every MCP tool; reel's own tools never
// begin with it.
const NamePrefix = "mcp__"

// MaxNameBytes is the longest tool name model APIs accept.
const MaxNameBytes = 64

// hashLen is the number of hex digits of the suffix that keeps a cut or
// colliding name unique.
const hashLen = 8

// sanitizeName returns s with every character outside [A-Za-z0-9_-]
// replaced by "_" (one per character, not per byte), "_" for an empty s.
func sanitizeName(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 128 && validNameByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// validNameByte reports whether c may appear in a tool name.
func validNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// ValidName reports whether name is a tool name model APIs accept:
// 1 to MaxNameBytes characters of [A-Za-z0-9_-].
func ValidName(name string) bool {
	if name == "" || len(name) > MaxNameBytes {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !validNameByte(name[i]) {
			return false
		}
	}
	return true
}

// ToolName returns the name reel gives the tool called tool on the server
// called server when nothing collides with it: "mcp__SERVER__TOOL" with
// both parts sanitized to [A-Za-z0-9_-] and, when that is longer than
// MaxNameBytes, its first 55 bytes, "_" and 8 hex digits of a hash of the
// original names. The result is always a valid name.
func ToolName(server, tool string) string {
	base := NamePrefix + sanitizeName(server) + "__" + sanitizeName(tool)
	if len(base) <= MaxNameBytes {
		return base
	}
	return withSuffix(base, nameHash(server, tool, 0))
}

// withSuffix cuts base so that "_"+suffix fits within MaxNameBytes and
// appends it. base is ASCII.
func withSuffix(base, suffix string) string {
	keep := MaxNameBytes - 1 - len(suffix)
	if len(base) > keep {
		base = base[:keep]
	}
	return base + "_" + suffix
}

// nameHash is hashLen hex digits of a hash of the original names and a
// try counter.
func nameHash(server, tool string, try int) string {
	h := sha256.New()
	h.Write([]byte(server))
	h.Write([]byte{0})
	h.Write([]byte(tool))
	if try > 0 {
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(try)))
	}
	return hex.EncodeToString(h.Sum(nil))[:hashLen]
}

// namer hands out unique names in the order it is asked.
type namer struct {
	taken map[string]bool
}

// assign returns the unique name of (server, tool) and, when it is not
// the literal "mcp__SERVER__TOOL", why (see renameReason). The first tool
// asked for a name gets ToolName's; a later one that would collide gets a
// hash suffix instead (with a counter in the hash should that be taken
// too).
func (n *namer) assign(server, tool string) (name, reason string) {
	if n.taken == nil {
		n.taken = make(map[string]bool)
	}
	name = ToolName(server, tool)
	base := NamePrefix + sanitizeName(server) + "__" + sanitizeName(tool)
	// A shortened name already carries try 0's hash; taken, the loop
	// moves on to try 1.
	for try := 0; n.taken[name]; try++ {
		name = withSuffix(base, nameHash(server, tool, try))
	}
	n.taken[name] = true
	return name, renameReason(server, tool, name)
}

// renameReason says why name is not the literal "mcp__SERVER__TOOL":
// "" when it is, "collision" when it is not ToolName's, else "shortened"
// or "sanitized".
func renameReason(server, tool, name string) string {
	switch literal := NamePrefix + server + "__" + tool; {
	case name == literal:
		return ""
	case name != ToolName(server, tool):
		return "collision"
	case len(NamePrefix+sanitizeName(server)+"__"+sanitizeName(tool)) > MaxNameBytes:
		return "shortened"
	}
	return "sanitized"
}
