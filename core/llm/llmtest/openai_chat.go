package llmtest

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// openAIChat speaks OpenAI Chat Completions streaming: data-only SSE events
// carrying chat.completion.chunk objects, ended by "data: [DONE]".
//
// Thinking blocks stream as delta.reasoning_content, the way vLLM, DeepSeek
// and llama.cpp report reasoning. Consecutive tool-call blocks stream their
// headers in order and then their argument pieces round-robin, so a client
// must route deltas by tool_calls[].index rather than by arrival order.
// Usage arrives in a last chunk with empty choices, as it does with
// stream_options.include_usage.
type openAIChat struct{}

func init() { dialects = append(dialects, openAIChat{}) }

// OpenAIURL is the base URL an OpenAI client should use for s, like
// https://api.openai.com/v1: requests go to <base>/chat/completions or
// <base>/responses.
func (s *Server) OpenAIURL() string { return s.URL() + "/v1" }

func (openAIChat) match(path string) bool { return strings.HasSuffix(path, "/chat/completions") }

// chatFinishReason maps a neutral stop reason to finish_reason; anything
// else (content_filter, ...) is passed through verbatim.
func chatFinishReason(r string) string {
	switch r {
	case "stop":
		return "stop"
	case "length":
		return "length"
	case "toolUse":
		return "tool_calls"
	default:
		return r
	}
}

func (openAIChat) events(t *Turn, n int, model string) [][]byte {
	id := t.responseID(n)
	created := time.Now().Unix()
	chunk := func(choices []any, usage any) []byte {
		c := map[string]any{
			"id":                 id,
			"object":             "chat.completion.chunk",
			"created":            created,
			"model":              model,
			"system_fingerprint": "fp_llmtest",
			"choices":            choices,
		}
		if usage != nil {
			c["usage"] = usage
		}
		return sse("", c)
	}
	delta := func(d map[string]any) []byte {
		return chunk([]any{map[string]any{"index": 0, "delta": d, "logprobs": nil, "finish_reason": nil}}, nil)
	}

	evs := [][]byte{delta(map[string]any{"role": "assistant", "content": "", "refusal": nil})}
	toolIndex := 0
	for i := 0; i < len(t.Blocks); i++ {
		b := t.Blocks[i]
		switch b.Kind {
		case KindText:
			for _, p := range chunks(b.Text, t.ChunkSize) {
				evs = append(evs, delta(map[string]any{"content": p}))
			}
		case KindThinking:
			for _, p := range chunks(b.Text, t.ChunkSize) {
				evs = append(evs, delta(map[string]any{"reasoning_content": p}))
			}
		case KindToolCall:
			// Gather the run of consecutive tool calls.
			j := i
			for j < len(t.Blocks) && t.Blocks[j].Kind == KindToolCall {
				j++
			}
			run := t.Blocks[i:j]
			pieces := make([][]string, len(run))
			for k, c := range run {
				pieces[k] = chunks(c.Args, t.ChunkSize)
				evs = append(evs, delta(map[string]any{"tool_calls": []any{map[string]any{
					"index":    toolIndex + k,
					"id":       c.ID,
					"type":     "function",
					"function": map[string]any{"name": c.Name, "arguments": ""},
				}}}))
			}
			for more := true; more; {
				more = false
				for k := range run {
					if len(pieces[k]) == 0 {
						continue
					}
					more = true
					evs = append(evs, delta(map[string]any{"tool_calls": []any{map[string]any{
						"index":    toolIndex + k,
						"function": map[string]any{"arguments": pieces[k][0]},
					}}}))
					pieces[k] = pieces[k][1:]
				}
			}
			toolIndex += len(run)
			i = j - 1
		}
	}
	evs = append(evs, chunk([]any{map[string]any{
		"index": 0, "delta": map[string]any{}, "logprobs": nil, "finish_reason": chatFinishReason(t.stopReason()),
	}}, nil))

	u := t.Usage
	cached := u.CacheRead
	details := map[string]any{"cached_tokens": cached, "audio_tokens": 0}
	if u.CacheWrite > 0 {
		// Providers that report cache writes count them inside cached_tokens.
		details["cached_tokens"] = u.CacheRead + u.CacheWrite
		details["cache_write_tokens"] = u.CacheWrite
	}
	prompt := u.Input + u.CacheRead + u.CacheWrite
	evs = append(evs, chunk([]any{}, map[string]any{
		"prompt_tokens":             prompt,
		"completion_tokens":         u.Output,
		"total_tokens":              prompt + u.Output,
		"prompt_tokens_details":     details,
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0},
	}))
	evs = append(evs, sse("", "[DONE]"))
	return evs
}

func (openAIChat) errorBody(status int) string { return openAIErrorBody(status) }

// openAIErrorBody is OpenAI's error envelope for status, shared by both
// OpenAI dialects.
func openAIErrorBody(status int) string {
	typ, code, msg := "api_error", "null", http.StatusText(status)
	switch {
	case status == http.StatusTooManyRequests:
		typ, code, msg = "requests", `"rate_limit_exceeded"`, "Rate limit reached for requests. Please try again in 1s."
	case status == http.StatusUnauthorized:
		typ, code, msg = "invalid_request_error", `"invalid_api_key"`, "Incorrect API key provided."
	case status == http.StatusBadRequest:
		typ, msg = "invalid_request_error", "Invalid request."
	case status >= 500:
		typ, msg = "server_error", "The server had an error while processing your request. Sorry about that!"
	}
	return fmt.Sprintf(`{"error":{"message":%q,"type":%q,"param":null,"code":%s}}`, msg, typ, code)
}
