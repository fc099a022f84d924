package agent

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/reel-agent/reel/internal/jsrules"
	"github.com/reel-agent/reel/sessionlog"
)

// canonicalArguments is the canonical form of a tool call's raw arguments
// as the reference agent computes it: the JSON value with every object's
// keys sorted, written as JavaScript's JSON.stringify writes it; arguments
// that are not JSON are the JSON string of their raw text.
func canonicalArguments(raw string) string {
	if !json.Valid([]byte(raw)) {
		return string(sessionlog.AppendString(nil, raw))
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(sessionlog.AppendString(nil, raw))
	}
	return string(appendJS(nil, v))
}

// appendJS appends v as JSON.stringify writes a value JSON.parse made:
// objects with their keys in JavaScript's own-property order (array-index
// keys ascending, then the rest in order — here sorted by UTF-16 code
// units), numbers as JavaScript prints a double.
func appendJS(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case json.Number:
		// JSON.parse makes a double of every number; one beyond its range
		// is Infinity, which JSON.stringify writes as null.
		f, _ := strconv.ParseFloat(string(v), 64)
		if math.IsInf(f, 0) {
			return append(b, "null"...)
		}
		return sessionlog.AppendNumber(b, f)
	case string:
		return sessionlog.AppendString(b, v)
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJS(b, e)
		}
		return append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, jsrules.CompareKeys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = sessionlog.AppendString(b, k)
			b = append(b, ':')
			b = appendJS(b, v[k])
		}
		return append(b, '}')
	}
	return append(b, "null"...)
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
