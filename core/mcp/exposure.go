package mcp

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// UnmarshalJSON decodes an entry and remembers the order of its
// toolExposure keys, which decides among patterns.
func (s *Server) UnmarshalJSON(data []byte) error {
	type plain Server // without this method
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*s = Server(p)
	s.toolExposureOrder = nil
	if o, err := decodeObject(data); err == nil {
		if raw, ok := o.get("toolExposure"); ok {
			if te, err := decodeObject(raw); err == nil {
				for _, m := range te {
					s.toolExposureOrder = append(s.toolExposureOrder, m.key)
				}
			}
		}
	}
	return nil
}

// ToolExposureRule is one toolExposure entry: a tool name, or a pattern
// where * matches any characters.
type ToolExposureRule struct {
	Tool     string   `json:"tool"`
	Exposure Exposure `json:"exposure"`
}

// ToolExposureRules are the entry's toolExposure entries in the file's
// order (sorted by name for an entry built in Go rather than decoded).
func (s Server) ToolExposureRules() []ToolExposureRule {
	keys := make([]string, 0, len(s.ToolExposure))
	for _, k := range s.toolExposureOrder {
		if _, ok := s.ToolExposure[k]; ok && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	var rest []string
	for k := range s.ToolExposure {
		if !slices.Contains(keys, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	keys = append(keys, rest...)
	rules := make([]ToolExposureRule, len(keys))
	for i, k := range keys {
		rules[i] = ToolExposureRule{Tool: k, Exposure: s.ToolExposure[k].Resolved()}
	}
	return rules
}

// ServerExposure is the entry's own exposure: pi's default codemode when
// unset, aliases resolved.
func (s Server) ServerExposure() Exposure {
	if s.Exposure == "" {
		return ExposureCodemode
	}
	return s.Exposure.Resolved()
}

// MayExpose reports whether some tool of the server may get one of which:
// the server's own exposure or a toolExposure entry names it (aliases
// resolved). Which tools the server really has is known only once it
// connects.
func (s Server) MayExpose(which ...Exposure) bool {
	if slices.Contains(which, s.ServerExposure()) {
		return true
	}
	for _, r := range s.ToolExposureRules() {
		if slices.Contains(which, r.Exposure) {
			return true
		}
	}
	return false
}

// ToolExposureOf is the exposure of the server's tool named tool (its name
// on the server, not mcp__…): its exact toolExposure entry, else the first
// pattern in file order that matches it, else the server's exposure.
func (s Server) ToolExposureOf(tool string) Exposure {
	if e, ok := s.ToolExposure[tool]; ok {
		return e.Resolved()
	}
	for _, r := range s.ToolExposureRules() {
		if strings.Contains(r.Tool, "*") && MatchToolPattern(r.Tool, tool) {
			return r.Exposure
		}
	}
	return s.ServerExposure()
}

// MatchToolPattern reports whether name matches pattern, where * matches
// any characters (none included) and everything else only itself; the
// whole name must match.
func MatchToolPattern(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	re, err := regexp.Compile(`^` + strings.Join(parts, ".*") + `$`)
	return err == nil && re.MatchString(name)
}
