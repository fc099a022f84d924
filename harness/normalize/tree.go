package normalize

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// kind is the JSON type of a parsed value.
type kind uint8

const (
	kObject kind = iota
	kArray
	kString
	kNumber
	kLiteral // true, false, null
)

// value is a parsed JSON value that keeps object members in document order
// (duplicates included) and the original bytes of every scalar, so that an
// untouched value is written back exactly as it came.
type value struct {
	kind    kind
	raw     []byte   // scalars: the original text
	str     string   // kString: the decoded string
	members []member // kObject
	elems   []*value // kArray
}

type member struct {
	rawKey []byte // the key's original text, quotes included
	key    string // the decoded key
	val    *value
}

// parse builds the tree of data, which must already be valid JSON (the
// caller checks json.Valid). It reports false instead of panicking if the
// input turns out not to be.
func parse(data []byte) (v *value, ok bool) {
	p := &parser{data: data}
	defer func() {
		if recover() != nil {
			v, ok = nil, false
		}
	}()
	p.ws()
	v = p.value()
	p.ws()
	return v, p.pos == len(p.data)
}

type parser struct {
	data []byte
	pos  int
}

func (p *parser) ws() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() *value {
	switch c := p.data[p.pos]; c {
	case '{':
		p.pos++
		v := &value{kind: kObject}
		p.ws()
		if p.data[p.pos] == '}' {
			p.pos++
			return v
		}
		for {
			p.ws()
			rawKey, key := p.str()
			p.ws()
			p.pos++ // ':'
			p.ws()
			v.members = append(v.members, member{rawKey: rawKey, key: key, val: p.value()})
			p.ws()
			c := p.data[p.pos]
			p.pos++
			if c == '}' {
				return v
			}
		}
	case '[':
		p.pos++
		v := &value{kind: kArray}
		p.ws()
		if p.data[p.pos] == ']' {
			p.pos++
			return v
		}
		for {
			p.ws()
			v.elems = append(v.elems, p.value())
			p.ws()
			c := p.data[p.pos]
			p.pos++
			if c == ']' {
				return v
			}
		}
	case '"':
		raw, s := p.str()
		return &value{kind: kString, raw: raw, str: s}
	case 't', 'n':
		p.pos += 4
		return &value{kind: kLiteral, raw: p.data[p.pos-4 : p.pos]}
	case 'f':
		p.pos += 5
		return &value{kind: kLiteral, raw: p.data[p.pos-5 : p.pos]}
	default:
		start := p.pos
		for p.pos < len(p.data) && bytes.IndexByte([]byte("+-.0123456789eE"), p.data[p.pos]) >= 0 {
			p.pos++
		}
		return &value{kind: kNumber, raw: p.data[start:p.pos]}
	}
}

// str scans a string literal and returns its text and decoded value.
func (p *parser) str() ([]byte, string) {
	start := p.pos
	p.pos++ // opening quote
	escaped := false
	for p.data[p.pos] != '"' {
		if p.data[p.pos] == '\\' {
			escaped = true
			p.pos++
		}
		p.pos++
	}
	p.pos++
	raw := p.data[start:p.pos]
	body := raw[1 : len(raw)-1]
	if !escaped && utf8.Valid(body) {
		return raw, string(body)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		panic(err) // recovered by parse
	}
	return raw, s
}

// appendString appends s as a compact JSON string without HTML escaping.
func appendString(dst []byte, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}
