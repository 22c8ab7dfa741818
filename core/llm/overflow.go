package llm

import (
	"regexp"
	"sync"
)

// overflowPatterns match the errors providers return when a request does
// not fit the model's context window (pi 0.73.1's list). Each is tried
// case-insensitively against the whole error message.
var overflowPatterns = compileAll( // compiled on first use, not at startup
	`prompt is too long`,                                  // Anthropic, tokens
	`request_too_large`,                                   // Anthropic, bytes (HTTP 413)
	`input is too long for requested model`,               // Amazon Bedrock
	`exceeds the context window`,                          // OpenAI Completions and Responses
	`input token count.*exceeds the maximum`,              // Google Gemini
	`maximum prompt length is \d+`,                        // xAI
	`reduce the length of the messages`,                   // Groq
	`maximum context length is \d+ tokens`,                // OpenRouter
	`exceeds the limit of \d+`,                            // GitHub Copilot
	`exceeds the available context size`,                  // llama.cpp
	`greater than the context length`,                     // LM Studio
	`context window exceeds limit`,                        // MiniMax
	`exceeded model token limit`,                          // Kimi For Coding
	`too large for model with \d+ maximum context length`, // Mistral
	`model_context_window_exceeded`,                       // z.ai
	`prompt too long; exceeded (?:max )?context length`,   // Ollama
	`context[_ ]length[_ ]exceeded`,                       // generic
	`too many tokens`,                                     // generic
	`token limit exceeded`,                                // generic
	`^4(?:00|13)\s*(?:status code)?\s*\(no body\)`,        // Cerebras
)

// notOverflowPatterns mark errors that only look like an overflow, such as
// Bedrock's "Too many tokens, please wait" throttling.
var notOverflowPatterns = compileAll(
	`^(?:Throttling error|Service unavailable):`,
	`rate limit`,
	`too many requests`,
)

func compileAll(patterns ...string) func() []*regexp.Regexp {
	return sync.OnceValue(func() []*regexp.Regexp {
		out := make([]*regexp.Regexp, len(patterns))
		for i, p := range patterns {
			out[i] = regexp.MustCompile(`(?i)` + p)
		}
		return out
	})
}

func matchAny(res func() []*regexp.Regexp, s string) bool {
	for _, re := range res() {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// IsContextOverflow reports whether m shows that the request did not fit
// the model's context window, as pi's isContextOverflow does:
//
//   - a failed reply whose error message is one of the providers' overflow
//     errors (and not a rate limit that happens to mention tokens);
//   - with contextWindow > 0, a successful reply whose input (cached input
//     included) exceeds the window, from providers that accept an
//     oversized request silently (z.ai);
//   - with contextWindow > 0, a reply stopped by the length limit with no
//     output at all while its input fills at least 99% of the window, from
//     providers that truncate the input to fit (Xiaomi MiMo).
func IsContextOverflow(m *AssistantMessage, contextWindow int) bool {
	if m == nil {
		return false
	}
	if m.StopReason == StopError && m.ErrorMessage != "" &&
		!matchAny(notOverflowPatterns, m.ErrorMessage) && matchAny(overflowPatterns, m.ErrorMessage) {
		return true
	}
	if contextWindow <= 0 {
		return false
	}
	input := m.Usage.Input + m.Usage.CacheRead
	switch m.StopReason {
	case StopStop:
		return input > contextWindow
	case StopLength:
		return m.Usage.Output == 0 && float64(input) >= float64(contextWindow)*0.99
	}
	return false
}
