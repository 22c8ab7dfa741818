package llmtest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestGoogleDialect(t *testing.T) {
	say := Say("héllo")
	say.Signature = "dGV4dA=="
	call := Call("", "bash", `{"command":"ls"}`)
	call.Signature = "Y2FsbA=="
	srv := New(t, Turn{
		Blocks:    []Block{Thinking("hmm", "dGhpbms="), say, call},
		ChunkSize: 2,
		WriteSize: 3,
		Usage:     Usage{Input: 10, Output: 9, CacheRead: 5},
	}, HTTPError(429, ""))

	resp, err := srv.Client().Post(srv.GoogleURL()+"/models/gemini-x:streamGenerateContent?alt=sse", "application/json", strings.NewReader(`{"contents":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := ReadSSE(context.Background(), resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var chunks []geminiChunk
	for _, ev := range evs {
		var c geminiChunk
		if err := json.Unmarshal([]byte(ev[1]), &c); err != nil {
			t.Fatalf("chunk %q: %v", ev[1], err)
		}
		chunks = append(chunks, c)
	}
	// thinking "hmm" in 2 parts, "héllo" in 3, one call, one final chunk.
	if len(chunks) != 7 {
		t.Fatalf("got %d chunks, want 7: %v", len(chunks), evs)
	}
	part := func(i int) geminiPart { return chunks[i].Candidates[0].Content.Parts[0] }
	if p := part(0); !p.Thought || p.Text != "hm" || p.ThoughtSignature != "" {
		t.Errorf("first thought part = %+v", p)
	}
	if p := part(1); !p.Thought || p.ThoughtSignature != "dGhpbms=" {
		t.Errorf("last thought part carries the signature: %+v", p)
	}
	if p := part(4); p.Thought || p.ThoughtSignature != "dGV4dA==" {
		t.Errorf("last text part = %+v", p)
	}
	if p := part(5); p.FunctionCall == nil || p.FunctionCall.Name != "bash" || p.FunctionCall.ID != "" || string(p.FunctionCall.Args) != `{"command":"ls"}` || p.ThoughtSignature != "Y2FsbA==" {
		t.Errorf("call part = %+v", p)
	}
	last := chunks[6]
	if last.Candidates[0].FinishReason != "STOP" {
		t.Errorf("finishReason = %q", last.Candidates[0].FinishReason)
	}
	u := last.UsageMetadata
	if u.PromptTokenCount != 15 || u.CachedContentTokenCount != 5 || u.CandidatesTokenCount+u.ThoughtsTokenCount != 9 || u.ThoughtsTokenCount == 0 {
		t.Errorf("usage = %+v", u)
	}

	resp, err = srv.Client().Post(srv.GoogleURL()+"/models/gemini-x:streamGenerateContent?alt=sse", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), `"status":"RESOURCE_EXHAUSTED"`) || !strings.Contains(string(body), `"code":429`) {
		t.Errorf("error answer %d %s", resp.StatusCode, body)
	}
}
