package acpcmd_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// sseServer is a local OpenAI-compatible model endpoint that answers every
// request with a stream of text deltas of 64 bytes each, size bytes in
// all (then a stop finish), or, with endless, without end. toolArgs streams
// the deltas as the arguments of one tool call instead of as text.
type sseServer struct {
	size     int64
	endless  bool
	toolArgs bool
	// onlyFirst makes every request after the first get a short answer
	// ("OK", a stop finish) instead.
	onlyFirst bool
	// bodies receives each request's body (when non-nil; never blocks).
	bodies chan []byte
	calls  atomic.Int32
}

// delta64 is the 64 bytes of text each delta carries.
const delta64 = "All work and no play makes reel a dull agent. 0123456789abcdefg\n"

func (s *sseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if s.bodies != nil {
		select {
		case s.bodies <- body:
		default:
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	bw := bufio.NewWriterSize(w, 64<<10)
	head := `data: {"id":"c1","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":`
	var event []byte
	short := s.calls.Add(1) > 1 && s.onlyFirst
	switch {
	case short:
		_, _ = bw.WriteString(head + `{"content":"OK"}}]}` + "\n\n")
	case s.toolArgs:
		first := head + `{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"touch PWNED # "}}]}}]}` + "\n\n"
		_, _ = bw.WriteString(first)
		event = []byte(head + `{"tool_calls":[{"index":0,"function":{"arguments":"` + strings.TrimSuffix(delta64, "\n") + `_"}}]}}]}` + "\n\n")
	default:
		event = []byte(head + `{"content":` + strconv.Quote(delta64) + `}}]}` + "\n\n")
	}
	for sent := int64(0); !short && (s.endless || sent < s.size); sent += int64(len(delta64)) {
		if _, err := bw.Write(event); err != nil {
			return // the client hung up
		}
	}
	reason := "stop"
	if s.toolArgs && !short {
		_, _ = bw.WriteString(head + `{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]}}]}` + "\n\n")
		reason = "tool_calls"
	}
	_, _ = bw.WriteString(head + `{},"finish_reason":"` + reason + `"}]}` + "\n\n")
	_, _ = bw.WriteString(`data: {"id":"c1","object":"chat.completion.chunk","created":0,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}}` + "\n\n")
	_, _ = bw.WriteString("data: [DONE]\n\n")
	_ = bw.Flush()
}

// streamRun is what one streamed answer cost a `reel acp` process.
type streamRun struct {
	stop     string
	peakRSS  int64 // bytes, wait4's ru_maxrss
	logBytes int64
	elapsed  time.Duration
}

// runStreamed starts exe (`reel acp`) against srv, prompts once, drains
// stdout without keeping it, closes stdin and waits: the peak RSS of the
// process and the size of its session log. extra are further flags.
func runStreamed(tb testing.TB, exe string, srv http.Handler, extra ...string) streamRun {
	tb.Helper()
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := tb.TempDir()
	ws, state := filepath.Join(dir, "ws"), filepath.Join(dir, "state")
	if err := os.Mkdir(ws, 0o755); err != nil {
		tb.Fatal(err)
	}
	args := append([]string{"acp", "--base-url", ts.URL + "/v1", "--model", "m", "--state-dir", state,
		"--session-id", "B1", "--no-title-model", "--mode", "read-only"}, extra...)
	cmd := exec.Command(exe, args...)
	cmd.Dir, cmd.Env = dir, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	send := func(id int, method string, params any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := stdin.Write(append(b, '\n')); err != nil {
			tb.Fatalf("writing to reel: %v", err)
		}
	}
	r := bufio.NewReaderSize(stdout, 1<<20)
	// await reads frames until the response to id, discarding the rest.
	await := func(id int) json.RawMessage {
		want := []byte(`"id":` + strconv.Itoa(id) + `,`)
		for {
			line, err := r.ReadSlice('\n')
			if err == bufio.ErrBufferFull {
				for err == bufio.ErrBufferFull {
					_, err = r.ReadSlice('\n')
				}
				continue
			}
			if err != nil {
				tb.Fatalf("reel closed stdout before the answer to %d: %v; stderr:\n%s", id, err, stderr.String())
			}
			if bytes.Contains(line, want) && !bytes.Contains(line, []byte(`"method"`)) {
				var f struct {
					Result json.RawMessage `json:"result"`
					Error  json.RawMessage `json:"error"`
				}
				_ = json.Unmarshal(line, &f)
				if f.Error != nil {
					tb.Fatalf("request %d failed: %s", id, f.Error)
				}
				return f.Result
			}
		}
	}
	send(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	await(1)
	send(2, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})
	await(2)
	send(3, "session/prompt", promptParams("B1", "Tell me a long story."))
	var res struct {
		StopReason string `json:"stopReason"`
	}
	_ = json.Unmarshal(await(3), &res)
	_ = stdin.Close()
	_, _ = io.Copy(io.Discard, r)
	if err := cmd.Wait(); err != nil {
		tb.Fatalf("reel: %v; stderr:\n%s", err, stderr.String())
	}
	run := streamRun{stop: res.StopReason, elapsed: time.Since(start)}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		run.peakRSS = ru.Maxrss << 10 // KiB on Linux
	}
	st, err := os.Stat(filepath.Join(state, "B1.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	run.logBytes = st.Size()
	return run
}

// BenchmarkStreamedAnswer runs the real `reel acp` against a local SSE
// model streaming one long text answer in 64-byte deltas (16 MiB and
// 64 MiB; REEL_BENCH_MIB=n,m picks others) and reports the peak RSS and
// the log size per streamed byte. REEL_BENCH_EXE runs another reel binary
// (an older build, to compare); the response cap is raised above the
// answer when the binary has one.
//
//	go test -run '^$' -bench StreamedAnswer -benchtime 1x ./agent/acpcmd/
func BenchmarkStreamedAnswer(b *testing.B) {
	exe := reelExe
	if e := os.Getenv("REEL_BENCH_EXE"); e != "" {
		exe = e
	}
	help, _ := exec.Command(exe, "acp", "-h").CombinedOutput()
	capped := bytes.Contains(help, []byte("max-response-bytes"))
	sizes := []int{16, 64}
	if s := os.Getenv("REEL_BENCH_MIB"); s != "" {
		sizes = nil
		for f := range strings.SplitSeq(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatalf("REEL_BENCH_MIB: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, mib := range sizes {
		b.Run(fmt.Sprintf("MiB=%d", mib), func(b *testing.B) {
			size := int64(mib) << 20
			var extra []string
			if capped {
				extra = []string{"--max-response-bytes", strconv.FormatInt(2*size, 10)}
			}
			var last streamRun
			for b.Loop() {
				last = runStreamed(b, exe, &sseServer{size: size}, extra...)
				if last.stop != "end_turn" {
					b.Fatalf("stop reason %q, want end_turn", last.stop)
				}
			}
			b.ReportMetric(float64(last.peakRSS)/float64(size), "rss/B")
			b.ReportMetric(float64(last.logBytes)/float64(size), "log/B")
			b.ReportMetric(float64(last.peakRSS)/(1<<20), "peakMiB")
			b.ReportMetric(last.elapsed.Seconds(), "s")
		})
	}
}
