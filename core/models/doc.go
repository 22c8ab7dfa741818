// Package models owns gopi's model registry: the built-in catalog of
// Anthropic, OpenAI and Google models (embedded data, catalog/builtin.json),
// the user's models.json (custom providers, per-model overrides, compat),
// credentials (auth.json, environment variables, models.json apiKey values
// with env-var names and !commands, the --api-key override) and the
// resolution of --model and --models patterns, all with the semantics of
// the pi coding agent.
//
// Start with [Load], which always returns a usable [Registry]; its error
// describes a broken models.json or auth.json for the caller to show. Then
// [Registry.Resolve] or [Registry.ResolveCLI] for --model,
// [Registry.Scope] for --models, [Registry.Default] when neither is given,
// and [Registry.RequestAuth] before each model call.
package models
