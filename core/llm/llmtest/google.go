package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// googleDialect speaks Gemini's streamGenerateContent with alt=sse: every
// event is a data-only GenerateContentResponse chunk. Text and thinking are
// split into ChunkSize parts (thinking parts carry "thought": true), a tool
// call is one functionCall part with its whole args, and the last chunk
// carries finishReason and the complete usageMetadata.
//
// A Block's Signature becomes the thoughtSignature of its last part (text,
// thinking or functionCall), the way Gemini signs the part that closes a
// block. A tool call's ID is sent as functionCall.id only when set; the
// Gemini API itself usually sends none.
type googleDialect struct{}

func init() { dialects = append(dialects, googleDialect{}) }

func (googleDialect) match(path string) bool {
	return strings.Contains(path, ":streamGenerateContent")
}

// Gemini wire shapes, only as much as the tests need.
type (
	geminiChunk struct {
		Candidates    []geminiCandidate `json:"candidates,omitempty"`
		UsageMetadata *geminiUsage      `json:"usageMetadata,omitempty"`
		ModelVersion  string            `json:"modelVersion,omitempty"`
		ResponseID    string            `json:"responseId,omitempty"`
	}
	geminiCandidate struct {
		Content      *geminiContent `json:"content,omitempty"`
		FinishReason string         `json:"finishReason,omitempty"`
		Index        int            `json:"index"`
	}
	geminiContent struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	}
	geminiPart struct {
		Text             string              `json:"text,omitempty"`
		Thought          bool                `json:"thought,omitempty"`
		ThoughtSignature string              `json:"thoughtSignature,omitempty"`
		FunctionCall     *geminiFunctionCall `json:"functionCall,omitempty"`
	}
	geminiFunctionCall struct {
		ID   string          `json:"id,omitempty"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	}
	geminiUsage struct {
		PromptTokenCount        int `json:"promptTokenCount"`
		CandidatesTokenCount    int `json:"candidatesTokenCount,omitempty"`
		ThoughtsTokenCount      int `json:"thoughtsTokenCount,omitempty"`
		CachedContentTokenCount int `json:"cachedContentTokenCount,omitempty"`
		TotalTokenCount         int `json:"totalTokenCount"`
	}
)

// geminiUsageOf spreads a neutral usage over Gemini's counters: the prompt
// count includes the cached tokens, and when the turn thinks a third of the
// output is reported as thoughts (candidates + thoughts = Output).
func geminiUsageOf(t *Turn, final bool) *geminiUsage {
	u := &geminiUsage{
		PromptTokenCount:        t.Usage.Input + t.Usage.CacheRead,
		CachedContentTokenCount: t.Usage.CacheRead,
	}
	if final {
		thoughts := 0
		for _, b := range t.Blocks {
			if b.Kind == KindThinking {
				thoughts = t.Usage.Output / 3
				break
			}
		}
		u.ThoughtsTokenCount = thoughts
		u.CandidatesTokenCount = t.Usage.Output - thoughts
	}
	u.TotalTokenCount = u.PromptTokenCount + u.CandidatesTokenCount + u.ThoughtsTokenCount
	return u
}

func geminiFinishReason(neutral string) string {
	switch neutral {
	case "stop", "toolUse":
		return "STOP"
	case "length":
		return "MAX_TOKENS"
	default:
		// Anything else ("SAFETY", "RECITATION", ...) is sent verbatim.
		return neutral
	}
}

func (googleDialect) events(t *Turn, n int, model string) [][]byte {
	if model == "" {
		model = "gemini-llmtest"
	}
	id := t.responseID(n)
	chunk := func(parts ...geminiPart) []byte {
		return sse("", geminiChunk{
			Candidates:    []geminiCandidate{{Content: &geminiContent{Role: "model", Parts: parts}}},
			UsageMetadata: geminiUsageOf(t, false),
			ModelVersion:  model,
			ResponseID:    id,
		})
	}
	var out [][]byte
	for _, b := range t.Blocks {
		switch b.Kind {
		case KindText, KindThinking:
			pieces := chunks(b.Text, t.ChunkSize)
			if len(pieces) == 0 {
				pieces = []string{""}
			}
			for i, p := range pieces {
				part := geminiPart{Text: p, Thought: b.Kind == KindThinking}
				if i == len(pieces)-1 {
					part.ThoughtSignature = b.Signature
				}
				out = append(out, chunk(part))
			}
		case KindToolCall:
			args := json.RawMessage(b.Args)
			if strings.TrimSpace(b.Args) == "" {
				args = json.RawMessage("{}")
			}
			out = append(out, chunk(geminiPart{
				FunctionCall:     &geminiFunctionCall{ID: b.ID, Name: b.Name, Args: args},
				ThoughtSignature: b.Signature,
			}))
		}
	}
	out = append(out, sse("", geminiChunk{
		Candidates:    []geminiCandidate{{FinishReason: geminiFinishReason(t.stopReason())}},
		UsageMetadata: geminiUsageOf(t, true),
		ModelVersion:  model,
		ResponseID:    id,
	}))
	return out
}

// googleStatus is the canonical gRPC status name Google puts next to an
// HTTP code.
func googleStatus(code int) (status, message string) {
	switch code {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT", "Request contains an invalid argument."
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED", "API key not valid. Please pass a valid API key."
	case http.StatusForbidden:
		return "PERMISSION_DENIED", "The caller does not have permission."
	case http.StatusNotFound:
		return "NOT_FOUND", "The requested model was not found."
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."
	case http.StatusInternalServerError:
		return "INTERNAL", "An internal error has occurred."
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE", "The model is overloaded. Please try again later."
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED", "The request timed out."
	default:
		return "UNKNOWN", fmt.Sprintf("llmtest: scripted HTTP %d", code)
	}
}

func (googleDialect) errorBody(status int) string {
	name, msg := googleStatus(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": status, "message": msg, "status": name,
	}})
	return string(b)
}

// GoogleURL is the baseUrl to give a google-generative-ai model, with the
// API version as the last path segment the way pi's catalog writes it.
func (s *Server) GoogleURL() string { return s.URL() + "/v1beta" }
