package llmtest

import (
	"fmt"
	"strings"
	"time"
)

// openAIResponses speaks the OpenAI Responses API streaming format: named
// SSE events (response.created, response.output_item.added, ...) whose data
// carries the same "type" and a growing sequence_number.
//
// A thinking block becomes a reasoning item: its text, split at blank
// lines, streams as reasoning summary parts, and its Signature is the
// item's encrypted_content (a Redacted block has no summary at all). A
// text block is an assistant message item with one output_text part; a
// tool call is a function_call item whose call_id is the block's ID. A
// turn whose StopReason is "length" ends in response.incomplete
// (max_output_tokens); "error" ends in response.failed.
type openAIResponses struct{}

func init() { dialects = append(dialects, openAIResponses{}) }

func (openAIResponses) match(path string) bool { return strings.HasSuffix(path, "/responses") }

func (openAIResponses) errorBody(status int) string { return openAIErrorBody(status) }

func (openAIResponses) events(t *Turn, n int, model string) [][]byte {
	id := t.responseID(n)
	created := time.Now().Unix()
	seq := 0
	var evs [][]byte
	emit := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		evs = append(evs, sse(typ, fields))
	}
	response := func(status string, output []any, usage any) map[string]any {
		return map[string]any{
			"id":                   id,
			"object":               "response",
			"created_at":           created,
			"status":               status,
			"background":           false,
			"error":                nil,
			"incomplete_details":   nil,
			"instructions":         nil,
			"max_output_tokens":    nil,
			"model":                model,
			"output":               output,
			"parallel_tool_calls":  true,
			"previous_response_id": nil,
			"reasoning":            map[string]any{"effort": nil, "summary": nil},
			"store":                false,
			"temperature":          1.0,
			"text":                 map[string]any{"format": map[string]any{"type": "text"}},
			"tool_choice":          "auto",
			"tools":                []any{},
			"top_p":                1.0,
			"truncation":           "disabled",
			"usage":                usage,
			"metadata":             map[string]any{},
		}
	}

	emit("response.created", map[string]any{"response": response("in_progress", []any{}, nil)})
	emit("response.in_progress", map[string]any{"response": response("in_progress", []any{}, nil)})

	output := []any{}
	for k, b := range t.Blocks {
		var item map[string]any
		switch b.Kind {
		case KindThinking:
			itemID := fmt.Sprintf("rs_%d_%d", n, k)
			added := map[string]any{"id": itemID, "type": "reasoning", "summary": []any{}}
			emit("response.output_item.added", map[string]any{"output_index": k, "item": added})
			summary := []any{}
			if !b.Redacted && b.Text != "" {
				for si, text := range strings.Split(b.Text, "\n\n") {
					at := func(key string, v any) map[string]any {
						return map[string]any{"item_id": itemID, "output_index": k, "summary_index": si, key: v}
					}
					emit("response.reasoning_summary_part.added", at("part", map[string]any{"type": "summary_text", "text": ""}))
					for _, p := range chunks(text, t.ChunkSize) {
						emit("response.reasoning_summary_text.delta", at("delta", p))
					}
					emit("response.reasoning_summary_text.done", at("text", text))
					part := map[string]any{"type": "summary_text", "text": text}
					emit("response.reasoning_summary_part.done", at("part", part))
					summary = append(summary, part)
				}
			}
			item = map[string]any{"id": itemID, "type": "reasoning", "summary": summary}
			if b.Signature != "" {
				item["encrypted_content"] = b.Signature
			}
		case KindText:
			itemID := fmt.Sprintf("msg_%d_%d", n, k)
			emit("response.output_item.added", map[string]any{"output_index": k, "item": map[string]any{
				"id": itemID, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{},
			}})
			at := func(key string, v any) map[string]any {
				return map[string]any{"item_id": itemID, "output_index": k, "content_index": 0, key: v}
			}
			part := func(text string) map[string]any {
				return map[string]any{"type": "output_text", "annotations": []any{}, "logprobs": []any{}, "text": text}
			}
			emit("response.content_part.added", at("part", part("")))
			for _, p := range chunks(b.Text, t.ChunkSize) {
				d := at("delta", p)
				d["logprobs"] = []any{}
				emit("response.output_text.delta", d)
			}
			done := at("text", b.Text)
			done["logprobs"] = []any{}
			emit("response.output_text.done", done)
			emit("response.content_part.done", at("part", part(b.Text)))
			item = map[string]any{"id": itemID, "type": "message", "status": "completed", "role": "assistant", "content": []any{part(b.Text)}}
		case KindToolCall:
			itemID := fmt.Sprintf("fc_%d_%d", n, k)
			emit("response.output_item.added", map[string]any{"output_index": k, "item": map[string]any{
				"id": itemID, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": b.ID, "name": b.Name,
			}})
			for _, p := range chunks(b.Args, t.ChunkSize) {
				emit("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": k, "delta": p})
			}
			emit("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": k, "name": b.Name, "arguments": b.Args})
			item = map[string]any{"id": itemID, "type": "function_call", "status": "completed", "arguments": b.Args, "call_id": b.ID, "name": b.Name}
		default:
			continue
		}
		emit("response.output_item.done", map[string]any{"output_index": k, "item": item})
		output = append(output, item)
	}

	u := t.Usage
	usage := map[string]any{
		"input_tokens":          u.Input + u.CacheRead,
		"input_tokens_details":  map[string]any{"cached_tokens": u.CacheRead},
		"output_tokens":         u.Output,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":          u.Input + u.CacheRead + u.Output,
	}
	switch t.stopReason() {
	case "length":
		r := response("incomplete", output, usage)
		r["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
		emit("response.incomplete", map[string]any{"response": r})
	case "error":
		r := response("failed", output, usage)
		r["error"] = map[string]any{"code": "server_error", "message": "The model failed to generate a response."}
		emit("response.failed", map[string]any{"response": r})
	default:
		emit("response.completed", map[string]any{"response": response("completed", output, usage)})
	}
	return evs
}
