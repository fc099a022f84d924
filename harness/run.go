package harness

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"golang.org/x/sys/unix"

	"github.com/reel-agent/reel/harness/rpcclient"
	"github.com/reel-agent/reel/harness/scenario"
)

// Mode is how a scenario is run.
type Mode string

// Modes.
const (
	Replay  Mode = "replay"
	Refresh Mode = "refresh"
	Record  Mode = "record"
)

// Runner runs scenarios through a reel binary.
type Runner struct {
	// Exe is the reel binary.
	Exe string
	// Mode selects replay, refresh or record.
	Mode Mode
	// RecordArgs are extra `reel acp` flags in record mode (provider, model).
	RecordArgs []string
	// RecordEnv are extra environment entries in record mode (the key).
	RecordEnv []string
	// StandinURL, when set in record mode, points the agent at a stand-in
	// model server instead of a real provider.
	StandinURL string
	// ExtraArgs are extra `reel acp` flags in every mode.
	ExtraArgs []string
	// StepTimeout bounds every step (default 30s) so a broken agent fails
	// the scenario instead of hanging the suite. A step that runs out of
	// it sends reel acp SIGQUIT: the failure quotes its goroutine dump and
	// the processes it had started.
	StepTimeout time.Duration
	// Prepare, when set, prepares the run's cwd after the scenario's
	// workspace/ was copied in (the corpus's per-scenario preparation).
	Prepare func(cwd string) error
	// Env are extra environment entries of the agent in every mode.
	Env []string
	// PrepareWeb, when set, writes pages into the folder the run serves
	// on its scenario's loopback port (see webfixture.go).
	PrepareWeb func(dir string) error
	// TitleOverride serves the scenario's replay.override.json to the
	// title call (--replay-title-override) instead of the conversation.
	TitleOverride bool
	// ScratchDir is the folder the run's temp dir is made in ("": the
	// temp dir); the fixture suite's command uses scratchRoot.
	ScratchDir string
	// SettlementMarker, when set, is a file a waitForFile step awaits as
	// the reference suite's settlement marker: the step waits for a
	// background subagent's settlement notice in the session logs (or the
	// file).
	SettlementMarker string
}

// Run is the outcome of running one scenario.
type Run struct {
	// Transcript is the raw stdout of every process, in order.
	Transcript []byte
	// StateDir holds the session logs the agent wrote.
	StateDir string
	// SessionIDs are the session ids, in scenario session order.
	SessionIDs []string
	// Refused marks sessions whose load the scenario expected to fail:
	// their logs are not harvested.
	Refused map[int]bool
	// Deleted holds the log of each session a deleteSession step deleted,
	// as it was just before (listdelete.go): what is compared with the
	// fixture's log, the file itself being gone.
	Deleted map[int][]byte
	// Cwd is the generated working directory; Temp the run's temp root.
	Cwd, Temp string
	// Stderr is the agent's stderr (diagnostics), for failure reports.
	Stderr []byte
	// Wall is the run's wall time.
	Wall time.Duration
}

// process is one running reel acp.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File // the read end of reel's stdout, closed by stop
	client *rpcclient.Client
	tee    *bytes.Buffer
	errBuf *lockedBuffer
	// exited is closed when the process has exited and its stderr is
	// read; waitErr is then cmd.Wait's error.
	exited  chan struct{}
	waitErr error
	// pending prompt calls started without waiting (promptAndCancel)
	pending sync.WaitGroup
	perr    error
	pmu     sync.Mutex
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// ErrUnusedAnswers reports a run that left permission answers of its
// input.json unused: the script expected a permission request the agent
// never sent.
var ErrUnusedAnswers = errors.New("unused permission answers")

// recordedTempDir is the temp dir the fixtures were recorded under (the
// default TMPDIR): a run's paths are as long as under it.
const recordedTempDir = "/tmp"

// runDirSuffix is the length in hex digits of a run dir's random suffix
// under recordedTempDir.
const runDirSuffix = 16

