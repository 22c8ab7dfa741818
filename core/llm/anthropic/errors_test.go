package anthropic

import (
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/stretchr/testify/assert"

	"github.com/gopi-dev/gopi/core/llm"
)

// The texts a message fails with stay as clients read them.
func TestStopReasonErrorTexts(t *testing.T) {
	for _, c := range []struct {
		reason      sdk.StopReason
		explanation string
		want        string
		is          error
	}{
		{"refusal", "", "the model declined to answer (stop_reason refusal)", errRefused},
		{"sensitive", "policy", "the model declined to answer (stop_reason sensitive): policy", errRefused},
		{"mystery", "", "unhandled stop reason: mystery", errUnknownStop},
	} {
		s := newStreamState(llm.NewBuilder(nil), nil)
		s.stopReason(c.reason, sdk.RefusalStopDetails{Explanation: c.explanation})
		assert.EqualError(t, s.failure, c.want)
		assert.ErrorIs(t, s.failure, c.is)
	}
}
