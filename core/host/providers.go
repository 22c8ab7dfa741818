package host

import (
	"fmt"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/anthropic"
	"github.com/gopi-dev/gopi/core/llm/faux"
	"github.com/gopi-dev/gopi/core/llm/google"
	"github.com/gopi-dev/gopi/core/llm/openai"
)

// Providers maps a model's API family to the provider that speaks it.
type Providers map[string]llm.Provider

// DefaultProviders returns one provider per API family gopi speaks.
func DefaultProviders() Providers {
	return Providers{
		llm.APIAnthropicMessages:  anthropic.New(),
		llm.APIOpenAICompletions:  openai.NewCompletions(),
		llm.APIOpenAIResponses:    openai.NewResponses(),
		llm.APIGoogleGenerativeAI: google.New(),
		llm.APIFaux:               faux.New(),
	}
}

// Lookup finds the provider for api.
func (p Providers) Lookup(api string) (llm.Provider, error) {
	if prov, ok := p[api]; ok {
		return prov, nil
	}
	return nil, fmt.Errorf("no provider speaks API %q (gopi knows anthropic-messages, openai-completions, openai-responses, google-generative-ai and faux)", api)
}
