// Package host is gopi's session runtime (pi's AgentSession): it owns the
// agent, the session store, the model registry and the tools, persists
// every message as it ends, and turns agent events into client events.
//
// Build one with [New] from [Options]; cmd/gopi does the wiring. The wire
// dialects reach it through core/api.
package host
