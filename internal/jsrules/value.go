package jsrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/reel-agent/reel/sessionlog"
)

// A value as JavaScript's JSON.parse makes it: nil, bool, Number, string,
// []any or *Object. Parse reads one; Append writes it as JSON.stringify
// does, AppendSorted with every object's keys sorted first.

// Number is a JSON number as JSON.parse makes it: a double, ±Inf when out
// of range (which JSON.stringify writes as null).
type Number float64

// Object is a JSON object with its members in JavaScript's own-property
// order: array-index keys ascending, then the others in order of first
// appearance (a repeated key keeps its place and takes the last value).
type Object struct {
	keys []string
	vals map[string]any
}

// Get returns the value of key k (nil when absent, or when o is nil).
func (o *Object) Get(k string) any {
	if o == nil {
		return nil
	}
	return o.vals[k]
}

func (o *Object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// Keys returns the keys in own-property order.
func (o *Object) Keys() []string { return OwnKeys(slices.Clone(o.keys)) }

var errShape = errors.New("jsrules: unexpected JSON token")

// Parse reads raw as JSON.parse would. An error is encoding/json's (a
// *json.SyntaxError for malformed input, with its offset).
func Parse(raw []byte) (any, error) {
	if err := json.Unmarshal(raw, new(json.RawMessage)); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return readValue(dec)
}

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
			o := &Object{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errShape
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
		return nil, errShape
	case json.Number:
		f, _ := strconv.ParseFloat(string(t), 64) // ±Inf when out of range, as JSON.parse
		return Number(f), nil
	default: // nil, bool, string
		return t, nil
	}
}

// Append appends v as JSON.stringify writes it.
func Append(b []byte, v any) []byte { return appendValue(b, v, OwnKeys) }

// AppendSorted appends v as JSON.stringify writes it after every object
// was rebuilt from its keys sorted (JavaScript's sort order): a canonical
// form up to key order.
func AppendSorted(b []byte, v any) []byte {
	return appendValue(b, v, func(keys []string) []string {
		slices.SortFunc(keys, CompareKeys)
		return keys
	})
}

// appendValue appends v with each object's keys in the order order gives.
func appendValue(b []byte, v any, order func([]string) []string) []byte {
	switch v := v.(type) {
	case bool:
		return strconv.AppendBool(b, v)
	case Number:
		return sessionlog.AppendNumber(b, float64(v))
	case string:
		return sessionlog.AppendString(b, v)
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e, order)
		}
		return append(b, ']')
	case *Object:
		b = append(b, '{')
		for i, k := range order(slices.Clone(v.keys)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = sessionlog.AppendString(b, k)
			b = append(b, ':')
			b = appendValue(b, v.vals[k], order)
		}
		return append(b, '}')
	}
	return append(b, "null"...)
}
