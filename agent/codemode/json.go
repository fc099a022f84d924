package codemode

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	"github.com/reel-agent/reel/sessionlog"
)

// maxDepth bounds the nesting of a value a program passes out (tool
// arguments, its return value).
const maxDepth = 64

// errTooLarge is returned by encode for a value whose JSON exceeds its
// limit. It is a constant of its own type, so the package has no
// initialization work.
const errTooLarge = tooLarge("the value is too large")

// tooLarge is the type of errTooLarge.
type tooLarge string

func (e tooLarge) Error() string { return string(e) }

// encode returns the JSON of v, a value a program passes out, in the key
// order the program built it, within limit bytes (errTooLarge past it). v
// must be lossless JSON: null, a boolean, a finite number, a string, an
// array or a plain object of such values, not nested deeper than maxDepth
// and holding no cycle. undefined, functions, symbols, BigInts, NaN and
// the infinities, and objects of other classes (Date, Map, RegExp, …) are
// refused with what and where they are.
func encode(vm *goja.Runtime, v goja.Value, limit int) ([]byte, error) {
	e := &encoder{vm: vm, limit: limit, open: map[*goja.Object]bool{}}
	if err := e.value(v, "value", 0); err != nil {
		return nil, err
	}
	return e.buf.Bytes(), nil
}

// encoder is one encode.
type encoder struct {
	vm    *goja.Runtime
	buf   bytes.Buffer
	limit int
	open  map[*goja.Object]bool // objects on the path being encoded
}

func (e *encoder) value(v goja.Value, at string, depth int) error {
	if e.buf.Len() > e.limit {
		return errTooLarge
	}
	switch {
	case v == nil || goja.IsUndefined(v):
		return fmt.Errorf("%s is undefined", at)
	case goja.IsNull(v):
		e.buf.WriteString("null")
		return nil
	case goja.IsString(v):
		quote(&e.buf, v.String())
		return e.check()
	case goja.IsNumber(v):
		f := v.ToFloat()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s is %s, which JSON cannot hold", at, v.String())
		}
		e.buf.WriteString(v.String())
		return nil
	case goja.IsBigInt(v):
		return fmt.Errorf("%s is a BigInt, which JSON cannot hold", at)
	}
	if b, ok := v.Export().(bool); ok {
		e.buf.WriteString(strconv.FormatBool(b))
		return nil
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		return fmt.Errorf("%s is a %s, which JSON cannot hold", at, typeName(v))
	}
	if _, fn := goja.AssertFunction(v); fn {
		return fmt.Errorf("%s is a function", at)
	}
	if depth >= maxDepth {
		return fmt.Errorf("%s is nested deeper than %d levels", at, maxDepth)
	}
	if e.open[obj] {
		return fmt.Errorf("%s refers back to itself (a cycle)", at)
	}
	e.open[obj] = true
	defer delete(e.open, obj)
	switch obj.ClassName() {
	case "Array":
		n := obj.Get("length").ToInteger()
		e.buf.WriteByte('[')
		for i := int64(0); i < n; i++ {
			if i > 0 {
				e.buf.WriteByte(',')
			}
			if err := e.value(obj.Get(strconv.FormatInt(i, 10)), fmt.Sprintf("%s[%d]", at, i), depth+1); err != nil {
				return err
			}
		}
		e.buf.WriteByte(']')
		return e.check()
	case "Object":
		if p := obj.Prototype(); p != nil && p != e.vm.Get("Object").ToObject(e.vm).Get("prototype") {
			if ctor := obj.Get("constructor"); ctor != nil {
				if c, ok := ctor.(*goja.Object); ok && c.Get("name") != nil && c.Get("name").String() != "Object" {
					return fmt.Errorf("%s is an instance of %s, not a plain object", at, c.Get("name").String())
				}
			}
		}
		e.buf.WriteByte('{')
		for i, k := range obj.Keys() {
			if i > 0 {
				e.buf.WriteByte(',')
			}
			quote(&e.buf, k)
			e.buf.WriteByte(':')
			if err := e.value(obj.Get(k), at+"."+k, depth+1); err != nil {
				return err
			}
		}
		e.buf.WriteByte('}')
		return e.check()
	}
	return fmt.Errorf("%s is a %s object, which is not JSON", at, obj.ClassName())
}

// check refuses output past the limit.
func (e *encoder) check() error {
	if e.buf.Len() > e.limit {
		return errTooLarge
	}
	return nil
}

// typeName names the JavaScript type of a primitive v.
func typeName(v goja.Value) string {
	if _, ok := v.(*goja.Symbol); ok {
		return "symbol"
	}
	return fmt.Sprintf("%T", v.Export())
}

// quote writes s as JSON.stringify quotes a string (sessionlog.AppendString,
// the recording system's string encoder).
func quote(b *bytes.Buffer, s string) {
	b.Write(sessionlog.AppendString(b.AvailableBuffer(), s))
}

// indentUnit is one level of the rendered result's indentation; past
// maxIndent columns a value is rendered compact, so the rendering stays
// linear in the value's size however deep it nests.
const (
	indentUnit = "  "
	maxIndent  = 10
)

// render lays out the JSON js (compact, valid) with two-space indentation,
// ": " after keys and one member or element per line; an object or array
// whose members would be indented past maxIndent columns is kept compact,
// and empty ones stay "{}" and "[]". Strings are copied as they are.
func render(js []byte) string {
	var b strings.Builder
	b.Grow(len(js) + len(js)/4)
	depth := 0
	compactFrom := -1 // the depth from which output is compact (-1: none)
	compact := func() bool { return compactFrom >= 0 && depth >= compactFrom }
	newline := func() {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(indentUnit, depth))
	}
	for i := 0; i < len(js); i++ {
		c := js[i]
		switch c {
		case '"':
			j := i + 1
			for ; j < len(js) && js[j] != '"'; j++ {
				if js[j] == '\\' {
					j++
				}
			}
			b.Write(js[i : j+1])
			i = j
		case '{', '[':
			b.WriteByte(c)
			if i+1 < len(js) && (js[i+1] == '}' || js[i+1] == ']') {
				b.WriteByte(js[i+1])
				i++
				continue
			}
			if !compact() && (depth+1)*len(indentUnit) > maxIndent {
				compactFrom = depth
			}
			depth++
			if !compact() {
				newline()
			}
		case '}', ']':
			depth--
			if compactFrom >= 0 && depth < compactFrom {
				compactFrom = -1
			}
			if !compact() {
				newline()
			}
			b.WriteByte(c)
			if compactFrom == depth {
				compactFrom = -1
			}
		case ',':
			b.WriteByte(',')
			if !compact() {
				newline()
			}
		case ':':
			b.WriteByte(':')
			if !compact() {
				b.WriteByte(' ')
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
