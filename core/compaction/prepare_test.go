package compaction

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

func keep(tokens int) Settings {
	s := DefaultSettings()
	s.KeepRecentTokens = tokens
	return s
}

func TestPrepareCutsAtUserMessage(t *testing.T) {
	s := session.InMemory("/w")
	users := pairs(t, s, 0, 10) // 20 messages of 100 tokens

	// The newest four messages reach 400 tokens at U8: cut there.
	p, err := Prepare(s.Path(), keep(400))
	require.NoError(t, err)
	assert.Equal(t, users[8], p.FirstKeptEntryID)
	assert.False(t, p.IsSplitTurn)
	assert.Empty(t, p.TurnPrefix)
	assert.Equal(t, []string{"U0", "A0", "U1", "A1", "U2", "A2", "U3", "A3", "U4", "A4", "U5", "A5", "U6", "A6", "U7", "A7"}, labels(p.Messages))
	assert.Empty(t, p.PreviousSummary)
	assert.Equal(t, keep(400), p.Settings)
}

func TestPrepareSplitTurn(t *testing.T) {
	s := session.InMemory("/w")
	pairs(t, s, 0, 10)
	path := s.Path()

	// 450 tokens are reached at A7: the cut keeps A7 and summarises its
	// turn's start, U7, on its own.
	p, err := Prepare(path, keep(450))
	require.NoError(t, err)
	assert.Equal(t, path[15].Base().ID, p.FirstKeptEntryID)
	assert.True(t, p.IsSplitTurn)
	assert.Equal(t, []string{"U7"}, labels(p.TurnPrefix))
	assert.Len(t, p.Messages, 14)
	assert.Equal(t, "A6", labels(p.Messages)[13])
}

func TestPrepareKeepsSettingsChangesWithTheirTurn(t *testing.T) {
	s := session.InMemory("/w")
	pairs(t, s, 0, 8)
	mc, err := s.AppendModelChange("anthropic", "claude")
	require.NoError(t, err)
	_, err = s.AppendThinkingLevelChange(llm.ThinkingHigh)
	require.NoError(t, err)
	pairs(t, s, 8, 2)

	p, err := Prepare(s.Path(), keep(400))
	require.NoError(t, err)
	// The cut at U8 moves back over the two settings entries before it;
	// the turn is not split (pi would call this a split turn and
	// summarise U7/A7 separately).
	assert.Equal(t, mc, p.FirstKeptEntryID)
	assert.False(t, p.IsSplitTurn)
	assert.Len(t, p.Messages, 16)
}

func TestPrepareTokensBeforeWithoutUsage(t *testing.T) {
	s := session.InMemory("/w")
	aborted := assistant(text("A ", 100))
	aborted.StopReason = llm.StopAborted
	aborted.Usage.TotalTokens = 99999 // not trusted
	appendAll(t, s, user(text("U0 ", 100)), user(text("U1 ", 100)), aborted, user(text("U2 ", 100)), user(text("U3 ", 100)))
	p, err := Prepare(s.Path(), keep(200))
	require.NoError(t, err)
	assert.Equal(t, 500, p.TokensBefore)
	assert.Equal(t, []string{"U0", "U1", "A"}, labels(p.Messages))
}

func TestPrepareKeepsEverythingUnderBudget(t *testing.T) {
	s := session.InMemory("/w")
	pairs(t, s, 0, 3)
	_, err := Prepare(s.Path(), keep(20000))
	assert.ErrorIs(t, err, ErrNothingToCompact)
}

func TestPrepareErrors(t *testing.T) {
	_, err := Prepare(nil, DefaultSettings())
	assert.ErrorIs(t, err, ErrNothingToCompact)

	s := session.InMemory("/w")
	appendAll(t, s, user("hi"))
	_, err = Prepare(s.Path(), keep(0))
	assert.ErrorIs(t, err, ErrNothingToCompact, "one message: the cut cannot drop anything")

	users := pairs(t, s, 0, 4)
	_, err = s.AppendCompaction("summary", users[2], 100, nil, false, nil)
	require.NoError(t, err)
	_, err = Prepare(s.Path(), keep(100))
	assert.ErrorIs(t, err, ErrAlreadyCompacted)

	noID := []session.Entry{
		session.NewMessageEntry(session.Meta{}, user(text("U0", 100))),
		session.NewMessageEntry(session.Meta{}, user(text("U1", 100))),
	}
	_, err = Prepare(noID, keep(50))
	assert.ErrorIs(t, err, ErrNoEntryID)
}

