package llm

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Issue 10: classification follows the status and the provider's error
// type, never words in the body.
func TestProviderErrorTransient(t *testing.T) {
	cases := []struct {
		name string
		err  *ProviderError
		want bool
	}{
		{"400 mentioning timeout and 529", HTTPFailure(400, `{"error":{"type":"invalid_request_error","message":"max_tokens 205000 over limit; timeout 529"}}`, nil, nil), false},
		{"401", HTTPFailure(401, `{"error":{"type":"authentication_error"}}`, nil, nil), false},
		{"404 overloaded words", HTTPFailure(404, `model overloaded_error not found`, nil, nil), false},
		{"408", HTTPFailure(408, ``, nil, nil), true},
		{"429", HTTPFailure(429, `{"error":{"type":"rate_limit_error"}}`, nil, nil), true},
		{"429 insufficient quota", HTTPFailure(429, `{"error":{"type":"insufficient_quota","code":"insufficient_quota"}}`, nil, nil), false},
		{"500", HTTPFailure(500, `oops`, nil, nil), true},
		{"503", HTTPFailure(503, ``, nil, nil), true},
		{"529", HTTPFailure(529, `{"type":"error","error":{"type":"overloaded_error"}}`, nil, nil), true},
		{"stream overloaded", StreamFailure(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), true},
		{"stream invalid request", StreamFailure(`{"type":"error","error":{"type":"invalid_request_error","message":"timeout"}}`), false},
		{"stream google unavailable", StreamFailure(`{"error":{"code":503,"status":"UNAVAILABLE"}}`), true},
		{"stream connection closed, no type", StreamFailure(`{"error":{"message":"Connection closed."}}`), true},
		{"stream bare socket error", StreamFailure(`{"type":"error","error":{"message":"write EPIPE"}}`), true},
		{"stream socket error as text", StreamFailure(`connect ETIMEDOUT 10.0.0.1:443`), true},
		{"stream code inside a word", StreamFailure(`{"error":{"message":"Invalid value for 'ECONNRESETS'"}}`), false},
		{"stream typed permanent naming a connection", StreamFailure(`{"error":{"type":"invalid_request_error","message":"connection reset"}}`), false},
		{"stream no type, not a connection", StreamFailure(`{"error":{"message":"Invalid prompt"}}`), false},
		{"cut stream", TransportFailure("stream cut", nil), true},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.err.Transient(), c.name)
	}
}

func TestHTTPFailureFields(t *testing.T) {
	e := HTTPFailure(429, ` {"error":{"type":"rate_limit_error","message":"slow"}} `, http.Header{"Retry-After": {"7"}}, nil)
	assert.Equal(t, 429, e.Status)
	assert.Equal(t, "rate_limit_error", e.Type)
	assert.Equal(t, "7s", e.RetryAfter.String())
	assert.Equal(t, `429 {"error":{"type":"rate_limit_error","message":"slow"}}`, e.Message, "no retry note in the text")
	assert.Equal(t, "503 status code (no body)", HTTPFailure(503, "", nil, nil).Message)

	wrapped := fmt.Errorf("context: %w", e)
	assert.Same(t, e, FailureOf(wrapped))
	assert.Nil(t, FailureOf(fmt.Errorf("plain")))
}

func TestErrorType(t *testing.T) {
	for body, want := range map[string]string{
		`{"type":"error","error":{"type":"overloaded_error"}}`:             "overloaded_error",
		`{"error":{"message":"x","type":"","code":"rate_limit_exceeded"}}`: "rate_limit_exceeded",
		`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}`:             "RESOURCE_EXHAUSTED",
		`{"type":"server_error"}`:                                          "server_error",
		`not json`:                                                         "",
		`[]`:                                                               "",
	} {
		assert.Equal(t, want, ErrorType(body), body)
	}
}