// scratchRoot is the folder `reel snapshot` makes the fixture suite's run
// dirs in: $REEL_SNAPSHOT_TMPDIR when set, else /dev/shm when it is a
// writable tmpfs folder with minScratchFree free, else the temp dir. On
// tmpfs the agent's fsyncs (every log append, the session's durable
// create) cost no disk flush: a scenario's scratch dir is thrown away, and
// the suite checks what reel writes, not that the disk kept it (the crash
// and durability tests run on the real file system). The agent still
// makes every fsync its rules ask for. The corpus runs stay on the temp
// dir, as the reference recorded them. (Running them on tmpfs first showed
// a race in reel — a background child's settlement turn streaming before
// its parent's prompt answer — fixed since and held by acpcmd's
// TestSettlementAfterPromptAnswer.)
func scratchRoot() string {
	if dir := os.Getenv("REEL_SNAPSHOT_TMPDIR"); dir != "" {
		return dir
	}
	const shm = "/dev/shm"
	var st unix.Statfs_t
	if unix.Statfs(shm, &st) == nil && st.Type == unix.TMPFS_MAGIC && st.Bavail*uint64(st.Bsize) >= minScratchFree &&
		unix.Access(shm, unix.W_OK|unix.X_OK) == nil {
		return shm
	}
	return os.TempDir()
}

// minScratchFree is the free space scratchRoot wants of /dev/shm (a
// container's is often 64 MB) before it runs scenarios there.
const minScratchFree = 512 << 20

// runDir makes a run's private temp dir, reel-snap-NAME-XXXX… under root.
// The whole path has the length it has under recordedTempDir with a
// runDirSuffix-digit suffix (a longer root gets a shorter suffix, at least
// 8 digits): paths under it reach the model (a spill notice names its
// file), and what fits beside a notice depends on its length, so a replay
// must see paths as long as the recording's.
func runDir(root, name string) (string, error) {
	digits := max(runDirSuffix+len(recordedTempDir)-len(filepath.Clean(root)), 8)
	for range 100 {
		b := make([]byte, (digits+1)/2)
		_, _ = rand.Read(b)
		dir := filepath.Join(root, fmt.Sprintf("reel-snap-%s-%s", name, hex.EncodeToString(b)[:digits]))
		err := os.Mkdir(dir, 0o700)
		if err == nil || !errors.Is(err, fs.ErrExist) {
			return dir, err
		}
	}
	return "", fmt.Errorf("no free run directory for %s under %s", name, root)
}

// Execute runs sc and returns what it produced. The caller removes
// run.Temp when done.
func (r *Runner) Execute(ctx context.Context, sc *scenario.Scenario) (*Run, error) {
	start := time.Now()
	root := r.ScratchDir
	if root == "" {
		root = os.TempDir()
	}
	tmp, err := runDir(root, sc.Name)
	if err != nil {
		return nil, err
	}
	run := &Run{Temp: tmp, StateDir: filepath.Join(tmp, "state", "reel", "sessions"), Cwd: filepath.Join(tmp, "cwd"), Refused: map[int]bool{}, Deleted: map[int][]byte{}}
	if err := os.MkdirAll(run.Cwd, 0o755); err != nil {
		return run, err
	}
	if sc.Workspace != "" {
		if err := os.CopyFS(run.Cwd, os.DirFS(sc.Workspace)); err != nil {
			return run, fmt.Errorf("%s: copy workspace: %w", sc.Name, err)
		}
	}
	if r.Prepare != nil {
		if err := r.Prepare(run.Cwd); err != nil {
			return run, fmt.Errorf("%s: prepare the workspace: %w", sc.Name, err)
		}
	}
	if err := os.MkdirAll(filepath.Join(tmp, "home"), 0o755); err != nil {
		return run, err
	}
	if sc.Seed != "" {
		if err := placeSeed(sc.Seed, run); err != nil {
			return run, fmt.Errorf("%s: %w", sc.Name, err)
		}
	}
	stopWeb, err := r.startWeb(ctx, sc, run)
	if err != nil {
		return run, err
	}
	defer stopWeb()
	mcpServers, stopMCP, err := r.startMCP(ctx, sc)
	if err != nil {
		return run, fmt.Errorf("%s: start the MCP servers: %w", sc.Name, err)
	}
	defer stopMCP()
	d := &driver{r: r, sc: sc, run: run, answers: rpcclient.NewAnswerQueue(permissionKinds(sc)), mcpServers: mcpServers,
		elicit: rpcclient.NewElicitationQueue(sc.Input.ElicitationAnswers), editor: newEditorFS(sc, run.Cwd)}
	err = d.drive(ctx)
	run.Wall = time.Since(start)
	if err == nil {
		err = d.answers.Err()
	}
	if err == nil {
		err = d.elicit.Err()
	}
	if n := d.elicit.Remaining(); err == nil && n > 0 {
		err = fmt.Errorf("%w: %d of the %d elicitation answer(s) in input.json were never used", ErrUnusedAnswers, n, len(sc.Input.ElicitationAnswers))
	}
	if n := d.answers.Remaining(); err == nil && n > 0 {
		err = fmt.Errorf("%w: %d of the %d permission answer(s) in input.json were never used (the agent asked %d time(s))",
			ErrUnusedAnswers, n, len(sc.Input.PermissionAnswers), d.answers.Asked())
	}
	if err != nil {
		return run, fmt.Errorf("%s: %w", sc.Name, err)
	}
	return run, nil
}

