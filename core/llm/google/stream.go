package google

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/genai"

	"github.com/gopi-dev/gopi/core/llm"
)

// streamState maps Gemini response chunks onto a Builder. Gemini sends
// parts, not blocks: consecutive text parts continue one text block,
// consecutive thought parts one thinking block, and a functionCall part is
// a whole tool call.
type streamState struct {
	b     *llm.Builder
	yield func(llm.StreamEvent) bool

	// open is the index of the text or thinking block being continued, or
	// -1; openKind says which.
	open     int
	openKind llm.ContentType

	gotChunk      bool
	haveID        bool
	toolIDs       map[string]bool
	finishReason  genai.FinishReason
	finishMessage string
	blockReason   string
}

func newStreamState(b *llm.Builder, yield func(llm.StreamEvent) bool) *streamState {
	return &streamState{b: b, yield: yield, open: -1, toolIDs: map[string]bool{}}
}

// handle applies one chunk; false means the consumer stopped.
func (s *streamState) handle(resp *genai.GenerateContentResponse) bool {
	if resp == nil {
		return true
	}
	s.gotChunk = true
	if resp.ResponseID != "" && !s.haveID {
		s.b.SetResponseID(resp.ResponseID)
		s.haveID = true
	}
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
		s.blockReason = string(pf.BlockReason)
		if pf.BlockReasonMessage != "" {
			s.blockReason += ": " + pf.BlockReasonMessage
		}
	}
	if len(resp.Candidates) > 0 && resp.Candidates[0] != nil {
		c := resp.Candidates[0]
		if c.Content != nil {
			for _, p := range c.Content.Parts {
				if p != nil && !s.part(p) {
					return false
				}
			}
		}
		if c.FinishReason != "" && c.FinishReason != genai.FinishReasonUnspecified {
			s.finishReason = c.FinishReason
			s.finishMessage = c.FinishMessage
		}
	}
	if u := resp.UsageMetadata; u != nil {
		// Each chunk carries running totals, so the last one wins.
		usage := s.b.Usage()
		usage.Input = int(u.PromptTokenCount - u.CachedContentTokenCount)
		usage.CacheRead = int(u.CachedContentTokenCount)
		usage.CacheWrite = 0
		usage.Output = int(u.CandidatesTokenCount + u.ThoughtsTokenCount)
		s.b.FinishUsage()
	}
	return true
}

func (s *streamState) part(p *genai.Part) bool {
	var sig string
	if len(p.ThoughtSignature) > 0 {
		sig = base64.StdEncoding.EncodeToString(p.ThoughtSignature)
	}
	if fc := p.FunctionCall; fc != nil {
		return s.closeOpen() && s.toolCall(fc, sig)
	}
	if p.Text == "" && sig == "" {
		return true // an empty part, as Gemini sometimes sends last
	}
	kind := llm.ContentText
	if p.Thought {
		kind = llm.ContentThinking
	}
	if s.open < 0 || s.openKind != kind {
		if !s.closeOpen() {
			return false
		}
		var ev llm.StreamEvent
		if kind == llm.ContentThinking {
			s.open, ev = s.b.BeginThinking()
		} else {
			s.open, ev = s.b.BeginText()
		}
		s.openKind = kind
		if !s.yield(ev) {
			return false
		}
	}
	// A later part of the same block may come without the signature; keep
	// the last one seen.
	if sig != "" {
		if kind == llm.ContentThinking {
			s.b.SetThinkingSignature(s.open, sig)
		} else {
			s.b.SetTextSignature(s.open, sig)
		}
	}
	if p.Text == "" {
		return true
	}
	if kind == llm.ContentThinking {
		return s.yield(s.b.ThinkingDelta(s.open, p.Text))
	}
	return s.yield(s.b.TextDelta(s.open, p.Text))
}

// toolCallSeq makes generated tool call ids unique within the process.
var toolCallSeq atomic.Int64

