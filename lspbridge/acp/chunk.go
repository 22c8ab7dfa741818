package acp

import (
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/rpc"
)

// chunk is the session/update of one streamed delta, the notification a
// reply sends thousands of times: agent_message_chunk or
// agent_thought_chunk with a text block. It writes its JSON directly
// (rpc.Appender), the same keys as the SDK's types give, without their
// reflection and union marshalling.
type chunk struct {
	sessionID string
	kind      string // "agent_message_chunk" or "agent_thought_chunk"
	text      string
}

var _ rpc.Appender = chunk{}

func (c chunk) AppendJSON(dst []byte) ([]byte, bool) {
	dst = append(dst, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`...)
	dst = llm.AppendJSONString(dst, c.sessionID)
	dst = append(dst, `,"update":{"sessionUpdate":"`...)
	dst = append(dst, c.kind...)
	dst = append(dst, `","content":{"type":"text","text":`...)
	dst = llm.AppendJSONString(dst, c.text)
	return append(dst, "}}}}"...), true
}

// sendChunk writes one delta; s.mu is held.
func (s *session) sendChunk(kind, text string) {
	if err := s.w.send(chunk{s.id, kind, text}); err != nil {
		s.report(err)
	}
}
