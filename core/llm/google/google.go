// Package google is the [llm.Provider] for the "google-generative-ai" API
// family (the Gemini API), built on google.golang.org/genai. Call [New] and
// use [Provider.Stream]. Request building (messages, tools, thinking) lives
// in convert.go, the mapping of the response stream onto an [llm.Builder]
// in stream.go.
//
// The SDK is configured only from the model and the call's options. It is
// pinned to the Gemini API backend with an explicit base URL, so
// GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_CLOUD_PROJECT/LOCATION and
// GOOGLE_GEMINI_BASE_URL never apply; a call without a key sends none
// instead of picking up GOOGLE_API_KEY or GEMINI_API_KEY. HTTP retries and
// the SDK's automatic stream continuation are off: retry policy belongs to
// the agent.
package google

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/gopi-dev/gopi/core/llm"
)

// Provider streams assistant messages from the Gemini API. The zero value
// is ready to use.
type Provider struct{}

var _ llm.Provider = (*Provider)(nil)

// New returns a Google Generative AI provider.
func New() *Provider { return &Provider{} }

// DefaultBaseURL is used when a model names no baseUrl.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/v1beta"

// Stream sends req to model and streams the reply. llm.RunStream keeps
// the [llm.Provider] contract; call holds what is Gemini's own.
func (p *Provider) Stream(ctx context.Context, model *llm.Model, req *llm.Request) iter.Seq[llm.StreamEvent] {
	return llm.RunStream(ctx, model, req, errNoRequest, func(r *llm.StreamRun) llm.StreamCall {
		return &call{model: model, req: req, st: newStreamState(r.Builder(), r.Emit)}
	})
}

// call is one request to the Gemini API.
type call struct {
	model *llm.Model
	req   *llm.Request
	st    *streamState
}

// Read sends the request and maps its response chunks onto the builder.
func (c *call) Read(ctx context.Context) error {
	client, err := newClient(ctx, c.model, &c.req.Options)
	if err != nil {
		return fmt.Errorf("google: creating client: %w", err)
	}
	contents := convertMessages(c.model, c.req.Messages)
	config := buildConfig(c.model, c.req)
	for resp, err := range client.Models.GenerateContentStream(ctx, c.model.ID, contents, config) {
		if err != nil {
			return describeError(ctx, err, c.st.gotChunk)
		}
		if !c.st.handle(resp) {
			return nil // the consumer stopped; leaving the loop closes the body
		}
	}
	return nil
}

// Finish closes the open block and turns Gemini's finish reason into the
// stop reason.
func (c *call) Finish() (llm.StopReason, error) { return c.st.finish() }

// noKey stands in for a missing API key: the SDK would otherwise fill an
// empty key from GOOGLE_API_KEY or GEMINI_API_KEY. keylessTransport strips
// it before the request leaves.
const noKey = "gopi-google-no-api-key"

const apiKeyHeader = "x-goog-api-key"

type keylessTransport struct{ base http.RoundTripper }

func (t keylessTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get(apiKeyHeader) == noKey {
		r = r.Clone(r.Context())
		r.Header.Del(apiKeyHeader)
	}
	return t.base.RoundTrip(r)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// wrapped transport.
func (t keylessTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// newClient builds an SDK client for one call. Nothing is read from the
// environment: backend, base URL and key are always set explicitly.
func newClient(ctx context.Context, model *llm.Model, opts *llm.Options) (*genai.Client, error) {
	base := model.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	base, version := splitAPIVersion(base)

	headers := http.Header{}
	for k, v := range model.Headers {
		headers.Set(k, v)
	}
	for k, v := range opts.Headers {
		headers.Set(k, v)
	}

	hc := opts.HTTPClient
	if hc == nil {
		hc = llm.DefaultHTTPClient
	}
	key := opts.APIKey
	if key == "" {
		// A key given as a header (models.json "headers") still counts.
		key = headers.Get(apiKeyHeader)
	}
	if key == "" {
		key = noKey
		c := *hc
		rt := c.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
		c.Transport = keylessTransport{base: rt}
		hc = &c
	}

	return genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:     key,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: hc,
		HTTPOptions: genai.HTTPOptions{
			BaseURL:    base,
			APIVersion: version,
			Headers:    headers,
			// One attempt: the agent owns retries and shows them.
			RetryOptions: &genai.HTTPRetryOptions{Attempts: genai.Ptr[int32](1)},
		},
	})
}

// versionSegment matches an API version path segment: v1, v1beta, v1alpha2.
var versionSegment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v\d+((alpha|beta)\d*)?$`) })

// splitAPIVersion splits a trailing API version off a base URL. pi's models
// name the version in baseUrl (".../v1beta"), while the Go SDK joins
// BaseURL and APIVersion itself and would otherwise add a second one. A URL
// without a version segment is returned whole with an empty version, and
// the SDK's default version applies.
func splitAPIVersion(raw string) (base, version string) {
	u, err := url.Parse(raw)
	if err != nil {
		return raw, ""
	}
	p := strings.TrimRight(u.Path, "/")
	i := strings.LastIndex(p, "/")
	if i < 0 || !versionSegment().MatchString(p[i+1:]) {
		return raw, ""
	}
	version = p[i+1:]
	u.Path = p[:i+1]
	u.RawPath = ""
	return u.String(), version
}
