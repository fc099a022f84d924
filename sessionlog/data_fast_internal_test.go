package sessionlog

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

// dataCases are data at the edges of fastData, each tried as every type it
// reads.
var dataCases = []string{
	`{"turn":1,"step":1,"callId":"call_1","name":"read","arguments":"{\"file_path\":\"f.txt\"}"}`,
	`{"provider":"replay","model":"replay","contextWindow":200000,"reasoningEffort":"high"}`,
	`{"turn":1,"reason":{"kind":"completed"}}`,
	`{"turn":1,"reason":{"kind":"aborted","reason":{"kind":"user"}}}`,
	`{"turn":1,"reason":{"kind":"error","error":{"message":"m"}}}`,
	`{"turn":1,"reason":null}`, `{"turn":1,"reason":"x"}`, `{"turn":1,"reason":{"Kind":"a","kind":"b"}}`,
	`{"turn":1.5}`, `{"turn":-0}`, `{"turn":1e3}`, `{"turn":99999999999999999999}`, `{"turn":"1"}`, `{"turn":null}`,
	`{"TURN":2,"Step":3,"CALLID":"x"}`, `{"turn":1,"turn":2}`, `{"t\u0075rn":4}`, `{"name":"a\nb\u00e9"}`, `{"name":null}`, `{"name":1}`,
	"{\"name\":\"\xff\"}", `{"model":"é"}`, `{"extra":[1,{"turn":9}],"turn":3}`,
	`{}`, `null`, `[]`, `"x"`, `{"turn":1`, `{"turn":1}x`,
	`{"header":{"config":{"model":"m"},"system":"s","tools":[{"name":"bash"}]},"reason":"initial"}`,
	`{"header": {"config":{}} ,"reason":"change"}`, `{"header":null,"reason":"resume"}`, `{"header":1,"reason":"x\ny"}`,
	`{"Header":{},"REASON":"series"}`, `{"header":{},"header":{"config":1},"reason":"initial"}`, `{"reason":null}`, `{"reason":"\u0041"}`,
}

// headerCases are request header snapshots at the edges of
// headerMembersValid.
var headerCases = []string{
	`{"config":{"model":"m"},"system":"s","tools":[{"name":"bash"}]}`,
	`{"config":null,"system":null,"tools":null}`, `{"config":{ "a" : 1 } , "system" : "x\ny\"z" , "tools" : [ ] }`,
	`{"SYSTEM":"up","Config":{},"tOOls":[1]}`, `{"system":"a","system":"b"}`, `{"config":1,"config":2}`,
	`{"system":"\u00e9"}`, `{"system":"é"}`, `{"system":1}`, `{"system":{}}`, `{"system":""}`, `{"sys\u0074em":"k"}`,
	`{}`, `[]`, `null`, `"s"`, `{"extra":{"system":"no"},"config":[]}`,
}

// checkHeader fails when headerMembersValid reads a valid snapshot, or
// ParseRequestHeader any snapshot, other than json.Unmarshal does.
func checkHeader(t *testing.T, raw []byte) {
	t.Helper()
	parsed, perr := ParseRequestHeader(raw)
	var into RequestHeader
	uerr := json.Unmarshal(raw, &into)
	if (perr == nil) != (uerr == nil) || (uerr == nil && !reflect.DeepEqual(parsed, into)) {
		t.Fatalf("%q: ParseRequestHeader %+v (%v), json.Unmarshal %+v (%v)", raw, parsed, perr, into, uerr)
	}
	if !json.Valid(raw) {
		return // only ever given valid JSON
	}
	got, ok := headerMembersValid(raw)
	if !ok {
		return
	}
	var want headerMembers
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("%q: headerMembersValid read it, json.Unmarshal: %v", raw, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: headerMembersValid %+v, json.Unmarshal %+v", raw, got, want)
	}
}

// TestHeaderMembersIsUnmarshal holds headerMembersValid and
// ParseRequestHeader to json.Unmarshal
// over the edge cases, their prefixes and random snapshots, and checks
// that the engine's snapshots take the read by hand.
func TestHeaderMembersIsUnmarshal(t *testing.T) {
	for _, s := range headerCases {
		for i := range len(s) + 1 {
			checkHeader(t, []byte(s[:i]))
		}
	}
	if _, ok := headerMembersValid([]byte(headerCases[0])); !ok {
		t.Errorf("the engine's snapshot is not read by hand")
	}
	r := rand.New(rand.NewPCG(34, 146))
	parts := []string{`"config":`, `"system":`, `"System":`, `"tools":`, `"x":`, `"v"`, `"a\"b"`, `"\u0041"`, `1`, `null`, `{`, `}`, `,`, `[`, `]`, ` `}
	for range 200000 {
		var sb strings.Builder
		sb.WriteString("{")
		for range r.IntN(10) {
			sb.WriteString(parts[r.IntN(len(parts))])
		}
		checkHeader(t, []byte(sb.String()))
	}
}

