package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gopi-dev/gopi/core/llm"
)

// chatChunk is one chat.completion.chunk event, reduced to what gopi
// reads. The servers that copy Chat Completions disagree on types (a null
// content, an index sent as a string, arguments sent as an object), so
// each field is read leniently from its raw JSON: a field of an unexpected
// type reads as absent instead of failing the whole chunk, as the SDK's
// own decoder does.
type chatChunk struct {
	ID string
	// Usage is the raw usage object; empty when absent or null.
	Usage   string
	Choices []chatChoice
}

type chatChoice struct {
	FinishReason string
	// Usage is usage sent on the choice (Moonshot); empty when absent.
	Usage string
	Delta chatDelta
}

type chatDelta struct {
	Content string
	// fields holds the delta's raw fields, for the reasoning fields
	// whose names differ by server and OpenRouter's reasoning_details.
	fields    map[string]json.RawMessage
	ToolCalls []chatToolCallDelta
}

type chatToolCallDelta struct {
	Index     int64
	HasIndex  bool
	ID        string
	Name      string
	Arguments string
}

// UnmarshalJSON implements [json.Unmarshaler].
func (c *chatChunk) UnmarshalJSON(b []byte) error {
	var f map[string]json.RawMessage
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("decoding chunk: %w", err)
	}
	c.ID = jsonString(f["id"])
	c.Usage = rawField(f, "usage")
	var choices []json.RawMessage
	if json.Unmarshal(f["choices"], &choices) != nil {
		return nil
	}
	for _, raw := range choices {
		var cf map[string]json.RawMessage
		if json.Unmarshal(raw, &cf) != nil {
			continue
		}
		ch := chatChoice{FinishReason: jsonString(cf["finish_reason"]), Usage: rawField(cf, "usage")}
		if json.Unmarshal(cf["delta"], &ch.Delta.fields) == nil {
			ch.Delta.Content = jsonString(ch.Delta.fields["content"])
			ch.Delta.ToolCalls = toolCallDeltas(ch.Delta.fields["tool_calls"])
		}
		c.Choices = append(c.Choices, ch)
	}
	return nil
}

// field is the raw JSON of one of the delta's fields; ok is false when it
// is absent or null.
func (d *chatDelta) field(name string) (string, bool) {
	raw := rawField(d.fields, name)
	return raw, raw != ""
}

func toolCallDeltas(raw json.RawMessage) []chatToolCallDelta {
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	out := make([]chatToolCallDelta, 0, len(items))
	for _, it := range items {
		tc := chatToolCallDelta{ID: jsonString(it["id"])}
		if json.Unmarshal(it["index"], &tc.Index) == nil && len(it["index"]) > 0 {
			tc.HasIndex = true
		}
		var fn map[string]json.RawMessage
		if json.Unmarshal(it["function"], &fn) == nil {
			tc.Name = jsonString(fn["name"])
			tc.Arguments = jsonString(fn["arguments"])
		}
		out = append(out, tc)
	}
	return out
}

// jsonString is raw's value when it is a JSON string, else "".
func jsonString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// rawField is the raw JSON of fields[name], "" when absent or null.
func rawField(fields map[string]json.RawMessage, name string) string {
	raw := string(bytes.TrimSpace(fields[name]))
	if raw == "null" {
		return ""
	}
	return raw
}

// post sends body to path under the model's base URL with the model's,
// extra and the call's headers, in that order (a later one replaces an
// earlier of the same name), and returns the response whatever its
// status; err is only a request that could not be sent. Like the SDK it
// replaced for Chat Completions it reads no OPENAI_* environment variable
// and never retries.
func post(ctx context.Context, model *llm.Model, opts *llm.Options, path string, extra map[string]string, body []byte) (*http.Response, error) {
	base := model.BaseURL
	if base == "" {
		base = defaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("parsing base URL %q: %w", base, err)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + path
	u.RawPath = ""
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+opts.APIKey)
	}
	for _, hs := range []map[string]string{model.Headers, extra, opts.Headers} {
		for _, k := range slices.Sorted(maps.Keys(hs)) {
			req.Header.Set(k, hs[k])
		}
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = llm.DefaultHTTPClient
	}
	return hc.Do(req)
}
