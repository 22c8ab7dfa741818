package ext

// This file owns what follows a host process's end: telling a crash from
// a stop, restarting it (at most maxRestarts within restartWindow) and
// reporting it to the peer, and holding calls until the new one is up.

import (
	"context"
	"fmt"
	"time"
)

// markExited notes that p has ended. Unless gopi stopped it, it crashed:
// p stops being the current process and, up to maxRestarts a minute, a
// restart is announced (the returned channel, closed when it is done), so
// that calls wait for it. crashed reports whether p crashed.
func (n *NodeHost) markExited(p *hostProc) (restarted chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed || n.proc != p {
		return nil
	}
	n.proc = nil
	now := time.Now()
	recent := n.restarts[:0]
	for _, t := range n.restarts {
		if now.Sub(t) < restartWindow {
			recent = append(recent, t)
		}
	}
	n.restarts = append(recent, now)
	p.crashed = true
	if len(n.restarts) <= maxRestarts {
		n.restarting = make(chan struct{})
		return n.restarting
	}
	return nil
}

// exited reports a crashed host and starts it again when markExited
// said so.
func (n *NodeHost) exited(p *hostProc, restarted chan struct{}) {
	if !p.crashed {
		return
	}
	again := restarted != nil
	if again {
		defer func() {
			n.mu.Lock()
			n.restarting = nil
			n.mu.Unlock()
			close(restarted)
		}()
	}
	n.mu.Lock()
	peer := n.peer
	n.mu.Unlock()
	how := "exited"
	if p.err != nil {
		how = p.err.Error()
	}
	msg := fmt.Sprintf("the extension host stopped (%s)%s", how, tailNote(p.stderrTail))
	if again {
		msg += "; restarting it"
	} else {
		msg += "; it crashed too often, so extensions stay off"
	}
	peer.Notification(PeerError, mustJSON(ErrorEvent{ExtensionPath: "<extension host>", Event: "host_exit", Error: msg}))
	if !again {
		peer.Notification(PeerStopped, nil)
		return
	}
	if _, err := n.spawn(context.Background()); err != nil {
		peer.Notification(PeerError, mustJSON(ErrorEvent{ExtensionPath: "<extension host>", Event: "host_restart", Error: err.Error()}))
		return
	}
	peer.Notification(PeerRestarted, nil)
}

// current is the running host process; during a restart it waits for
// the new one.
func (n *NodeHost) current(ctx context.Context) (*hostProc, error) {
	for {
		n.mu.Lock()
		restarting, p, closed := n.restarting, n.proc, n.closed
		n.mu.Unlock()
		switch {
		case closed:
			return nil, ErrStopped
		case restarting != nil:
			select {
			case <-restarting:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case p == nil:
			return nil, errNotRunning
		default:
			select {
			case <-p.conn.Done():
				// It is going: wait until its end is known.
				select {
				case <-p.exited:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			default:
				return p, nil
			}
		}
	}
}
