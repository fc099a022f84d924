package hooks

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/reel-agent/reel/internal/jsrules"
	"github.com/reel-agent/reel/sessionlog"
)

// The hook protocols were defined by JavaScript programs: their configs
// are read with JSON.parse and their payloads written with JSON.stringify.
// A value read here is nil, bool, jsNumber, string, []any or *jsObject.

// jsNumber is a JSON number as JSON.parse makes it: a double, ±Inf when
// out of range.
type jsNumber float64

// jsObject is a JSON object with its members in JavaScript's
// own-property order: array-index keys ascending, then the other keys in
// order of first appearance (a repeated key keeps its place, takes the
// last value).
type jsObject struct {
	keys []string
	vals map[string]any
}

func (o *jsObject) get(k string) any {
	if o == nil {
		return nil
	}
	return o.vals[k]
}

func (o *jsObject) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// ordered returns the keys in own-property order.
func (o *jsObject) ordered() []string { return jsrules.OwnKeys(o.keys) }

var errJSONShape = errors.New("hooks: unexpected JSON token")

// readValue reads one JSON value from dec (which uses UseNumber).
func readValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &jsObject{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errJSONShape
				}
				v, err := readValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			_, err := dec.Token()
			return o, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := readValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token()
			return a, err
		}
		return nil, errJSONShape
	case json.Number:
		f, _ := strconv.ParseFloat(string(t), 64) // ±Inf when out of range, as JSON.parse
		return jsNumber(f), nil
	default: // nil, bool, string
		return t, nil
	}
}

// parseJS parses raw JSON (already known valid) into a value; nil, false
// when it is not JSON.
func parseJS(raw []byte) (any, bool) {
	if !json.Valid(raw) {
		return nil, false
	}
	v, err := decodeJSON(raw)
	return v, err == nil
}

// appendJS appends v as JSON.stringify writes it.
func appendJS(b []byte, v any) []byte {
	switch v := v.(type) {
	case bool:
		return strconv.AppendBool(b, v)
	case jsNumber:
		return sessionlog.AppendNumber(b, float64(v))
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
	case *jsObject:
		b = append(b, '{')
		for i, k := range v.ordered() {
			if i > 0 {
				b = append(b, ',')
			}
			b = sessionlog.AppendString(b, k)
			b = append(b, ':')
			b = appendJS(b, v.vals[k])
		}
		return append(b, '}')
	}
	return append(b, "null"...)
}