// placeSeed puts a seed log into the state dir under its session id and
// makes it session 0.
func placeSeed(seed string, run *Run) error {
	raw, err := os.ReadFile(seed)
	if err != nil {
		return err
	}
	line, _, _ := bytes.Cut(raw, []byte("\n"))
	var h struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(line, &h); err != nil || h.ID == "" || strings.ContainsAny(h.ID, "/\\") || h.ID == "." || h.ID == ".." {
		return fmt.Errorf("%s: the first line must be a session header with a plain id", seed)
	}
	if err := os.MkdirAll(run.StateDir, 0o755); err != nil {
		return err
	}
	run.SessionIDs = append(run.SessionIDs, h.ID)
	return os.WriteFile(filepath.Join(run.StateDir, h.ID+".jsonl"), raw, 0o644)
}

func permissionKinds(sc *scenario.Scenario) []string {
	var kinds []string
	for _, a := range sc.Input.PermissionAnswers {
		kinds = append(kinds, string(a.Kind))
	}
	return kinds
}

// driver executes one scenario's steps across processes.
type driver struct {
	r       *Runner
	sc      *scenario.Scenario
	run     *Run
	answers *rpcclient.AnswerQueue
	p       *process
	// mcpServers are the mcpServers of session/new and session/load.
	mcpServers []any
	// elicit answers elicitation/create; editor, when set, is the
	// editor's buffers (editor.go).
	elicit *rpcclient.ElicitationQueue
	editor *editorFS
	// list is the session/list listing under way (listdelete.go).
	list listing
	// recorded caches what each fixture session's recording says of its
	// titles (recordedTitles), read at the first wait that needs it.
	recorded map[int]recordedFacts
}

// segments splits steps at loadSession, resumeSession and deleteSession
// (reel refuses to delete a session open in its process): each segment is
// one process.
func segments(steps []scenario.Step) [][]scenario.Step {
	var out [][]scenario.Step
	cur := []scenario.Step{}
	for _, s := range steps {
		if (s.Op == scenario.OpLoadSession || s.Op == scenario.OpResumeSession || s.Op == scenario.OpDeleteSession) && !onlyInitialize(cur) {
			out = append(out, cur)
			cur = []scenario.Step{}
		}
		cur = append(cur, s)
	}
	return append(out, cur)
}

// onlyInitialize reports whether a segment has nothing but initialize
// steps: a following loadSession may then run in the same process.
func onlyInitialize(seg []scenario.Step) bool {
	for _, s := range seg {
		if s.Op != scenario.OpInitialize {
			return false
		}
	}
	return true
}

// opens returns the fixture session indexes a segment opens, in order;
// created counts the sessions created before it.
func opens(seg []scenario.Step, created int) []int {
	var out []int
	for _, s := range seg {
		switch {
		case s.CreatesSession():
			out = append(out, created)
			created++
		case s.Op == scenario.OpLoadSession || s.Op == scenario.OpResumeSession:
			out = append(out, s.Session)
		}
	}
	return out
}

