package session

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/gopi-dev/gopi/core/llm"
)

// Options tunes a new session.
type Options struct {
	// ID is the session id; empty means a fresh UUIDv7.
	ID string
	// ParentSession is the file the session was forked from.
	ParentSession string
	// Path is the file to write instead of the generated
	// "<time>_<id>.jsonl" in the directory (pi's --session with a path
	// that does not exist yet).
	Path string
}

// Store is one session: its header, its entries in file order and the
// leaf. It is safe for concurrent use. Appends go to the file as they
// happen, except that a new session's file is only created when the first
// assistant message arrives (then everything so far is written). See
// write.go for how the file is written, by this process and others.
type Store struct {
	now func() time.Time // stubbed by tests

	mu        sync.Mutex // guards everything below
	header    Header
	headerRaw []byte // the header line as loaded; nil when gopi built it
	dir       string
	path      string // "" for an in-memory session
	// bound: the session has its file (it was loaded from it, or written
	// to it once), so entries are written as they come; before, they
	// wait for the first assistant message.
	bound bool
	// written counts the entries, from the first, that are in file.
	written int
	// file is the file the written entries are in, and size how long it
	// was after they were; file is nil when that is not known (nothing
	// written yet, or a write failed), so the next write reads the file
	// to see what it holds.
	file         os.FileInfo
	size         int64
	hasAssistant bool
	// name is the latest session_info entry's name (Name).
	name     string
	nodes    []node
	byID     map[string]int // entry id → index in nodes
	leaf     string         // "" = before the first entry
	labels   map[string]labelMark
	labelSeq int
}

// node is an entry and, when it came from a file, its line (re-emitted
// as is by rewrites and forks so fields gopi does not model survive).
type node struct {
	entry Entry
	raw   []byte
}

// labelMark is the label in effect for one target entry. seq orders marks
// the way a JavaScript Map orders keys (first insertion; a cleared label
// set again goes last), which decides the order forks rewrite them in.
type labelMark struct {
	label     string
	timestamp string
	seq       int
}

// Create starts a new session for cwd whose file will live in dir (see
// [DefaultDir]). Nothing is written until the first assistant message.
func Create(dir, cwd string, opts Options) (*Store, error) {
	if opts.ID != "" {
		if err := CheckID(opts.ID); err != nil {
			return nil, fmt.Errorf("create session: %w", err)
		}
	}
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSessionDir, err)
	}
	s := newStore(cwd, opts)
	s.dir = dir
	s.path = opts.Path
	if s.path == "" {
		s.path = filepath.Join(dir, fileName(s.header))
	} else if abs, err := filepath.Abs(s.path); err == nil {
		s.path = abs
	}
	return s, nil
}

// InMemory starts a session that is never written (--no-session).
func InMemory(cwd string) *Store {
	return newStore(cwd, Options{})
}

// InMemoryWithID is [InMemory] with the session id chosen (pi's
// --no-session --session-id).
func InMemoryWithID(cwd, id string) (*Store, error) {
	if err := CheckID(id); err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	return newStore(cwd, Options{ID: id}), nil
}

func newStore(cwd string, opts Options) *Store {
	s := &Store{now: time.Now}
	id := opts.ID
	if id == "" {
		id = newSessionID()
	}
	s.header = Header{
		Version:       CurrentVersion,
		ID:            id,
		Timestamp:     FormatTime(s.now()),
		Cwd:           cwd,
		ParentSession: opts.ParentSession,
	}
	s.reset()
	return s
}

func (s *Store) reset() {
	s.nodes = nil
	s.byID = map[string]int{}
	s.labels = map[string]labelMark{}
	s.labelSeq = 0
	s.leaf = ""
	s.hasAssistant = false
	s.name = ""
}

// fileName is pi's "<ISO time with : and . as ->_<id>.jsonl".
func fileName(h Header) string {
	ts := strings.NewReplacer(":", "-", ".", "-").Replace(h.Timestamp)
	return ts + "_" + h.ID + ".jsonl"
}

func newSessionID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

// newEntryID returns 8 random hex digits that taken does not report,
// falling back to a whole UUID after 100 collisions, as pi does.
func newEntryID(taken func(string) bool) string {
	var b [4]byte
	for range 100 {
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		if !taken(id) {
			return id
		}
	}
	return uuid.NewString()
}

