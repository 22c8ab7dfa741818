package llm

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ProviderError is a failed request or stream, as the provider packages
// classify it. The runtime decides from these fields whether another
// attempt is worth it, never from the message text: a permanent 400 whose
// body happens to contain "timeout" or "529" is not retried. The one
// reading of text is in StreamFailure, for an in-stream error that has
// neither status nor type.
type ProviderError struct {
	// Status is the HTTP status of the answer; 0 when there was none (the
	// connection failed, or an error arrived inside a 200 stream).
	Status int
	// Type is the provider's error type or code when it sent one:
	// Anthropic's error.type ("overloaded_error"), OpenAI's error.code or
	// error.type ("rate_limit_exceeded", "server_error"), Google's status
	// ("RESOURCE_EXHAUSTED").
	Type string
	// Transport marks a connection that failed or a stream that was cut or
	// stalled: no answer, or an answer that stopped midway.
	Transport bool
	// RetryAfter is how long the server asked the client to wait
	// (Retry-After, retry-after-ms); 0 when it did not say.
	RetryAfter time.Duration
	// Message is what users see: the status and the provider's words.
	Message string
	// Err is the underlying error, if any.
	Err error
}

func (e *ProviderError) Error() string { return e.Message }
func (e *ProviderError) Unwrap() error { return e.Err }

// transientTypes are provider error types that say "try again later".
var transientTypes = map[string]bool{
	// Anthropic
	"overloaded_error": true, "rate_limit_error": true, "api_error": true, "timeout_error": true,
	// OpenAI and OpenAI-compatible servers
	"rate_limit_exceeded": true, "server_error": true, "server_is_overloaded": true,
	"slow_down": true, "internal_server_error": true, "service_unavailable": true, "overloaded": true,
	// Google
	"RESOURCE_EXHAUSTED": true, "UNAVAILABLE": true, "INTERNAL": true, "DEADLINE_EXCEEDED": true,
}

// Transient reports whether the failure is worth another attempt: a
// broken connection or stream, a rate limit or overload (408, 409, 425,
// 429, 5xx, 529), or an error type that says the same inside a stream.
// Quota errors that no wait fixes (OpenAI's insufficient_quota on a 429)
// are not.
func (e *ProviderError) Transient() bool {
	if e.Type == "insufficient_quota" {
		return false
	}
	switch {
	case e.Transport:
		return true
	case e.Status == http.StatusRequestTimeout, e.Status == http.StatusConflict,
		e.Status == http.StatusTooEarly, e.Status == http.StatusTooManyRequests:
		return true
	case e.Status >= 500:
		return true
	case e.Status >= 400:
		return false
	}
	return transientTypes[e.Type]
}

// FailureOf returns the ProviderError in err's chain, or nil.
func FailureOf(err error) *ProviderError {
	var pe *ProviderError
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}

// HTTPFailure builds the error for an HTTP answer with a failing status:
// the message is "STATUS BODY" (the body as the provider sent it, trimmed,
// or the status text when empty), the type comes from the body's JSON,
// and the wait from the retry headers.
func HTTPFailure(status int, body string, header http.Header, err error) *ProviderError {
	body = strings.TrimSpace(body)
	msg := strconv.Itoa(status) + " " + body
	if body == "" {
		msg = strconv.Itoa(status) + " status code (no body)"
	}
	return &ProviderError{
		Status:     status,
		Type:       ErrorType(body),
		RetryAfter: RetryAfterHeader(header, time.Now()),
		Message:    msg,
		Err:        err,
	}
}

// StreamFailure builds the error for an error that arrived inside a
// stream (a 200 answer): body is the error as the provider sent it.
func StreamFailure(body string) *ProviderError {
	body = strings.TrimSpace(body)
	f := &ProviderError{Type: ErrorType(body), Message: body}
	// Without a type there is only the message: a gateway that lost its
	// upstream connection relays that as "Connection closed." or a bare
	// socket error ("read ECONNRESET"), a transport failure like one of
	// our own connections.
	f.Transport = f.Type == "" && brokenConnection().MatchString(errorMessage(body))
	return f
}

// brokenConnection matches an error message that reports a broken or
// failed connection; a socket error code counts as a whole word only.
var brokenConnection = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)connection (?:closed|reset|lost|refused|aborted)|other side closed|socket hang up|(?:^|[^a-z0-9_])(?:ECONNRESET|ECONNABORTED|ECONNREFUSED|ETIMEDOUT|EPIPE)(?:$|[^a-z0-9_])`)
})

// errorMessage is the message of an error body: error.message, else the
// top-level message, else the body itself.
func errorMessage(body string) string {
	var v struct {
		Message any `json:"message"`
		Error   any `json:"error"`
	}
	if json.Unmarshal([]byte(body), &v) != nil {
		return body
	}
	if e, ok := v.Error.(map[string]any); ok {
		if m, ok := e["message"].(string); ok {
			return m
		}
	}
	if m, ok := v.Error.(string); ok {
		return m
	}
	if m, ok := v.Message.(string); ok {
		return m
	}
	return body
}

// TransportFailure wraps a broken connection or stream.
func TransportFailure(msg string, err error) *ProviderError {
	return &ProviderError{Transport: true, Message: msg, Err: err}
}

// ErrorType finds the provider's error type in an error body: the first
// of error.type, error.code, error.status, then the top-level type and
// code, skipping Anthropic's envelope type "error".
func ErrorType(body string) string {
	var v struct {
		Type  any `json:"type"`
		Code  any `json:"code"`
		Error *struct {
			Type   any `json:"type"`
			Code   any `json:"code"`
			Status any `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &v) != nil {
		return ""
	}
	var candidates []any
	if v.Error != nil {
		candidates = append(candidates, v.Error.Type, v.Error.Code, v.Error.Status)
	}
	candidates = append(candidates, v.Type, v.Code)
	for _, c := range candidates {
		if s, ok := c.(string); ok && s != "" && s != "error" {
			return s
		}
	}
	return ""
}
