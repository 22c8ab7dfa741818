// Package openai streams assistant messages from the two OpenAI API
// families on the official SDK (github.com/openai/openai-go/v3):
// [Completions] for "openai-completions" (Chat Completions, and the many
// servers that copy it: Ollama, vLLM, LM Studio, llama.cpp, OpenRouter,
// DeepSeek ...) and [Responses] for "openai-responses".
//
// Start with [NewCompletions] or [NewResponses]; both implement
// [llm.Provider]. The SDK is used only as a transport, built without
// reading OPENAI_* environment variables and with retries off (retrying is
// the agent's decision); requests are written as plain wire structs so the
// compatibility switches of [llm.OpenAICompat] control every field. The
// Responses API runs on the SDK's responses package and event types. Chat
// Completions is sent over net/http and read with the SDK's SSE decoder into
// gopi's own chunk type: the SDK's root package, which Chat Completions'
// service lives in, links every OpenAI API's types (docs/performance.md).
package openai
