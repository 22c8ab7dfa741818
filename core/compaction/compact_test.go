package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

func prepared(t *testing.T, keepTokens int) (*session.Store, *Preparation) {
	t.Helper()
	s := session.InMemory("/w")
	pairs(t, s, 0, 10)
	p, err := Prepare(s.Path(), keep(keepTokens))
	require.NoError(t, err)
	return s, p
}

func TestCompact(t *testing.T) {
	_, p := prepared(t, 400)
	m := replying("## Goal\nShip it.")
	res, err := Compact(t.Context(), m, testModel, llm.Auth{APIKey: "sk-test"}, p, "")
	require.NoError(t, err)

	assert.Equal(t, "## Goal\nShip it.", res.Summary, "no file operations, no file lists")
	assert.Equal(t, p.FirstKeptEntryID, res.FirstKeptEntryID)
	assert.Equal(t, p.TokensBefore, res.TokensBefore)
	assert.Equal(t, Details{ReadFiles: []string{}, ModifiedFiles: []string{}}, res.Details)

	reqs := m.requests()
	require.Len(t, reqs, 1)
	req := reqs[0]
	assert.Equal(t, strings.TrimSpace(systemPrompt), req.SystemPrompt)
	assert.Equal(t, "sk-test", req.Options.APIKey)
	assert.Equal(t, 16384*8/10, req.Options.MaxTokens)
	assert.Empty(t, req.Tools)

	prompt := promptOf(t, req)
	assert.True(t, strings.HasPrefix(prompt, "<conversation>\n[user] U0 "), prompt[:40])
	assert.Contains(t, prompt, "\n\n[assistant] A7 ")
	assert.NotContains(t, prompt, "U8 ", "kept messages are not summarised")
	assert.NotContains(t, prompt, "<previous-summary>")
	assert.True(t, strings.HasSuffix(prompt, strings.TrimSpace(summarizePrompt)))
	assert.NotContains(t, prompt, strings.TrimSpace(focusPrompt))
}

func TestCompactCustomInstructions(t *testing.T) {
	_, p := prepared(t, 400)
	m := replying("summary")
	_, err := Compact(t.Context(), m, testModel, llm.Auth{}, p, "  focus on the database migration  ")
	require.NoError(t, err)
	prompt := promptOf(t, m.requests()[0])
	assert.True(t, strings.HasSuffix(prompt, strings.TrimSpace(focusPrompt)+"\n\nfocus on the database migration"), prompt[len(prompt)-200:])
}

func TestCompactIterative(t *testing.T) {
	s := session.InMemory("/w")
	pairs(t, s, 0, 10)
	first, err := Prepare(s.Path(), keep(400))
	require.NoError(t, err)
	res, err := Compact(t.Context(), replying("FIRST SUMMARY"), testModel, llm.Auth{}, first, "")
	require.NoError(t, err)
	_, err = s.AppendCompaction(res.Summary, res.FirstKeptEntryID, res.TokensBefore, res.Details, false, nil)
	require.NoError(t, err)
	pairs(t, s, 10, 4)

	second, err := Prepare(s.Path(), keep(400))
	require.NoError(t, err)
	m := replying("SECOND SUMMARY")
	res, err = Compact(t.Context(), m, testModel, llm.Auth{}, second, "keep the API notes")
	require.NoError(t, err)
	assert.Equal(t, "SECOND SUMMARY", res.Summary)

	prompt := promptOf(t, m.requests()[0])
	assert.Contains(t, prompt, "\n</conversation>\n\n<previous-summary>\nFIRST SUMMARY\n</previous-summary>\n\n")
	assert.Contains(t, prompt, strings.TrimSpace(updatePrompt))
	assert.NotContains(t, prompt, strings.TrimSpace(summarizePrompt))
	assert.Contains(t, prompt, "[user] U8 ", "the previous compaction's kept messages are folded in now")
	assert.NotContains(t, prompt, "U7 ", "what the previous summary covers is not sent again")
	assert.Contains(t, prompt, "keep the API notes")

	// The new entry replaces the old summary in the context.
	_, err = s.AppendCompaction(res.Summary, res.FirstKeptEntryID, res.TokensBefore, res.Details, false, nil)
	require.NoError(t, err)
	ctx := session.BuildContext(s.Path())
	require.IsType(t, &llm.CompactionSummaryMessage{}, ctx.Messages[0])
	assert.Equal(t, "SECOND SUMMARY", ctx.Messages[0].(*llm.CompactionSummaryMessage).Summary)
	assert.Equal(t, []string{"compactionSummary", "U12", "A12", "U13", "A13"}, labels(ctx.Messages))
}

