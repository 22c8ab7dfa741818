// Package openai streams assistant messages from the two OpenAI API
// families on the official SDK (github.com/openai/openai-go/v3):
// [Completions] for "openai-completions" (Chat Completions, and the many
// servers that copy it: Ollama, vLLM, LM Studio, llama.cpp, OpenRouter,
// DeepSeek ...) and [Responses] for "openai-responses".
//
// Start with [NewCompletions] or [NewResponses]; both implement
// [llm.Provider]. The SDK is used only as a transport: the client is built
// without reading OPENAI_* environment variables and with retries off
// (retrying is the agent's decision), requests are written as plain wire
// structs so the compatibility switches of [llm.OpenAICompat] control every
// field, and the SDK's SSE decoder and event types read the stream.
package openai