func (d *driver) drive(ctx context.Context) error {
	created := len(d.run.SessionIDs) // a seed is session 0
	segs := segments(d.sc.Input.Steps)
	segOpens := make([][]int, len(segs))
	for i, seg := range segs {
		segOpens[i] = opens(seg, created)
		for _, s := range seg {
			if s.CreatesSession() {
				created++
			}
		}
	}
	var info []sessionInfo
	children := make([][]int, len(segs))
	if d.r.Mode != Record && len(d.sc.Sessions) > 0 {
		var err error
		if info, err = fixtureSessions(d.sc); err != nil {
			return err
		}
		if children, err = childrenBySegment(info, segOpens); err != nil {
			return err
		}
	}
	for i, seg := range segs {
		if err := d.start(ctx, replayOrder(info, segOpens[i], children[i])); err != nil {
			return err
		}
		p := d.p
		err := d.steps(ctx, seg)
		serr := d.stop()
		if _, ok := errors.AsType[*stepFailed](err); ok {
			// Quoted once the agent has exited: its stderr is then whole
			// (a line it wrote just before answering the failing step can
			// still be in the pipe while the step fails).
			err = fmt.Errorf("%w\nstderr:\n%s", err, tail(p.errBuf.Bytes()))
		}
		if err == nil {
			err = serr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// stepFailed is a step that failed in time (not by running out of it):
// drive adds the agent's stderr to it after stopping the agent.
type stepFailed struct {
	step int
	op   string
	err  error
}

func (e *stepFailed) Error() string { return fmt.Sprintf("step %d (%s): %v", e.step, e.op, e.err) }

func (e *stepFailed) Unwrap() error { return e.err }

// env is the scrubbed environment of the agent: no inherited variables
// (so no API key) beyond PATH, plus an isolated home and state dir.
func (d *driver) env() []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(d.run.Temp, "home"),
		"XDG_STATE_HOME=" + filepath.Join(d.run.Temp, "state"),
		"TMPDIR=" + d.run.Temp,
		"LANG=C.UTF-8",
	}
	env = append(env, d.r.Env...)
	if d.r.Mode == Record {
		env = append(env, d.r.RecordEnv...)
	} else if !sendsPrompts(d.sc) {
		// A scenario that never calls a model is recorded with a dummy
		// key (see Suite.RunOne); replaying it the same way keeps the
		// handshake (no auth method advertised) identical in all modes.
		env = append(env, "DEEPSEEK_API_KEY=unused")
	}
	return env
}

// HookFiles are the hook configs a scenario's workspace may hold, with the
// `reel acp` flag that loads each: the files the reference's ACP example
// loads from the agent's launch directory (examples/acp-agent/cordis.yml:
// hooks-claude-code reads ./hooks.json, hooks-codex ./codex-hooks.json),
// which its snapshot suite seeds from the scenario's workspace.
var HookFiles = []struct{ File, Flag string }{
	{"hooks.json", "--hooks"},
	{"codex-hooks.json", "--codex-hooks"},
}

// hookArgs are the flags loading the hook configs in the run's cwd.
func hookArgs(cwd string) []string {
	var args []string
	for _, h := range HookFiles {
		if fi, err := os.Lstat(filepath.Join(cwd, h.File)); err == nil && fi.Mode().IsRegular() {
			args = append(args, h.Flag, h.File)
		}
	}
	return args
}

// start starts one process. order are the fixture sessions it opens, in
// opening order (replayOrder): in replay mode each one's recorded log is
// given with --replay, a child's after the sessions opened before it.
func (d *driver) start(ctx context.Context, order []int) error {
	// --debug-child-after-turn: a background subagent's first turn waits
	// for its parent's turn to end, the order every continuable recording
	// shows (docs/subagents-reference.md, section 5.3), so records and
	// replays do not depend on timing.
	args := []string{"acp", "--state-dir", d.run.StateDir, "--log-level", "debug", "--debug-invariant", "--debug-child-after-turn"}
	args = append(args, d.r.ExtraArgs...)
	args = append(args, hookArgs(d.run.Cwd)...)
	if d.sc.Input.Mode != "" {
		args = append(args, "--mode", d.sc.Input.Mode)
	}
	if d.sc.Input.Approval != "" {
		args = append(args, "--approval", d.sc.Input.Approval)
	}
	if d.sc.Input.ImageInput != "" {
		args = append(args, "--image-input", d.sc.Input.ImageInput)
	}
	if d.sc.Input.Terminals {
		args = append(args, "--terminals")
	}
	if d.sc.Input.Checkpoints {
		args = append(args, "--checkpoints")
	}
	if d.sc.Input.Network != "" {
		args = append(args, "--network", d.sc.Input.Network)
	}
	if d.sc.Input.CodeMode {
		args = append(args, "--code-mode")
	}
	if d.sc.Input.SessionQuery {
		args = append(args, "--session-query")
	}
	args = append(args, d.sc.Input.DebugFlags...)
	if m := d.sc.Input.LSPServer; m != "" {
		spec, err := json.Marshal(map[string]any{"name": "standin", "command": d.r.Exe, "args": []string{"lsp-standin", m},
			"extensions": map[string]string{".ts": "typescript"}})
		if err != nil {
			return err
		}
		args = append(args, "--lsp-server", string(spec))
	}
	if d.sc.Input.Models != "" {
		args = append(args, "--models", d.sc.Input.Models)
	}
	if n := d.sc.Input.ListPageSize; n > 0 {
		args = append(args, "--list-page-size", strconv.Itoa(n))
	}
	if n := d.sc.Input.ContextWindow; n > 0 {
		args = append(args, "--context-window", strconv.Itoa(n))
	}
	if d.r.Mode == Record {
		args = append(args, d.r.RecordArgs...)
		if d.r.StandinURL != "" {
			args = append(args, "--base-url", d.r.StandinURL)
		}
	} else {
		for i, idx := range order {
			if idx >= len(d.sc.Sessions) {
				if d.sc.Seed != "" && idx == 0 {
					continue // a refused seed has no expected log
				}
				return fmt.Errorf("session %d is opened but the fixture has no session log for it (record the scenario)", idx)
			}
			args = append(args, "--replay", absPath(d.sc.Sessions[idx]))
			if i == 0 && idx == 0 && d.sc.OverridePath != "" {
				flag := "--replay-override"
				if d.r.TitleOverride {
					flag = "--replay-title-override"
				}
				args = append(args, flag, absPath(d.sc.OverridePath))
			}
		}
	}
	cmd := exec.Command(d.r.Exe, args...)
	cmd.Env = d.env()
	cmd.Dir = d.run.Cwd
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	// Not cmd.StdoutPipe: Wait closes that pipe's read end as soon as the
	// process exits, discarding frames the client has not read yet (the
	// handshake transcript lost its trailing available_commands_update
	// this way under load). The driver owns this read end and closes it
	// only after the client has read to the end.
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout = stdoutW
	p := &process{cmd: cmd, stdin: stdin, stdout: stdout, tee: &bytes.Buffer{}, errBuf: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.errBuf
	// A process reel started that outlives it (or a killed reel's) keeps
	// the stderr pipe open: Wait stops copying it after this long instead
	// of waiting for it for good.
	cmd.WaitDelay = dumpWait
	err = cmd.Start()
	_ = stdoutW.Close()
	if err != nil {
		_ = stdout.Close()
		return fmt.Errorf("start %s: %w", d.r.Exe, err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	opts := rpcclient.Options{Tee: p.tee, Permission: d.answers.Answer, Elicitation: d.elicit.Answer}
	if d.editor != nil {
		opts.FS = d.editor
	}
	p.client = rpcclient.New(ctx, stdout, stdin, opts)
	d.p = p
	return nil
}

// stop closes stdin (graceful shutdown), waits for the process, and keeps
// its transcript.
func (d *driver) stop() error {
	p := d.p
	if p == nil {
		return nil
	}
	d.p = nil
	p.pending.Wait()
	_ = p.stdin.Close()
	var err error
	select {
	case <-p.exited:
		err = p.waitErr
	case <-time.After(d.timeout()):
		_ = p.cmd.Process.Kill()
		err = fmt.Errorf("reel acp did not exit within %s after stdin closed", d.timeout())
		<-p.exited
	}
	// The process has exited; its output ends when every copy of the pipe's
	// write end is closed. One left open by a process reel started ends
	// the read after a grace, with an error.
	select {
	case <-p.client.Done():
	case <-time.After(d.timeout()):
		if err == nil {
			err = fmt.Errorf("reel acp's stdout stayed open %s after it exited (a process it started holds it)", d.timeout())
		}
	}
	_ = p.stdout.Close()
	<-p.client.Done()
	d.run.Transcript = append(d.run.Transcript, p.tee.Bytes()...)
	d.run.Stderr = append(d.run.Stderr, p.errBuf.Bytes()...)
	if err != nil {
		return fmt.Errorf("reel acp exited: %w\nstderr:\n%s", err, tail(p.errBuf.Bytes()))
	}
	return nil
}

// dumpWait bounds the wait for a hung reel acp to write its goroutines
// and exit after SIGQUIT; maxDump bounds the dump a failure report quotes.
const (
	dumpWait = 10 * time.Second
	maxDump  = 256 << 10
)

// dumpGoroutines sends the process SIGQUIT (the Go runtime writes every
// goroutine's stack to stderr and exits), waits for it to exit, and
// returns what it wrote to stderr after the first from bytes: the dump
// that makes a step timeout in CI diagnosable. The process is killed if
// it does not exit in time.
func (p *process) dumpGoroutines(from int) string {
	kids := descendants(p.cmd.Process.Pid)
	if err := p.cmd.Process.Signal(unix.SIGQUIT); err != nil {
		return fmt.Sprintf("(no goroutine dump: SIGQUIT: %v)", err)
	}
	select {
	case <-p.exited:
	case <-time.After(dumpWait):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	dump := p.errBuf.Bytes()[from:]
	if len(dump) > maxDump {
		dump = append(dump[:maxDump:maxDump], "\n… (dump cut)"...)
	}
	return "processes reel acp had started (pid state command):\n" + kids +
		"goroutines of reel acp at the step timeout (SIGQUIT):\n" + string(dump)
}

// descendants lists the processes under pid (a git or a sandbox child a
// hung reel waits for), one "pid state command" line each, from /proc
// ("(none)" when there are none or /proc cannot be read).
func descendants(pid int) string {
	ents, _ := os.ReadDir("/proc")
	kids := map[int][]int{}
	state := map[int]string{}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// "pid (comm) state ppid …": comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		kids[ppid] = append(kids[ppid], n)
		state[n] = f[0]
	}
	var b strings.Builder
	var walk func(int, string)
	walk = func(p int, indent string) {
		for _, k := range kids[p] {
			cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(k), "cmdline"))
			fmt.Fprintf(&b, "%s%d %s %s\n", indent, k, state[k], strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " ")))
			walk(k, indent+"  ")
		}
	}
	walk(pid, "")
	if b.Len() == 0 {
		return "(none)\n"
	}
	return b.String()
}

