package google

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/genai"

	"github.com/gopi-dev/gopi/core/llm"
)

// The texts a message fails with stay as clients read them.
func TestFinishErrorTexts(t *testing.T) {
	for _, c := range []struct {
		block, message string
		reason         genai.FinishReason
		want           string
		is             error
	}{
		{block: "SAFETY: no", reason: genai.FinishReasonStop, want: "google: prompt blocked (SAFETY: no)", is: errPromptBlocked},
		{want: "google: stream ended without a finish reason", is: errNoFinishReason},
		{reason: genai.FinishReasonSafety, want: "google: generation stopped with finish reason SAFETY", is: errFinishReason},
		{reason: genai.FinishReasonRecitation, message: "quoted", want: "google: generation stopped with finish reason RECITATION: quoted", is: errFinishReason},
	} {
		s := newStreamState(llm.NewBuilder(nil), nil)
		s.blockReason, s.finishReason, s.finishMessage = c.block, c.reason, c.message
		_, err := s.finish()
		assert.EqualError(t, err, c.want)
		assert.ErrorIs(t, err, c.is)
	}
}