// push adds an entry at the end of the file order and makes it the leaf.
func (s *Store) push(n node) {
	m := n.entry.Base()
	s.byID[m.ID] = len(s.nodes)
	s.nodes = append(s.nodes, n)
	s.leaf = m.ID
	switch e := n.entry.(type) {
	case *MessageEntry:
		if e.Role() == llm.RoleAssistant {
			s.hasAssistant = true
		}
	case *SessionInfoEntry:
		s.name = strings.TrimSpace(e.Name)
	case *LabelEntry:
		if e.Label == "" {
			delete(s.labels, e.TargetID)
		} else if old, ok := s.labels[e.TargetID]; ok {
			s.labels[e.TargetID] = labelMark{e.Label, e.Timestamp, old.seq}
		} else {
			s.labelSeq++
			s.labels[e.TargetID] = labelMark{e.Label, e.Timestamp, s.labelSeq}
		}
	}
}

func (s *Store) taken(id string) bool {
	_, ok := s.byID[id]
	return ok
}

// add builds an entry under the leaf, appends it and persists it.
func (s *Store) add(build func(Meta) Entry) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addLocked(s.leaf, build)
}

func (s *Store) addLocked(parent string, build func(Meta) Entry) (string, error) {
	m := Meta{ID: newEntryID(s.taken), ParentID: parent, Timestamp: FormatTime(s.now())}
	n := node{entry: build(m)}
	s.push(n)
	return m.ID, s.persist()
}

// rawJSON marshals an optional extension payload; nil stays absent.
func rawJSON(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	if r, ok := v.(json.RawMessage); ok {
		return r, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode details: %w", err)
	}
	return b, nil
}

// AppendMessage appends a user, assistant, tool result, bash execution or
// custom message. Summaries are rejected with [ErrSummaryMessage]: use
// [Store.AppendCompaction] and [Store.AppendBranchSummary].
func (s *Store) AppendMessage(msg llm.Message) (string, error) {
	switch msg.(type) {
	case nil:
		return "", fmt.Errorf("append message: %w", errNilMessage)
	case *llm.CompactionSummaryMessage, *llm.BranchSummaryMessage:
		return "", fmt.Errorf("append %s message: %w", msg.MessageRole(), ErrSummaryMessage)
	}
	return s.add(func(m Meta) Entry { return NewMessageEntry(m, msg) })
}

// AppendModelChange records that the conversation continues on another model.
func (s *Store) AppendModelChange(provider, modelID string) (string, error) {
	return s.add(func(m Meta) Entry { return &ModelChangeEntry{Meta: m, Provider: provider, ModelID: modelID} })
}

// AppendThinkingLevelChange records a new thinking level.
func (s *Store) AppendThinkingLevelChange(level llm.ThinkingLevel) (string, error) {
	return s.add(func(m Meta) Entry { return &ThinkingLevelChangeEntry{Meta: m, ThinkingLevel: level} })
}

