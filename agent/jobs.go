package agent

import (
	"sync"

	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
)

// jobs holds the background processes of one session (bash
// run_in_background), each with the sandbox mode it was started under, so
// that none outlives its limits: the session's close and the agent's exit
// stop them all, and narrowing the session's mode stops those started
// under a wider one (a once-approved danger-full-access job does not keep
// running after the editor switched to read-only). It is safe for
// concurrent use.
type jobs struct {
	mu   sync.Mutex
	next int
	live map[int]job
}

// job is one running background process tree.
type job struct {
	mode sandbox.Mode
	stop func()
}

// owner returns the tools.ProcessOwner that registers jobs started under
// mode.
func (j *jobs) owner(mode sandbox.Mode) tools.ProcessOwner { return jobOwner{j, mode} }

// jobOwner is a session's job set seen from calls under one mode.
type jobOwner struct {
	j    *jobs
	mode sandbox.Mode
}

// Own implements tools.ProcessOwner.
func (o jobOwner) Own(stop func()) (release func()) {
	j := o.j
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.live == nil {
		j.live = map[int]job{}
	}
	j.next++
	id := j.next
	j.live[id] = job{mode: o.mode, stop: stop}
	return func() {
		j.mu.Lock()
		delete(j.live, id)
		j.mu.Unlock()
	}
}

// stopWhere stops (and forgets) every job whose mode matches, waiting for
// each tree to end, and returns how many it stopped.
func (j *jobs) stopWhere(match func(mode sandbox.Mode) bool) int {
	j.mu.Lock()
	var stops []func()
	for id, jb := range j.live {
		if match(jb.mode) {
			stops = append(stops, jb.stop)
			delete(j.live, id)
		}
	}
	j.mu.Unlock()
	var wg sync.WaitGroup
	for _, stop := range stops {
		wg.Go(stop)
	}
	wg.Wait()
	return len(stops)
}

// stopAll stops every job.
func (j *jobs) stopAll() int { return j.stopWhere(func(sandbox.Mode) bool { return true }) }

// stopWiderThan stops the jobs started under a mode wider than mode.
func (j *jobs) stopWiderThan(mode sandbox.Mode) int {
	return j.stopWhere(func(m sandbox.Mode) bool { return m.Wider(mode) })
}
