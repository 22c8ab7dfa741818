package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// RoleSystem is pi 1.5's system message: the transcript's record of the
// system prompt and the tools the model was given.
const RoleSystem Role = "system"

// SystemMessage declares (the first one of a session) or patches (every
// later one) the system prompt and the tool loadout. Replaying a
// transcript's system messages in order ([ReplaySystem]) yields the prompt
// sections and tools of the latest request. It is a record for clients and
// for the session file: models never see it as a message (the system
// prompt goes to them as such), so [session.ConvertToLLM] drops it.
type SystemMessage struct {
	// Content is an opaque prompt that replaces the sections (pi's forced
	// prompt); "" when the sections carry the prompt.
	Content      SystemContent `json:"content"`
	Sections     Sections      `json:"sections,omitempty"`
	ToolsAdded   []ToolSpec    `json:"toolsAdded,omitempty"`
	ToolsRemoved []ToolRef     `json:"toolsRemoved,omitempty"`
	Timestamp    int64         `json:"timestamp"`
}

// ToolRef names a tool a system message removes.
type ToolRef struct {
	Name string `json:"name"`
}

func (*SystemMessage) MessageRole() Role { return RoleSystem }
func (m *SystemMessage) Time() int64     { return m.Timestamp }

func (m *SystemMessage) MarshalJSON() ([]byte, error) {
	type alias SystemMessage
	return json.Marshal(struct {
		Role Role `json:"role"`
		*alias
	}{RoleSystem, (*alias)(m)})
}

// SystemContent is a system message's content: pi writes a string, and
// accepts text blocks; either decodes to the text.
type SystemContent string

func (c SystemContent) MarshalJSON() ([]byte, error) { return json.Marshal(string(c)) }

func (c *SystemContent) UnmarshalJSON(data []byte) error {
	var s string
	if json.Unmarshal(data, &s) == nil {
		*c = SystemContent(s)
		return nil
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(data, &blocks); err != nil {
		return fmt.Errorf("system content is neither a string nor text blocks: %w", err)
	}
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
	}
	*c = SystemContent(b.String())
	return nil
}

// Section is one named part of the system prompt; a nil Text (JSON null)
// in a patch removes the section.
type Section struct {
	Name string
	Text *string
}

// Sections are prompt sections in prompt order. They encode as a JSON
// object whose keys keep that order, which is the order pi renders them in.
type Sections []Section

func (ss Sections) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(s.Name)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		if s.Text == nil {
			b.WriteString("null")
			continue
		}
		v, err := json.Marshal(*s.Text)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (ss *Sections) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		*ss = nil
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errSectionsShape
	}
	out := Sections{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		var text *string
		if err := dec.Decode(&text); err != nil {
			return fmt.Errorf("section %q: %w", name, err)
		}
		out = append(out, Section{Name: name, Text: text})
	}
	*ss = out
	return nil
}

// Text is the section's text, "" when it is removed.
func (s Section) text() string {
	if s.Text == nil {
		return ""
	}
	return *s.Text
}

// SystemState is what a transcript's system messages add up to.
type SystemState struct {
	// Content is a forced prompt, when the latest declaration was one.
	Content  string
	Sections Sections // no nil texts
	Tools    []ToolSpec
}

// Prompt renders the state as one system prompt: the forced content, or
// the sections' texts in order, separated by blank lines.
func (s SystemState) Prompt() string {
	if s.Content != "" {
		return s.Content
	}
	parts := make([]string, 0, len(s.Sections))
	for _, sec := range s.Sections {
		parts = append(parts, sec.text())
	}
	return strings.Join(parts, "\n\n")
}

// ReplaySystem folds msgs' system messages into the state they declare;
// ok is false when msgs hold none.
func ReplaySystem(msgs []Message) (st SystemState, ok bool) {
	for _, m := range msgs {
		sm, isSys := m.(*SystemMessage)
		if !isSys {
			continue
		}
		ok = true
		st.apply(sm)
	}
	return st, ok
}

func (st *SystemState) apply(sm *SystemMessage) {
	st.Content = string(sm.Content)
	for _, p := range sm.Sections {
		i := slices.IndexFunc(st.Sections, func(s Section) bool { return s.Name == p.Name })
		switch {
		case p.Text == nil && i >= 0:
			st.Sections = slices.Delete(st.Sections, i, i+1)
		case p.Text == nil:
		case i >= 0:
			st.Sections[i].Text = p.Text
		default:
			st.Sections = append(st.Sections, p)
		}
	}
	for _, r := range sm.ToolsRemoved {
		st.Tools = slices.DeleteFunc(st.Tools, func(t ToolSpec) bool { return t.Name == r.Name })
	}
	for _, t := range sm.ToolsAdded {
		if i := slices.IndexFunc(st.Tools, func(o ToolSpec) bool { return o.Name == t.Name }); i >= 0 {
			st.Tools[i] = t
		} else {
			st.Tools = append(st.Tools, t)
		}
	}
}

// Checkpoint is a system message that declares st whole, as a compaction
// entry stores it.
func (st SystemState) Checkpoint(ts int64) *SystemMessage {
	return &SystemMessage{
		Content:    SystemContent(st.Content),
		Sections:   slices.Clone(st.Sections),
		ToolsAdded: append([]ToolSpec{}, st.Tools...),
		Timestamp:  ts,
	}
}

// SystemPatch is the system message that takes a transcript from prev (ok
// false: no system message yet) to the wanted sections and tools, or nil
// when nothing changed. Sections prev has and want lacks are removed
// (null); a tool whose declaration changed is added again.
func SystemPatch(prev SystemState, ok bool, want Sections, tools []ToolSpec, ts int64) *SystemMessage {
	m := &SystemMessage{Timestamp: ts}
	for _, w := range want {
		i := slices.IndexFunc(prev.Sections, func(s Section) bool { return s.Name == w.Name })
		if i < 0 || prev.Sections[i].text() != w.text() {
			m.Sections = append(m.Sections, w)
		}
	}
	for _, p := range prev.Sections {
		if !slices.ContainsFunc(want, func(s Section) bool { return s.Name == p.Name }) {
			m.Sections = append(m.Sections, Section{Name: p.Name})
		}
	}
	for _, p := range prev.Tools {
		if !slices.ContainsFunc(tools, func(t ToolSpec) bool { return t.Name == p.Name }) {
			m.ToolsRemoved = append(m.ToolsRemoved, ToolRef{Name: p.Name})
		}
	}
	for _, t := range tools {
		i := slices.IndexFunc(prev.Tools, func(o ToolSpec) bool { return o.Name == t.Name })
		if i < 0 || !sameSpec(prev.Tools[i], t) {
			m.ToolsAdded = append(m.ToolsAdded, t)
		}
	}
	if ok && prev.Content == "" && len(m.Sections) == 0 && len(m.ToolsAdded) == 0 && len(m.ToolsRemoved) == 0 {
		return nil
	}
	if !ok && m.ToolsAdded == nil {
		// The first declaration always lists the tools, none included.
		m.ToolsAdded = []ToolSpec{}
	}
	return m
}

func sameSpec(a, b ToolSpec) bool {
	if a.Name != b.Name || a.Description != b.Description {
		return false
	}
	if bytes.Equal(a.Parameters, b.Parameters) {
		return true // the usual case, every prompt: no decoding
	}
	var x, y any
	if json.Unmarshal(a.Parameters, &x) != nil || json.Unmarshal(b.Parameters, &y) != nil {
		return bytes.Equal(a.Parameters, b.Parameters)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