// AppendCompaction records a compaction: the context becomes summary, then
// the entries from firstKeptEntryID on. details (any JSON value, or nil)
// is kept for the compactor and extensions; usage (nil: none recorded) is
// what writing the summary cost, counted in the session's totals.
func (s *Store) AppendCompaction(summary, firstKeptEntryID string, tokensBefore int, details any, fromHook bool, usage *llm.Usage) (string, error) {
	d, err := rawJSON(details)
	if err != nil {
		return "", fmt.Errorf("append compaction: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var checkpoint *llm.SystemMessage
	if st, ok := SystemStateOf(s.pathTo(s.leaf)); ok {
		checkpoint = st.Checkpoint(s.now().UnixMilli())
	}
	return s.addLocked(s.leaf, func(m Meta) Entry {
		return &CompactionEntry{Meta: m, Summary: summary, FirstKeptEntryID: firstKeptEntryID,
			TokensBefore: tokensBefore, Details: d, FromHook: &fromHook, SystemMessage: checkpoint, Usage: usage}
	})
}

// AppendBranchSummary moves the leaf to fromID ("" for before the first
// entry) and appends there a summary of the branch being left, as pi's
// branchWithSummary does; usage as for AppendCompaction.
func (s *Store) AppendBranchSummary(fromID, summary string, details any, fromHook bool, usage *llm.Usage) (string, error) {
	d, err := rawJSON(details)
	if err != nil {
		return "", fmt.Errorf("append branch summary: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if fromID != "" && !s.taken(fromID) {
		return "", fmt.Errorf("branch from %s: %w", fromID, ErrEntryNotFound)
	}
	s.leaf = fromID
	from := fromID
	if from == "" {
		from = "root"
	}
	return s.addLocked(fromID, func(m Meta) Entry {
		return &BranchSummaryEntry{Meta: m, FromID: from, Summary: summary, Details: d, FromHook: &fromHook, Usage: usage}
	})
}

// AppendCustom stores extension state (never sent to a model).
func (s *Store) AppendCustom(customType string, data any) (string, error) {
	d, err := rawJSON(data)
	if err != nil {
		return "", fmt.Errorf("append custom entry: %w", err)
	}
	return s.add(func(m Meta) Entry { return &CustomEntry{Meta: m, CustomType: customType, Data: d} })
}

// AppendCustomMessage stores an extension message that joins the context.
func (s *Store) AppendCustomMessage(customType string, content llm.Contents, display bool, details any) (string, error) {
	d, err := rawJSON(details)
	if err != nil {
		return "", fmt.Errorf("append custom message: %w", err)
	}
	if content == nil {
		content = llm.Contents{}
	}
	return s.add(func(m Meta) Entry {
		return &CustomMessageEntry{Meta: m, CustomType: customType, Content: content, Display: display, Details: d}
	})
}

// AppendContextEdit records that targetID's content in the model context
// is replaced by replacement (or, when it is nil, left out), as pi's
// appendContextEdit does: the target must be on the active branch and a
// user, assistant or tool-result message or a custom message; a string
// replacement becomes one text block for an assistant or tool result.
func (s *Store) AppendContextEdit(targetID string, replacement *ContextReplacement) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep, err := checkContextEdit(s.pathTo(s.leaf), targetID, replacement)
	if err != nil {
		return "", err
	}
	return s.addLocked(s.leaf, func(m Meta) Entry {
		return &ContextEditEntry{Meta: m, TargetID: targetID, Replacement: rep}
	})
}

// NewContextReplacement reads a context edit's replacement as pi writes
// it: null (nil, the target is left out) or an object whose "content" is
// a string or an array.
func NewContextReplacement(raw json.RawMessage) (*ContextReplacement, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var r ContextReplacement
	if json.Unmarshal(raw, &r) != nil || len(r.Content) == 0 || (r.Content[0] != '"' && r.Content[0] != '[') {
		return nil, ErrBadReplacement
	}
	return &r, nil
}

// checkContextEdit checks a context edit of targetID on path and returns
// its replacement as it is stored.
func checkContextEdit(path []Entry, targetID string, rep *ContextReplacement) (*ContextReplacement, error) {
	var target Entry
	for _, e := range path {
		if e.Base().ID == targetID {
			target = e
		}
	}
	if target == nil {
		return nil, fmt.Errorf("entry %s %w", targetID, ErrOffBranch)
	}
	role := llm.RoleCustom
	switch t := target.(type) {
	case *CustomMessageEntry:
	case *MessageEntry:
		role = t.Role()
		if role != llm.RoleUser && role != llm.RoleAssistant && role != llm.RoleToolResult {
			return nil, fmt.Errorf("entry %s %w", targetID, ErrNotEditable)
		}
	default:
		return nil, fmt.Errorf("entry %s %w", targetID, ErrNotEditable)
	}
	if rep != nil && rep.Content[0] == '"' && (role == llm.RoleAssistant || role == llm.RoleToolResult) {
		var text string
		if err := json.Unmarshal(rep.Content, &text); err != nil {
			return nil, err
		}
		b, err := json.Marshal(llm.Contents{llm.TextContent{Text: text}})
		if err != nil {
			return nil, err
		}
		rep = &ContextReplacement{Content: b}
	}
	return rep, nil
}

// PreviewContext is the context at the leaf with entries (custom,
// custom_message, context_edit or compaction entries) added after it, as
// if appended (nothing is): a context edit among them is checked as
// [Store.AppendContextEdit] checks it. The entries' ids and parents are
// filled in, and a context edit's replacement is the one it would store.
// The projection says which entries the context is built from, and what
// each gives it.
func (s *Store) PreviewContext(entries []Entry) (Context, []ProjectedEntry, error) {
	s.mu.Lock()
	path, parent := s.pathTo(s.leaf), s.leaf
	s.mu.Unlock()
	for i, e := range entries {
		m := Meta{ID: fmt.Sprintf("preview-%d", i), ParentID: parent, Timestamp: FormatTime(s.now())}
		switch e := e.(type) {
		case *CustomEntry:
			e.Meta = m
		case *CustomMessageEntry:
			e.Meta = m
		case *ContextEditEntry:
			rep, err := checkContextEdit(path, e.TargetID, e.Replacement)
			if err != nil {
				return Context{}, nil, err
			}
			e.Meta, e.Replacement = m, rep
		case *CompactionEntry:
			e.Meta = m
		default:
			return Context{}, nil, fmt.Errorf("a %s entry %w", e.Type(), ErrNotPreviewable)
		}
		path = append(path, e)
		parent = m.ID
	}
	return BuildContext(path), Projection(path), nil
}

// AppendLabel sets a label on targetID, or clears it when label is empty.
func (s *Store) AppendLabel(targetID, label string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.taken(targetID) {
		return "", fmt.Errorf("label %s: %w", targetID, ErrEntryNotFound)
	}
	return s.addLocked(s.leaf, func(m Meta) Entry { return &LabelEntry{Meta: m, TargetID: targetID, Label: label} })
}

// AppendSessionInfo sets the session's display name (on one line:
// line breaks become spaces; trimmed; empty clears it).
func (s *Store) AppendSessionInfo(name string) (string, error) {
	name = strings.TrimSpace(lineBreaks().ReplaceAllString(name, " "))
	return s.add(func(m Meta) Entry { return &SessionInfoEntry{Meta: m, Name: name} })
}

// lineBreaks are the runs of CR and LF a session name may not hold.
var lineBreaks = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[\r\n]+`) })

// Leaf is the id of the entry the next append follows; "" before the
// first entry.
func (s *Store) Leaf() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leaf
}

// SetLeaf moves the leaf to id, or before the first entry when id is "".
// The next append starts a branch there; nothing is rewritten.
func (s *Store) SetLeaf(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id != "" && !s.taken(id) {
		return fmt.Errorf("set leaf %s: %w", id, ErrEntryNotFound)
	}
	s.leaf = id
	return nil
}

// Branch moves the leaf to an existing entry (pi's branch).
func (s *Store) Branch(fromID string) error {
	if fromID == "" {
		return fmt.Errorf("branch: %w", ErrEntryNotFound)
	}
	return s.SetLeaf(fromID)
}

// Entry looks an entry up by id.
func (s *Store) Entry(id string) (Entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.byID[id]
	if !ok {
		return nil, false
	}
	return s.nodes[i].entry, true
}

// Entries returns every entry in file order (the header excluded).
func (s *Store) Entries() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Entry, len(s.nodes))
	for i, n := range s.nodes {
		out[i] = n.entry
	}
	return out
}

// Len is the number of entries, on every branch.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.nodes)
}

// EntriesSince returns the entries appended after the entry with id
// since, in file order: entry ids are a cursor a client can keep across
// restarts (get_entries). An id the session does not have is an error
// wrapping ErrEntryNotFound.
func (s *Store) EntriesSince(since string) ([]Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.byID[since]
	if !ok {
		return nil, fmt.Errorf("entry %q: %w", since, ErrEntryNotFound)
	}
	out := make([]Entry, 0, len(s.nodes)-i-1)
	for _, n := range s.nodes[i+1:] {
		out = append(out, n.entry)
	}
	return out, nil
}

// Path returns the entries from the root to the leaf.
func (s *Store) Path() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pathTo(s.leaf)
}

// PathTo returns the entries from the root to id (nil if id is unknown).
func (s *Store) PathTo(id string) []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pathTo(id)
}

// pathTo walks parent links up from id. A parent that is missing ends the
// walk (the entry acts as a root), and so does a parent already on the
// path: a damaged file whose parentId chain loops yields each entry once.
func (s *Store) pathTo(id string) []Entry {
	var path []Entry
	// A parent cycle (a hand-edited file) ends the walk; entries are
	// marked by index, which costs a bit each rather than a map.
	seen := make([]uint64, (len(s.nodes)+63)/64)
	for cur := id; cur != ""; {
		i, ok := s.byID[cur]
		if !ok || seen[i/64]&(1<<(i%64)) != 0 {
			break
		}
		seen[i/64] |= 1 << (i % 64)
		e := s.nodes[i].entry
		path = append(path, e)
		cur = e.Base().ParentID
	}
	slices.Reverse(path)
	return path
}

// Children returns the entries whose parent is id, in file order.
func (s *Store) Children(id string) []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Entry
	for _, n := range s.nodes {
		if n.entry.Base().ParentID == id {
			out = append(out, n.entry)
		}
	}
	return out
}

// Header returns the session header.
func (s *Store) Header() Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.header
}

// ID is the session id.
func (s *Store) ID() string { return s.Header().ID }

// Cwd is the working directory the session belongs to.
func (s *Store) Cwd() string { return s.Header().Cwd }

// File is the session file's path ("" for an in-memory session). The file
// may not exist yet: see [Create].
func (s *Store) File() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.path
}

// Dir is the directory new sessions (forks, /new) go to; "" in memory.
func (s *Store) Dir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dir
}

// Persisted reports whether the session is backed by a file.
func (s *Store) Persisted() bool { return s.File() != "" }

// Name is the latest session_info name, trimmed; "" when unset or cleared.
func (s *Store) Name() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.name
}

// Label is the label currently set on id, if any.
func (s *Store) Label(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.labels[id].label
}

// ForkPoint is a user message a conversation can be forked before.
type ForkPoint struct {
	EntryID string `json:"entryId"`
	Text    string `json:"text"`
}

// ForkPoints lists the user messages with text, in file order (the
// get_fork_messages answer).
func (s *Store) ForkPoints() []ForkPoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []ForkPoint{}
	for _, n := range s.nodes {
		e, ok := n.entry.(*MessageEntry)
		if !ok || e.Role() != llm.RoleUser {
			continue
		}
		u, ok := e.Message().(*llm.UserMessage)
		if !ok {
			continue
		}
		if text := u.Content.Text(); text != "" {
			out = append(out, ForkPoint{EntryID: e.ID, Text: text})
		}
	}
	return out
}

// TreeNode is one entry of [Store.Tree] with its children, oldest first.
// Its JSON is get_tree's node: {entry, children, label?, labelTimestamp?}.
type TreeNode struct {
	Entry          Entry       `json:"entry"`
	Children       []*TreeNode `json:"children"`
	Label          string      `json:"label,omitempty"`
	LabelTimestamp string      `json:"labelTimestamp,omitempty"`
}

// Tree returns the session as a forest: normally one root, plus any entry
// whose parent is missing.
func (s *Store) Tree() []*TreeNode {
	s.mu.Lock()
	defer s.mu.Unlock()
	nodes := make(map[string]*TreeNode, len(s.nodes))
	for _, n := range s.nodes {
		m := n.entry.Base()
		mark := s.labels[m.ID]
		tn := &TreeNode{Entry: n.entry, Children: []*TreeNode{}, Label: mark.label}
		if mark.label != "" {
			tn.LabelTimestamp = mark.timestamp
		}
		nodes[m.ID] = tn
	}
	var roots []*TreeNode
	for _, n := range s.nodes {
		m := n.entry.Base()
		tn := nodes[m.ID]
		if p, ok := nodes[m.ParentID]; ok && m.ParentID != m.ID {
			p.Children = append(p.Children, tn)
		} else {
			roots = append(roots, tn)
		}
	}
	// Entries on a parentId loop hang off each other and no root reaches
	// them; the first of each loop (in file order) becomes a root.
	reached := map[*TreeNode]bool{}
	var mark func(*TreeNode)
	mark = func(tn *TreeNode) {
		if reached[tn] {
			return
		}
		reached[tn] = true
		for _, c := range tn.Children {
			mark(c)
		}
	}
	for _, r := range roots {
		mark(r)
	}
	for _, n := range s.nodes {
		m := n.entry.Base()
		tn := nodes[m.ID]
		if reached[tn] {
			continue
		}
		if p, ok := nodes[m.ParentID]; ok {
			p.Children = slices.DeleteFunc(p.Children, func(c *TreeNode) bool { return c == tn })
		}
		roots = append(roots, tn)
		mark(tn)
	}
	for _, tn := range nodes {
		slices.SortStableFunc(tn.Children, func(a, b *TreeNode) int {
			return cmp.Compare(a.Entry.Base().Millis(), b.Entry.Base().Millis())
		})
	}
	return roots
}

func lineOf(n node) ([]byte, error) {
	if n.raw != nil {
		return n.raw, nil
	}
	return json.Marshal(n.entry)
}
