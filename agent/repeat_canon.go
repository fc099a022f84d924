package agent

import (
	"strconv"

	"github.com/reel-agent/reel/internal/jsrules"
	"github.com/reel-agent/reel/sessionlog"
)

// canonicalArguments is the canonical form of a tool call's raw arguments
// as the reference agent computes it: the JSON value with every object's
// keys sorted, written as JavaScript's JSON.stringify writes it; arguments
// that are not JSON are the JSON string of their raw text.
func canonicalArguments(raw string) string {
	v, err := jsrules.Parse([]byte(raw))
	if err != nil {
		return string(sessionlog.AppendString(nil, raw))
	}
	return string(jsrules.AppendSorted(nil, v))
}

// jsField is one member of an object appendJSObject writes: a string, an
// int or a list of strings.
type jsField struct {
	key string
	val any // string, int or []string
}

// appendJSObject appends {"key":val,…} in field order, as JSON.stringify
// writes an object literal.
func appendJSObject(b []byte, fields ...jsField) []byte {
	b = append(b, '{')
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = sessionlog.AppendString(b, f.key)
		b = append(b, ':')
		switch v := f.val.(type) {
		case string:
			b = sessionlog.AppendString(b, v)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case []string:
			b = append(b, '[')
			for j, s := range v {
				if j > 0 {
					b = append(b, ',')
				}
				b = sessionlog.AppendString(b, s)
			}
			b = append(b, ']')
		}
	}
	return append(b, '}')
}
