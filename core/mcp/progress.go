package mcp

// This file owns the progress tokens of calls under way: a progress
// notification that names one calls its call's func.

import (
	"fmt"
)

// watchProgress gives a call its progress token: each progress
// notification that names it calls f.
func (m *Manager) watchProgress(f func()) string {
	m.progressMu.Lock()
	defer m.progressMu.Unlock()
	m.lastToken++
	token := fmt.Sprintf("gopi-%d", m.lastToken)
	if m.progress == nil {
		m.progress = map[string]func(){}
	}
	m.progress[token] = f
	return token
}

func (m *Manager) unwatchProgress(token string) {
	m.progressMu.Lock()
	defer m.progressMu.Unlock()
	delete(m.progress, token)
}

// progressed is a progress notification's arrival.
func (m *Manager) progressed(token any) {
	t, ok := token.(string)
	if !ok {
		return
	}
	m.progressMu.Lock()
	f := m.progress[t]
	m.progressMu.Unlock()
	if f != nil {
		f()
	}
}
