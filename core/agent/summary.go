package agent

import (
	"encoding/json"
	"strings"
)

// Summary names a tool call and its target in a few words, for titles and
// progress: "bash: npm test", "write: notes.txt", or the bare tool name.
// The target (the first of the command, path and pattern arguments) keeps
// its first line and at most max runes.
func Summary(toolName string, args json.RawMessage, max int) string {
	var a map[string]any
	_ = json.Unmarshal(args, &a)
	target := ""
	for _, k := range []string{"command", "path", "pattern"} {
		if s, ok := a[k].(string); ok && s != "" {
			target = s
			break
		}
	}
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
