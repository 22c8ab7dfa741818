package llm

import "testing"

func TestIsContextOverflow(t *testing.T) {
	failed := func(msg string) *AssistantMessage {
		return &AssistantMessage{StopReason: StopError, ErrorMessage: msg}
	}
	replied := func(stop StopReason, input, cacheRead, output int) *AssistantMessage {
		return &AssistantMessage{StopReason: stop, Usage: Usage{Input: input, CacheRead: cacheRead, Output: output}}
	}
	tests := []struct {
		name   string
		msg    *AssistantMessage
		window int
		want   bool
	}{
		{"anthropic tokens", failed("prompt is too long: 213462 tokens > 200000 maximum"), 0, true},
		{"anthropic bytes", failed(`413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}`), 0, true},
		{"bedrock", failed("Input is too long for requested model."), 0, true},
		{"openai", failed("Your input exceeds the context window of this model. Please adjust your input and try again."), 0, true},
		{"google", failed("The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)."), 0, true},
		{"xai", failed("This model's maximum prompt length is 131072 but the request contains 537812 tokens."), 0, true},
		{"groq", failed("Please reduce the length of the messages or completion."), 0, true},
		{"openrouter", failed("This endpoint's maximum context length is 128000 tokens. However, you requested about 150000 tokens"), 0, true},
		{"copilot", failed("prompt token count of 140000 exceeds the limit of 128000"), 0, true},
		{"llama.cpp", failed("the request exceeds the available context size, try increasing it"), 0, true},
		{"lm studio", failed("Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length of 4096; tokens to keep from the initial prompt is greater than the context length"), 0, true},
		{"minimax", failed("invalid params, context window exceeds limit (2013)"), 0, true},
		{"kimi", failed("Your request exceeded model token limit: 262144 (requested: 300000)"), 0, true},
		{"mistral", failed("Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length"), 0, true},
		{"z.ai finish reason", failed("model_context_window_exceeded"), 0, true},
		{"ollama", failed("prompt too long; exceeded max context length by 1200 tokens"), 0, true},
		{"ollama without max", failed("prompt too long; exceeded context length by 12 tokens"), 0, true},
		{"generic context_length_exceeded", failed(`400 {"error":{"code":"context_length_exceeded"}}`), 0, true},
		{"generic too many tokens", failed("Too many tokens in request"), 0, true},
		{"generic token limit", failed("Token limit exceeded for this model"), 0, true},
		{"cerebras 400", failed("400 status code (no body)"), 0, true},
		{"cerebras 413", failed("413 (no body)"), 0, true},
		{"cerebras pattern only at start", failed("upstream said 400 status code (no body)"), 0, false},
		{"case insensitive", failed("PROMPT IS TOO LONG"), 0, true},

		{"bedrock throttling", failed("ThrottlingException: Too many tokens, please wait before trying again."), 0, true},
		{"throttling prefix", failed("Throttling error: Too many tokens, please wait before trying again."), 0, false},
		{"service unavailable prefix", failed("Service unavailable: too many tokens in flight"), 0, false},
		{"rate limit", failed("429 rate limit reached: too many tokens per minute"), 0, false},
		{"too many requests", failed("Too Many Requests: token limit exceeded"), 0, false},
		{"other error", failed("500 internal server error"), 0, false},
		{"pattern but not an error", &AssistantMessage{StopReason: StopStop, ErrorMessage: "prompt is too long"}, 0, false},

		{"silent overflow", replied(StopStop, 120000, 10000, 50), 128000, true},
		{"silent overflow needs the window", replied(StopStop, 120000, 10000, 50), 0, false},
		{"fits exactly", replied(StopStop, 100000, 28000, 50), 128000, false},
		{"tool use is never silent overflow", replied(StopToolUse, 200000, 0, 50), 128000, false},
		{"length stop filling the window", replied(StopLength, 126800, 0, 0), 128000, true},
		{"length stop with cache", replied(StopLength, 6800, 120000, 0), 128000, true},
		{"length stop with output", replied(StopLength, 128000, 0, 1), 128000, false},
		{"length stop below 99%", replied(StopLength, 126000, 0, 0), 128000, false},
		{"nil", nil, 128000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsContextOverflow(tt.msg, tt.window); got != tt.want {
				t.Errorf("IsContextOverflow = %v, want %v", got, tt.want)
			}
		})
	}
}
