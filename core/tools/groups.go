package tools

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// started holds the process groups of the commands [LocalShell] ran that
// may still have processes running: a command's background jobs (`cmd &`)
// stay in its group after the shell exits. [StopStarted] ends them when
// gopi exits. A group is forgotten once nothing in it runs, so an id the
// system hands out again later is never signalled.
var started = groupSet{ids: map[int]struct{}{}}

type groupSet struct {
	mu  sync.Mutex // guards ids
	ids map[int]struct{}
}

// add records the group led by pgid, first forgetting the groups that
// have ended since.
func (g *groupSet) add(pgid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	maps.DeleteFunc(g.ids, func(id int, _ struct{}) bool { return !groupAlive(id) })
	g.ids[pgid] = struct{}{}
}

// settle is called when the command that led pgid has exited: the group
// is forgotten unless something it started runs on.
func (g *groupSet) settle(pgid int) {
	if groupAlive(pgid) {
		return
	}
	g.mu.Lock()
	delete(g.ids, pgid)
	g.mu.Unlock()
}

// list returns the groups in the set.
func (g *groupSet) list() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Collect(maps.Keys(g.ids))
}

// forget removes the groups from the set.
func (g *groupSet) forget(ids []int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, id := range ids {
		delete(g.ids, id)
	}
}

// StopStarted ends every process still running in the group of a command
// gopi ran, background jobs included: SIGTERM first, then SIGKILL for what
// is still running after grace. gopi calls it as it exits, so that nothing
// it started outlives it. A process that put itself in a group of its own
// (setsid, nohup with job control) is not followed. The groups stay known
// until they are killed, so a second call with no grace (gopi told to exit
// at once while the first waits) kills them too.
func StopStarted(grace time.Duration) {
	ids := started.list()
	defer started.forget(ids)
	var live []int
	for _, id := range ids {
		if groupAlive(id) {
			signalGroup(id, false)
			live = append(live, id)
		}
	}
	deadline := time.Now().Add(grace)
	for len(live) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		live = slices.DeleteFunc(live, func(id int) bool { return !groupAlive(id) })
	}
	for _, id := range live {
		signalGroup(id, true)
	}
}
