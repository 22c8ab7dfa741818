package agent

import (
	"encoding/json"
	"strings"
)

// Summary names a tool call and its target in a few words, for titles and
// progress: "bash: npm test", "write: notes.txt", or the bare tool name.
// The target (see [SummaryTarget]) keeps its first line and at most max
// runes.
func Summary(toolName string, args json.RawMessage, max int) string {
	_, target := SummaryTarget(args)
	if i := strings.IndexByte(target, '\n'); i >= 0 {
		target = target[:i] + " …"
	}
	if r := []rune(target); len(r) > max {
		target = string(r[:max]) + "…"
	}
	if target == "" {
		return toolName
	}
	return toolName + ": " + target
}

// SummaryTarget is the argument a summary names: the first of the
// command, path and pattern arguments that is a non-empty string, whole,
// and its name; key is "" when the call has none.
func SummaryTarget(args json.RawMessage) (key, target string) {
	var a map[string]any
	_ = json.Unmarshal(args, &a)
	for _, k := range []string{"command", "path", "pattern"} {
		if s, ok := a[k].(string); ok && s != "" {
			return k, s
		}
	}
	return "", ""
}
