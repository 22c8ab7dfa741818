package tools

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Selection is pi's choice of tools for a session, from --tools,
// --no-tools, --no-builtin-tools, --exclude-tools and the defaultTools
// setting. It covers extension tools as well as the built-in ones.
type Selection struct {
	// Active are the names active from the start, in order. Names that
	// no tool has are ignored by whoever applies the selection.
	Active []string
	// Allow, when non-nil, is the --tools allowlist: only the tools it
	// matches exist at all, and every one of them is active. nil
	// allows every tool, and extension tools are active when they
	// register.
	Allow func(name string) bool
	// Exclude matches the tools that never exist (--exclude-tools);
	// nil excludes none.
	Exclude func(name string) bool
	// MCP, when non-nil, matches the MCP tools (mcp__<server>__<tool>)
	// that may exist: a --tools allowlist filters them only once one of
	// its entries starts with "mcp__", and --no-tools alone drops them.
	// nil keeps every MCP tool that Exclude leaves. Allow does not apply
	// to MCP tools.
	MCP func(name string) bool
}

// MCPAllowed reports whether the MCP tool called name may exist.
func (s Selection) MCPAllowed(name string) bool {
	if s.Exclude != nil && s.Exclude(name) {
		return false
	}
	return s.MCP == nil || s.MCP(name)
}

// MCPDeclared reports whether the MCP tool called name may be declared
// to the model directly: it may exist, and an allowlist names or matches
// it. An MCP tool that only MCPAllowed admits (an allowlist without
// mcp__ entries that does not match it) is reached through tool_search
// alone, as in pi.
func (s Selection) MCPDeclared(name string) bool {
	return s.MCPAllowed(name) && (s.Allow == nil || s.Allow(name))
}

// Allowed reports whether the tool called name may exist: not
// excluded, and matched by the allowlist when there is one.
func (s Selection) Allowed(name string) bool {
	if s.Exclude != nil && s.Exclude(name) {
		return false
	}
	return s.Allow == nil || s.Allow(name)
}

// ActiveBuiltins are the built-in tools of s active at the start: the
// Active names that are built-in, then the other built-ins the allowlist
// matches, each only when allowed.
func (s Selection) ActiveBuiltins() []string {
	var out []string
	add := func(n string) {
		if slices.Contains(AllNames, n) && s.Allowed(n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, n := range s.Active {
		add(n)
	}
	if s.Allow != nil {
		for _, n := range AllNames {
			if s.Allow(n) {
				add(n)
			}
		}
	}
	return out
}

// SelectOptions are the inputs of [Select].
type SelectOptions struct {
	// Tools is --tools: plain names and "*" patterns, or only "+name"
	// and "-name" entries; nil when not given.
	Tools []string
	// NoTools is --no-tools, NoBuiltin --no-builtin-tools.
	NoTools, NoBuiltin bool
	// Exclude is --exclude-tools: names and patterns.
	Exclude []string
	// Defaults is the defaultTools setting (nil when unset); it may
	// hold "+name"/"-name" entries too.
	Defaults []string
}

// Select works out the tools of a session as pi does:
//
//   - the default selection is defaultTools (else read, bash, edit,
//     write), or nothing with --no-tools or --no-builtin-tools;
//   - a --tools list of plain names and patterns replaces it and is also
//     an allowlist: no other tool exists, built-in or extension;
//   - a --tools list of only +name/-name entries edits the default
//     selection instead (and is the allowlist under --no-tools);
//   - --no-tools alone allows no tool at all; --no-builtin-tools keeps
//     the extensions' tools;
//   - --exclude-tools removes what it matches, after all of that.
//
// MCP tools follow their own rule ([Selection.MCP]): --tools keeps them
// unless one of its entries starts with "mcp__", --no-tools alone drops
// them, and --exclude-tools applies to them as to any tool.
//
// Tools must have passed [CheckSelection].
func Select(o SelectOptions) Selection {
	defaults := DefaultNames
	if o.Defaults != nil {
		defaults = resolveDefaults(o.Defaults)
	}
	if o.NoTools || o.NoBuiltin {
		defaults = nil
	}
	var s Selection
	modifiers := slices.ContainsFunc(o.Tools, isModifier)
	switch {
	case modifiers:
		s.Active = applyModifiers(defaults, o.Tools)
		if o.NoTools {
			s.Allow = NameMatcher(s.Active)
			s.MCP = s.Allow
		}
	case o.Tools != nil:
		s.Active = slices.Clone(o.Tools)
		s.Allow = NameMatcher(o.Tools)
		if slices.ContainsFunc(o.Tools, func(e string) bool { return strings.HasPrefix(e, MCPPrefix) }) {
			s.MCP = s.Allow
		}
	default:
		s.Active = slices.Clone(defaults)
		if o.NoTools {
			s.Allow = NameMatcher(nil)
			s.MCP = s.Allow
		}
	}
	if len(o.Exclude) > 0 {
		s.Exclude = NameMatcher(o.Exclude)
		s.Active = slices.DeleteFunc(s.Active, s.Exclude)
	}
	return s
}

// CheckSelection checks a --tools list: either plain names and patterns,
// or only "+name"/"-name" entries naming tools exactly.
func CheckSelection(entries []string) error {
	n := 0
	for _, e := range entries {
		if isModifier(e) {
			n++
			if strings.Contains(e, "*") {
				return fmt.Errorf("%w: %s", ErrSelectionPattern, e)
			}
		}
	}
	if n > 0 && n < len(entries) {
		return ErrSelectionMixed
	}
	return nil
}

// MCPPrefix starts the name of every MCP tool.
const MCPPrefix = "mcp__"

func isModifier(e string) bool { return strings.HasPrefix(e, "+") || strings.HasPrefix(e, "-") }

// applyModifiers adds each "+name" to base and drops each "-name", in
// order; other entries are skipped.
func applyModifiers(base, entries []string) []string {
	out := slices.Clone(base)
	for _, e := range entries {
		if !isModifier(e) {
			continue
		}
		name := e[1:]
		i := slices.Index(out, name)
		switch {
		case e[0] == '+' && i < 0 && name != "":
			out = append(out, name)
		case e[0] == '-' && i >= 0:
			out = slices.Delete(out, i, i+1)
		}
	}
	return out
}

// resolveDefaults is the defaultTools setting as a list of names: its
// plain names (or pi's defaults when it holds only +/- entries), with
// its +/- entries applied.
func resolveDefaults(entries []string) []string {
	var plain []string
	for _, e := range entries {
		if !isModifier(e) {
			plain = append(plain, e)
		}
	}
	if len(plain) == 0 && len(entries) > 0 {
		plain = DefaultNames
	}
	return applyModifiers(plain, entries)
}

// NameMatcher matches tool names against entries that are exact names or
// patterns in which "*" stands for any run of characters.
func NameMatcher(entries []string) func(name string) bool {
	names := map[string]bool{}
	var patterns []*regexp.Regexp
	for _, e := range entries {
		if !strings.Contains(e, "*") {
			names[e] = true
			continue
		}
		parts := strings.Split(e, "*")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		patterns = append(patterns, regexp.MustCompile("^"+strings.Join(parts, ".*")+"$"))
	}
	return func(name string) bool {
		if names[name] {
			return true
		}
		for _, p := range patterns {
			if p.MatchString(name) {
				return true
			}
		}
		return false
	}
}
