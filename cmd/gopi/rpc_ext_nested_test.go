package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// orchestrateExt is an extension whose tool calls other tools with
// ctx.executeTool(): a bash command (its partial results to onUpdate), a
// tool that does not exist, a read with arguments that do not fit. Its
// tool_call handler records what it saw, so the nested calls are seen to
// pass the hooks.
const orchestrateExt = `import { Type } from "typebox";
export default function (pi) {
	const seen = [];
	pi.on("tool_call", (event) => {
		seen.push(event.toolName + " " + event.toolCallId);
	});
	pi.registerTool({
		name: "orchestrate", label: "Orchestrate", description: "Calls other tools",
		parameters: Type.Object({}),
		async execute(id, params, signal, onUpdate, ctx) {
			const names = ctx.tools.map((t) => t.name);
			let updates = 0;
			const bash = await ctx.executeTool("bash", { command: "echo nested" }, { onUpdate: () => updates++ });
			const missing = await ctx.executeTool("no_such_tool", {});
			const bad = await ctx.executeTool("read", { nope: 1 });
			const text = (o) => o.result.content.filter((c) => c.type === "text").map((c) => c.text).join("");
			const report = {
				callable: ["bash", "read", "orchestrate"].filter((n) => names.includes(n)),
				bash: { id: bash.toolCall.id, isError: bash.isError, text: text(bash).trim(), updated: updates > 0 },
				missing: { id: missing.toolCall.id, isError: missing.isError },
				bad: { id: bad.toolCall.id, isError: bad.isError },
				hooks: seen.slice(),
			};
			return { content: [{ type: "text", text: JSON.stringify(report) }] };
		},
	});
}
`

// An extension's tool calls other tools through ctx.executeTool(), as pi
// 1.6 has it: the calls pass the same pipeline as the model's (the
// tool_call hooks see them, arguments are validated, an unknown tool is
// an error result), get the ids "<parent>/<n>", reach clients as
// tool_execution events naming their parent, and are recorded as
// nestedCalls on the calling tool's result message. Both agents answer
// alike.
func TestExtensionToolCallsOtherTools(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn {
		return []llmtest.Turn{llmtest.ToolCalls(llmtest.Call("c1", "orchestrate", `{}`)), llmtest.Text("done")}
	}
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		p := start("-e", w.writeExt("orchestrate.ts", orchestrateExt))
		p.ok("1", map[string]any{"type": "prompt", "message": "go"})
		rs := p.until(settled)
		end := toolEnd(rs, "c1")
		require.NotNil(t, end, p.transcript())
		var report struct {
			Callable []string
			Bash     struct {
				ID      string
				IsError bool
				Text    string
				Updated bool
			}
			Missing, Bad struct {
				ID      string
				IsError bool
			}
			Hooks []string
		}
		require.NoError(t, json.Unmarshal([]byte(resultText(end)), &report), resultText(end))
		assert.Equal(t, []string{"bash", "read", "orchestrate"}, report.Callable, "ctx.tools: the active tools, the calling one too")
		assert.Equal(t, "c1/1", report.Bash.ID)
		assert.False(t, report.Bash.IsError)
		assert.Equal(t, "nested", report.Bash.Text)
		assert.True(t, report.Bash.Updated, "onUpdate heard the partial results")
		assert.Equal(t, "c1/2", report.Missing.ID)
		assert.True(t, report.Missing.IsError)
		assert.Equal(t, "c1/3", report.Bad.ID)
		assert.True(t, report.Bad.IsError, "the arguments are validated")
		assert.Equal(t, []string{"orchestrate c1", "bash c1/1"}, report.Hooks, "the hooks see the nested call")

		// Clients see the nested call as a call of its own.
		var nested []record
		for _, r := range rs {
			if r.is("tool_execution_start") && r.str("parentToolCallId") == "c1" {
				nested = append(nested, r)
			}
		}
		require.NotEmpty(t, nested)
		assert.Equal(t, "c1/1", nested[0].str("toolCallId"))
		assert.Equal(t, "bash", nested[0].str("toolName"))
		// A call to a tool that does not exist is told all the same.
		missing := toolEnd(rs, "c1/2")
		require.NotNil(t, missing, "the unknown tool's call has its events")
		assert.Equal(t, true, missing["isError"])
		assert.Equal(t, "c1", missing.str("parentToolCallId"))

		// The record on the calling tool's result message.
		msgs := p.ok("2", map[string]any{"type": "get_messages"}).(map[string]any)["messages"].([]any)
		var rec map[string]any
		for _, m := range msgs {
			if mm := m.(map[string]any); mm["role"] == "toolResult" && mm["toolName"] == "orchestrate" {
				rec, _ = mm["nestedCalls"].(map[string]any)
			}
		}
		require.NotNil(t, rec, "nestedCalls on the result message")
		calls := rec["calls"].([]any)
		require.GreaterOrEqual(t, len(calls), 1)
		var recorded []string
		for _, c := range calls {
			c := c.(map[string]any)
			recorded = append(recorded, fmt.Sprint(c["id"], " ", c["name"], " ", c["status"]))
		}
		assert.Equal(t, []string{"c1/1 bash ok", "c1/2 no_such_tool error", "c1/3 read error"}, recorded)
	})
}

