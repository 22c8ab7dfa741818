package agent

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	for _, tc := range []struct {
		name, args, want string
	}{
		{"bash", `{"command":"ls -la"}`, "bash: ls -la"},
		{"write", `{"path":"notes.txt","content":"x"}`, "write: notes.txt"},
		{"grep", `{"pattern":"TODO"}`, "grep: TODO"},
		{"bash", `{"command":"echo a\necho b"}`, "bash: echo a …"},
		{"ls", `{}`, "ls"},
		{"custom", `not json`, "custom"},
		{"bash", `{"command":"` + strings.Repeat("x", 30) + `"}`, "bash: " + strings.Repeat("x", 10) + "…"},
	} {
		if got := Summary(tc.name, json.RawMessage(tc.args), 10); got != tc.want {
			t.Errorf("Summary(%s, %s) = %q, want %q", tc.name, tc.args, got, tc.want)
		}
	}
}
