package run

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gopi-dev/gopi/core/llm"
)

// noAgent is an agent with no model and nothing to run.
type noAgent struct{}

func (noAgent) Messages() []llm.Message                       { return nil }
func (noAgent) ReplaceMessages([]llm.Message)                 {}
func (noAgent) Model() *llm.Model                             { return nil }
func (noAgent) QueueCounts() (int, int)                       { return 0, 0 }
func (noAgent) StartContinue(context.Context) (func(), error) { return nil, nil }

// A failed reply that no provider classified (it carries no Failure, as
// replies read back from a session file) is not retried, whatever its text.
func TestUnclassifiedFailureIsNotRetried(t *testing.T) {
	r := New(Config{Ctx: t.Context(), Agent: noAgent{}, Retry: DefaultRetrySettings()})
	m := &llm.AssistantMessage{StopReason: llm.StopError, ErrorMessage: "529 overloaded timeout"}
	assert.False(t, r.isRetryable(m))
	m.Failure = &llm.ProviderError{Status: 529}
	assert.True(t, r.isRetryable(m))
	m.Failure = &llm.ProviderError{Status: 400, Message: "timeout 529"}
	assert.False(t, r.isRetryable(m))
}
