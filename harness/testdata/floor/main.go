// Command floor is the start-up floor BenchmarkStartup measures reel acp
// against: a Go program that answers ACP's initialize and session/new over
// its stdin/stdout and, for session/new, does the one durable create reel's
// session store does (a temporary file in the state directory, written and
// fsynced, renamed to the log's name, the directory fsynced). Nothing else.
//
//	floor STATE-DIR
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: floor STATE-DIR")
		os.Exit(2)
	}
	if err := serve(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

// serve answers requests from stdin until it closes.
func serve(dir string) error {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 16<<20)
	out := bufio.NewWriter(os.Stdout)
	n := 0
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return fmt.Errorf("decode a request: %w", err)
		}
		if req.ID == nil {
			continue
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{}}
		case "session/new":
			n++
			id := fmt.Sprintf("floor-%d-%d", os.Getpid(), n)
			if err := create(dir, id); err != nil {
				return err
			}
			result = map[string]any{"sessionId": id}
		default:
			result = map[string]any{}
		}
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
		if err != nil {
			return fmt.Errorf("encode an answer: %w", err)
		}
		if _, err := out.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("write an answer: %w", err)
		}
		if err := out.Flush(); err != nil {
			return fmt.Errorf("write an answer: %w", err)
		}
	}
	return in.Err()
}

// create makes dir/id.jsonl durably: temporary file, write, fsync, rename,
// directory fsync.
func create(dir, id string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+id+"-*.tmp")
	if err != nil {
		return fmt.Errorf("create %s: %w", id, err)
	}
	header := fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":0,"cwd":%q}`+"\n", id, dir)
	if _, err := f.WriteString(header); err != nil {
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", f.Name(), err)
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, id+".jsonl")); err != nil {
		return fmt.Errorf("rename %s: %w", f.Name(), err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}
