// Package resources finds what shapes the agent besides the conversation:
// the system prompt (ours, from embedded templates) and the context files
// (AGENTS.md or CLAUDE.md) of the agent directory and of the working
// directory and its ancestors. Start with [LoadContextFiles] and
// [BuildSystemPrompt].
package resources
