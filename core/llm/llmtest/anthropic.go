package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The Anthropic Messages dialect: POST {baseUrl}/v1/messages answered with
// message_start, content_block_start/delta/stop per block, message_delta and
// message_stop, with ping events sprinkled in as the real API does.

func init() { dialects = append(dialects, anthropicDialect{}) }

// AnthropicURL is the baseUrl to give an anthropic-messages model; the SDK
// appends /v1/messages.
func (s *Server) AnthropicURL() string { return s.URL() }

type anthropicDialect struct{}

func (anthropicDialect) match(path string) bool { return strings.HasSuffix(path, "/v1/messages") }

// anthropicPingEvery is how many delta events pass between two pings.
const anthropicPingEvery = 4

func (anthropicDialect) events(t *Turn, n int, model string) [][]byte {
	var out [][]byte
	// Events are written in the API's own field order, type first, as a
	// client that reads the stream byte-wise (gopi's decoder does) meets
	// them.
	add := func(name string, fields ...any) {
		out = append(out, sse(name, ordered(append([]any{"type", name}, fields...)...)))
	}
	ping := func() { out = append(out, sse("ping", ordered("type", "ping"))) }

	add("message_start", "message", ordered(
		"id", t.responseID(n),
		"type", "message",
		"role", "assistant",
		"model", model,
		"content", []any{},
		"stop_reason", nil,
		"stop_sequence", nil,
		"usage", ordered(
			"input_tokens", t.Usage.Input,
			"cache_creation_input_tokens", t.Usage.CacheWrite,
			"cache_read_input_tokens", t.Usage.CacheRead,
			"output_tokens", 1,
		),
	))
	ping()

	deltas := 0
	delta := func(i int, d json.RawMessage) {
		add("content_block_delta", "index", i, "delta", d)
		deltas++
		if deltas%anthropicPingEvery == 0 {
			ping()
		}
	}
	for i, b := range t.Blocks {
		switch {
		case b.Kind == KindText:
			add("content_block_start", "index", i, "content_block", ordered("type", "text", "text", ""))
			for _, c := range chunks(b.Text, t.ChunkSize) {
				delta(i, ordered("type", "text_delta", "text", c))
			}
		case b.Kind == KindThinking && b.Redacted:
			add("content_block_start", "index", i, "content_block", ordered("type", "redacted_thinking", "data", b.Signature))
		case b.Kind == KindThinking:
			add("content_block_start", "index", i, "content_block", ordered("type", "thinking", "thinking", "", "signature", ""))
			for _, c := range chunks(b.Text, t.ChunkSize) {
				delta(i, ordered("type", "thinking_delta", "thinking", c))
			}
			for _, c := range chunks(b.Signature, t.ChunkSize) {
				delta(i, ordered("type", "signature_delta", "signature", c))
			}
		case b.Kind == KindToolCall:
			add("content_block_start", "index", i, "content_block", ordered("type", "tool_use", "id", b.ID, "name", b.Name, "input", map[string]any{}))
			// The API opens every tool input with an empty fragment.
			delta(i, ordered("type", "input_json_delta", "partial_json", ""))
			for _, c := range chunks(b.Args, t.ChunkSize) {
				delta(i, ordered("type", "input_json_delta", "partial_json", c))
			}
		}
		add("content_block_stop", "index", i)
	}

	add("message_delta",
		"delta", ordered("stop_reason", anthropicStopReason(t.stopReason()), "stop_sequence", nil),
		"usage", ordered("output_tokens", t.Usage.Output),
	)
	add("message_stop")
	return out
}

// ordered encodes key, value pairs as a JSON object in the order given
// (encoding/json sorts a map's keys).
func ordered(kv ...any) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i].(string))
		v, err := json.Marshal(kv[i+1])
		if err != nil {
			panic(fmt.Sprintf("llmtest: encoding %v: %v", kv[i], err))
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// anthropicStopReason maps a neutral stop reason to the wire; anything
// else (refusal, pause_turn ...) is sent as written.
func anthropicStopReason(r string) string {
	switch r {
	case "stop":
		return "end_turn"
	case "length":
		return "max_tokens"
	case "toolUse":
		return "tool_use"
	}
	return r
}

func (anthropicDialect) errorBody(status int) string {
	typ, msg := "api_error", http.StatusText(status)
	switch status {
	case http.StatusBadRequest:
		typ = "invalid_request_error"
	case http.StatusUnauthorized:
		typ, msg = "authentication_error", "invalid x-api-key"
	case http.StatusForbidden:
		typ = "permission_error"
	case http.StatusNotFound:
		typ = "not_found_error"
	case http.StatusRequestEntityTooLarge:
		typ = "request_too_large"
	case http.StatusTooManyRequests:
		typ, msg = "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"
	case http.StatusInternalServerError:
		msg = "Internal server error"
	case 529:
		typ, msg = "overloaded_error", "Overloaded"
	}
	if msg == "" {
		msg = "Error"
	}
	b, _ := json.Marshal(anthropicError{Type: "error", Error: anthropicErrorDetail{Type: typ, Message: msg}})
	return string(b)
}

// anthropicError is the API's error body, fields in wire order.
type anthropicError struct {
	Type  string               `json:"type"`
	Error anthropicErrorDetail `json:"error"`
}

type anthropicErrorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}