// FuzzHeaderMembers holds headerMembersValid and ParseRequestHeader to
// json.Unmarshal on any input.
func FuzzHeaderMembers(f *testing.F) {
	for _, s := range headerCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkHeader(t, raw) })
}

// checkData fails when fastData reads data other than json.Unmarshal does.
func checkData(t *testing.T, data []byte) {
	t.Helper()
	for _, fresh := range []func() any{
		func() any { return new(ToolCallData) },
		func() any { return new(RequestContextData) },
		func() any { return new(TurnEndData) },
		func() any { return new(TurnData) },
		func() any { return new(StepData) },
		func() any { return new(RequestHeaderData) },
	} {
		// The trusting read (valid) is only ever given valid JSON.
		for _, valid := range []bool{false, true} {
			if valid && !json.Valid(data) {
				continue
			}
			got, want := fresh(), fresh()
			if !fastData(data, got, valid) {
				continue
			}
			if err := json.Unmarshal(data, want); err != nil {
				t.Fatalf("%q: fastData (valid %v) read it as %T, json.Unmarshal: %v", data, valid, got, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: fastData (valid %v) %+v, json.Unmarshal %+v", data, valid, got, want)
			}
		}
	}
}

// TestFastDataIsUnmarshals holds fastData to json.Unmarshal over the edge
// cases, their prefixes and random data, and checks that the engine's
// data take the fast read.
//
// 20,000 random data cover every statement of the package the 200,000 of
// REEL_SOAK=1 cover (they are the first 20,000 of those); under -race
// -cover, where every block the read passes is an atomic coverage count,
// the 200,000 took 18 s.
func TestFastDataIsUnmarshals(t *testing.T) {
	for _, s := range dataCases {
		for i := range len(s) + 1 {
			checkData(t, []byte(s[:i]))
		}
	}
	for _, valid := range []bool{false, true} {
		if !fastData([]byte(dataCases[0]), new(ToolCallData), valid) || !fastData([]byte(dataCases[1]), new(RequestContextData), valid) || !fastData([]byte(dataCases[2]), new(TurnEndData), valid) ||
			!fastData([]byte(dataCases[0]), new(TurnData), valid) || !fastData([]byte(dataCases[0]), new(StepData), valid) ||
			!fastData([]byte(`{"header":{"config":{}},"reason":"initial"}`), new(RequestHeaderData), valid) {
			t.Errorf("the engine's data are not read by hand (valid %v)", valid)
		}
	}
	r := rand.New(rand.NewPCG(34, 122))
	parts := []string{`"header":`, `"turn":`, `"step":`, `"callId":`, `"name":`, `"Name":`, `"model":`, `"contextWindow":`, `"reason":`, `"kind":`, `"error":`, `"v"`, `"a\"b"`, `1`, `-2`, `0.5`, `null`, `{`, `}`, `,`, `[`, `]`, ` `}
	n := 20000
	if os.Getenv("REEL_SOAK") == "1" {
		n = 200000
	}
	for range n {
		var sb strings.Builder
		sb.WriteString("{")
		for range r.IntN(12) {
			sb.WriteString(parts[r.IntN(len(parts))])
		}
		checkData(t, []byte(sb.String()))
	}
}

// FuzzFastData holds fastData to json.Unmarshal on any input.
func FuzzFastData(f *testing.F) {
	for _, s := range dataCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkData(t, data) })
}

// TestObjectMembersIsObjectMember holds ObjectMembers (one pass, or the
// member walk past eight members) to objectMember name by name, over
// random objects of up to twenty members.
//
// 20,000 objects (the first of the 100,000 of REEL_SOAK=1) cover every
// statement of the package the 100,000 cover (10,000 do too, 5,000 do
// not); under -race -cover the 100,000 took 22 s.
func TestObjectMembersIsObjectMember(t *testing.T) {
	n := 20000
	if os.Getenv("REEL_SOAK") == "1" {
		n = 100000
	}
	r := rand.New(rand.NewPCG(34, 8))
	keys := []string{`"a"`, `"b"`, `"A"`, `"c"`, `"\u0062"`, `"x"`, `"y"`}
	vals := []string{`1`, `"s"`, `{"a":2}`, `[1,{"b":3}]`, `null`, ` "sp" `}
	names := []string{"a", "b", "c"}
	for range n {
		var sb strings.Builder
		sb.WriteString("{")
		for k := range r.IntN(20) {
			if k > 0 {
				sb.WriteString(",")
			}
			sb.WriteString(keys[r.IntN(len(keys))] + ":" + vals[r.IntN(len(vals))])
		}
		sb.WriteString("}")
		data := []byte(sb.String())
		got := make([]json.RawMessage, len(names))
		if !ObjectMembers(data, names, got) {
			continue // a name given twice (the callers' tests hold that case)
		}
		for k, name := range names {
			want, ok := objectMember(data, name)
			if (got[k] != nil) != ok || string(got[k]) != string(want) {
				t.Fatalf("%s: member %q is %q, objectMember %q (%v)", data, name, got[k], want, ok)
			}
		}
	}
}
