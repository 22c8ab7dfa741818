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
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/gopi-dev/gopi/core/llm"
)

// Provider streams assistant messages from the Anthropic Messages API. The
// zero value is ready to use.
type Provider struct{}

var _ llm.Provider = (*Provider)(nil)

// New returns an Anthropic provider.
func New() *Provider { return &Provider{} }

// defaultHTTPClient is used when the call brings none: the default
// transport with a bound on the wait for response headers (never on the
// body, so long streams are unaffected), as the SDK's own default does.
var defaultHTTPClient = func() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = 10 * time.Minute
		return &http.Client{Transport: t}
	}
	return http.DefaultClient
}()

const defaultBaseURL = "https://api.anthropic.com"

// Stream sends req to model and streams the reply. It follows the
// [llm.Provider] contract: a start event, then block events, then exactly
// one done or error event.
func (p *Provider) Stream(ctx context.Context, model *llm.Model, req *llm.Request) iter.Seq[llm.StreamEvent] {
	return func(yield func(llm.StreamEvent) bool) {
		if ctx == nil {
			ctx = context.Background()
		}
		b := llm.NewBuilder(model)
		if !yield(b.Start()) {
			return
		}
		if model == nil || req == nil {
			yield(b.Fail(ctx, errors.New("anthropic: missing model or request")))
			return
		}
		params, betas := buildParams(model, req)
		client := sdk.NewClient(clientOptions(model, &req.Options, betas)...)
		stream := client.Messages.NewStreaming(ctx, params)
		defer stream.Close()

		st := newStreamState(b, yield)
		for stream.Next() {
			if !st.handle(stream.Current()) {
				return // the consumer stopped; Close releases the connection
			}
		}
		if err := stream.Err(); err != nil {
			yield(b.Fail(ctx, describeError(err)))
			return
		}
		if ctx.Err() != nil {
			yield(b.Fail(ctx, ctx.Err()))
			return
		}
		if !st.stopped {
			yield(b.Fail(ctx, errEndedEarly))
			return
		}
		if st.failure != "" {
			yield(b.Fail(ctx, errors.New(st.failure)))
			return
		}
		yield(b.Done(""))
	}
}

// errEndedEarly is a stream whose body ended cleanly but before
// message_stop: a proxy or server gave up. The wording keeps it retryable
// for the agent ("ended without").
var errEndedEarly = errors.New("anthropic stream ended unexpectedly: the response ended without message_stop")

// clientOptions configures the SDK from the model and the call alone.
func clientOptions(model *llm.Model, opts *llm.Options, betas []string) []option.RequestOption {
	base := model.BaseURL
	if base == "" {
		base = defaultBaseURL
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient
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

// describeError turns an SDK error into the message the user sees. An HTTP
// error keeps its status and the provider's body ("529 {...}"), an error
// event inside the stream is its JSON, and a connection lost while reading
// the body says that the stream ended unexpectedly. The wording keeps a
// lost stream retryable for the agent ("ended without").
func describeError(err error) error {
	var apiErr *sdk.Error
	var urlErr *url.Error
	switch {
	case errors.As(err, &apiErr):
		body := strings.TrimSpace(apiErr.RawJSON())
		note := ""
		if apiErr.Response != nil {
			note = llm.RetryAfterNote(apiErr.Response.Header, time.Now())
		}
		switch {
		case apiErr.StatusCode >= 400 && body != "":
			return fmt.Errorf("%d %s%s", apiErr.StatusCode, body, note)
		case apiErr.StatusCode >= 400:
			return fmt.Errorf("%d status code (no body)%s", apiErr.StatusCode, note)
		case body != "":
			// An "event: error" in a 200 stream.
			return errors.New(body)
		}
		return err
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &urlErr):
		// The request itself failed (connection refused, DNS, TLS).
		return err
	}
	return fmt.Errorf("anthropic stream ended unexpectedly: %w; the response ended without message_stop", err)
}