// absPath makes a fixture path usable from the agent's own cwd.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func tail(b []byte) string {
	const max = 4000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

func (d *driver) timeout() time.Duration {
	if d.r.StepTimeout > 0 {
		return d.r.StepTimeout
	}
	return 30 * time.Second
}

// sessionID returns the id of fixture session idx.
func (d *driver) sessionID(idx int) (string, error) {
	if idx < 0 || idx >= len(d.run.SessionIDs) {
		return "", fmt.Errorf("session %d does not exist yet", idx)
	}
	return d.run.SessionIDs[idx], nil
}

func (d *driver) steps(ctx context.Context, steps []scenario.Step) error {
	for i, st := range steps {
		timeout := d.timeout()
		if st.TimeoutMs > 0 {
			timeout = time.Duration(st.TimeoutMs) * time.Millisecond
		}
		sctx, cancel := context.WithTimeout(ctx, timeout)
		err := st.Run(sctx, d)
		if err == nil && (st.IsPrompt() || st.Op == scenario.OpWaitForTurnEnd) {
			// A title call the turn started lands before the next step
			// (title.go).
			d.settleTitles(sctx)
		}
		timedOut := errors.Is(sctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		if err != nil && timedOut {
			// The step ran out of time: reel hangs (or is very slow).
			// Its goroutines say where.
			before := d.p.errBuf.Bytes()
			return fmt.Errorf("step %d (%s): %w\nstderr:\n%s\n%s", i+1, st.Op, err, tail(before), d.p.dumpGoroutines(len(before)))
		}
		if err != nil {
			return &stepFailed{step: i + 1, op: string(st.Op), err: err}
		}
	}
	return nil
}

// The run functions of the step vocabulary (scenario.Driver): which op
// each runs, and the fields it reads, is the vocabulary in package
// scenario.
var _ scenario.Driver = (*driver)(nil)

// Initialize sends initialize, with the session capabilities the step
// asks for.
func (d *driver) Initialize(ctx context.Context, st scenario.Step) error {
	params := initializeParams(d.sc)
	if !st.Notices && !st.Compaction {
		return d.p.client.Call(ctx, "initialize", params, nil)
	}
	caps := maps.Clone(params["clientCapabilities"].(map[string]any))
	session := map[string]any{}
	if st.Notices {
		session["notices"] = map[string]any{}
	}
	if st.Compaction {
		session["compaction"] = map[string]any{}
	}
	caps["session"] = session
	return d.p.client.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps}, nil)
}

