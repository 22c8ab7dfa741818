package ext

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gopi-dev/gopi/core/api"
)

// Routes serve the [Peer] methods for a receiver S (gopi's host): each
// method is a typed func, its params decoded here, so a bad field is
// named in the error ([ParamError]) instead of being dropped.
type Routes[S any] map[Method]Route[S]

// Route is one method of Routes.
type Route[S any] struct {
	name    Method
	request func(ctx context.Context, s S, params json.RawMessage) (any, error)
	notify  func(s S, params json.RawMessage) error
}

// Request routes a request: f answers P with R.
func Request[S, P, R any](name Method, f func(S, context.Context, P) (R, error)) Route[S] {
	return Route[S]{name: name, request: func(ctx context.Context, s S, raw json.RawMessage) (any, error) {
		p, err := decode[P](name, raw)
		if err != nil {
			return nil, err
		}
		return f(s, ctx, p)
	}}
}

// Notification routes a notification: f takes P.
func Notification[S, P any](name Method, f func(S, P)) Route[S] {
	return Route[S]{name: name, notify: func(s S, raw json.RawMessage) error {
		p, err := decode[P](name, raw)
		if err != nil {
			return err
		}
		f(s, p)
		return nil
	}}
}

// NewRoutes indexes routes by method. A method routed twice, or one that
// is not a peer method of the protocol, or not of the kind routed
// (request or notification), is a bug: NewRoutes panics.
func NewRoutes[S any](routes ...Route[S]) Routes[S] {
	out := make(Routes[S], len(routes))
	for _, r := range routes {
		if _, dup := out[r.name]; dup {
			panic("ext: method routed twice: " + string(r.name))
		}
		if sp, ok := spec(PeerSide, r.name); !ok || sp.Notification != (r.notify != nil) {
			panic("ext: " + string(r.name) + " is routed as a kind of peer method protocol.go does not have")
		}
		out[r.name] = r
	}
	return out
}

// Request answers a request for s: [ErrNoMethod] when none is routed by
// that name, a [*ParamError] for params that do not fit.
func (r Routes[S]) Request(ctx context.Context, s S, method Method, params json.RawMessage) (any, error) {
	route, ok := r[method]
	if !ok || route.request == nil {
		return nil, fmt.Errorf("%w: gopi has no extension method %q", ErrNoMethod, method)
	}
	return route.request(ctx, s, params)
}

// Notify delivers a notification to s, with Request's errors.
func (r Routes[S]) Notify(s S, method Method, params json.RawMessage) error {
	route, ok := r[method]
	if !ok || route.notify == nil {
		return fmt.Errorf("%w: gopi has no extension notification %q", ErrNoMethod, method)
	}
	return route.notify(s, params)
}

// ParamError says which field of a method's params was wrong.
type ParamError struct {
	Method Method
	Field  string
	Reason string
}

func (e *ParamError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("invalid %s params: %s", e.Method, e.Reason)
	}
	return fmt.Sprintf("invalid %s params: field %q %s", e.Method, e.Field, e.Reason)
}

func (e *ParamError) Unwrap() error { return ErrInvalidParams }

// decode reads params into P (none, or null, is {}), naming the
// offending field on a type error in core/api's words.
func decode[P any](name Method, params json.RawMessage) (P, error) {
	p, fe := api.DecodeObject[P](params)
	if fe != nil {
		return p, &ParamError{Method: name, Field: fe.Field, Reason: fe.Reason}
	}
	return p, nil
}
