package session

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/gopi-dev/gopi/core/llm"
)

// Branched returns a new session holding only the path from the root to
// leafID, with the labels set on those entries re-applied at its end (pi's
// createBranchedSession). Its header names this session's file as parent.
// A persisted store's copy goes to the same directory and is written at
// once if the path holds an assistant message, lazily otherwise; an
// in-memory store's copy stays in memory. The receiver is not changed.
func (s *Store) Branched(leafID string) (*Store, error) {
	s.mu.Lock()
	path := s.pathTo(leafID)
	if len(path) == 0 {
		s.mu.Unlock()
		return nil, fmt.Errorf("branch to %s: %w", leafID, ErrEntryNotFound)
	}
	n := newStore(s.header.Cwd, Options{ParentSession: s.path})
	n.now = s.now
	n.dir = s.dir
	if s.path != "" {
		n.path = filepath.Join(s.dir, fileName(n.header))
	}
	onPath := make(map[string]bool, len(path))
	for _, e := range path {
		if e.Type() == EntryLabel {
			continue
		}
		id := e.Base().ID
		onPath[id] = true
		nd := s.nodes[s.byID[id]]
		if e.Base().ParentID != n.leaf {
			// Its parent was a label entry, which is not copied: hang it
			// under the entry before. (pi 0.73.1 keeps the dangling
			// parentId, which cuts the copied conversation short.)
			var err error
			if nd, err = reparent(nd, n.leaf); err != nil {
				s.mu.Unlock()
				return nil, fmt.Errorf("branch to %s: %w", leafID, err)
			}
		}
		n.push(nd)
	}
	type mark struct {
		target string
		labelMark
	}
	var marks []mark
	for target, m := range s.labels {
		if onPath[target] {
			marks = append(marks, mark{target, m})
		}
	}
	s.mu.Unlock()

	slices.SortFunc(marks, func(a, b mark) int { return cmp.Compare(a.seq, b.seq) })
	for _, m := range marks {
		meta := Meta{ID: newEntryID(n.taken), ParentID: n.leaf, Timestamp: m.timestamp}
		n.push(node{entry: &LabelEntry{Meta: meta, TargetID: m.target, Label: m.label}})
	}
	if n.path != "" && n.hasAssistant {
		if err := n.sync(); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// Fork starts a new session from the conversation before the user message
// entryID (the RPC fork command) and returns it with that message's text,
// for the user to edit and resend. Forking before the first message gives
// an empty session whose header names this one as parent.
func (s *Store) Fork(entryID string) (*Store, string, error) {
	e, ok := s.Entry(entryID)
	if !ok {
		return nil, "", fmt.Errorf("fork %s: %w", entryID, ErrEntryNotFound)
	}
	me, ok := e.(*MessageEntry)
	var user *llm.UserMessage
	if ok {
		user, ok = me.Message().(*llm.UserMessage)
	}
	if !ok {
		return nil, "", fmt.Errorf("fork %s: not a user message: %w", entryID, ErrNotForkable)
	}
	text := user.Content.Text()
	if me.ParentID == "" {
		s.mu.Lock()
		n := newStore(s.header.Cwd, Options{ParentSession: s.path})
		n.now, n.dir = s.now, s.dir
		if s.path != "" {
			n.path = filepath.Join(s.dir, fileName(n.header))
		}
		s.mu.Unlock()
		return n, text, nil
	}
	n, err := s.Branched(me.ParentID)
	if err != nil {
		return nil, "", err
	}
	return n, text, nil
}

// Clone copies the active branch (root to leaf) into a new session (the
// RPC clone command).
func (s *Store) Clone() (*Store, error) {
	leaf := s.Leaf()
	if leaf == "" {
		return nil, fmt.Errorf("clone: no current entry: %w", ErrNotForkable)
	}
	return s.Branched(leaf)
}

// ForkFile forks the session file at path before the user message entryID
// (see [Store.Fork]) without modifying that file.
func ForkFile(path, entryID string) (*Store, string, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	src, _, err := load(path)
	if err != nil {
		return nil, "", err
	}
	return src.Fork(entryID)
}

// ForkFrom copies every entry of the session file at sourcePath into a new
// session of targetCwd in dir, written at once, whose header names the
// source as parent (pi's --fork). opts.ID chooses the new session's id;
// opts.ParentSession and opts.Path are not used.
func ForkFrom(sourcePath, targetCwd, dir string, opts Options) (*Store, error) {
	if opts.ID != "" {
		if err := CheckID(opts.ID); err != nil {
			return nil, fmt.Errorf("fork: %w", err)
		}
	}
	if abs, err := filepath.Abs(sourcePath); err == nil {
		sourcePath = abs
	}
	src, rep, err := load(sourcePath)
	if err != nil {
		return nil, fmt.Errorf("fork: %w", err)
	}
	if rep.Fresh {
		return nil, fmt.Errorf("fork: %s is empty or invalid: %w", sourcePath, ErrNotSession)
	}
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return nil, fmt.Errorf("fork: %w", err)
	}
	n := newStore(targetCwd, Options{ID: opts.ID, ParentSession: sourcePath})
	n.dir = dir
	n.path = filepath.Join(dir, fileName(n.header))
	for _, sn := range src.nodes {
		n.push(sn)
	}
	if err := n.sync(); err != nil {
		return nil, fmt.Errorf("fork: %w", err)
	}
	return n, nil
}

// reparent returns a copy of n whose parentId is parent, keeping every
// other field of its line.
func reparent(n node, parent string) (node, error) {
	line, err := lineOf(n)
	if err != nil {
		return node{}, err
	}
	o, err := parseObject(line)
	if err != nil {
		return node{}, err
	}
	if parent == "" {
		o.set("parentId", nil)
	} else {
		o.set("parentId", parent)
	}
	raw, err := o.MarshalJSON()
	if err != nil {
		return node{}, err
	}
	head, err := decodeHead(raw)
	if err != nil {
		return node{}, err
	}
	e, _ := decodeEntry(raw, head) // it decoded before; an undecodable one stays unknown
	return node{entry: e, raw: raw}, nil
}