func TestCompactFileLists(t *testing.T) {
	s := session.InMemory("/w")
	appendAll(t, s,
		user(text("U0 ", 10)),
		call("1", "read", map[string]any{"path": "src/a.go"}),
		result("1", "read", "package a"),
		call("2", "edit", map[string]any{"path": "src/b.go"}),
		result("2", "edit", "ok"),
		call("3", "write", map[string]any{"path": "NOTES.md"}),
		result("3", "write", "ok"),
		assistant(text("A0 ", 10)),
	)
	pairs(t, s, 1, 3)
	p, err := Prepare(s.Path(), keep(400))
	require.NoError(t, err)
	require.False(t, p.IsSplitTurn)

	m := replying("## Goal\nRefactor.")
	res, err := Compact(t.Context(), m, testModel, llm.Auth{}, p, "")
	require.NoError(t, err)
	assert.Equal(t, Details{ReadFiles: []string{"src/a.go"}, ModifiedFiles: []string{"NOTES.md", "src/b.go"}}, res.Details)
	assert.Equal(t, "## Goal\nRefactor.\n\n<read-files>\nsrc/a.go\n</read-files>\n\n<modified-files>\nNOTES.md\nsrc/b.go\n</modified-files>", res.Summary)

	// The details are what the compaction entry stores.
	_, err = s.AppendCompaction(res.Summary, res.FirstKeptEntryID, res.TokensBefore, res.Details, false, nil)
	require.NoError(t, err)
	c := s.Path()[len(s.Path())-1].(*session.CompactionEntry)
	assert.JSONEq(t, `{"readFiles":["src/a.go"],"modifiedFiles":["NOTES.md","src/b.go"]}`, string(c.Details))

	prompt := promptOf(t, m.requests()[0])
	assert.Contains(t, prompt, `[assistant tool calls] read(path="src/a.go")`)
	assert.Contains(t, prompt, "[tool result] package a")
}

// splitResponder answers turn-prefix requests with "PREFIX" and the others
// with "HISTORY".
func splitResponder(ctx context.Context, req *llm.Request) (string, error) {
	if isPrefixRequest(req) {
		return "PREFIX", nil
	}
	return "HISTORY", nil
}

func isPrefixRequest(req *llm.Request) bool {
	u := req.Messages[0].(*llm.UserMessage)
	return strings.HasSuffix(u.Content.Text(), turnPrefixPrompt)
}

func TestCompactSplitTurn(t *testing.T) {
	_, p := prepared(t, 450)
	require.True(t, p.IsSplitTurn)
	m := &fakeModel{respond: splitResponder}
	res, err := Compact(t.Context(), m, testModel, llm.Auth{}, p, "")
	require.NoError(t, err)
	assert.Equal(t, "HISTORY\n\n---\n\n"+strings.TrimSpace(splitTurnHeading)+"\n\nPREFIX", res.Summary)

	reqs := m.requests()
	require.Len(t, reqs, 2)
	for _, req := range reqs {
		prompt := promptOf(t, req)
		if isPrefixRequest(req) {
			assert.Equal(t, 16384/2, req.Options.MaxTokens)
			assert.Equal(t, "<conversation>\n[user] "+text("U7 ", 100)+"\n</conversation>\n\n"+turnPrefixPrompt, prompt)
		} else {
			assert.Equal(t, 16384*8/10, req.Options.MaxTokens)
			assert.Contains(t, prompt, "[assistant] A6 ")
			assert.NotContains(t, prompt, "U7 ")
		}
	}
}

func TestCompactSplitTurnKeepsPreviousSummary(t *testing.T) {
	// A compaction while the turn starting at U1 was under way; the turn
	// then grew past the budget with a huge tool result.
	s := session.InMemory("/w")
	ids := appendAll(t, s, user(text("U0 ", 100)), assistant(text("A0 ", 100)), user(text("U1 ", 100)))
	_, err := s.AppendCompaction("OLD SUMMARY", ids[2], 300, nil, false, nil)
	require.NoError(t, err)
	appendAll(t, s, call("c", "read", map[string]any{"path": "big.log"}), result("c", "read", text("T ", 5000)), assistant(text("A1 ", 10)))

	p, err := Prepare(s.Path(), keep(1000))
	require.NoError(t, err)
	require.True(t, p.IsSplitTurn)
	assert.Empty(t, p.Messages)
	assert.Equal(t, []string{"U1", "call:c", "result:c"}, labels(p.TurnPrefix))

	m := &fakeModel{respond: splitResponder}
	res, err := Compact(t.Context(), m, testModel, llm.Auth{}, p, "")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(res.Summary, "OLD SUMMARY\n\n---\n\n"), res.Summary)
	assert.Contains(t, res.Summary, "PREFIX")
	assert.Len(t, m.requests(), 1, "only the turn prefix needs the model")
	assert.Equal(t, Details{ReadFiles: []string{"big.log"}, ModifiedFiles: []string{}}, res.Details)
}

