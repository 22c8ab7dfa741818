package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// sentTexts lists the role and text of each message a model request
// carried (Anthropic's wire, text blocks joined).
func sentTexts(r llmtest.Request) []string {
	var out []string
	msgs, _ := r.JSON()["messages"].([]any)
	for _, m := range msgs {
		mm := m.(map[string]any)
		var text strings.Builder
		switch c := mm["content"].(type) {
		case string:
			text.WriteString(c)
		case []any:
			for _, b := range c {
				if s, ok := b.(map[string]any)["text"].(string); ok {
					text.WriteString(s)
				}
			}
		}
		out = append(out, mm["role"].(string)+": "+text.String())
	}
	return out
}

func notices(rs []record) []string {
	var out []string
	for _, r := range rs {
		if r.is("extension_ui_request") && r.str("method") == "notify" {
			out = append(out, r.str("message"))
		}
	}
	return out
}

// pi 1.5's actionable turn_end: handlers chain a proposal (each sees the
// entries and continuation so far, and the context they make); gopi
// appends it and makes the one more request it asked for.
func TestExtensionTurnEndBoundary(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn {
		return []llmtest.Turn{llmtest.Text("a long first answer"), llmtest.Text("short")}
	}, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("again.ts", `export default function (pi) {
	let replaced = false;
	pi.on("turn_end", async (event, ctx) => {
		ctx.ui.notify("turn " + event.turnIndex + " " + event.outcome + " entries=" + event.entries.length + " continue=" + event.continue + " can=" + event.context.canContinue + " id=" + (event.messageEntryId === ctx.sessionManager.getLeafId()), "info");
		if (replaced || event.outcome !== "completed" || event.toolResults.length > 0) return;
		replaced = true;
		return {
			entries: [...event.entries,
				{ type: "context_edit", targetId: event.messageEntryId, replacement: null },
				{ type: "custom_message", customType: "again", content: "Answer again, shorter.", display: false }],
			continue: true,
		};
	});
	pi.on("turn_end", async (event, ctx) => {
		const last = event.context.llmMessages[event.context.llmMessages.length - 1];
		ctx.ui.notify("next sees entries=" + event.entries.length + " continue=" + event.continue + " can=" + event.context.canContinue + " last=" + last.role + " from=" + event.context.contextEntries.map((e) => e.sourceEntry.type + ":" + e.messages.length).join("/"), "info");
	});
}
`)
		p := start("-e", ext)
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "go"})
		rs := p.all(responseTo("1"), settled)
		assert.Equal(t, []string{
			"turn 0 completed entries=0 continue=false can=false id=true",
			"next sees entries=2 continue=true can=true last=user from=model_change:0/thinking_level_change:0/message:1/message:1/message:0/context_edit:0/custom_message:1",
			"turn 1 completed entries=0 continue=false can=false id=true",
			"next sees entries=0 continue=false can=false last=assistant from=model_change:0/thinking_level_change:0/message:1/message:1/message:0/context_edit:0/custom_message:1/message:1",
		}, notices(rs))
		var appended []string
		starts := 0
		for _, r := range rs {
			if r.is("entry_appended") {
				appended = append(appended, r.obj("entry").str("type"))
			}
			if r.is("agent_start") {
				starts++
			}
		}
		assert.Equal(t, []string{"context_edit", "custom_message"}, appended)
		assert.Equal(t, 1, starts, "the continuation is a turn of the same run")
		reqs := w.srv.Requests()
		require.Len(t, reqs, 2, "one more request, as asked")
		assert.Equal(t, []string{"user: go", "user: Answer again, shorter."}, sentTexts(reqs[1]), "the first answer is edited out, the instruction added")
	})
}

// agent_before_settle: when nothing more would run, a handler's entries
// are appended and its continuation starts another run before
// agent_settled. Asking to continue with nothing to continue from is an
// extension error, and nothing runs.
func TestExtensionBeforeSettleBoundary(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn {
		return []llmtest.Turn{llmtest.Text("one"), llmtest.Text("two")}
	}, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("review.ts", `export default function (pi) {
	let added = false;
	pi.on("agent_before_settle", async (event, ctx) => {
		ctx.ui.notify("settle " + event.outcome + " entries=" + event.entries.length + " can=" + event.context.canContinue, "info");
		if (added) return { continue: true };
		added = true;
		return { entries: [...event.entries, { type: "custom_message", customType: "review", content: "Review the final diff.", display: false }], continue: true };
	});
}
`)
		p := start("-e", ext)
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "go"})
		rs := p.all(responseTo("1"), settled)
		assert.Equal(t, []string{"settle completed entries=0 can=false", "settle completed entries=0 can=false"}, notices(rs))
		starts, settles := 0, 0
		var errs []string
		for _, r := range rs {
			switch {
			case r.is("agent_start"):
				starts++
			case r.is("agent_settled"):
				settles++
			case r.is("extension_error"):
				errs = append(errs, r.str("event")+": "+r.str("error"))
			}
		}
		assert.Equal(t, 2, starts, "the continuation is a run of its own")
		assert.Equal(t, 1, settles)
		assert.Equal(t, []string{"agent_before_settle: agent_before_settle requested continuation without runnable model context"}, errs)
		reqs := w.srv.Requests()
		require.Len(t, reqs, 2)
		assert.Equal(t, []string{"user: go", "assistant: one", "user: Review the final diff."}, sentTexts(reqs[1]))
	})
}

// sendMessage with triggerTurn: false during a run is held until the turn
// ends (pi 1.5: never between a tool call and its result) and starts no
// turn of its own; the next request carries it. turn_start's handlers are
// awaited before the turn's request, as in pi, and see the turn's index.
func TestExtensionSendMessageHeldUntilTurnEnd(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn {
		return []llmtest.Turn{llmtest.Text("done"), llmtest.Text("again")}
	}, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("note.ts", `export default function (pi) {
	let sent = false;
	pi.on("turn_start", async (event) => {
		if (sent) return;
		sent = true;
		// The turn's request waits for this handler.
		await new Promise((resolve) => setTimeout(resolve, 200));
		const note = "a note for later (turn " + event.turnIndex + ", " + typeof event.timestamp + ")";
		pi.sendMessage({ customType: "note", content: note, display: true }, { triggerTurn: false });
	});
}
`)
		p := start("-e", ext)
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "go"})
		rs := p.all(responseTo("1"), settled)
		var order []string
		for _, r := range rs {
			switch {
			case r.is("turn_end"), r.is("agent_end"):
				order = append(order, r.str("type"))
			case r.is("message_end"):
				order = append(order, "message_end "+r.obj("message").str("role"))
			}
		}
		assert.Equal(t, []string{"message_end system", "message_end user", "message_end assistant", "turn_end", "message_end custom", "agent_end"}, order, p.transcript())
		assert.Len(t, w.srv.Requests(), 1, "no turn of its own")

		p.send(map[string]any{"id": "2", "type": "prompt", "message": "more"})
		p.all(responseTo("2"), settled)
		reqs := w.srv.Requests()
		require.Len(t, reqs, 2)
		assert.Equal(t, []string{"user: go", "assistant: done", "user: a note for later (turn 0, number)", "user: more"}, sentTexts(reqs[1]))
		assert.Equal(t, 0, p.exit())
	})
}
