package host

// This file owns the provider hooks: before_provider_request and
// before_provider_headers over a model request, after_provider_response over
// its answer.

import (
	"context"
	"net/http"
	"strings"

	"github.com/gopi-dev/gopi/core/ext"
)

// providerRequestHook runs before_provider_request over the payload the
// provider's SDK built (its JSON body: a handler's return replaces it)
// and before_provider_headers over the request's headers (names in lower
// case; a handler sets one to null, or deletes it, to remove it). A hook
// that fails leaves the request as it was and says so.
func (e *extRoom) providerRequestHook(ctx context.Context, body []byte, header http.Header) ([]byte, error) {
	m := e.manager()
	if !m.Ready() {
		return nil, nil
	}
	var out []byte
	if m.Handles("before_provider_request") {
		res, err := m.BeforeProviderRequest(ctx, body, e.snapshot())
		switch {
		case err != nil:
			e.failed("before_provider_request", err)
		case res != nil:
			out = res
		}
	}
	if m.Handles("before_provider_headers") {
		flat := lowerHeaders(header)
		res, err := m.BeforeProviderHeaders(ctx, flat, e.snapshot())
		switch {
		case err != nil:
			e.failed("before_provider_headers", err)
		case res != nil:
			for k := range flat {
				if _, ok := res[k]; !ok {
					header.Del(k)
				}
			}
			for k, v := range res {
				if v == nil {
					header.Del(k)
				} else {
					header.Set(k, *v)
				}
			}
		}
	}
	return out, nil
}

// providerResponseHook runs after_provider_response: the answer's status
// and headers (names in lower case), before its body is read. When an
// extension listens to provider_stream_event, it returns what runs it for
// each event of the answer's stream: the provider's JSON as data, each
// awaited before the SDK reads on, as in pi.
func (e *extRoom) providerResponseHook(ctx context.Context, status int, header http.Header) func([]byte) {
	h := e.h
	m := e.manager()
	if !m.Ready() {
		return nil
	}
	if m.Handles(ext.EventAfterProviderResponse) {
		ev := ext.AfterProviderResponseEvent{Status: status, Headers: lowerHeaders(header)}
		if _, err := m.Emit(ctx, ev, e.snapshot()); err != nil {
			e.failed(ext.EventAfterProviderResponse, err)
		}
	}
	model := h.agent.Model()
	if !m.Handles(ext.EventProviderStream) || model == nil {
		return nil
	}
	// One snapshot for the whole stream: nothing an extension reads
	// changes while the answer streams in.
	st := e.snapshot()
	return func(data []byte) {
		ev := ext.ProviderStreamEvent{Provider: model.Provider, API: model.API, Model: model.ID, Data: data}
		if _, err := m.Emit(ctx, ev, st); err != nil {
			e.failed(ext.EventProviderStream, err)
		}
	}
}

// lowerHeaders is header as extensions see it: one value per name, names
// in lower case.
func lowerHeaders(header http.Header) map[string]string {
	flat := make(map[string]string, len(header))
	for k, vs := range header {
		flat[strings.ToLower(k)] = strings.Join(vs, ", ")
	}
	return flat
}
