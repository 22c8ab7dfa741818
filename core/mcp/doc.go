// Package mcp connects gopi to Model Context Protocol servers as pi 1.5.2
// does (mcp.md of pi's documents): the mcp.json configuration (config.go)
// and, on the official Go SDK, the connections and the tools they offer.
//
// A [Manager] connects the configured servers in the background
// (client.go; stdio servers run in their own process group, stdio.go) and
// offers their tools as agent tools ([Tool], tool.go), whose results
// reach the model as pi gives them (result.go). Start with [NewManager].
//
// This package is being built in steps (issue 29); docs/mcp.md says what
// works today and what does not yet.
package mcp
