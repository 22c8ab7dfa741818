// gopi's calls into the extensions: the events their handlers get, and
// their tools and commands.

import { gopi, served } from "./methods.gen.mjs";
import { errorText, handlers, notify, pendingEvents, request } from "./pipe.mjs";
import { callerDone } from "./nested.mjs";
import { runner } from "./runner.mjs";
import { state } from "./state.mjs";

const running = new Map(); // gopi's rid -> AbortController

function cancellable(p, run) {
	const ac = new AbortController();
	if (p.rid !== undefined) running.set(p.rid, ac);
	return Promise.resolve(run(ac.signal)).finally(() => running.delete(p.rid));
}
handlers.set(served.cancel, (p) => running.get(p.rid)?.abort());

handlers.set(served.emit, (p) =>
	cancellable(p, async (signal) => {
		// session_before_compact hands handlers the compaction's signal.
		const event = p.event.type === "session_before_compact" ? { ...p.event, signal } : p.event;
		return (await runner.emit(event)) ?? null;
	}),
);

// turn_end and agent_before_settle are pi 1.5's actionable boundaries:
// each handler sees the entries and continuation proposed so far, and the
// context they would make, which gopi builds (and refuses when a draft is
// wrong). A pi package without emitBoundary only notifies.
handlers.set(served.boundary, async (p) => {
	if (typeof runner.emitBoundary !== "function") {
		await runner.emit(p.event);
		return { entries: [], continue: false, valid: true };
	}
	const r = await runner.emitBoundary(p.event, (entries) =>
		request(gopi.boundaryPreview, { event: p.event.type, entries }),
	);
	return { entries: r.entries ?? [], continue: !!r.continue, valid: r.valid !== false };
});

// user_bash: { result } crosses as it is; { operations } is code, so only
// its presence does.
handlers.set(served.userBash, async (p) => {
	const r = await runner.emitUserBash(p.event);
	if (!r) return null;
	return r.result ? { result: r.result } : { operations: {} };
});

handlers.set(served.drain, async () => {
	while (pendingEvents.size > 0) await Promise.allSettled([...pendingEvents]);
	return null;
});

handlers.set(served.toolCall, async (p) => {
	const event = p.event;
	const result = await runner.emitToolCall(event);
	// Handlers may change event.input in place; gopi runs the tool with it.
	return { block: result?.block === true, reason: result?.reason, input: event.input };
});

handlers.set(served.toolResult, async (p) => (await runner.emitToolResult(p.event)) ?? null);

handlers.set(served.input, (p) => runner.emitInput(p.text, p.images, p.source ?? "rpc", p.streamingBehavior));

handlers.set(served.context, async (p) => {
	const messages = await runner.emitContext(p.messages);
	return { messages };
});

handlers.set(served.beforeProviderRequest, (p) => runner.emitBeforeProviderRequest(p.payload));

// Handlers change event.headers in place (null removes one); the whole
// object goes back.
handlers.set(served.beforeProviderHeaders, (p) => runner.emitBeforeProviderHeaders(p.headers ?? {}));

handlers.set(served.messageEnd, async (p) => (await runner.emitMessageEnd({ type: "message_end", message: p.message })) ?? null);

handlers.set(served.resourcesDiscover, (p) => runner.emitResourcesDiscover(p.cwd ?? state.cwd, p.reason ?? "startup"));

// before_agent_start, with gopi's system prompt: pi's runner would render
// pi's own prompt here. Same composition as pi: each handler sees the
// prompt as changed by the ones before it and the same
// systemPromptOptions object, which it may change in place (gopi builds
// the run's prompt from what is left); a returned systemPrompt forces
// the whole prompt, as forceSystemPrompt does; messages accumulate.
handlers.set(served.beforeAgentStart, async (p) => {
	const ctx = runner.createContext();
	let systemPrompt = p.systemPrompt ?? state.systemPrompt;
	const options = p.systemPromptOptions;
	let changed = false;
	const messages = [];
	ctx.getSystemPrompt = () => options?.forceSystemPrompt ?? systemPrompt;
	for (const ext of runner.extensions) {
		for (const handler of (ext.handlers.get("before_agent_start") ?? []).slice()) {
			try {
				const event = {
					type: "before_agent_start",
					messageType: p.messageType ?? "user",
					systemPrompt: options?.forceSystemPrompt ?? systemPrompt,
					systemPromptOptions: options,
				};
				if (event.messageType === "custom") event.message = p.message;
				else Object.assign(event, { prompt: p.prompt, images: p.images });
				const r = await handler(event, ctx);
				if (r?.message) messages.push(r.message);
				if (r?.systemPrompt !== undefined) {
					systemPrompt = r.systemPrompt;
					changed = true;
					if (options) options.forceSystemPrompt = r.systemPrompt;
				}
			} catch (err) {
				runner.emitError({ extensionPath: ext.path, event: "before_agent_start", error: errorText(err), stack: err?.stack });
			}
		}
	}
	return {
		messages,
		systemPrompt: changed ? systemPrompt : undefined,
		systemPromptOptions: options,
	};
});

// ---- tools and commands ---------------------------------------------------------

handlers.set(served.executeTool, (p) =>
	cancellable(p, async (signal) => {
		const def = runner.getToolDefinition(p.name);
		if (!def) throw new Error(`no extension tool named ${p.name}`);
		const onUpdate = (partial) => notify(gopi.toolUpdate, { toolCallId: p.toolCallId, partial });
		// pi 1.5's runner gives a tool ctx.executeTool() and ctx.tools.
		const ctx = typeof runner.createToolContext === "function" ? runner.createToolContext(p.toolCallId, signal) : runner.createContext();
		try {
			const r = await def.execute(p.toolCallId, p.params, signal, onUpdate, ctx);
			return {
				content: r?.content ?? [],
				details: r?.details,
				structuredContent: r?.structuredContent,
				isError: r?.isError === true,
				terminate: r?.terminate === true,
			};
		} catch (err) {
			return { content: [{ type: "text", text: errorText(err) }], isError: true };
		} finally {
			callerDone(p.toolCallId);
		}
	}),
);

handlers.set(served.command, (p) =>
	cancellable(p, async () => {
		const command = runner.getCommand(p.name);
		if (!command) throw new Error(`no extension command named ${p.name}`);
		try {
			await command.handler(p.args ?? "", runner.createCommandContext());
		} catch (err) {
			runner.emitError({ extensionPath: `command:${p.name}`, event: "command", error: errorText(err), stack: err?.stack });
		}
		return {};
	}),
);

