// Package agent owns the agent loop: it streams an assistant message from
// a provider, runs the tools it asks for (in parallel, results kept in call
// order), feeds steering and follow-up messages in between, and reports
// every step as an [Event] with pi's exact JSON.
//
// Start with [New] and [Config]; run with [Agent.Prompt] or
// [Agent.Continue] and watch with [Agent.Subscribe]. Tools are injected
// ([Tool]); the built-in ones live in core/tools, which this package does
// not import.
package agent