// toolSession builds turns that each call read, then edit, then answer;
// some tool results are far bigger than the rest.
func toolSession(t testing.TB, turns int) *session.Store {
	s := session.InMemory("/w")
	for i := range turns {
		r, e := fmt.Sprintf("r%d", i), fmt.Sprintf("e%d", i)
		size := 30
		if i%3 == 1 {
			size = 900
		}
		appendAll(t, s,
			user(text(fmt.Sprintf("U%d ", i), 40)),
			call(r, "read", map[string]any{"path": fmt.Sprintf("f%d.go", i)}),
			result(r, "read", text("T ", size)),
			call(e, "edit", map[string]any{"path": fmt.Sprintf("f%d.go", i), "oldText": "a", "newText": "b"}),
			result(e, "edit", text("T ", 10)),
			assistant(text(fmt.Sprintf("A%d ", i), 25)),
		)
	}
	return s
}

// checkToolPairs fails when a tool result in msgs lacks its call.
func checkToolPairs(t *testing.T, what string, msgs []llm.Message) {
	t.Helper()
	calls := map[string]bool{}
	for _, m := range msgs {
		switch m := m.(type) {
		case *llm.AssistantMessage:
			for _, c := range m.Content.ToolCalls() {
				calls[c.ID] = true
			}
		case *llm.ToolResultMessage:
			if !calls[m.ToolCallID] {
				t.Errorf("%s: tool result %s without its call", what, m.ToolCallID)
			}
		}
	}
}

func TestPrepareNeverSplitsToolCallFromResult(t *testing.T) {
	s := toolSession(t, 12)
	path := s.Path()
	split := 0
	for budget := 1; budget < 8000; budget += 37 {
		p, err := Prepare(path, keep(budget))
		if err != nil {
			require.ErrorIs(t, err, ErrNothingToCompact)
			continue
		}
		first := -1
		for i, e := range path {
			if e.Base().ID == p.FirstKeptEntryID {
				first = i
			}
		}
		require.GreaterOrEqual(t, first, 0)
		if me, ok := path[first].(*session.MessageEntry); ok {
			assert.NotEqual(t, llm.RoleToolResult, me.Role(), "budget %d: cut at a tool result", budget)
		}
		kept := session.BuildContext(path[first:]).Messages
		checkToolPairs(t, fmt.Sprintf("budget %d kept", budget), kept)
		checkToolPairs(t, fmt.Sprintf("budget %d summarised", budget), p.Messages)
		checkToolPairs(t, fmt.Sprintf("budget %d turn prefix", budget), p.TurnPrefix)
		if p.IsSplitTurn {
			split++
			require.NotEmpty(t, p.TurnPrefix)
			assert.Equal(t, llm.RoleUser, p.TurnPrefix[0].MessageRole(), "budget %d: a turn prefix starts the turn", budget)
		}
		assert.Equal(t, len(path)-first+len(p.Messages)+len(p.TurnPrefix), len(path), "budget %d: every message is kept or summarised once", budget)
	}
	assert.Positive(t, split, "some budgets should split a turn")
}

func TestPrepareHugeToolResultMovesCutForward(t *testing.T) {
	s := session.InMemory("/w")
	pairs(t, s, 0, 2)
	ids := appendAll(t, s,
		user(text("U2 ", 50)),
		call("c1", "read", map[string]any{"path": "big.log"}),
		result("c1", "read", text("T ", 5000)),
		assistant(text("A2 ", 10)),
	)
	// The budget runs out inside the tool result: the cut cannot go there
	// or before its call without keeping 5000 tokens, so it moves forward
	// to the answer and the call and result are summarised together.
	p, err := Prepare(s.Path(), keep(1000))
	require.NoError(t, err)
	assert.Equal(t, ids[3], p.FirstKeptEntryID)
	assert.True(t, p.IsSplitTurn)
	assert.Equal(t, []string{"U2", "call:c1", "result:c1"}, labels(p.TurnPrefix))
	assert.Equal(t, []string{"U0", "A0", "U1", "A1"}, labels(p.Messages))
}

func TestPrepareIterative(t *testing.T) {
	s := session.InMemory("/w")
	pairs(t, s, 0, 10)
	first, err := Prepare(s.Path(), keep(400))
	require.NoError(t, err)
	_, err = s.AppendCompaction("EARLIER SUMMARY", first.FirstKeptEntryID, first.TokensBefore,
		Details{ReadFiles: []string{"old.go"}, ModifiedFiles: []string{"mod.go"}}, false, nil)
	require.NoError(t, err)
	users := pairs(t, s, 10, 4)
	last := assistant(text("A14 ", 100))
	last.Usage = llm.Usage{Input: 1000, Output: 234, TotalTokens: 1234}
	appendAll(t, s, user(text("U14 ", 100)), last)

	p, err := Prepare(s.Path(), keep(400))
	require.NoError(t, err)
	assert.Equal(t, users[3], p.FirstKeptEntryID)
	assert.Equal(t, "EARLIER SUMMARY", p.PreviousSummary)
	// Only what the earlier summary does not cover: its kept part (U8 on)
	// and what came after.
	assert.Equal(t, []string{"U8", "A8", "U9", "A9", "U10", "A10", "U11", "A11", "U12", "A12"}, labels(p.Messages))
	assert.Equal(t, 1234, p.TokensBefore, "the last reply's usage counts the context")
	assert.Equal(t, Details{ReadFiles: []string{"old.go"}, ModifiedFiles: []string{"mod.go"}}, p.Files.Details())
}

