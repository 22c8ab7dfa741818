// Tools calling tools: ctx.executeTool() in an extension's tool runs
// another tool through gopi's tool pipeline (the same validation, hooks,
// approval, sandbox and journal as the model's calls), and ctx.tools
// lists the tools it may call.

import { gopi, served } from "./methods.gen.mjs";
import { errorText, handlers, notify, request } from "./pipe.mjs";
import { state } from "./state.mjs";

const calls = new Map(); // a calling tool call's id -> the calls it made
const updates = new Map(); // a nested call's id -> its onUpdate

// callableTools are what ctx.tools lists, by pi's rule: the active tools
// the model reaches directly, and every tool whose exposure is codemode
// or deferred.
export function callableTools() {
	const active = new Set(state.activeTools);
	return state.allTools
		.filter((t) => t.exposure === "codemode" || t.exposure === "deferred" || ((t.exposure ?? "direct") === "direct" && active.has(t.name)))
		.map((t) => ({ name: t.name, label: t.name, description: t.description, parameters: t.parameters }));
}

function outcome(toolCall, content, details, isError) {
	return { toolCall, result: { content, details: details ?? {} }, isError };
}

// executeNested runs name for the call callerId; it never rejects: a tool
// that fails, is refused or does not exist comes back with isError.
export async function executeNested(callerId, name, args, options = {}) {
	const n = (calls.get(callerId) ?? 0) + 1;
	calls.set(callerId, n);
	const toolCall = { type: "toolCall", id: `${callerId}/${n}`, name, arguments: args ?? {} };
	const { signal, onUpdate } = options;
	if (signal?.aborted) return outcome(toolCall, [{ type: "text", text: "Operation aborted" }], {}, true);
	if (onUpdate) updates.set(toolCall.id, onUpdate);
	const onAbort = () => notify(gopi.callToolCancel, { toolCallId: toolCall.id });
	signal?.addEventListener("abort", onAbort, { once: true });
	try {
		const r = await request(gopi.callTool, { toolCallId: toolCall.id, parentToolCallId: callerId, name, args: toolCall.arguments });
		const result = outcome(toolCall, r?.content ?? [], r?.details, r?.isError === true);
		if (r?.structuredContent !== undefined) result.result.structuredContent = r.structuredContent;
		return result;
	} catch (err) {
		return outcome(toolCall, [{ type: "text", text: errorText(err) }], {}, true);
	} finally {
		signal?.removeEventListener("abort", onAbort);
		updates.delete(toolCall.id);
		calls.delete(toolCall.id);
	}
}

// callerDone forgets a calling tool call's count once it ended.
export function callerDone(callerId) {
	calls.delete(callerId);
}

handlers.set(served.callToolUpdate, (p) => {
	try {
		updates.get(p.toolCallId)?.(p.partial);
	} catch {
		// An onUpdate that throws does not stop the call.
	}
});
