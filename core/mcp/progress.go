package mcp

// This file owns the progress tokens of calls under way: a progress
// notification that names one calls its call's func.

import (
	"fmt"
	"sync"
)

// progressTokens are the tokens of the calls under way that watch for
// progress; the manager holds one set for all its servers.
type progressTokens struct {
	mu    sync.Mutex // guards the two fields below
	funcs map[string]func()
	last  int
}

// watch gives a call its progress token: each progress notification that
// names it calls f.
func (p *progressTokens) watch(f func()) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last++
	token := fmt.Sprintf("gopi-%d", p.last)
	if p.funcs == nil {
		p.funcs = map[string]func(){}
	}
	p.funcs[token] = f
	return token
}

func (p *progressTokens) unwatch(token string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.funcs, token)
}

// progressed is a progress notification's arrival.
func (p *progressTokens) progressed(token any) {
	t, ok := token.(string)
	if !ok {
		return
	}
	p.mu.Lock()
	f := p.funcs[t]
	p.mu.Unlock()
	if f != nil {
		f()
	}
}
