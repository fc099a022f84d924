package normalize

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
)

// listCursorPrefix starts every decoded session/list cursor reel makes
// (agent/acpserver/list.go encodes base64url, unpadded, of this prefix and
// the id of the session the next page continues after). It is written out
// here rather than imported: a fixture then fails when the adapter's
// encoding changes.
const listCursorPrefix = "reel-list-v1:"

// ListCursor decodes a session/list cursor the way reel encodes it and
// returns the id of the session the next page continues after; ok is false
// for anything reel would not have made.
func ListCursor(c string) (after string, ok bool) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil {
		return "", false
	}
	after, ok = strings.CutPrefix(string(b), listCursorPrefix)
	if !ok || after == "" {
		return "", false
	}
	return after, true
}

// listing rewrites a session/list answer of a paged listing: one with a
// nextCursor, or one that follows such an answer. Session ids are random,
// so which sessions a page holds (pages are in id order) differs from run
// to run; what does not is the shape. A listed session becomes
// {{listed:N}}, the N-th of the listing; one listed before becomes
// {{listed:K again}} and one whose id sorts before the previous one's
// {{listed:N out of order}}; the cursor becomes {{cursor:after listed:K}}
// naming the listed session it decodes to ({{cursor:after {{sessionId2}}}}
// for a session not listed, kept as it is when it does not decode). An
// answer without nextCursor ends the listing. Answers of unpaged listings
// are left to the other rules.
func (n *Normalizer) listing(root *value) {
	res := member0(root, "result")
	if res == nil || res.kind != kObject {
		return
	}
	sessions := member0(res, "sessions")
	if sessions == nil || sessions.kind != kArray {
		return
	}
	next := member0(res, "nextCursor")
	if next != nil && next.kind != kString {
		next = nil
	}
	if next == nil && !n.inListing {
		return
	}
	if !n.inListing {
		n.listed = nil
	}
	n.inListing = next != nil
	for _, e := range sessions.elems {
		idv := member0(e, "sessionId")
		if idv == nil || idv.kind != kString {
			continue
		}
		id := idv.str
		label := ""
		switch k := slices.Index(n.listed, id); {
		case k >= 0:
			label = "{{listed:" + strconv.Itoa(k+1) + " again}}"
		case len(n.listed) > 0 && id < n.listed[len(n.listed)-1]:
			n.listed = append(n.listed, id)
			label = "{{listed:" + strconv.Itoa(len(n.listed)) + " out of order}}"
		default:
			n.listed = append(n.listed, id)
			label = "{{listed:" + strconv.Itoa(len(n.listed)) + "}}"
		}
		setString(idv, label)
	}
	if next == nil {
		return
	}
	after, ok := ListCursor(next.str)
	switch k := slices.Index(n.listed, after); {
	case !ok:
	case k >= 0:
		setString(next, "{{cursor:after listed:"+strconv.Itoa(k+1)+"}}")
	case n.sessions[after] != "":
		setString(next, "{{cursor:after "+n.sessions[after]+"}}")
	default:
		setString(next, "{{cursor:after an unknown session}}")
	}
}

// member0 returns the value of an object's first member named key.
func member0(v *value, key string) *value {
	if v == nil || v.kind != kObject {
		return nil
	}
	for _, m := range v.members {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// setString replaces a string value.
func setString(v *value, s string) {
	v.str = s
	v.raw = appendString(nil, s)
}