func (s *streamState) toolCall(fc *genai.FunctionCall, sig string) bool {
	id := fc.ID
	if id == "" || s.toolIDs[id] {
		id = fmt.Sprintf("%s_%d_%d", fc.Name, time.Now().UnixMilli(), toolCallSeq.Add(1))
	}
	s.toolIDs[id] = true
	i, ev := s.b.BeginToolCall(id, fc.Name)
	if !s.yield(ev) {
		return false
	}
	args := json.RawMessage("{}")
	if fc.Args != nil {
		if raw, err := json.Marshal(fc.Args); err == nil {
			args = raw
		}
	}
	s.b.SetToolCallArguments(i, args)
	if sig != "" {
		s.b.SetThoughtSignature(i, sig)
	}
	// Gemini sends arguments whole; one delta carries them for consumers
	// that rebuild the message from deltas.
	delta := llm.StreamEvent{Type: llm.EventToolCallDelta, ContentIndex: i, Delta: string(args), Partial: s.b.Message()}
	if !s.yield(delta) {
		return false
	}
	return s.yield(s.b.EndToolCall(i))
}

// closeOpen ends the open text or thinking block, if any.
func (s *streamState) closeOpen() bool {
	if s.open < 0 {
		return true
	}
	i := s.open
	s.open = -1
	return s.yield(s.b.End(i))
}

// finish closes the message after the stream ended cleanly: the open
// block, then the stop reason or the error the message fails with. After
// the consumer stopped what it returns is dropped.
func (s *streamState) finish() (llm.StopReason, error) {
	if !s.closeOpen() {
		return "", nil
	}
	if s.blockReason != "" {
		return "", fmt.Errorf("%w (%s)", errPromptBlocked, s.blockReason)
	}
	s.b.SetRawStopReason(string(s.finishReason))
	switch {
	case s.finishReason == "":
		return "", errNoFinishReason
	case s.b.HasToolCalls():
		return llm.StopToolUse, nil
	case s.finishReason == genai.FinishReasonStop:
		return llm.StopStop, nil
	case s.finishReason == genai.FinishReasonMaxTokens:
		return llm.StopLength, nil
	default:
		if s.finishMessage != "" {
			return "", fmt.Errorf("%w %s: %s", errFinishReason, s.finishReason, s.finishMessage)
		}
		return "", fmt.Errorf("%w %s", errFinishReason, s.finishReason)
	}
}

// describeError turns an SDK error into the message the user sees. HTTP
// and in-stream API errors keep the status code and Google's error body; a
// dropped connection says so, in words the agent's retry check knows.
func describeError(ctx context.Context, err error, gotChunk bool) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		return apiFailure(apiErr)
	}
	var apiErrPtr *genai.APIError
	if errors.As(err, &apiErrPtr) && apiErrPtr != nil {
		return apiFailure(*apiErrPtr)
	}
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return llm.TransportFailure(fmt.Sprintf("google: connection lost mid-stream: %v", err), err)
	case gotChunk:
		return llm.TransportFailure(fmt.Sprintf("google: stream failed: %v", err), err)
	default:
		return llm.TransportFailure(fmt.Sprintf("google: request failed: %v", err), err)
	}
}

// apiFailure classifies an error answer by its HTTP code and Google's
// status name (RESOURCE_EXHAUSTED, UNAVAILABLE, ...). The SDK does not
// expose the response headers, so there is no Retry-After to carry.
func apiFailure(e genai.APIError) *llm.ProviderError {
	se := &statusError{e}
	typ := e.Status
	if strings.HasPrefix(typ, fmt.Sprint(e.Code)+" ") {
		typ = "" // the HTTP status line, not Google's status name
	}
	return &llm.ProviderError{Status: e.Code, Type: typ, Message: se.Error(), Err: se}
}

// statusError is an error answer from the API: its HTTP code, then the
// body as Google sent it ({"error":{"code","message","status"}}), or the
// plain text when the body was not JSON.
type statusError struct{ e genai.APIError }

func (s *statusError) Error() string {
	e := s.e
	// The SDK sets Status to the HTTP status line when the body was not
	// Google's JSON error; Message is then the raw body.
	if strings.HasPrefix(e.Status, fmt.Sprint(e.Code)+" ") {
		return fmt.Sprintf("%s: %s", e.Status, e.Message)
	}
	body, err := json.Marshal(struct {
		Error genai.APIError `json:"error"`
	}{e})
	if err != nil {
		return e.Error()
	}
	return fmt.Sprintf("%d %s", e.Code, body)
}

func (s *statusError) Unwrap() error { return s.e }