func TestPrepareIgnoresHookDetails(t *testing.T) {
	s := session.InMemory("/w")
	users := pairs(t, s, 0, 4)
	_, err := s.AppendCompaction("from an extension", users[2], 100, Details{ReadFiles: []string{"x.go"}}, true, nil)
	require.NoError(t, err)
	pairs(t, s, 4, 4)
	p, err := Prepare(s.Path(), keep(300))
	require.NoError(t, err)
	assert.Equal(t, "from an extension", p.PreviousSummary)
	assert.Equal(t, Details{ReadFiles: []string{}, ModifiedFiles: []string{}}, p.Files.Details())
}

func TestPrepareFileOperations(t *testing.T) {
	s := session.InMemory("/w")
	appendAll(t, s,
		user(text("U0 ", 10)),
		call("1", "read", map[string]any{"path": "a.go"}),
		result("1", "read", "package a"),
		call("2", "read", map[string]any{"path": "b.go"}),
		result("2", "read", "package b"),
		call("3", "edit", map[string]any{"path": "b.go", "edits": []any{}}),
		result("3", "edit", "ok"),
		call("4", "write", map[string]any{"path": "c.go", "content": "package c"}),
		result("4", "write", "ok"),
		call("5", "bash", map[string]any{"command": "cat d.go", "path": "d.go"}),
		result("5", "bash", "package d"),
		call("6", "read", map[string]any{"path": 7}),
		result("6", "read", "bad arguments"),
		assistant(text("A0 ", 10)),
	)
	pairs(t, s, 1, 3)

	p, err := Prepare(s.Path(), keep(200))
	require.NoError(t, err)
	d := p.Files.Details()
	assert.Equal(t, Details{ReadFiles: []string{"a.go"}, ModifiedFiles: []string{"b.go", "c.go"}}, d)
	b, err := json.Marshal(d)
	require.NoError(t, err)
	assert.JSONEq(t, `{"readFiles":["a.go"],"modifiedFiles":["b.go","c.go"]}`, string(b))
}

func TestPrepareCustomAndBranchSummaryEntries(t *testing.T) {
	s := session.InMemory("/w")
	pairs(t, s, 0, 1)
	_, err := s.AppendCustomMessage("note", llm.Contents{llm.TextContent{Text: "from an extension"}}, true, nil)
	require.NoError(t, err)
	_, err = s.AppendCustom("state", map[string]int{"n": 1})
	require.NoError(t, err)
	pairs(t, s, 1, 3)

	p, err := Prepare(s.Path(), keep(400))
	require.NoError(t, err)
	assert.Equal(t, []string{"U0", "A0", "custom", "U1", "A1"}, labels(p.Messages))
	c := p.Messages[2].(*llm.CustomMessage)
	assert.Equal(t, "note", c.CustomType)
	assert.Equal(t, "from an extension", c.Content.Text())
}

// The read, write and edit calls a codemode script made, recorded on its
// tool result (nestedCalls), count in the file lists as pi 1.6.0 counts
// them.
func TestPrepareFileOperationsOfNestedCalls(t *testing.T) {
	s := session.InMemory("/w")
	script := result("1", "codemode", "Script completed")
	script.NestedCalls = &llm.NestedCalls{Complete: false, Calls: []llm.NestedCallRecord{
		{ID: "1/1", Name: "read", Arguments: json.RawMessage(`{"path":"a.go"}`), Status: "ok"},
		{ID: "1/2", Name: "edit", Arguments: json.RawMessage(`{"path":"b.go","edits":[]}`), Status: "ok"},
		{ID: "1/3", Name: "write", ArgumentsBytes: 9000, Status: "ok"},
		{ID: "1/4", Name: "bash", Arguments: json.RawMessage(`{"command":"ls","path":"d.go"}`), Status: "ok"},
	}}
	appendAll(t, s,
		user(text("U0 ", 10)),
		call("1", "codemode", map[string]any{"code": "…"}),
		script,
		assistant(text("A0 ", 10)),
	)
	pairs(t, s, 1, 3)

	p, err := Prepare(s.Path(), keep(200))
	require.NoError(t, err)
	assert.Equal(t, Details{ReadFiles: []string{"a.go"}, ModifiedFiles: []string{"b.go"}}, p.Files.Details())
}
