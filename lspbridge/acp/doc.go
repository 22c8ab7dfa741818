// Package acp is gopi's third dialect: the Agent Client Protocol (ACP v1),
// JSON-RPC 2.0 with one message per line on stdio, as editors such as Zed
// and JetBrains speak it to an agent (docs/acp.md).
//
// Each ACP session is a runtime of its own (a core host, built by
// [Options.NewRuntime]) with its own [api.Scheduler]; a session/prompt
// becomes the runtime's prompt command and is answered once the run has
// settled, with the run's deltas and tool calls streamed before as
// session/update notifications. The wire types are those of
// github.com/coder/acp-go-sdk, generated from the official schema, and
// those it lacks are generated here from the vendored schema
// (wire_gen.go, by internal/wiregen); no ACP type is seen below this
// package.
package acp

//go:generate go run ./internal/wiregen