// NewSession sends session/new and records the session's id. With
// ExpectError the agent must refuse it (a JSON-RPC error); nothing is
// recorded. AdditionalDirectories, when given, are sent as they are.
func (d *driver) NewSession(ctx context.Context, st scenario.Step) error {
	var resp struct {
		SessionID string `json:"sessionId"`
	}
	params := map[string]any{"cwd": d.run.Cwd, "mcpServers": d.mcpServers}
	if st.AdditionalDirectories != nil {
		params["additionalDirectories"] = st.AdditionalDirectories
	}
	err := d.p.client.Call(ctx, "session/new", params, &resp)
	if st.ExpectError {
		var rpcErr *jsonrpc2.Error
		if !errors.As(err, &rpcErr) {
			return fmt.Errorf("session/new should have been refused, got %v (session %q)", err, resp.SessionID)
		}
		return nil
	}
	if err != nil {
		return err
	}
	d.run.SessionIDs = append(d.run.SessionIDs, resp.SessionID)
	return nil
}

// LoadSession sends initialize and session/load to the fresh process. With
// ExpectError the load must be refused; the session's log is then not
// harvested.
func (d *driver) LoadSession(ctx context.Context, st scenario.Step) error {
	c := d.p.client
	id, err := d.sessionID(st.Session)
	if err != nil {
		return err
	}
	if err := c.Call(ctx, "initialize", initializeParams(d.sc), nil); err != nil {
		return err
	}
	err = c.Call(ctx, "session/load", map[string]any{"sessionId": id, "cwd": d.run.Cwd, "mcpServers": d.mcpServers}, nil)
	if !st.ExpectError {
		return err
	}
	var rpcErr *jsonrpc2.Error
	if !errors.As(err, &rpcErr) {
		return fmt.Errorf("session/load of session %d should have been refused, got %v", st.Session, err)
	}
	d.run.Refused[st.Session] = true
	return nil
}

