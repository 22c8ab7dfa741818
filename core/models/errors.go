package models

import (
	"errors"
)

// Sentinels for pattern resolution; the errors returned wrap one of them
// and read as pi's messages.
var (
	ErrNoModels        = errors.New("no models")
	ErrUnknownProvider = errors.New("unknown provider")
	ErrModelNotFound   = errors.New("model not found")
)

// Sentinels for models.json and providers registered at run time. The
// errors returned wrap one of them with the file, or the provider and
// model, and read as pi's messages (models.json) or in the same manner.
var (
	ErrParseModels          = errors.New("Failed to parse models.json")
	ErrModelsSchema         = errors.New("Invalid models.json schema")
	ErrInvalidContextWindow = errors.New("invalid contextWindow")
	ErrInvalidMaxTokens     = errors.New("invalid maxTokens")

	errEmptyProvider = errors.New(`must specify "baseUrl", "headers", "compat", "modelOverrides", or "models".`)
	errNoBaseURL     = errors.New(`"baseUrl" is required when defining custom models.`)
	errNoKey         = errors.New(`"apiKey" is required when defining custom models.`)
	errNoAPI         = errors.New(`no "api" specified. Set at provider or model level.`)

	errNoProviderName   = errors.New("a provider needs a name")
	errEmptyDynamic     = errors.New(`must specify "baseUrl", "apiKey", "headers", "compat", "modelOverrides", or "models"`)
	errDynamicNoBaseURL = errors.New(`no "baseUrl"; set it on the provider or the model`)
	errDynamicNoAPI     = errors.New(`no "api"; set it on the provider or the model`)
	errNotObject        = errors.New("not an object")
	errMalformedAuth    = errors.New("malformed entries for")
	errKeyCommandSilent = errors.New("command printed nothing")
)

// resolveError carries pi's user-facing text and a sentinel to test for.
type resolveError struct {
	msg  string
	kind error
}

func (e *resolveError) Error() string { return e.msg }
func (e *resolveError) Unwrap() error { return e.kind }

// ErrNoAPIKey is matched (errors.Is) by every [*NoAPIKeyError].
var ErrNoAPIKey = errors.New("no API key")

// NoAPIKeyError says a model's provider has no usable credentials.
type NoAPIKeyError struct {
	Provider string
	// OAuth is set when auth.json holds an OAuth login for the provider,
	// which gopi does not support.
	OAuth bool
}

func (e *NoAPIKeyError) Error() string {
	msg := "No API key found for " + e.Provider + "."
	if e.OAuth {
		msg += " auth.json holds an OAuth login for it, which gopi does not support; store an API key instead."
	}
	return msg
}

// Is makes errors.Is(err, ErrNoAPIKey) true.
func (e *NoAPIKeyError) Is(target error) bool { return target == ErrNoAPIKey }
