package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// rebuild reads v entirely through the strict decoder, in the shape
// encoding/json decodes into an any with UseNumber. It also checks that
// every value's bytes sit at its reported offset.
func rebuild(t *testing.T, data []byte, v Value) (any, error) {
	if !bytes.Equal(data[v.off:v.off+len(v.raw)], v.raw) {
		t.Fatalf("%s: raw %q is not at offset %d", v.path, v.raw, v.off)
	}
	switch v.Kind() {
	case "object":
		o, err := v.Object()
		if err != nil {
			return nil, err
		}
		m := map[string]any{}
		for _, mb := range o.Members {
			if m[mb.Key], err = rebuild(t, data, mb.Value); err != nil {
				return nil, err
			}
		}
		return m, nil
	case "array":
		elems, err := v.Array()
		if err != nil {
			return nil, err
		}
		out := []any{}
		for _, e := range elems {
			x, err := rebuild(t, data, e)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	case "string":
		return v.Str()
	case "boolean":
		return v.Bool()
	case "null":
		return nil, nil
	default:
		return json.Number(v.raw), nil
	}
}

// FuzzDecode checks that the strict decoder never panics, that a refusal
// is always a positioned *Error, and that on a document without duplicate
// keys it reads exactly what encoding/json reads (a round trip through
// both decoders); a duplicate key is refused by Object and NoDuplicates
// alike.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"steps":[{"op":"prompt","text":"hi"}],"permissionAnswers":[{"kind":"allow_once"}]}`))
	f.Add([]byte(`{"patches":[{"at":0,"entry":{"kind":"hang","readyFile":".r"}}]}`))
	f.Add([]byte(`[{"kind":"chunks","chunks":[{"type":"finish","reason":{"kind":"stop"}}]}]`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<12 {
			t.Skip("the full walk below is quadratic in nesting depth; scenario files are small")
		}
		v, err := Parse("fuzz.json", data)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.File != "fuzz.json" || se.Line < 1 || !errors.Is(err, ErrSyntax) {
				t.Fatalf("Parse error %v (%#v) is not a positioned ErrSyntax *Error", err, err)
			}
			if json.Valid(data) {
				t.Fatalf("Parse refused valid JSON %q: %v", data, err)
			}
			return
		}
		got, werr := rebuild(t, data, v)
		derr := v.NoDuplicates()
		if (werr == nil) != (derr == nil) {
			t.Fatalf("walk error %v but NoDuplicates error %v", werr, derr)
		}
		if werr != nil {
			if !errors.Is(werr, ErrDuplicateField) || !errors.Is(derr, ErrDuplicateField) {
				t.Fatalf("a well-formed document was refused for %v / %v", werr, derr)
			}
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("encoding/json refuses what Parse accepted: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("strict read %#v, encoding/json read %#v", got, want)
		}
	})
}
