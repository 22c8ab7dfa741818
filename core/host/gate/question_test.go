package gate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/tools"
)

func TestVisible(t *testing.T) {
	lines := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString("echo " + strings.Repeat("x", i%3) + "\n")
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, in  string
		keepLines bool
		want      string
	}{
		{"plain", "npm test", true, "npm test"},
		{"every line", "echo harmless\ntouch pwned.txt\n\n", true, "echo harmless\ntouch pwned.txt"},
		{"path line break", "a\nb.txt", false, `a\nb.txt`},
		{"escape sequences", "echo ok\r\x1b[2Krm -rf x\t\x7f", true, `echo ok\r\x1b[2Krm -rf x\t\x7f`},
		{"invisible characters", "rm\u202e -rf\u200b\u00a0x\u2028\U000e0041", true, `rm\u202e -rf\u200b\u00a0x\u2028\U000e0041`},
		{"invalid UTF-8", "cat \xff\xfe", false, `cat \xff\xfe`},
		{"wide gap", "echo hi" + strings.Repeat(" ", 40) + "; rm x", true, "echo hi[40 spaces]; rm x"},
		{"short gap", "a" + strings.Repeat(" ", 31) + "b", true, "a" + strings.Repeat(" ", 31) + "b"},
		{"many lines", lines(25), true, strings.TrimSuffix(lines(20), "\n") + " … (+5 more lines, see details)"},
		{"long line", strings.Repeat("y", 1200), true, strings.Repeat("y", 1000) + " … (+200 more characters, see details)"},
		{"long line then lines", strings.Repeat("y", 1001) + "\nb\nc", true, strings.Repeat("y", 1000) + " … (+1 more character and +2 more lines, see details)"},
		{"long path", strings.Repeat("p/", 600), false, strings.Repeat("p/", 500) + " … (+200 more characters, see details)"},
		{"an escape never split", strings.Repeat("y", 998) + "\x1b", true, strings.Repeat("y", 998) + " … (+1 more character, see details)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, visible(tc.in, tc.keepLines))
		})
	}
}

func TestApprovalTitle(t *testing.T) {
	title := func(name, args string) string {
		return approvalTitle(agent.Call{Name: name, Args: json.RawMessage(args)}, tools.Target{})
	}
	assert.Equal(t, "Allow bash: npm test?", title("bash", `{"command":"npm test"}`))
	assert.Equal(t, "Allow bash: echo harmless\ntouch pwned.txt?", title("bash", `{"command":"echo harmless\ntouch pwned.txt"}`))
	assert.Equal(t, `Allow write: notes\n.txt?`, title("write", `{"path":"notes\n.txt","content":"x"}`))
	assert.Equal(t, "Allow my_tool?", title("my_tool", `{"x":1}`))
}
