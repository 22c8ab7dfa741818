package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gopi-dev/gopi/core/llm"
)

// CurrentVersion is the session format version gopi writes.
const CurrentVersion = 3

// EntryType is the wire name of a line's "type" field.
type EntryType string

const (
	EntrySession             EntryType = "session"
	EntryMessage             EntryType = "message"
	EntryModelChange         EntryType = "model_change"
	EntryThinkingLevelChange EntryType = "thinking_level_change"
	EntryCompaction          EntryType = "compaction"
	EntryBranchSummary       EntryType = "branch_summary"
	EntryCustom              EntryType = "custom"
	EntryCustomMessage       EntryType = "custom_message"
	EntryLabel               EntryType = "label"
	EntrySessionInfo         EntryType = "session_info"
	EntryContextEdit         EntryType = "context_edit"
	EntryUsage               EntryType = "usage"
)

// timeLayout is JavaScript's Date.toISOString: UTC, milliseconds, "Z".
const timeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t the way pi stamps entries and headers.
func FormatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// parseTimeMillis reads an ISO timestamp as Unix milliseconds (0 when it
// does not parse).
func parseTimeMillis(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// Header is the first line of a session file.
type Header struct {
	// Version is 3 for files gopi writes; 0 means a version-1 file
	// (which had no version field).
	Version   int    `json:"version,omitempty"`
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Cwd       string `json:"cwd"`
	// ParentSession is the file this session was forked from.
	ParentSession string `json:"parentSession,omitempty"`
}

func (h Header) MarshalJSON() ([]byte, error) {
	type alias Header
	return json.Marshal(struct {
		Type EntryType `json:"type"`
		alias
	}{EntrySession, alias(h)})
}

// Entry is one line of a session after the header. The concrete types are
// the pointer types below; a type gopi does not know is an [*UnknownEntry].
// Entries are immutable once appended or loaded.
type Entry interface {
	Type() EntryType
	// Base returns the fields every entry has.
	Base() Meta
}

// Meta holds the fields every entry has.
type Meta struct {
	ID string `json:"-"`
	// ParentID is the entry this one follows; "" for a root (null on the
	// wire).
	ParentID string `json:"-"`
	// Timestamp is the ISO time the entry was written.
	Timestamp string `json:"-"`
}

// Base returns m; embedding Meta gives every entry the method.
func (m Meta) Base() Meta { return m }

// Millis is the entry's timestamp in Unix milliseconds.
func (m Meta) Millis() int64 { return parseTimeMillis(m.Timestamp) }

// wireMeta is Meta as it appears in JSON.
type wireMeta struct {
	ID        string  `json:"id"`
	ParentID  *string `json:"parentId"`
	Timestamp string  `json:"timestamp"`
}

func (m Meta) wire() wireMeta {
	w := wireMeta{ID: m.ID, Timestamp: m.Timestamp}
	if m.ParentID != "" {
		p := m.ParentID
		w.ParentID = &p
	}
	return w
}

func (w wireMeta) meta() Meta {
	m := Meta{ID: w.ID, Timestamp: w.Timestamp}
	if w.ParentID != nil {
		m.ParentID = *w.ParentID
	}
	return m
}

// MessageEntry holds one conversation message. A message read from a
// file is decoded on its first use (opening a long session decodes what
// its context needs, not every branch and compacted turn); its role is
// known without that.
type MessageEntry struct {
	Meta
	role llm.Role
	once sync.Once
	raw  json.RawMessage // the message as read, until once has run
	msg  llm.Message
}

// NewMessageEntry returns an entry holding m.
func NewMessageEntry(meta Meta, m llm.Message) *MessageEntry {
	e := &MessageEntry{Meta: meta, msg: m}
	if m != nil {
		e.role = m.MessageRole()
	}
	e.once.Do(func() {})
	return e
}

// lazyMessageEntry returns an entry whose message is decoded from raw
// (valid JSON, a message of role) on first use.
func lazyMessageEntry(meta Meta, role llm.Role, raw json.RawMessage) *MessageEntry {
	return &MessageEntry{Meta: meta, role: role, raw: raw}
}

// Message returns the entry's message, decoding it on first use. A message
// that does not decode then is kept as written, as an [*llm.UnknownMessage]
// (which takes no part in the model context).
func (e *MessageEntry) Message() llm.Message {
	_ = e.decodeNow()
	return e.msg
}

// Role is the message's role, known without decoding it.
func (e *MessageEntry) Role() llm.Role { return e.role }

// decodeNow decodes the message unless that was done, and says why it did
// not decode (nil when it was decoded before).
func (e *MessageEntry) decodeNow() (err error) {
	e.once.Do(func() {
		m, derr := llm.UnmarshalMessage(e.raw)
		if derr != nil {
			m, err = &llm.UnknownMessage{Role: e.role, Raw: e.raw}, derr
		}
		e.msg, e.raw = m, nil
	})
	return err
}

// ThinkingLevelChangeEntry records a switch of thinking level.
type ThinkingLevelChangeEntry struct {
	Meta
	ThinkingLevel llm.ThinkingLevel `json:"thinkingLevel"`
}

// ModelChangeEntry records a switch of model.
type ModelChangeEntry struct {
	Meta
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
}

// CompactionEntry replaces the conversation before FirstKeptEntryID with a
// summary.
type CompactionEntry struct {
	Meta
	Summary          string `json:"summary"`
	FirstKeptEntryID string `json:"firstKeptEntryId"`
	TokensBefore     int    `json:"tokensBefore"`
	// Details is extension- or compactor-specific data, never sent to a
	// model.
	Details json.RawMessage `json:"details,omitempty"`
	// FromHook is true when an extension produced the summary; nil when
	// the writer left it out.
	FromHook *bool `json:"fromHook,omitempty"`
	// SystemMessage is the system prompt and tools declared up to the
	// compaction, whole (pi 1.5): the compacted context starts with it,
	// and system messages among the kept entries give way to it. Absent
	// on older entries and when the branch declared none.
	SystemMessage *llm.SystemMessage `json:"systemMessage,omitempty"`
	// Usage is what writing the summary cost (pi 1.5); nil when not
	// recorded.
	Usage *llm.Usage `json:"usage,omitempty"`
}

// BranchSummaryEntry summarises the branch the conversation came back from.
type BranchSummaryEntry struct {
	Meta
	// FromID is the entry the branch left from, or "root".
	FromID   string          `json:"fromId"`
	Summary  string          `json:"summary"`
	Details  json.RawMessage `json:"details,omitempty"`
	FromHook *bool           `json:"fromHook,omitempty"`
	Usage    *llm.Usage      `json:"usage,omitempty"`
}

// UsageEntry (pi 1.5) records what a model call outside the conversation
// cost (cache warming, for one); it counts in the session's totals and
// never reaches a model.
type UsageEntry struct {
	Meta
	Kind     string    `json:"kind"`
	Provider string    `json:"provider,omitempty"`
	Model    string    `json:"model,omitempty"`
	Usage    llm.Usage `json:"usage"`
}

// CustomEntry is extension state; it never reaches a model.
type CustomEntry struct {
	Meta
	CustomType string          `json:"customType"`
	Data       json.RawMessage `json:"data,omitempty"`
}

// CustomMessageEntry is an extension message that does reach the model.
type CustomMessageEntry struct {
	Meta
	CustomType string          `json:"customType"`
	Content    llm.Contents    `json:"content"`
	Display    bool            `json:"display"`
	Details    json.RawMessage `json:"details,omitempty"`
}

// LabelEntry sets (or, with an empty Label, clears) a bookmark on TargetID.
type LabelEntry struct {
	Meta
	TargetID string `json:"targetId"`
	Label    string `json:"label,omitempty"`
}

// SessionInfoEntry sets the session's display name.
type SessionInfoEntry struct {
	Meta
	Name string `json:"name"`
}

// ContextEditEntry (pi 1.5) changes what one earlier user, assistant,
// tool-result or extension message contributes to the model context from
// here on: Replacement nil leaves it out, otherwise its content is
// replaced. The target itself stays as it was in the file, the history and
// exports; the latest edit of a target on the branch wins.
type ContextEditEntry struct {
	Meta
	TargetID    string              `json:"targetId"`
	Replacement *ContextReplacement `json:"replacement"`
}

// ContextReplacement is a context edit's new content: a string or content
// blocks, as the target's role allows; kept as written, so a rewritten
// file holds the same bytes.
type ContextReplacement struct {
	Content json.RawMessage `json:"content"`
}

// Contents decodes the replacement (a string becomes one text block); a
// content that does not decode counts as empty.
func (r *ContextReplacement) Contents() llm.Contents {
	var c llm.Contents
	if err := json.Unmarshal(r.Content, &c); err != nil || c == nil {
		return llm.Contents{}
	}
	return c
}

// UnknownEntry keeps a line of a type gopi does not know (or a known type it
// could not decode) byte for byte. It takes part in the tree but never in
// the model context.
type UnknownEntry struct {
	Meta
	EntryType EntryType
	Raw       json.RawMessage
}

func (*MessageEntry) Type() EntryType             { return EntryMessage }
func (*ThinkingLevelChangeEntry) Type() EntryType { return EntryThinkingLevelChange }
func (*ModelChangeEntry) Type() EntryType         { return EntryModelChange }
func (*CompactionEntry) Type() EntryType          { return EntryCompaction }
func (*BranchSummaryEntry) Type() EntryType       { return EntryBranchSummary }
func (*CustomEntry) Type() EntryType              { return EntryCustom }
func (*CustomMessageEntry) Type() EntryType       { return EntryCustomMessage }
func (*LabelEntry) Type() EntryType               { return EntryLabel }
func (*SessionInfoEntry) Type() EntryType         { return EntrySessionInfo }
func (*ContextEditEntry) Type() EntryType         { return EntryContextEdit }
func (*UsageEntry) Type() EntryType               { return EntryUsage }
func (e *UnknownEntry) Type() EntryType           { return e.EntryType }

// The encoders below keep pi's key order: type first, then the common
// fields, then the entry's own (custom and custom_message put theirs
// before the common fields, as pi builds them).

func (e *MessageEntry) MarshalJSON() ([]byte, error) {
	// A user or assistant message (which may hold a pasted file) is
	// appended directly: the same bytes, without encoding/json's re-scan
	// of nested output.
	b := make([]byte, 0, 128)
	b = append(b, `{"type":"message","id":`...)
	b = llm.AppendJSONString(b, e.ID)
	b = append(b, `,"parentId":`...)
	if e.ParentID == "" {
		b = append(b, "null"...)
	} else {
		b = llm.AppendJSONString(b, e.ParentID)
	}
	b = append(b, `,"timestamp":`...)
	b = llm.AppendJSONString(b, e.Timestamp)
	b = append(b, `,"message":`...)
	m := e.Message()
	if b, ok := llm.AppendMessageJSON(b, m); ok {
		return append(b, '}'), nil
	}
	return json.Marshal(struct {
		Type EntryType `json:"type"`
		wireMeta
		Message llm.Message `json:"message"`
	}{EntryMessage, e.wire(), m})
}

func (e *MessageEntry) UnmarshalJSON(data []byte) error {
	var w struct {
		wireMeta
		Message json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	if len(w.Message) == 0 || string(w.Message) == "null" {
		return errNoMessage
	}
	m, err := llm.UnmarshalMessage(w.Message)
	if err != nil {
		return err
	}
	e.Meta, e.role, e.msg = w.meta(), m.MessageRole(), m
	e.once.Do(func() {})
	return nil
}

func (e *ThinkingLevelChangeEntry) MarshalJSON() ([]byte, error) {
	type alias ThinkingLevelChangeEntry
	return json.Marshal(struct {
		Type EntryType `json:"type"`
		wireMeta
		*alias
	}{EntryThinkingLevelChange, e.wire(), (*alias)(e)})
}

func (e *ThinkingLevelChangeEntry) UnmarshalJSON(data []byte) error {
	type alias ThinkingLevelChangeEntry
	return unmarshalWith(data, (*alias)(e), &e.Meta)
}

func (e *ModelChangeEntry) MarshalJSON() ([]byte, error) {
	type alias ModelChangeEntry
	return json.Marshal(struct {
		Type EntryType `json:"type"`
		wireMeta
		*alias
	}{EntryModelChange, e.wire(), (*alias)(e)})
}

func (e *ModelChangeEntry) UnmarshalJSON(data []byte) error {
	type alias ModelChangeEntry
	return unmarshalWith(data, (*alias)(e), &e.Meta)
}

func (e *CompactionEntry) MarshalJSON() ([]byte, error) {
	type alias CompactionEntry
	return json.Marshal(struct {
		Type EntryType `json:"type"`
		wireMeta
		*alias
	}{EntryCompaction, e.wire(), (*alias)(e)})
}

func (e *CompactionEntry) UnmarshalJSON(data []byte) error {
	type alias CompactionEntry
	return unmarshalWith(data, (*alias)(e), &e.Meta)
}

func (e *BranchSummaryEntry) MarshalJSON() ([]byte, error) {
	type alias BranchSummaryEntry
	return json.Marshal(struct {
		Type EntryType `json:"type"`
		wireMeta
		*alias
	}{EntryBranchSummary, e.wire(), (*alias)(e)})
}

func (e *BranchSummaryEntry) UnmarshalJSON(data []byte) error {
	type alias BranchSummaryEntry
	return unmarshalWith(data, (*alias)(e), &e.Meta)
}

func (e *CustomEntry) MarshalJSON() ([]byte, error) {
	type alias CustomEntry
	return json.Marshal(struct {
		Type EntryType `json:"type"`
		*alias
		wireMeta
	}{EntryCustom, (*alias)(e), e.wire()})
}

func (e *CustomEntry) UnmarshalJSON(data []byte) error {
	type alias CustomEntry
	return unmarshalWith(data, (*alias)(e), &e.Meta)
}

func (e *CustomMessageEntry) MarshalJSON() ([]byte, error) {
	type alias CustomMessageEntry
	return json.Marshal(struct {
		Type EntryType `json:"type"`
		*alias
		wireMeta
	}{EntryCustomMessage, (*alias)(e), e.wire()})
}

func (e *CustomMessageEntry) UnmarshalJSON(data []byte) error {
	type alias CustomMessageEntry
	return unmarshalWith(data, (*alias)(e), &e.Meta)
}

func (e *LabelEntry) MarshalJSON() ([]byte, error) {
	type alias LabelEntry
	return json.Marshal(struct {
		Type EntryType `json:"type"`
		wireMeta
		*alias
	}{EntryLabel, e.wire(), (*alias)(e)})
}

func (e *LabelEntry) UnmarshalJSON(data []byte) error {
	type alias LabelEntry
	return unmarshalWith(data, (*alias)(e), &e.Meta)
}

func (e *SessionInfoEntry) MarshalJSON() ([]byte, error) {
	type alias SessionInfoEntry
	return json.Marshal(struct {
		Type EntryType `json:"type"`
		wireMeta
		*alias
	}{EntrySessionInfo, e.wire(), (*alias)(e)})
}

func (e *SessionInfoEntry) UnmarshalJSON(data []byte) error {
	type alias SessionInfoEntry
	return unmarshalWith(data, (*alias)(e), &e.Meta)
}

func (e *ContextEditEntry) MarshalJSON() ([]byte, error) {
	type alias ContextEditEntry
	return json.Marshal(struct {
		Type EntryType `json:"type"`
		wireMeta
		*alias
	}{EntryContextEdit, e.wire(), (*alias)(e)})
}

func (e *ContextEditEntry) UnmarshalJSON(data []byte) error {
	type alias ContextEditEntry
	return unmarshalWith(data, (*alias)(e), &e.Meta)
}

func (e *UsageEntry) MarshalJSON() ([]byte, error) {
	type alias UsageEntry
	return json.Marshal(struct {
		Type EntryType `json:"type"`
		wireMeta
		*alias
	}{EntryUsage, e.wire(), (*alias)(e)})
}

func (e *UsageEntry) UnmarshalJSON(data []byte) error {
	type alias UsageEntry
	return unmarshalWith(data, (*alias)(e), &e.Meta)
}

func (e *UnknownEntry) MarshalJSON() ([]byte, error) { return e.Raw, nil }

// unmarshalWith decodes data into fields (an alias of the entry type, so
// its own UnmarshalJSON does not recurse) and the common fields into meta.
func unmarshalWith(data []byte, fields any, meta *Meta) error {
	var w struct {
		wireMeta
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := json.Unmarshal(data, fields); err != nil {
		return err
	}
	*meta = w.meta()
	return nil
}

// entryHead is what every line is first decoded as (by [decodeHead]).
type entryHead struct {
	Type EntryType
	// ID is the line's id; HasID says it was a string (not absent or null).
	ID        string
	HasID     bool
	ParentID  string
	Timestamp string
	Version   json.RawMessage
	// Message is found here already (a slice of the line) so a message
	// line, by far the most common, is not scanned for it again.
	Message json.RawMessage
}

// decodeEntry decodes one entry line. An unknown type becomes an
// [*UnknownEntry]; a known type that does not decode is returned as an
// [*UnknownEntry] together with the error, so the caller can keep it and
// report it.
func decodeEntry(data []byte, head entryHead) (Entry, error) {
	var e Entry
	switch head.Type {
	case EntryMessage:
		if len(head.Message) == 0 || string(head.Message) == "null" {
			return unknownEntry(data, head), errNoMessage
		}
		// The head's read checked that the message is JSON; its body
		// waits for its first use.
		role, err := llm.RoleOf(head.Message)
		if err != nil {
			return unknownEntry(data, head), fmt.Errorf("message entry: %w", err)
		}
		return lazyMessageEntry(head.meta(), role, head.Message), nil
	case EntryThinkingLevelChange:
		e = &ThinkingLevelChangeEntry{}
	case EntryModelChange:
		e = &ModelChangeEntry{}
	case EntryCompaction:
		e = &CompactionEntry{}
	case EntryBranchSummary:
		e = &BranchSummaryEntry{}
	case EntryCustom:
		e = &CustomEntry{}
	case EntryCustomMessage:
		e = &CustomMessageEntry{}
	case EntryLabel:
		e = &LabelEntry{}
	case EntrySessionInfo:
		e = &SessionInfoEntry{}
	case EntryContextEdit:
		e = &ContextEditEntry{}
	case EntryUsage:
		e = &UsageEntry{}
	}
	var err error
	if e != nil {
		if err = json.Unmarshal(data, e); err == nil {
			return e, nil
		}
		err = fmt.Errorf("%s entry: %w", head.Type, err)
	}
	return unknownEntry(data, head), err
}

func unknownEntry(data []byte, head entryHead) *UnknownEntry {
	return &UnknownEntry{Meta: head.meta(), EntryType: head.Type, Raw: json.RawMessage(data)}
}

func (h entryHead) meta() Meta {
	return Meta{ID: h.ID, ParentID: h.ParentID, Timestamp: h.Timestamp}
}

// decodeHead reads a line's head in one pass over it. The message is not
// decoded here, only found: Message is a slice of data, not a copy. What
// encoding/json would refuse (a non-object, an id that is not a string,
// trailing data) fails; names match in any case, as there.
func decodeHead(data []byte) (entryHead, error) { return readHead(data, true) }

// readHead is [decodeHead]; without fast, a last "message" member is read
// as JSON too.
func readHead(data []byte, fast bool) (entryHead, error) {
	var h entryHead
	dec := llm.NewDecoder(data)
	defer dec.Free()
	tok, err := dec.ReadToken()
	if err != nil {
		return h, err
	}
	if tok.Kind() != '{' {
		return h, errNotObject
	}
	// str reads a string or null member; a string pi wrote (no escapes)
	// is copied once, not unquoted through a token.
	str := func(name string) (s string, null bool, err error) {
		v, err := dec.ReadValue()
		if err != nil {
			return "", false, err
		}
		switch v.Kind() {
		case '"':
			if bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v) {
				return string(v[1 : len(v)-1]), false, nil
			}
			var s string
			err := json.Unmarshal(v, &s)
			return s, false, err
		case 'n':
			return "", true, nil
		}
		return "", false, fmt.Errorf("%q %w", name, errNotString)
	}
	for dec.PeekKind() != '}' {
		key, err := dec.ReadValue()
		if err != nil {
			return h, err
		}
		switch name := headField(key); name {
		case "type":
			s, _, err := str(name)
			if err != nil {
				return h, err
			}
			h.Type = internType(s)
		case "id":
			s, null, err := str(name)
			if err != nil {
				return h, err
			}
			h.ID, h.HasID = s, !null
		case "parentId":
			if h.ParentID, _, err = str(name); err != nil {
				return h, err
			}
		case "timestamp":
			if h.Timestamp, _, err = str(name); err != nil {
				return h, err
			}
		case "version", "message":
			if name == "message" && fast {
				if start, end, ok := lastMember(data, int(dec.InputOffset())); ok {
					h.Message = json.RawMessage(data[start:end:end])
					return h, nil
				}
			}
			v, err := dec.ReadValue()
			if err != nil {
				return h, err
			}
			end := int(dec.InputOffset())
			raw := json.RawMessage(data[end-len(v) : end : end])
			if name == "version" {
				h.Version = raw
			} else {
				h.Message = raw
			}
		default:
			if err := dec.SkipValue(); err != nil {
				return h, err
			}
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return h, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = errTrailingData
		}
		return h, err
	}
	return h, nil
}

// lastMember finds, quickly, the value of an object member that closes the
// line: data[off:] must be a colon, an object and the line's closing
// brace (with any white space between). It is how pi and gopi write a
// message line, "message" last. The object is found by its brackets and
// strings, not validated: it is read in full when the message is first
// used (the context's messages when the session opens). ok is false for
// anything else; the caller then reads the line as JSON.
func lastMember(data []byte, off int) (start, end int, ok bool) {
	ws := func(i int) int {
		for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
			i++
		}
		return i
	}
	i := ws(off)
	if i >= len(data) || data[i] != ':' {
		return 0, 0, false
	}
	i = ws(i + 1)
	if i >= len(data) || data[i] != '{' {
		return 0, 0, false
	}
	start = i
	depth := 0
	for ; i < len(data); i++ {
		switch data[i] {
		case '"':
			// The closing quote is the next one not escaped, that is, not
			// after an odd run of backslashes.
			for {
				j := bytes.IndexByte(data[i+1:], '"')
				if j < 0 {
					return 0, 0, false
				}
				i += 1 + j
				k := i - 1
				for k > start && data[k] == '\\' {
					k--
				}
				if (i-1-k)%2 == 0 {
					break
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				end = i + 1
				if i = ws(end); i < len(data) && data[i] == '}' && ws(i+1) == len(data) {
					return start, end, true
				}
				return 0, 0, false
			}
		}
	}
	return 0, 0, false
}

// entryTypes are the types interned by [internType].
var entryTypes = []EntryType{EntryMessage, EntrySession, EntryThinkingLevelChange, EntryModelChange,
	EntryCompaction, EntryBranchSummary, EntryCustom, EntryCustomMessage, EntryLabel,
	EntrySessionInfo, EntryContextEdit, EntryUsage}

// internType returns the known type equal to s (sharing its string), or s.
func internType(s string) EntryType {
	for _, t := range entryTypes {
		if string(t) == s {
			return t
		}
	}
	return EntryType(s)
}

var headFields = []string{"type", "id", "parentId", "timestamp", "version", "message"}

// headField maps a member name, as written (quoted), to the head field it
// sets, "" for none. Names match in any case, as in encoding/json.
func headField(quoted []byte) string {
	if bytes.IndexByte(quoted, '\\') < 0 {
		name := quoted[1 : len(quoted)-1]
		for _, f := range headFields {
			if string(name) == f {
				return f
			}
		}
		for _, f := range headFields {
			if strings.EqualFold(string(name), f) {
				return f
			}
		}
		return ""
	}
	var name string
	if json.Unmarshal(quoted, &name) != nil {
		return ""
	}
	for _, f := range headFields {
		if strings.EqualFold(name, f) {
			return f
		}
	}
	return ""
}
