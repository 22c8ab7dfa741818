// The chat page. It renders what the extension posts (pi's events, the
// session's history, notices) and sends back what the user does. It holds
// no secrets and trusts no text: model output goes through markdown with
// HTML off, tool output through textContent.
//
// This file only wires the page's parts together; each owns its state:
// the transcript (transcript.ts: messages, streaming replies, tool cards),
// the run line (runline.ts: retries and failures), the approvals
// (approvals.ts: questions on tool cards), the composer (composer.ts: the
// message box, completion, queue) and the first-run view (welcome.ts).
// A part gets what it uses, passed in here; none reaches into another.
import type { Event as PiEvent } from "../gen/protocol";
import type { FromWebview, ToWebview } from "../protocol";
import { Approvals } from "./approvals";
import { Composer } from "./composer";
import { el, idMaker } from "./dom";
import { RunLine } from "./runline";
import { Transcript } from "./transcript";
import { WelcomeView } from "./welcome";

declare function acquireVsCodeApi(): { postMessage(m: unknown): void };

const vscode = acquireVsCodeApi();
const post = (m: FromWebview) => vscode.postMessage(m);
const nextId = idMaker();

const config = JSON.parse(document.body.dataset.config ?? "{}") as { sendKey?: string; label?: string };
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const log = $<HTMLElement>("log");
const titleEl = $<HTMLElement>("title");

const composer: Composer = new Composer({
	form: $<HTMLFormElement>("composer"),
	input: $<HTMLTextAreaElement>("input"),
	stop: $<HTMLButtonElement>("stop"),
	hint: $<HTMLElement>("hint"),
	queue: $<HTMLElement>("queue"),
	completions: $<HTMLElement>("completions"),
	images: $<HTMLElement>("images"),
	mentions: $<HTMLElement>("mentions"),
	post,
	sendKey: config.sendKey,
	questionWaiting: () => approvals.waiting,
});
const welcome = new WelcomeView({ log, post, putInComposer: (text) => composer.insert(text, true) });
const transcript = new Transcript({ log, post, nextId, hideWelcome: () => welcome.hide() });
const runLine = new RunLine({ log, post, nextId, scrollDown: transcript.scrollDown });
const approvals: Approvals = new Approvals({
	log,
	post,
	nextId,
	cardFor: (id, toolName) => transcript.cardFor(id, toolName),
	composer,
	changed: () => composer.updateHint(),
});

function notice(level: "info" | "warning" | "error", text: string, action?: "restart" | "retry"): void {
	// A message that already names what failed is not prefixed twice
	// ("Compaction failed: Compaction failed: …").
	text = text.replace(/^([A-Z][^:\n]{2,40}:\s+)\1+/i, "$1");
	if (action === "retry") runLine.failed(text, level === "error" ? "error" : "warning");
	else transcript.notice(level, text, action === "restart");
}

// --- gopi's events ---

function onEvent(ev: PiEvent): void {
	switch (ev.type) {
		case "agent_start":
			composer.setStreaming(true);
			break;
		case "agent_settled":
			composer.setStreaming(false);
			transcript.settle();
			runLine.settled(Boolean(ev.aborted));
			break;
		case "message_start":
			transcript.messageStart(ev.message);
			break;
		case "message_update":
			transcript.messageUpdate(ev.assistantMessageEvent);
			break;
		case "message_end": {
			const m = ev.message;
			if (m?.role === "assistant") {
				transcript.endReply(m);
				runLine.replyEnded(m);
			} else if (m?.role === "toolResult") {
				transcript.render(m);
			}
			transcript.scrollDown();
			break;
		}
		case "tool_execution_start":
			transcript.toolStarted(String(ev.toolCallId ?? ""), String(ev.toolName ?? "tool"), ev.args, ev.parentToolCallId);
			break;
		case "tool_execution_update":
			transcript.toolOutput(String(ev.toolCallId ?? ""), ev.partialResult);
			break;
		case "tool_execution_end":
			transcript.toolEnded(String(ev.toolCallId ?? ""), ev.result, Boolean(ev.isError), ev.durationMs);
			break;
		case "compaction_start":
			notice("info", ev.reason === "overflow" ? "The context overflowed: compacting…" : "Compacting the context…");
			break;
		case "compaction_end":
			if (ev.aborted) notice("warning", "Compaction was cancelled.");
			else if (ev.errorMessage) notice("error", /^compaction failed/i.test(String(ev.errorMessage)) ? String(ev.errorMessage) : `Compaction failed: ${String(ev.errorMessage)}`);
			else notice("info", "The context was compacted.");
			break;
		case "auto_retry_start":
			runLine.retrying(Number(ev.attempt ?? 1), Number(ev.maxAttempts ?? 1), Number(ev.delayMs ?? 0), String(ev.errorMessage ?? ""));
			break;
		case "auto_retry_end":
			if (ev.success) runLine.resolve();
			else runLine.gaveUp(ev.finalError);
			break;
		case "queue_update":
			composer.showQueue(ev.steering ?? [], ev.followUp ?? []);
			break;
	}
}

// --- messages from the extension ---

window.addEventListener("message", (e: MessageEvent<ToWebview>) => {
	const m = e.data;
	switch (m.type) {
		case "event":
			onEvent(m.event);
			break;
		case "history":
			for (const msg of m.messages) {
				transcript.render(msg);
				if (msg.role === "assistant") runLine.replyInHistory(msg);
			}
			transcript.toEnd();
			break;
		case "reset":
			runLine.reset();
			approvals.clear();
			transcript.reset();
			composer.setStreaming(false);
			composer.showQueue([], []);
			// Until the new conversation has messages, the first-run view is back.
			welcome.show();
			break;
		case "commands":
			composer.setCommands(m.items ?? []);
			break;
		case "files":
			composer.setFiles(m.query, m.items);
			break;
		case "approval":
			approvals.show(m);
			break;
		case "approvalDone":
			approvals.done(m.id, m.outcome);
			break;
		case "welcome":
			welcome.set(m.welcome);
			break;
		case "stats":
			transcript.stats(m.stats);
			break;
		case "insert":
			composer.insert(m.text, m.replace);
			break;
		case "widget": {
			const where = $<HTMLElement>(m.placement === "belowEditor" ? "widgets-below" : "widgets-above");
			const id = `widget-${m.key}`;
			document.getElementById(id)?.remove();
			if (m.lines && m.lines.length) {
				const w = el("pre", "widget", m.lines.join("\n"));
				w.id = id;
				where.append(w);
			}
			break;
		}
		case "title":
			titleEl.textContent = m.title;
			titleEl.hidden = !m.title;
			break;
		case "notice":
			notice(m.level, m.text, m.action);
			break;
		case "changes":
			transcript.changes(m.run, m.files);
			break;
	}
});

composer.setStreaming(false);
post({ type: "ready" });