// SetMode sends session/set_mode.
func (d *driver) SetMode(ctx context.Context, st scenario.Step) error {
	id, err := d.sessionID(st.Session)
	if err != nil {
		return err
	}
	return d.p.client.Call(ctx, "session/set_mode", map[string]any{"sessionId": id, "modeId": st.Mode}, nil)
}

// Prompt sends session/prompt and waits for the answer; with ExpectError
// the answer must be a JSON-RPC error.
func (d *driver) Prompt(ctx context.Context, st scenario.Step) error {
	_, err := d.sendPrompt(ctx, st)
	if !st.ExpectError {
		return err
	}
	if err == nil {
		return errors.New("the prompt succeeded, but the scenario expects an error")
	}
	var rpcErr *jsonrpc2.Error
	if errors.As(err, &rpcErr) {
		return nil
	}
	return err
}

// PromptAndWaitForAgentMessage sends a prompt without waiting for its
// answer and waits for the agent's message text to contain WaitForText.
func (d *driver) PromptAndWaitForAgentMessage(ctx context.Context, st scenario.Step) error {
	c := d.p.client
	mark := c.Len()
	d.promptAsync(st)
	_, err := c.WaitFor(ctx, func(n rpcclient.Notification) bool {
		return n.Index >= mark && n.Update == "agent_message_chunk" && (st.WaitForText == "" || strings.Contains(string(n.Params), st.WaitForText))
	})
	return err
}

// PromptAndCancel sends a prompt without waiting for its answer, waits for
// the ready file (in record mode: for the first message chunk), then sends
// session/cancel.
func (d *driver) PromptAndCancel(ctx context.Context, st scenario.Step) error {
	c := d.p.client
	id, err := d.sessionID(st.Session)
	if err != nil {
		return err
	}
	mark := c.Len()
	d.promptAsync(st)
	text := func(ctx context.Context) error {
		_, err := c.WaitFor(ctx, func(n rpcclient.Notification) bool {
			return n.Index >= mark && n.Update == "agent_message_chunk"
		})
		return err
	}
	switch {
	case st.WaitForFile == nil:
		err = text(ctx)
	case d.r.Mode != Record:
		err = waitForFile(ctx, filepath.Join(d.run.Cwd, filepath.FromSlash(st.WaitForFile.Path)))
	default:
		// Recording: the model's first text (a real model's stream, a
		// stand-in's hang) or the file (a command the script runs, as
		// in a subagent), whichever comes first.
		err = firstOf(ctx, text, func(ctx context.Context) error {
			return waitForFile(ctx, filepath.Join(d.run.Cwd, filepath.FromSlash(st.WaitForFile.Path)))
		})
	}
	if err != nil {
		return err
	}
	return c.Notify(ctx, "session/cancel", map[string]any{"sessionId": id})
}

// Cancel sends the session/cancel notification.
func (d *driver) Cancel(ctx context.Context, st scenario.Step) error {
	id, err := d.sessionID(st.Session)
	if err != nil {
		return err
	}
	return d.p.client.Notify(ctx, "session/cancel", map[string]any{"sessionId": id})
}

// WaitForTurnStart, WaitForTurnEnd, WaitForSubagentTurnEnd and WaitForFile
// read the session logs (logwait.go).

// sendPrompt sends session/prompt and waits for its answer.
func (d *driver) sendPrompt(ctx context.Context, st scenario.Step) (string, error) {
	id, err := d.sessionID(st.Session)
	if err != nil {
		return "", err
	}
	var resp struct {
		StopReason string `json:"stopReason"`
	}
	err = d.p.client.Call(ctx, "session/prompt", map[string]any{"sessionId": id, "prompt": st.Prompt()}, &resp)
	return resp.StopReason, err
}

