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
