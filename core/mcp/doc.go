// Package mcp connects gopi to Model Context Protocol servers as pi 1.6.0
// does (mcp.md of pi's documents): the mcp.json configuration and, on the
// official Go SDK, the connections and the tools they offer.
//
// The configuration side: [Load] reads and merges the user's and the
// trusted project's mcp.json into a [Config], reporting each invalid
// entry ([ValidateServer] holds pi's rules); [ToolName] is a tool's
// mcp__<server>__<tool> (names.go, where [Manager.Tools] makes every
// name one tool's across servers); [Server.ToolExposureOf] is a tool's
// exposure; an [Expander] expands ${VAR}, !command and ~/ when a server
// starts; [AddServer] and [RemoveServer] edit a file for `gopi mcp`.
//
// A [Manager] connects the configured servers in the background
// (client.go; stdio servers run in their own process group, stdio.go) and
// offers their tools as agent tools ([Tool], tool.go), whose results
// reach the model as pi gives them (result.go). Servers that offer
// resources are reached through pi's three resource tools
// ([Manager.ResourceTools], resources.go). Start with [NewManager].
//
// OAuth, as pi does it: an HTTP server without an Authorization header
// sends the token stored for it in <agentDir>/mcp-auth.json ([AuthStore],
// pi's file and shape) and refreshes it, through the SDK transport's
// OAuth hook (oauth.go); a server that needs the user to sign in is
// [StateNeedsAuth]. [SignIn] is `gopi mcp login`, on the SDK's
// authorization code handler (signin.go).
//
// This package is being built in steps (issue 29); docs/mcp.md says what
// works today and what does not yet.
package mcp