func TestCompactModelErrors(t *testing.T) {
	tests := []struct {
		name    string
		respond func(ctx context.Context, req *llm.Request) (string, error)
		want    string
	}{
		{"provider error", func(context.Context, *llm.Request) (string, error) {
			return "", errors.New(`429 {"error":"quota exceeded"}`)
		}, `summary failed: 429 {"error":"quota exceeded"}`},
		{"aborted by the provider", func(context.Context, *llm.Request) (string, error) {
			return "", context.Canceled
		}, "summary failed: the request was aborted"},
		{"empty reply", func(context.Context, *llm.Request) (string, error) {
			return " \n", nil
		}, "summary failed: the model replied without text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, p := prepared(t, 400)
			_, err := Compact(t.Context(), &fakeModel{respond: tt.respond}, testModel, llm.Auth{}, p, "")
			require.ErrorIs(t, err, ErrSummaryFailed)
			assert.Equal(t, "compact: summarise conversation: "+tt.want, err.Error())
		})
	}
}

func TestCompactNoReply(t *testing.T) {
	_, p := prepared(t, 400)
	silent := llm.ProviderFunc(func(context.Context, *llm.Model, *llm.Request) iter.Seq[llm.StreamEvent] {
		return func(func(llm.StreamEvent) bool) {}
	})
	_, err := Compact(t.Context(), silent, testModel, llm.Auth{}, p, "")
	assert.ErrorIs(t, err, ErrSummaryFailed)
	assert.ErrorContains(t, err, "fake/sum-1 sent no reply")
}

func TestCompactCancelled(t *testing.T) {
	_, p := prepared(t, 400)

	t.Run("before the request", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		m := replying("never")
		_, err := Compact(ctx, m, testModel, llm.Auth{}, p, "")
		assert.ErrorIs(t, err, context.Canceled)
		assert.Empty(t, m.requests())
	})

	t.Run("during the request", func(t *testing.T) {
		stop := errors.New("user pressed escape")
		ctx, cancel := context.WithCancelCause(t.Context())
		m := &fakeModel{respond: func(ctx context.Context, _ *llm.Request) (string, error) {
			cancel(stop)
			<-ctx.Done()
			return "", ctx.Err()
		}}
		_, err := Compact(ctx, m, testModel, llm.Auth{}, p, "")
		assert.ErrorIs(t, err, stop)
		assert.NotErrorIs(t, err, ErrSummaryFailed)
		assert.ErrorContains(t, err, "summarise conversation")
	})
}

func TestCompactSplitTurnFailureCancelsTheOther(t *testing.T) {
	_, p := prepared(t, 450)
	m := &fakeModel{respond: func(ctx context.Context, req *llm.Request) (string, error) {
		if isPrefixRequest(req) {
			return "", errors.New("500 overloaded")
		}
		<-ctx.Done() // the history request waits until it is cancelled
		return "", ctx.Err()
	}}
	_, err := Compact(t.Context(), m, testModel, llm.Auth{}, p, "")
	require.ErrorIs(t, err, ErrSummaryFailed)
	assert.Equal(t, "compact: summarise split turn: summary failed: 500 overloaded", err.Error())
}

func TestCompactArguments(t *testing.T) {
	_, p := prepared(t, 400)
	_, err := Compact(t.Context(), replying("x"), nil, llm.Auth{}, p, "")
	assert.ErrorContains(t, err, "no model")
	_, err = Compact(t.Context(), replying("x"), testModel, llm.Auth{}, nil, "")
	assert.ErrorContains(t, err, "no preparation")
}

func TestCompactCapsMaxTokensAtTheModel(t *testing.T) {
	_, p := prepared(t, 400)
	small := *testModel
	small.MaxTokens = 4096
	m := replying("x")
	_, err := Compact(t.Context(), m, &small, llm.Auth{}, p, "")
	require.NoError(t, err)
	assert.Equal(t, 4096, m.requests()[0].Options.MaxTokens)
}

