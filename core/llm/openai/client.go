package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/gopi-dev/gopi/core/llm"
)

// defaultBaseURL is used when a model names no base URL.
const defaultBaseURL = "https://api.openai.com/v1"

// maxErrorBody caps how much of an HTTP error body becomes the message.
const maxErrorBody = 16 << 10

// requestOptions are the SDK options for one call. They are complete on
// their own: services built from them never see sdk.DefaultClientOptions,
// so OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID and friends cannot leak
// into a request. extra headers sit between the model's and the call's.
// body is the serialized request; resp receives the HTTP response, also on
// failure, so errors keep the provider's own text.
func requestOptions(model *llm.Model, opts *llm.Options, extra map[string]string, body []byte, resp **http.Response) []option.RequestOption {
	base := model.BaseURL
	if base == "" {
		base = defaultBaseURL
	}
	o := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
	}
	if opts.APIKey != "" {
		o = append(o, option.WithAPIKey(opts.APIKey))
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = llm.DefaultHTTPClient // bounds the wait for headers; the SDK's own client has no bound
	}
	o = append(o, option.WithHTTPClient(hc))
	for _, hs := range []map[string]string{model.Headers, extra, opts.Headers} {
		for _, k := range slices.Sorted(maps.Keys(hs)) {
			o = append(o, option.WithHeader(k, hs[k]))
		}
	}
	o = append(o,
		option.WithRequestBody("application/json", body),
		option.WithResponseInto(resp),
	)
	return o
}

// httpError turns a failed request into a classified llm.ProviderError:
// an HTTP error keeps its status and the provider's body, e.g.
// `429 {"error":{"message":"Rate limit reached ..."}}`, so users see what
// the server said; a connection that failed, stalled or broke mid-stream is
// a transport failure. Cancellation passes through.
func httpError(resp *http.Response, err error) error {
	if resp != nil && resp.StatusCode >= 400 && resp.Body != nil {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		text := strings.TrimSpace(string(body))
		if text == "" {
			text = http.StatusText(resp.StatusCode)
		}
		return llm.HTTPFailure(resp.StatusCode, text, resp.Header, err)
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		// An error event inside a 200 stream, classified by the
		// provider's error object; users see the SDK's words.
		f := llm.StreamFailure(string(streamErr.Event.Data))
		f.Message, f.Err = streamErr.Message, err
		return f
	}
	var apiErr *responses.Error
	if errors.As(err, &apiErr) {
		text := apiErr.RawJSON()
		if text == "" {
			text = http.StatusText(apiErr.StatusCode)
		}
		var h http.Header
		if apiErr.Response != nil {
			h = apiErr.Response.Header
		}
		if apiErr.StatusCode >= 400 {
			return llm.HTTPFailure(apiErr.StatusCode, text, h, err)
		}
		f := llm.StreamFailure(text)
		f.Err = err
		return f
	}
	// A net/http timeout (no headers in time) also matches
	// context.DeadlineExceeded; it is a stall, not an abort.
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	return llm.TransportFailure(err.Error(), err)
}

// readStream passes each event of stream to handle until the stream ends,
// handle returns false (the reply is complete, or the consumer stopped) or
// an error (returned as it is). A stream that fails is classified with
// httpError; resp is the response requestOptions recorded.
func readStream[T any](stream *ssestream.Stream[T], resp **http.Response, handle func(T) (more bool, err error)) error {
	defer stream.Close()
	for stream.Next() {
		more, err := handle(stream.Current())
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	if err := stream.Err(); err != nil {
		return httpError(*resp, err)
	}
	return nil
}

// maxTokens is the reply cap: the call's, else the model's up to 32000.
func maxTokens(model *llm.Model, opts *llm.Options) int {
	if opts.MaxTokens > 0 {
		return opts.MaxTokens
	}
	if model.MaxTokens > 0 {
		return min(model.MaxTokens, 32000)
	}
	return 0
}

// thinkingOn reports whether opts asks a reasoning model to think.
func thinkingOn(opts *llm.Options) bool {
	return opts.Thinking != "" && opts.Thinking != llm.ThinkingOff
}

// effortFor is the provider's value for level: the model's thinking level
// map wins, then fallback (a compat map), then the level's own name.
func effortFor(model *llm.Model, level llm.ThinkingLevel, fallback map[llm.ThinkingLevel]string) string {
	if v, ok := model.ThinkingLevelMap[level]; ok && v != nil {
		return *v
	}
	if v, ok := fallback[level]; ok && v != "" {
		return v
	}
	return string(level)
}

// offEffort is the effort to send when thinking is off: the model's "off"
// entry, "none" when it has none; ok is false when the map marks "off"
// unsupported (null).
func offEffort(model *llm.Model, def string) (string, bool) {
	v, present := model.ThinkingLevelMap[llm.ThinkingOff]
	switch {
	case present && v == nil:
		return "", false
	case v != nil:
		return *v, true
	default:
		return def, def != ""
	}
}

// cacheRetention resolves the call's cache retention ("short" by default).
func cacheRetention(opts *llm.Options) string {
	if opts.CacheRetention == "" {
		return "short"
	}
	return opts.CacheRetention
}

// toolParameters is a tool's JSON schema, an empty object schema if unset.
func toolParameters(t llm.ToolSpec) json.RawMessage {
	if len(t.Parameters) == 0 || string(t.Parameters) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return t.Parameters
}

// argumentsJSON is a tool call's arguments as the JSON text to send back.
func argumentsJSON(tc llm.ToolCall) string {
	if len(tc.Arguments) == 0 {
		return "{}"
	}
	return string(tc.Arguments)
}

// dataURL is an image as a data: URL.
func dataURL(img llm.ImageContent) string {
	return "data:" + img.MimeType + ";base64," + img.Data
}
