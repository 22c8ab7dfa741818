package llm

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestContentsJoinText(t *testing.T) {
	cs := Contents{TextContent{Text: "a"}, ImageContent{Data: "x", MimeType: "image/png"}, ThinkingContent{Thinking: "hidden"}, TextContent{Text: "b"}}
	assert.Equal(t, "a\nb", cs.JoinText("\n"))
	assert.Equal(t, "ab", cs.Text())
	assert.Equal(t, "", Contents{ImageContent{}}.JoinText(" "))
}

func TestUTF16Len(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abc": 3, "é": 1, "日本": 2, "😀": 2, "a😀b": 4} {
		assert.Equal(t, want, UTF16Len(s), s)
	}
}