// promptAsync sends session/prompt without waiting; waitForTurnEnd (or the
// end of the process) waits for it.
func (d *driver) promptAsync(st scenario.Step) {
	p := d.p
	p.pending.Add(1)
	go func() {
		defer p.pending.Done()
		ctx, cancel := context.WithTimeout(context.Background(), d.timeout())
		defer cancel()
		_, err := d.sendPrompt(ctx, st)
		if err != nil {
			p.pmu.Lock()
			p.perr = errors.Join(p.perr, err)
			p.pmu.Unlock()
		}
	}()
}

func (d *driver) waitPending(ctx context.Context) error {
	p := d.p
	done := make(chan struct{})
	go func() { p.pending.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("waiting for the turn to end: %w", ctx.Err())
	}
	p.pmu.Lock()
	defer p.pmu.Unlock()
	return p.perr
}

// firstOf runs the waits at once and returns when the first ends (its
// error), cancelling the others.
func firstOf(ctx context.Context, waits ...func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, len(waits))
	for _, w := range waits {
		go func() { done <- w(ctx) }()
	}
	return <-done
}

// RequestMatch reads a run's stderr (reel's text log lines) for the
// replay's request matching (agent/llm/replay, match.go): the mismatches,
// each naming the call, message, part and field, and the calls or fields it
// could not compare.
func RequestMatch(stderr []byte) (mismatches, unchecked []string) {
	for _, line := range strings.Split(string(stderr), "\n") {
		switch {
		case strings.Contains(line, `msg="replay: request mismatch"`):
			mismatches = append(mismatches, logAttr(line, "diff"))
		case strings.Contains(line, `msg="replay: request not compared"`):
			unchecked = append(unchecked, fmt.Sprintf("model request at %s of session %s not compared: %s", logAttr(line, "call"), logAttr(line, "session"), logAttr(line, "what")))
		}
	}
	return mismatches, unchecked
}

// logAttr is the value of key in a slog text line ("" when absent).
func logAttr(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		return ""
	}
	rest := line[i+len(key)+2:]
	if strings.HasPrefix(rest, `"`) {
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return rest
		}
		v, _ := strconv.Unquote(q)
		return v
	}
	v, _, _ := strings.Cut(rest, " ")
	return v
}

// ForkSession sends session/fork (unstable) for st.Session, anchored at
// the message id of its st.AtAnswer-th answer (atMessageId) or at seq
// st.AtSeq (atSeq), and records the new session as the next one.
func (d *driver) ForkSession(ctx context.Context, st scenario.Step) error {
	id, err := d.sessionID(st.Session)
	if err != nil {
		return err
	}
	params := map[string]any{"sessionId": id, "cwd": d.run.Cwd, "mcpServers": d.mcpServers}
	switch {
	case st.AtAnswer > 0:
		ids := answerIDs(d.p.client.Notifications(), id)
		if st.AtAnswer > len(ids) {
			return fmt.Errorf("fork at answer %d of session %d: this process has seen %d answer(s) of it", st.AtAnswer, st.Session, len(ids))
		}
		params["_meta"] = map[string]any{"reel": map[string]any{"atMessageId": ids[st.AtAnswer-1]}}
	case st.AtSeq > 0:
		params["_meta"] = map[string]any{"reel": map[string]any{"atSeq": st.AtSeq}}
	}
	var resp struct {
		SessionID string `json:"sessionId"`
	}
	if err := d.p.client.Call(ctx, "session/fork", params, &resp); err != nil {
		return err
	}
	if resp.SessionID == "" || slices.Contains(d.run.SessionIDs, resp.SessionID) {
		return fmt.Errorf("session/fork answered session id %q: not a new session", resp.SessionID)
	}
	d.run.SessionIDs = append(d.run.SessionIDs, resp.SessionID)
	return nil
}

// answerIDs are the distinct message ids of session's agent_message_chunk
// updates among notes, in order.
func answerIDs(notes []rpcclient.Notification, session string) []string {
	var ids []string
	for _, n := range notes {
		if n.SessionID != session || n.Update != "agent_message_chunk" {
			continue
		}
		var p struct {
			Update struct {
				MessageID string `json:"messageId"`
			} `json:"update"`
		}
		if json.Unmarshal(n.Params, &p) != nil || p.Update.MessageID == "" || slices.Contains(ids, p.Update.MessageID) {
			continue
		}
		ids = append(ids, p.Update.MessageID)
	}
	return ids
}
