// Package anthropic is the [llm.Provider] for the "anthropic-messages" API
// family, built on the official anthropic-sdk-go. Call [New] and use
// [Provider.Stream]; request building lives in request.go, the mapping of
// the SSE stream onto an [llm.Builder] in events.go.
//
// The SDK is configured only from the model and the call's options: its
// environment autoload (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, profiles) and
// its retries are off, because key resolution and retry policy belong to
// gopi's model registry and agent.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"

	"github.com/gopi-dev/gopi/core/llm"
)

// Provider streams assistant messages from the Anthropic Messages API. The
// zero value is ready to use.
type Provider struct{}

var _ llm.Provider = (*Provider)(nil)

// New returns an Anthropic provider.
func New() *Provider { return &Provider{} }

const defaultBaseURL = "https://api.anthropic.com"

// Stream sends req to model and streams the reply. llm.RunStream keeps
// the [llm.Provider] contract; call holds what is Anthropic's own.
func (p *Provider) Stream(ctx context.Context, model *llm.Model, req *llm.Request) iter.Seq[llm.StreamEvent] {
	return llm.RunStream(ctx, model, req, errNoRequest, func(r *llm.StreamRun) llm.StreamCall {
		st := newStreamState(r.Builder(), r.Emit)
		st.openRouter = llm.IsOpenRouter(model)
		return &call{model: model, req: req, st: st}
	})
}

// call is one request to the Messages API.
type call struct {
	model *llm.Model
	req   *llm.Request
	st    *streamState
}

// Read sends the request and maps its event stream onto the builder.
func (c *call) Read(ctx context.Context) error {
	params, betas := buildParams(c.model, c.req)
	client := sdk.NewClient(clientOptions(c.model, &c.req.Options, betas)...)
	var raw *http.Response
	err := client.Execute(ctx, http.MethodPost, "v1/messages", params, &raw, option.WithJSONSet("stream", true))
	if err != nil {
		return describeError(err)
	}
	events := ssestream.NewDecoder(raw)
	if events == nil {
		return errNoBody
	}
	defer events.Close()
	if err := c.st.read(events, raw); err != nil && err != errStopped {
		return describeError(err)
	}
	return nil // on errStopped RunStream knows the consumer stopped
}

// Finish fails a message the API cut short or ended in a way gopi treats
// as an error.
func (c *call) Finish() (llm.StopReason, error) {
	switch {
	case !c.st.stopped:
		return "", errEndedEarly
	case c.st.failure != nil:
		return "", c.st.failure
	}
	return "", nil
}

// clientOptions configures the SDK from the model and the call alone.
func clientOptions(model *llm.Model, opts *llm.Options, betas []string) []option.RequestOption {
	base := model.BaseURL
	if base == "" {
		base = defaultBaseURL
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = llm.DefaultHTTPClient
	}
	out := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithMaxRetries(0),
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
	}
	if opts.APIKey != "" {
		out = append(out, option.WithAPIKey(opts.APIKey))
	}
	if len(betas) > 0 {
		out = append(out, option.WithHeader("anthropic-beta", strings.Join(betas, ",")))
	}
	for k, v := range model.Headers {
		out = append(out, option.WithHeader(k, v))
	}
	for k, v := range opts.Headers {
		out = append(out, option.WithHeader(k, v))
	}
	return out
}

// describeError turns an SDK error into a classified llm.ProviderError
// whose message is what the user sees. An HTTP error keeps its status and
// the provider's body ("529 {...}"), an error event inside the stream is
// its JSON, and a connection lost or refused is a transport failure.
func describeError(err error) error {
	var apiErr *sdk.Error
	var urlErr *url.Error
	switch {
	case errors.As(err, &apiErr):
		body := strings.TrimSpace(apiErr.RawJSON())
		if apiErr.StatusCode >= 400 {
			var h http.Header
			if apiErr.Response != nil {
				h = apiErr.Response.Header
			}
			return llm.HTTPFailure(apiErr.StatusCode, body, h, err)
		}
		if body != "" {
			// An "event: error" in a 200 stream.
			f := llm.StreamFailure(body)
			f.Err = err
			return f
		}
		return llm.TransportFailure(err.Error(), err)
	case errors.Is(err, context.Canceled):
		// The call was aborted. (A net/http timeout also matches
		// context.DeadlineExceeded: that one is a stall, classified below.)
		return err
	case errors.As(err, &urlErr):
		// The request itself failed (connection refused or reset, DNS,
		// TLS, no response headers in time).
		return llm.TransportFailure(err.Error(), err)
	}
	return llm.TransportFailure(fmt.Sprintf("anthropic stream ended unexpectedly: %v; the response ended without message_stop", err), err)
}