func TestTranscript(t *testing.T) {
	exit := 2
	msgs := []llm.Message{
		user("please fix the build"),
		&llm.AssistantMessage{Content: llm.Contents{
			llm.ThinkingContent{Thinking: "the linker fails"},
			llm.TextContent{Text: "Looking."},
			llm.ToolCall{ID: "1", Name: "read", Arguments: json.RawMessage(`{"path": "main.go",  "limit": 5, "opts": {"a": [1, 2]}}`)},
			llm.ToolCall{ID: "2", Name: "ls", Arguments: json.RawMessage(`{}`)},
		}},
		result("1", "read", strings.Repeat("x", 2003)),
		result("2", "ls", ""),
		&llm.BashExecutionMessage{Command: "make", Output: "ok", ExitCode: &exit},
		&llm.CompactionSummaryMessage{Summary: "old"},
		&llm.AssistantMessage{Content: llm.Contents{llm.TextContent{Text: "one"}, llm.TextContent{Text: "two"}}},
	}
	want := strings.Join([]string{
		"[user] please fix the build",
		"[assistant reasoning] the linker fails",
		"[assistant] Looking.",
		`[assistant tool calls] read(path="main.go", limit=5, opts={"a":[1,2]}); ls()`,
		"[tool result] " + strings.Repeat("x", 2000) + "\n\n[3 more characters omitted]",
		"[user] Ran `make`\n```\nok\n```\n\nCommand exited with code 2",
		"[user] " + session.CompactionSummaryPrefix + "old" + session.CompactionSummarySuffix,
		"[assistant] one\ntwo",
	}, "\n\n")
	assert.Equal(t, want, transcript(msgs))
}

func TestPromptsAreOurOwn(t *testing.T) {
	for name, p := range map[string]string{
		"system": systemPrompt, "summarize": summarizePrompt, "update": updatePrompt,
		"turn prefix": turnPrefixPrompt, "focus": focusPrompt, "no history": noHistoryText, "split": splitTurnHeading,
	} {
		assert.NotEmpty(t, strings.TrimSpace(p), name)
	}
	for _, heading := range []string{"## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked", "## Key Decisions", "## Next Steps", "## Critical Context"} {
		assert.Contains(t, summarizePrompt, heading+"\n")
		assert.Contains(t, updatePrompt, heading+"\n")
	}
}

func BenchmarkPrepare(b *testing.B) {
	s := session.InMemory("/bench")
	var keepID string
	for i, n := 0, 0; n < 10000; i++ {
		if i%10 == 9 {
			n += 4
			id := fmt.Sprintf("c%d", i)
			appendAll(b, s,
				user(fmt.Sprintf("question %d: please look at the file and fix it", i)),
				call(id, "edit", map[string]any{"path": fmt.Sprintf("pkg/f%d.go", i%50), "oldText": "a", "newText": "b"}),
				result(id, "edit", "Successfully replaced text in the file."),
				assistant(fmt.Sprintf("answer %d: done, the function now handles the empty case", i)))
			continue
		}
		n += 2
		ids := appendAll(b, s,
			user(fmt.Sprintf("question %d: please look at the file and tell me what it does", i)),
			assistant(fmt.Sprintf("answer %d: it reads the configuration and starts the server", i)))
		if i == 3000 {
			keepID = ids[0]
		}
		if i == 3500 {
			n++
			if _, err := s.AppendCompaction("summary of the first 3000 turns", keepID, 120000,
				Details{ReadFiles: []string{"a.go"}, ModifiedFiles: []string{"b.go"}}, false, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	path := s.Path()
	if len(path) < 10000 {
		b.Fatalf("path has %d entries", len(path))
	}
	settings := DefaultSettings()
	b.ReportAllocs()
	for b.Loop() {
		p, err := Prepare(path, settings)
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Messages) == 0 {
			b.Fatal("nothing to summarise")
		}
	}
}

var _ llm.Provider = (*fakeModel)(nil)

// One summary call's usage is the compaction's as it is, the provider's
// total included; two calls' sum is the provider's only if both were.
func TestUsageSumKeepsWhereTheTotalCameFrom(t *testing.T) {
	billed := llm.Usage{Input: 10, Cost: llm.Cost{Total: 0.5, TotalFromProvider: new(true)}}
	var one usageSum
	one.add(billed)
	require.NotNil(t, one.u.Cost.TotalFromProvider)
	assert.True(t, *one.u.Cost.TotalFromProvider)

	var two usageSum
	two.add(billed)
	two.add(llm.Usage{Input: 5, Cost: llm.Cost{Total: 0.25, TotalFromProvider: new(false)}})
	assert.Equal(t, 15, two.u.Input)
	assert.Equal(t, 0.75, two.u.Cost.Total)
	require.NotNil(t, two.u.Cost.TotalFromProvider)
	assert.False(t, *two.u.Cost.TotalFromProvider)
}
