package normalize

import (
	"errors"
	"io"
	"strings"
	"testing"
)

const (
	uuidA = "3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f"
	uuidB = "a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d"
	uuidC = "11111111-2222-4333-8444-555555555555"
	uuidD = "ABCDEF01-2345-4789-ABCD-EF0123456789"
)

func TestLine(t *testing.T) {
	opts := Options{Cwd: "/tmp/run-42/work/", TempDirs: []string{"/tmp/run-42", "/var/tmp/x"}}
	tests := []struct {
		name string
		opts Options
		in   []string
		want []string
	}{
		{
			name: "session ids numbered by first appearance",
			in: []string{
				`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"` + uuidA + `"}}`,
				`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + uuidB + `","update":{}}}`,
				`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + uuidA + `","update":{}}}`,
			},
			want: []string{
				`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"{{sessionId}}"}}`,
				`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"{{sessionId2}}","update":{}}}`,
				`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"{{sessionId}}","update":{}}}`,
			},
		},
		{
			name: "non-UUID session id, also inside text and keys",
			in:   []string{`{"sessionId":"sess_7fa9c0de","text":"log at /s/sess_7fa9c0de.jsonl","byId":{"sess_7fa9c0de":1}}`},
			want: []string{`{"sessionId":"{{sessionId}}","text":"log at /s/{{sessionId}}.jsonl","byId":{"{{sessionId}}":1}}`},
		},
		{
			name: "short session id replaced only as a whole value",
			in:   []string{`{"sessionId":"s1","a":"s1","b":"this s1 stays"}`},
			want: []string{`{"sessionId":"{{sessionId}}","a":"{{sessionId}}","b":"this s1 stays"}`},
		},
		{
			name: "log header id, parent session and sender",
			in: []string{
				`{"type":"session","version":0,"id":"` + uuidB + `","createdAt":1783950001000,"cwd":"/tmp/run-42/work","parentSession":"` + uuidA + `","delegationDepth":1}`,
				`{"type":"user/message","seq":3,"time":1786374357758,"data":{"source":{"senderSessionId":"` + uuidA + `"},"id":"` + uuidC + `"},"surfaceOp":"append"}`,
			},
			want: []string{
				`{"type":"session","version":0,"id":"{{sessionId}}","createdAt":0,"cwd":"{{cwd}}","parentSession":"{{sessionId2}}","delegationDepth":1}`,
				`{"type":"user/message","seq":3,"time":0,"data":{"source":{"senderSessionId":"{{sessionId2}}"},"id":"{{id:1}}"},"surfaceOp":"append"}`,
			},
		},
		{
			name: "message ids, repeated and cited in text",
			in: []string{
				`{"type":"user/message","seq":4,"time":1,"data":{"id":"` + uuidC + `"}}`,
				`{"type":"assistant/message","seq":9,"time":2,"data":{"message":{"id":"` + uuidD + `","content":[{"type":"text","text":"re ` + uuidC + `"}]}}}`,
				`{"type":"x","seq":10,"time":3,"data":{"retryId":"` + uuidC + `","note":"` + uuidB + `"}}`,
			},
			want: []string{
				`{"type":"user/message","seq":4,"time":0,"data":{"id":"{{id:1}}"}}`,
				`{"type":"assistant/message","seq":9,"time":0,"data":{"message":{"id":"{{id:2}}","content":[{"type":"text","text":"re {{id:1}}"}]}}}`,
				`{"type":"x","seq":10,"time":0,"data":{"retryId":"{{id:1}}","note":"` + uuidB + `"}}`,
			},
		},
		{
			name: "id declared after its first mention in the same line",
			in:   []string{`{"text":"see ` + uuidC + `","message":{"id":"` + uuidC + `"}}`},
			want: []string{`{"text":"see {{id:1}}","message":{"id":"{{id:1}}"}}`},
		},
		{
			name: "non-UUID ids and numeric JSON-RPC ids are kept",
			in:   []string{`{"jsonrpc":"2.0","id":7,"result":{"toolCallId":"call_00_fkbB","id":"abc"}}`},
			want: []string{`{"jsonrpc":"2.0","id":7,"result":{"toolCallId":"call_00_fkbB","id":"abc"}}`},
		},
		{
			name: "packed row: time0 and dt zeroed, seq0 kept",
			in:   []string{`{"type":"text-chunks","seq0":10,"time0":1783352051618,"data":{"turn":1,"step":1,"index":0,"dt":[0,1,26,30],"texts":["a","b","c","d"]}}`},
			want: []string{`{"type":"text-chunks","seq0":10,"time0":0,"data":{"turn":1,"step":1,"index":0,"dt":[0,0,0,0],"texts":["a","b","c","d"]}}`},
		},
		{
			name: "pids and durations zeroed, non-numbers kept",
			in:   []string{`{"pid":4242,"ppid":1,"durationMs":12.5,"elapsedMs":3,"wall_ms":99,"exitCode":0,"pidFile":"/x","timeout":30,"label":{"pid":"p"}}`},
			want: []string{`{"pid":0,"ppid":0,"durationMs":0,"elapsedMs":0,"wall_ms":0,"exitCode":0,"pidFile":"/x","timeout":30,"label":{"pid":"p"}}`},
		},
		{
			name: "ISO timestamps",
			in:   []string{`{"at":"2026-03-01T12:34:56.789Z","b":"2026-03-01T12:34:56+02:00","c":"2026-03-01","d":"at 2026-03-01T12:34:56Z","e":"2026-03-01T12:34"}`},
			want: []string{`{"at":"{{time}}","b":"{{time}}","c":"2026-03-01","d":"at 2026-03-01T12:34:56Z","e":"{{time}}"}`},
		},
		{
			name: "cwd and temp dirs, longest first",
			in:   []string{`{"a":"/tmp/run-42/work/f.txt","b":"/tmp/run-42/spill/1.txt","c":"cd /var/tmp/x && ls /tmp/run-42/work","d":"/tmp/run-420"}`},
			want: []string{`{"a":"{{cwd}}/f.txt","b":"{{tmp}}/spill/1.txt","c":"cd {{tmp2}} && ls {{cwd}}","d":"{{tmp}}0"}`},
		},
		{
			name: "layout: key order, duplicates, compaction, untouched escapes",
			in:   []string{" { \"z\" : 1 , \"a\":[ true,null , 1.50e3 ],\"a\":\"\\u00e9<&>\", \"p\":\"/tmp/run-42/work/<\\u00e9>\" }  "},
			want: []string{`{"z":1,"a":[true,null,1.50e3],"a":"\u00e9<&>","p":"{{cwd}}/<é>"}`},
		},
		{
			name: "newlines are kept",
			in:   []string{"{\"time\":5}\n", "{\"time\":5}\r\n", "\n", ""},
			want: []string{"{\"time\":0}\n", "{\"time\":0}\r\n", "\n", ""},
		},
		{
			name: "not JSON: literals and known ids only",
			in: []string{
				`{"sessionId":"` + uuidA + `"}`,
				`panic: session ` + uuidA + ` in /tmp/run-42/work at 2026-03-01T12:34:56Z {"time":5`,
			},
			want: []string{
				`{"sessionId":"{{sessionId}}"}`,
				`panic: session {{sessionId}} in {{cwd}} at 2026-03-01T12:34:56Z {"time":5`,
			},
		},
		{
			name: "placeholders are not renumbered",
			in:   []string{`{"sessionId":"{{sessionId2}}","id":"{{id:3}}","cwd":"{{cwd}}"}`, `{"sessionId":"` + uuidA + `"}`},
			want: []string{`{"sessionId":"{{sessionId2}}","id":"{{id:3}}","cwd":"{{cwd}}"}`, `{"sessionId":"{{sessionId}}"}`},
		},
		{
			name: "extra keys from options",
			opts: Options{SessionKeys: []string{"conversation"}, IDKeys: []string{"ref"}, ZeroKeys: []string{"seed"}},
			in:   []string{`{"conversation":"c-123456789","ref":"` + uuidC + `","seed":77,"seq":77}`},
			want: []string{`{"conversation":"{{sessionId}}","ref":"{{id:1}}","seed":0,"seq":77}`},
		},
		{
			name: "root and empty dirs are ignored",
			opts: Options{Cwd: "/", TempDirs: []string{""}},
			in:   []string{`{"p":"/a/b"}`},
			want: []string{`{"p":"/a/b"}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			if o.Cwd == "" && o.TempDirs == nil {
				o = Options{Cwd: opts.Cwd, TempDirs: opts.TempDirs, SessionKeys: o.SessionKeys, IDKeys: o.IDKeys, ZeroKeys: o.ZeroKeys}
			}
			n := New(o)
			for i, in := range tt.in {
				got := string(n.Line([]byte(in)))
				if got != tt.want[i] {
					t.Errorf("line %d\n  in: %s\n got: %s\nwant: %s", i, in, got, tt.want[i])
				}
				// Normalizing again, afresh, changes nothing.
				if again := string(New(o).Line([]byte(got))); again != got {
					t.Errorf("line %d not idempotent\nonce:  %s\ntwice: %s", i, got, again)
				}
			}
		})
	}
}

func TestLineDoesNotAliasInput(t *testing.T) {
	n := New(Options{})
	in := []byte("not json\n")
	out := n.Line(in)
	out[0] = 'X'
	if string(in) != "not json\n" {
		t.Errorf("input changed to %q", in)
	}
}

const template = `{"type":"session","version":0,"id":"S1","createdAt":1783950001000,"cwd":"CWD"}
{"type":"user/message","seq":0,"time":1785498791446,"data":{"content":[{"type":"text","text":"hi"}],"id":"M1"},"surfaceOp":"append"}
{"type":"assistant/message","seq":1,"time":1785498791500,"data":{"message":{"id":"M2","source":{"senderSessionId":"S2"}}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"child S2 at CWD/x"}}}}
{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","_meta":{"pid":PID,"durationMs":DUR,"at":"AT"}}}
`

func fill(s1, s2, m1, m2, cwd, pid, dur, at string) string {
	return strings.NewReplacer("S1", s1, "S2", s2, "M1", m1, "M2", m2, "CWD", cwd, "PID", pid, "DUR", dur, "AT", at).Replace(template)
}

func TestDeterminism(t *testing.T) {
	runA := fill(uuidA, uuidB, uuidC, uuidD, "/tmp/a1/w", "4242", "17", "2026-01-02T03:04:05Z")
	runB := fill("0f0f0f0f-1e1e-4d4d-8c8c-7b7b7b7b7b7b", "sess_other_run", "99999999-8888-4777-8666-555555555555",
		"fedcba98-7654-4321-8fed-cba987654321", "/tmp/zz/w", "7", "123456", "2027-11-12T13:14:15.123+01:00")
	norm := func(run, cwd string) string {
		out, err := New(Options{Cwd: cwd}).Transcript(strings.NewReader(run))
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	a1, a2, b := norm(runA, "/tmp/a1/w"), norm(runA, "/tmp/a1/w"), norm(runB, "/tmp/zz/w")
	if a1 != a2 {
		t.Errorf("same input, different output:\n%s\n%s", a1, a2)
	}
	if a1 != b {
		t.Errorf("same structure with other ids, different output:\n%s\n%s", a1, b)
	}
	const want = `{"type":"session","version":0,"id":"{{sessionId}}","createdAt":0,"cwd":"{{cwd}}"}
{"type":"user/message","seq":0,"time":0,"data":{"content":[{"type":"text","text":"hi"}],"id":"{{id:1}}"},"surfaceOp":"append"}
{"type":"assistant/message","seq":1,"time":0,"data":{"message":{"id":"{{id:2}}","source":{"senderSessionId":"{{sessionId2}}"}}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"{{sessionId}}","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"child {{sessionId2}} at {{cwd}}/x"}}}}
{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","_meta":{"pid":0,"durationMs":0,"at":"{{time}}"}}}
`
	if a1 != want {
		t.Errorf("normalized\n%s\nwant\n%s", a1, want)
	}
}

func TestTranscriptKeepsTornTail(t *testing.T) {
	in := "{\"sessionId\":\"" + uuidA + "\"}\n{\"sessionId\":\"" + uuidA + "\",\"te"
	got, err := New(Options{}).Transcript(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"sessionId\":\"{{sessionId}}\"}\n{\"sessionId\":\"{{sessionId}}\",\"te"
	if string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestTranscriptReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := New(Options{}).Transcript(io.MultiReader(strings.NewReader("{}\n"), failingReader{boom}))
	if !errors.Is(err, boom) || err.Error() != "normalize: reading transcript: boom" {
		t.Errorf("err = %v", err)
	}
}
