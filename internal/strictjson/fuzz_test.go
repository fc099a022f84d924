package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
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
	f.Add([]byte(`{"cmd":"echo SAFE","CMD":"rm -rf ~"}`))
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
		checkCanonical(t, data, v)
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

// canonicalDepth is the nesting bound FuzzDecode gives Canonical.
const canonicalDepth = 8

// checkCanonical checks Canonical against the walk: it refuses exactly
// the documents with a repeated key, two keys of one object equal under
// strings.EqualFold, or nesting over canonicalDepth; what it accepts
// decodes to what encoding/json reads from data, is its own canonical
// form, and is unchanged by json.Marshal of it as a json.RawMessage.
func checkCanonical(t *testing.T, data []byte, v Value) {
	canon, err := v.Canonical(canonicalDepth)
	want := foldProblem(t, v, 1)
	if (err == nil) != (want == nil) {
		t.Fatalf("Canonical error %v, but the walk found %v", err, want)
	}
	if err != nil {
		if !errors.Is(err, want) {
			t.Fatalf("Canonical error %v, want one classified %v", err, want)
		}
		return
	}
	var a, b any
	da, db := json.NewDecoder(bytes.NewReader(data)), json.NewDecoder(bytes.NewReader(canon))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&a) != nil || db.Decode(&b) != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("the canonical form %s does not read as %s", canon, data)
	}
	cv, err := Parse("canonical", canon)
	if err != nil {
		t.Fatal(err)
	}
	again, err := cv.Canonical(canonicalDepth)
	if err != nil || !bytes.Equal(again, canon) {
		t.Fatalf("Canonical(%s) = %s, %v: not a fixed point", canon, again, err)
	}
	if m, err := json.Marshal(json.RawMessage(canon)); err != nil || !bytes.Equal(m, canon) {
		t.Fatalf("json.Marshal changes the canonical form %s into %s (%v)", canon, m, err)
	}
}

// foldProblem walks v recursively and returns the class of its first
// problem for Canonical (nil when there is none).
func foldProblem(t *testing.T, v Value, depth int) error {
	switch v.Kind() {
	case "object", "array":
		if depth > canonicalDepth {
			return ErrBadValue
		}
	}
	switch v.Kind() {
	case "object":
		o, err := v.Object()
		if err != nil {
			return ErrDuplicateField
		}
		for i, m := range o.Members {
			for _, prev := range o.Members[:i] {
				if strings.EqualFold(prev.Key, m.Key) {
					return ErrDuplicateField
				}
			}
			if err := foldProblem(t, m.Value, depth+1); err != nil {
				return err
			}
		}
	case "array":
		elems, err := v.Array()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range elems {
			if err := foldProblem(t, e, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