// Under --approval writes a nested bash asks the user first, as the
// model's own would: refused, the calling tool gets an error result and
// nothing runs.
func TestExtensionToolCallsOtherToolsAsksApproval(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	w := newWorld(t, llmtest.ToolCalls(llmtest.Call("c1", "orchestrate", `{}`)), llmtest.Text("done"))
	p := e.gopi(t, w, "-e", w.writeExt("orchestrate.ts", orchestrateExt), "--approval", "writes")
	p.ok("1", map[string]any{"type": "prompt", "message": "go"})
	req := p.answerUI("select", map[string]any{"value": "Deny"})
	asked, _ := json.Marshal(req)
	assert.Contains(t, string(asked), "echo nested", "the question names the nested command")
	rs := p.until(settled)
	end := toolEnd(rs, "c1")
	require.NotNil(t, end, p.transcript())
	var report struct {
		Bash struct {
			IsError bool
			Text    string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(resultText(end)), &report), resultText(end))
	assert.True(t, report.Bash.IsError, "denied")
	assert.NotContains(t, report.Bash.Text, "nested\n")
	assert.Equal(t, 0, p.exit())
}

// A nested call the calling tool withdraws (its signal aborts) stops: the
// command it ran is killed and the calling tool gets an error result.
func TestExtensionToolCallsOtherToolsWithdrawn(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn {
		return []llmtest.Turn{llmtest.ToolCalls(llmtest.Call("c1", "impatient", `{}`)), llmtest.Text("done")}
	}, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("impatient.ts", `import { Type } from "typebox";
export default function (pi) {
	pi.registerTool({
		name: "impatient", label: "Impatient", description: "Gives up on a slow command",
		parameters: Type.Object({}),
		async execute(id, params, signal, onUpdate, ctx) {
			const ac = new AbortController();
			setTimeout(() => ac.abort(), 300);
			const t0 = Date.now();
			const r = await ctx.executeTool("bash", { command: "sleep 30; echo late" }, { signal: ac.signal });
			const quick = Date.now() - t0 < 15000;
			return { content: [{ type: "text", text: JSON.stringify({ isError: r.isError, quick }) }] };
		},
	});
}
`)
		p := start("-e", ext)
		p.ok("1", map[string]any{"type": "prompt", "message": "go"})
		rs := p.until(settled)
		end := toolEnd(rs, "c1")
		require.NotNil(t, end, p.transcript())
		assert.JSONEq(t, `{"isError":true,"quick":true}`, resultText(end))
	})
}
