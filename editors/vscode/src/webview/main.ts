// The chat page. It renders what the extension posts (pi's events, the
// session's history, notices) and sends back what the user does. It holds
// no secrets and trusts no text: model output goes through markdown with
// HTML off, tool output through textContent.
import type { AssistantMessage, AssistantMessageEvent, Event as PiEvent, Message, ToolCall, UserMessage } from "../gen/protocol";
import type { ApprovalOutcome, CommandItem, FromWebview, ImageAttachment, ToWebview, Welcome } from "../protocol";
import { renderMarkdown } from "./markdown";
import { chipLabel, composerMentions, parseBlocks, SPECIAL_MENTIONS } from "./mentions";
import { statsCard } from "./stats";

declare function acquireVsCodeApi(): { postMessage(m: unknown): void };

const vscode = acquireVsCodeApi();
const post = (m: FromWebview) => vscode.postMessage(m);

const config = JSON.parse(document.body.dataset.config ?? "{}") as { sendKey?: string; label?: string };
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const log = $<HTMLElement>("log");
const input = $<HTMLTextAreaElement>("input");
const form = $<HTMLFormElement>("composer");
const stopBtn = $<HTMLButtonElement>("stop");
const hint = $<HTMLElement>("hint");
const queueEl = $<HTMLElement>("queue");
const completions = $<HTMLElement>("completions");
const imagesEl = $<HTMLElement>("images");
const titleEl = $<HTMLElement>("title");
const mentionsEl = $<HTMLElement>("mentions");

let streaming = false;
let commands: CommandItem[] = [];
let images: ImageAttachment[] = [];
let uid = 0;
const nextId = (prefix: string) => `${prefix}-${++uid}`;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
	const e = document.createElement(tag);
	if (cls) e.className = cls;
	if (text !== undefined) e.textContent = text;
	return e;
}

function scrollDown(): void {
	const nearBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 120;
	if (nearBottom) requestAnimationFrame(() => (log.scrollTop = log.scrollHeight));
}

// --- blocks of an assistant message ---

interface Block {
	kind: "text" | "thinking" | "toolCall";
	el: HTMLElement;
	body: HTMLElement;
	src: string;
	dirty: boolean;
}

interface Assistant {
	el: HTMLElement;
	blocks: Block[];
}

let current: Assistant | undefined;
const toolCards = new Map<string, HTMLElement>();
const dirty = new Set<Block>();
let frame = 0;

function schedule(b: Block): void {
	b.dirty = true;
	dirty.add(b);
	if (!frame) frame = requestAnimationFrame(flushBlocks);
}

function flushBlocks(): void {
	frame = 0;
	for (const b of dirty) paint(b);
	dirty.clear();
	scrollDown();
}

function paint(b: Block): void {
	b.dirty = false;
	if (b.kind === "toolCall") return;
	b.body.innerHTML = renderMarkdown(b.src);
	// Each code block gets a Copy button (the extension writes the clipboard).
	for (const pre of Array.from(b.body.querySelectorAll("pre"))) {
		const btn = el("button", "copy", "Copy");
		btn.type = "button";
		btn.title = "Copy the code";
		btn.onclick = () => post({ type: "copy", text: pre.querySelector("code")?.textContent ?? pre.textContent ?? "" });
		pre.prepend(btn);
	}
}

function newAssistant(): Assistant {
	const e = el("article", "msg assistant");
	e.setAttribute("aria-label", "gopi");
	const a = { el: e, blocks: [] as Block[] };
	log.append(a.el);
	hideWelcome();
	return a;
}

function block(a: Assistant, i: number, kind: Block["kind"]): Block {
	let b = a.blocks[i];
	if (b && b.kind === kind) return b;
	let wrap: HTMLElement;
	let body: HTMLElement;
	if (kind === "thinking") {
		const d = el("details", "thinking");
		d.append(el("summary", undefined, "Thinking"));
		body = el("div", "md");
		d.append(body);
		wrap = d;
	} else if (kind === "text") {
		wrap = body = el("div", "md text");
	} else {
		wrap = body = toolCard("", "preparing a tool call…", "");
	}
	b = { kind, el: wrap, body, src: "", dirty: false };
	const next = a.blocks.slice(i + 1).find(Boolean);
	if (b.el !== next?.el) a.el.insertBefore(b.el, next?.el ?? null);
	a.blocks[i] = b;
	return b;
}

/** A card for one tool call; found again by its id. */
function toolCard(id: string, title: string, argsText: string): HTMLElement {
	let card = id ? toolCards.get(id) : undefined;
	if (!card) {
		card = el("div", "tool running");
		card.setAttribute("role", "group");
		const head = el("div", "tool-head");
		const icon = el("span", "tool-icon");
		icon.setAttribute("aria-hidden", "true");
		head.append(icon, el("span", "tool-title"), el("span", "tool-state"));
		const args = el("details", "tool-args");
		args.append(el("summary", undefined, "Arguments"), el("pre"));
		const out = el("pre", "tool-output");
		out.hidden = true;
		const res = el("details", "tool-result");
		res.hidden = true;
		res.append(el("summary", undefined, "Result"), el("pre"));
		card.append(head, args, out, res);
		if (id) {
			card.dataset.id = id;
			toolCards.set(id, card);
		}
	}
	if (title) {
		(card.querySelector(".tool-title") as HTMLElement).textContent = title;
		labelCard(card);
	}
	if (argsText) (card.querySelector(".tool-args pre") as HTMLElement).textContent = argsText;
	return card;
}

/** A card's accessible name: its title, and its question while one waits. */
function labelCard(card: HTMLElement): void {
	const title = card.querySelector(".tool-title")?.textContent || "tool call";
	const state = card.querySelector(".tool-state")?.textContent;
	card.setAttribute("aria-label", card.classList.contains("pending") ? `${title} (waits for your answer)` : state ? `${title} (${state})` : title);
}

function toolTitle(name: string, args: unknown): string {
	const a = (args ?? {}) as Record<string, unknown>;
	const arg = (a.command ?? a.path ?? a.pattern ?? a.query ?? "") as string;
	return arg ? `${name}: ${String(arg).split("\n")[0]}` : name;
}

/** The text of content; an image is named in it unless shown apart (withImages false). */
function contentText(c: unknown, withImages = true): string {
	if (typeof c === "string") return c;
	if (!Array.isArray(c)) return "";
	return c
		.map((b: { type?: string; text?: string; mimeType?: string }) =>
			b?.type === "text" ? (b.text ?? "") : b?.type === "image" && withImages ? `[image ${b.mimeType ?? ""}]` : "",
		)
		.filter(Boolean)
		.join("\n");
}

function setResult(card: HTMLElement, text: string, isError: boolean): void {
	// A stopped run ends its tool with this text: that is not a failure.
	const aborted = isError && /^operation aborted\.?$/i.test(text.trim());
	// Turned down by the user: the card says so; that is not a failure either.
	const denied = isError && card.classList.contains("denied");
	card.classList.remove("running");
	card.classList.toggle("error", isError && !aborted && !denied);
	card.classList.toggle("aborted", aborted);
	card.classList.toggle("done", !isError);
	const state = card.querySelector(".tool-state") as HTMLElement;
	if (aborted) state.textContent = "aborted";
	else if (isError && !state.textContent) state.textContent = "failed";
	const res = card.querySelector(".tool-result") as HTMLDetailsElement;
	res.hidden = false;
	(res.querySelector("pre") as HTMLElement).textContent = text || "(no output)";
	res.open = isError && !aborted && !denied;
	(card.querySelector(".tool-output") as HTMLElement).hidden = true;
	labelCard(card);
}

/** Places a tool call's card in the current message and fills it in. */
function placeToolCall(a: Assistant, i: number, call: ToolCall): void {
	const b = block(a, i, "toolCall");
	const id = call.id ?? "";
	const known = id ? toolCards.get(id) : undefined;
	if (known && known !== b.el) {
		b.el.replaceWith(known);
		b.el = b.body = known;
	} else if (id && !known) {
		b.el.dataset.id = id;
		toolCards.set(id, b.el);
	}
	toolCard(id, toolTitle(call.name ?? "tool", call.arguments), JSON.stringify(call.arguments ?? {}, null, 2));
}

// --- whole messages (history, message_start/end) ---

function renderUser(m: UserMessage): void {
	const e = el("article", "msg user");
	e.setAttribute("aria-label", "You");
	hideWelcome();
	// Images are shown as thumbnails below the text, not named in it; the
	// blocks the extension appended for mentions as chips.
	const { text, blocks } = parseBlocks(contentText(m.content, false));
	e.append(el("div", "user-text", text));
	if (blocks.length) {
		const row = el("div", "chips sent-chips");
		const bodies: HTMLElement[] = [];
		for (const b of blocks) {
			const chip = el("button", "mention-chip", chipLabel(b));
			chip.type = "button";
			chip.dataset.tag = b.tag;
			const body = el("pre", "mention-body", b.body);
			body.id = nextId("mention");
			body.hidden = true;
			body.setAttribute("aria-label", chipLabel(b));
			chip.setAttribute("aria-expanded", "false");
			chip.setAttribute("aria-controls", body.id);
			chip.title = "Show or hide what was attached";
			chip.onclick = () => {
				body.hidden = !body.hidden;
				chip.setAttribute("aria-expanded", String(!body.hidden));
			};
			row.append(chip);
			bodies.push(body);
		}
		e.append(row, ...bodies);
	}
	if (Array.isArray(m.content)) {
		for (const b of m.content) {
			if (b?.type === "image" && b.data && /^image\/[a-z0-9.+-]+$/i.test(b.mimeType ?? "")) {
				const img = el("img", "thumb");
				img.src = `data:${b.mimeType};base64,${b.data}`;
				img.alt = "attached image";
				e.append(img);
			}
		}
	}
	// The files and the chat as they were before this message: the
	// extension asks what to restore and shows the changes first.
	if (typeof m.timestamp === "number") {
		const b = el("button", "link rewind", "Rewind to here");
		b.type = "button";
		b.title = "Restore the files, the conversation or both to before this message";
		b.setAttribute("aria-label", `Rewind to before this message: ${text.split("\n")[0].slice(0, 60)}`);
		b.onclick = () => post({ type: "rewind", timestamp: m.timestamp });
		e.append(b);
	}
	log.append(e);
}

function fillAssistant(a: Assistant, m: AssistantMessage): void {
	(m.content ?? []).forEach((c, i) => {
		if (c.type === "text") {
			const b = block(a, i, "text");
			b.src = c.text ?? "";
			paint(b);
		} else if (c.type === "thinking") {
			const b = block(a, i, "thinking");
			b.src = c.thinking ?? "";
			paint(b);
		} else if (c.type === "toolCall") {
			placeToolCall(a, i, c);
		}
	});
	if (m.stopReason === "aborted") {
		a.el.querySelector(":scope > .notice")?.remove();
		a.el.append(el("div", "notice", "Stopped."));
	}
	// A failed reply with nothing in it leaves no empty message behind.
	if (m.stopReason === "error" && !a.el.querySelector(":scope > :not(.run-status)")) a.el.remove();
}

function renderMessage(m: Message): void {
	switch (m.role) {
		case "user":
			renderUser(m);
			break;
		case "assistant": {
			fillAssistant(newAssistant(), m);
			if (m.stopReason === "error") historyError(m.errorMessage ?? "The model call failed.");
			else resolveRun();
			break;
		}
		case "toolResult": {
			const card = toolCards.get(String(m.toolCallId ?? ""));
			if (card) setResult(card, contentText(m.content), Boolean(m.isError));
			break;
		}
		case "bashExecution":
			hideWelcome();
			log.append(el("div", "msg bash", `$ ${String(m.command ?? "")}\n${String(m.output ?? "")}`));
			break;
		case "compactionSummary":
			notice("info", "Earlier messages were compacted into a summary.");
			break;
		case "branchSummary":
			notice("info", "Summary of another branch of this session.");
			break;
		case "custom":
			if (m.display !== false) log.append(el("div", "msg custom", contentText(m.content)));
			break;
	}
}

function notice(level: string, text: string, action?: string): void {
	// A message that already names what failed is not prefixed twice
	// ("Compaction failed: Compaction failed: …").
	text = text.replace(/^([A-Z][^:\n]{2,40}:\s+)\1+/i, "$1");
	if (action === "retry") {
		runFailed(text, level === "error" ? "error" : "warning");
		return;
	}
	const n = el("div", `notice ${level}`, text);
	if (action === "restart") {
		const b = el("button", "link", "Restart gopi");
		b.type = "button";
		b.onclick = () => post({ type: "restart" });
		n.append(" ", b);
	}
	log.append(n);
	scrollDown();
}

// --- the run's status line: retries, then a failure with Retry ---
//
// One line per retry cycle, updated in place: created on the first
// auto_retry_start (or by the failed reply before it), it counts down to the
// next attempt, goes when an attempt succeeds, and turns into an error with
// a Retry button when gopi gives up (or a reply fails with no retry).

interface RunLine {
	el: HTMLElement;
	state: "retrying" | "failed";
	timer?: ReturnType<typeof setInterval>;
}
let runLine: RunLine | undefined;

/** The first line of an error, cut to a readable length; the whole of it is the line's title. */
function errorSummary(text: string): string {
	const first = text.trim().split("\n")[0] ?? "";
	return first.length > 160 ? `${first.slice(0, 157)}…` : first;
}

function runLineEl(): RunLine {
	if (runLine) {
		if (runLine.timer) clearInterval(runLine.timer);
		runLine.timer = undefined;
		return runLine;
	}
	const e = el("div", "run-status");
	e.id = nextId("run-status");
	e.append(el("span", "run-status-icon"), el("span", "run-status-text"), el("span", "run-status-countdown"), el("span", "run-status-error"));
	(e.firstChild as HTMLElement).setAttribute("aria-hidden", "true");
	(e.querySelector(".run-status-countdown") as HTMLElement).setAttribute("aria-hidden", "true");
	log.append(e);
	runLine = { el: e, state: "retrying" };
	return runLine;
}

function setRunError(line: RunLine, error: string): void {
	const err = line.el.querySelector(".run-status-error") as HTMLElement;
	err.textContent = errorSummary(error);
	line.el.title = error.trim();
}

function runRetrying(attempt: number, max: number, delayMs: number, error: string): void {
	const line = runLineEl();
	line.state = "retrying";
	line.el.className = "run-status retrying";
	line.el.setAttribute("role", "status");
	line.el.querySelector(".retry")?.remove();
	(line.el.querySelector(".run-status-text") as HTMLElement).textContent = `Retrying (attempt ${attempt} of ${max})`;
	setRunError(line, error);
	const cd = line.el.querySelector(".run-status-countdown") as HTMLElement;
	const until = Date.now() + delayMs;
	const tick = () => {
		const left = Math.ceil((until - Date.now()) / 1000);
		cd.textContent = left > 0 ? `in ${left} s` : "now…";
		if (left <= 0 && line.timer) {
			clearInterval(line.timer);
			line.timer = undefined;
		}
	};
	tick();
	if (delayMs > 0) line.timer = setInterval(tick, 250);
	scrollDown();
}

function runFailed(error: string, level: "error" | "warning" = "error"): void {
	// A failure after an earlier, unanswered one: the older line keeps its
	// text but loses its button.
	if (runLine?.state === "failed") retire(runLine, "stale");
	const line = runLineEl();
	line.state = "failed";
	line.el.className = `run-status failed ${level}`;
	line.el.setAttribute("role", "alert");
	(line.el.querySelector(".run-status-text") as HTMLElement).textContent = level === "error" ? "Failed:" : "";
	(line.el.querySelector(".run-status-countdown") as HTMLElement).textContent = "";
	setRunError(line, error);
	if (!line.el.querySelector(".retry")) {
		const b = el("button", "retry", "Retry");
		b.type = "button";
		b.title = "Send the last prompt again";
		b.setAttribute("aria-describedby", line.el.id);
		b.onclick = () => {
			if (b.getAttribute("aria-disabled") === "true") return;
			b.setAttribute("aria-disabled", "true");
			post({ type: "retry" });
		};
		line.el.append(b);
	}
	scrollDown();
}

/** Stops tracking a line: "resolved" dims it (a later run went through), "stale" just drops its button. */
function retire(line: RunLine, how: "resolved" | "stale"): void {
	if (line.timer) clearInterval(line.timer);
	line.el.querySelector(".retry")?.remove();
	line.el.removeAttribute("role");
	line.el.classList.add(how);
	if (how === "resolved") {
		line.el.classList.remove("error", "warning");
		(line.el.querySelector(".run-status-text") as HTMLElement).textContent = "Failed earlier:";
	}
	if (runLine === line) runLine = undefined;
}

/** A reply went through: a retry cycle's line goes, a failure's line is marked resolved. */
function resolveRun(): void {
	if (!runLine) return;
	if (runLine.state === "retrying") {
		if (runLine.timer) clearInterval(runLine.timer);
		runLine.el.remove();
		runLine = undefined;
	} else retire(runLine, "resolved");
}

/** A failed reply in history: one static line per run of the same error. */
function historyError(error: string): void {
	const last = log.lastElementChild as HTMLElement | null;
	if (last?.classList.contains("run-status") && last.title === error.trim()) return;
	// Only the newest can still be retried: an older line loses its button when the next comes.
	runFailed(error);
}

// --- approvals on tool cards ---

interface Pending {
	card: HTMLElement;
	box: HTMLElement;
}
const approvals = new Map<string, Pending>();

const OUTCOME_TEXT: Record<ApprovalOutcome, string> = {
	accepted: "Accepted",
	always: "Always allowed",
	rejected: "Rejected",
	aborted: "Aborted",
	timedOut: "Timed out",
};

function showApproval(m: Extract<ToWebview, { type: "approval" }>): void {
	const id = m.toolCallId ?? `approval:${m.id}`;
	let card = toolCards.get(id);
	if (!card) {
		card = toolCard(id, m.toolName, "");
		(current?.el ?? log).append(card);
	}
	approvals.get(m.id)?.box.remove();
	card.querySelector(":scope > .approval")?.remove();
	const box = el("div", "approval");
	box.dataset.approvalId = m.id;
	const q = el("div", "approval-question", m.title);
	q.id = nextId("question");
	const actions = el("div", "approval-actions");
	m.options.forEach((o, i) => {
		const b = el("button", `approval-button${i === 0 ? " primary" : ""}`, o.label);
		b.type = "button";
		b.dataset.answer = o.answer;
		b.setAttribute("aria-describedby", q.id);
		b.onclick = () => {
			// Answered once; the buttons stay focusable (disabling one would
			// drop the focus) until the extension says it is done.
			if (box.classList.contains("answered")) return;
			box.classList.add("answered");
			for (const x of Array.from(actions.querySelectorAll("button"))) x.setAttribute("aria-disabled", "true");
			post({ type: "approve", id: m.id, answer: o.answer });
		};
		actions.append(b);
	});
	box.append(q, actions);
	card.querySelector(".tool-head")?.after(box);
	card.classList.add("pending");
	card.dataset.approval = m.id;
	labelCard(card);
	approvals.set(m.id, { card, box });
	updateHint();
	card.scrollIntoView({ block: "nearest" });
	// Focus moves to the question only when nothing is being typed and no
	// other question has it.
	const active = document.activeElement;
	const idle = !active || active === document.body || active === log || (active === input && !input.value.trim());
	if (idle || (log.contains(active) && !active?.closest(".approval"))) (actions.firstElementChild as HTMLElement | null)?.focus();
}

function approvalDone(id: string, outcome: ApprovalOutcome): void {
	const p = approvals.get(id);
	if (!p) return;
	approvals.delete(id);
	const hadFocus = p.box.contains(document.activeElement);
	p.box.remove();
	p.card.classList.remove("pending");
	delete p.card.dataset.approval;
	const done = el("div", `approval-outcome outcome-${outcome}`, OUTCOME_TEXT[outcome] ?? outcome);
	p.card.querySelector(":scope > .approval-outcome")?.remove();
	p.card.querySelector(".tool-head")?.after(done);
	(p.card.querySelector(".tool-state") as HTMLElement).textContent = (OUTCOME_TEXT[outcome] ?? outcome).toLowerCase();
	// Not run: the card stops spinning (a result, if one comes, still fills it in).
	if (outcome === "aborted") p.card.classList.add("aborted");
	if (outcome === "rejected" || outcome === "timedOut") p.card.classList.add("denied");
	if (outcome !== "accepted" && outcome !== "always") p.card.classList.remove("running");
	labelCard(p.card);
	updateHint();
	if (hadFocus) focusApproval() || input.focus();
}

/** Focuses the oldest pending question's first button; false when none waits. */
function focusApproval(): boolean {
	const first = approvals.values().next().value as Pending | undefined;
	const b = first?.box.querySelector("button") as HTMLElement | null;
	if (!b) return false;
	b.scrollIntoView({ block: "nearest" });
	b.focus();
	return true;
}

// --- welcome ---

let welcome: Welcome | undefined;

function hideWelcome(): void {
	document.getElementById("welcome")?.remove();
}

function showWelcome(): void {
	hideWelcome();
	if (!welcome || log.querySelector(".msg")) return;
	const w = welcome;
	const box = el("section", "welcome");
	box.id = "welcome";
	box.setAttribute("aria-labelledby", "welcome-title");
	const h = el("h2", undefined, "Welcome to gopi");
	h.id = "welcome-title";
	box.append(h);
	const model = el("p", "welcome-model");
	model.append(w.model ? "Model: " : "No model is selected yet.");
	if (w.model) model.append(el("code", undefined, w.model));
	box.append(model);
	if (w.offline) {
		box.append(
			el("p", "welcome-hint", "No API key was found, so gopi runs its offline model, which follows directives instead of thinking. Try one:"),
		);
		const tries = el("div", "welcome-tries");
		for (const t of ["bash: ls", "write: notes.txt :: hello", "think: a plan"]) {
			const b = el("button", "welcome-try", t);
			b.type = "button";
			b.title = "Put this in the message box";
			b.onclick = () => {
				input.value = t;
				input.focus();
				updateMentions();
			};
			tries.append(b);
		}
		box.append(tries);
		box.append(el("p", "welcome-hint", "For a real model, add a key or pick a model that has one."));
		const actions = el("div", "welcome-actions");
		const key = el("button", "welcome-button primary", "Add an API key");
		key.type = "button";
		key.id = "welcome-set-key";
		key.onclick = () => post({ type: "setKey" });
		const sw = el("button", "welcome-button", "Switch model");
		sw.type = "button";
		sw.id = "welcome-switch-model";
		sw.onclick = () => post({ type: "switchModel" });
		actions.append(key, sw);
		box.append(actions);
	} else {
		box.append(
			el("p", "welcome-hint", "Ask about this workspace or give gopi a task. Type / for commands, @ to attach a file, @selection, @problems, @terminal or @git."),
		);
		if (w.providers.length) box.append(el("p", "welcome-providers", `Keys found for: ${w.providers.join(", ")}.`));
	}
	log.prepend(box);
}

// --- events ---

function onEvent(ev: PiEvent): void {
	switch (ev.type) {
		case "agent_start":
			setStreaming(true);
			break;
		case "agent_settled":
			setStreaming(false);
			current = undefined;
			// Settled while a retry was still counting down: stopped, or given up.
			if (runLine?.state === "retrying") {
				if (ev.aborted) {
					(runLine.el.querySelector(".run-status-text") as HTMLElement).textContent = "Retrying stopped:";
					(runLine.el.querySelector(".run-status-countdown") as HTMLElement).textContent = "";
					retire(runLine, "stale");
				} else runFailed(runLine.el.title || "The model call failed.");
			}
			break;
		case "message_start": {
			const m = ev.message;
			if (m?.role === "assistant") current = newAssistant();
			else if (m?.role !== "toolResult" && m?.role !== "system") renderMessage(m);
			break;
		}
		case "message_update": {
			// start, done and error carry no contentIndex.
			const e: AssistantMessageEvent & { contentIndex?: number } = ev.assistantMessageEvent;
			if (!e) break;
			current ??= newAssistant();
			const i = e.contentIndex ?? 0;
			switch (e.type) {
				case "text_start":
					block(current, i, "text");
					break;
				case "text_delta": {
					const b = block(current, i, "text");
					b.src += e.delta ?? "";
					schedule(b);
					break;
				}
				case "text_end": {
					const b = block(current, i, "text");
					if (typeof e.content === "string") b.src = e.content;
					schedule(b);
					break;
				}
				case "thinking_start":
					block(current, i, "thinking");
					break;
				case "thinking_delta": {
					const b = block(current, i, "thinking");
					b.src += e.delta ?? "";
					schedule(b);
					break;
				}
				case "thinking_end": {
					const b = block(current, i, "thinking");
					if (typeof e.content === "string") b.src = e.content;
					schedule(b);
					break;
				}
				case "toolcall_start":
					block(current, i, "toolCall");
					break;
				case "toolcall_end":
					if (e.toolCall) placeToolCall(current, i, e.toolCall);
					break;
			}
			break;
		}
		case "message_end": {
			const m = ev.message;
			if (m?.role === "assistant") {
				current ??= newAssistant();
				fillAssistant(current, m);
				current = undefined;
				if (m.stopReason === "error") {
					const error = m.errorMessage ?? "The model call failed.";
					if (runLine?.state === "retrying") setRunError(runLine, error);
					else runFailed(error);
				} else if (m.stopReason !== "aborted") resolveRun();
			} else if (m?.role === "toolResult") {
				renderMessage(m);
			}
			scrollDown();
			break;
		}
		case "tool_execution_start": {
			const id = String(ev.toolCallId ?? "");
			const card = toolCards.get(id) ?? toolCard(id, "", "");
			if (!card.isConnected) (current?.el ?? log).append(card);
			toolCard(id, toolTitle(String(ev.toolName ?? "tool"), ev.args), JSON.stringify(ev.args ?? {}, null, 2));
			card.classList.add("running");
			break;
		}
		case "tool_execution_update": {
			const card = toolCards.get(String(ev.toolCallId ?? ""));
			if (!card) break;
			const out = card.querySelector(".tool-output") as HTMLElement;
			out.hidden = false;
			const text = contentText(ev.partialResult?.content);
			out.textContent = text.length > 20000 ? `…${text.slice(-20000)}` : text;
			out.scrollTop = out.scrollHeight;
			scrollDown();
			break;
		}
		case "tool_execution_end": {
			const card = toolCards.get(String(ev.toolCallId ?? ""));
			if (card) setResult(card, contentText(ev.result?.content), Boolean(ev.isError));
			break;
		}
		case "compaction_start":
			notice("info", ev.reason === "overflow" ? "The context overflowed: compacting…" : "Compacting the context…");
			break;
		case "compaction_end":
			if (ev.aborted) notice("warning", "Compaction was cancelled.");
			else if (ev.errorMessage) notice("error", /^compaction failed/i.test(String(ev.errorMessage)) ? String(ev.errorMessage) : `Compaction failed: ${String(ev.errorMessage)}`);
			else notice("info", "The context was compacted.");
			break;
		case "auto_retry_start":
			runRetrying(Number(ev.attempt ?? 1), Number(ev.maxAttempts ?? 1), Number(ev.delayMs ?? 0), String(ev.errorMessage ?? ""));
			break;
		case "auto_retry_end":
			if (ev.success) resolveRun();
			else runFailed(String(ev.finalError ?? (runLine?.el.title || "The model call failed.")));
			break;
		case "queue_update":
			showQueue(ev.steering ?? [], ev.followUp ?? []);
			break;
	}
}

function showQueue(steering: string[], followUp: string[]): void {
	queueEl.replaceChildren();
	const add = (kind: "steering" | "followUp", items: string[]) =>
		items.forEach((text, index) => {
			const row = el("div", `queued ${kind}`);
			row.append(el("span", "queued-kind", kind === "steering" ? "steer" : "follow-up"), el("span", "queued-text", text));
			const x = el("button", "queued-remove", "×");
			x.type = "button";
			x.title = "Remove from the queue";
			x.setAttribute("aria-label", `Remove from the queue: ${text}`);
			x.onclick = () => post({ type: "dequeue", kind, index });
			row.append(x);
			queueEl.append(row);
		});
	add("steering", steering);
	add("followUp", followUp);
	queueEl.hidden = steering.length + followUp.length === 0;
}

function setStreaming(on: boolean): void {
	streaming = on;
	stopBtn.hidden = !on;
	document.body.classList.toggle("streaming", on);
	updateHint();
}

function updateHint(): void {
	const parts: string[] = [];
	if (approvals.size) parts.push("Alt+A answers the question");
	if (streaming) parts.push("Enter steers", "Alt+Enter follows up", "Esc stops");
	hint.textContent = parts.join(" · ");
	hint.title = streaming ? "Enter sends a message gopi reads before its next step; Alt+Enter queues one for after it finishes; Escape stops the run." : "";
}

// --- composer ---

function send(mode: "prompt" | "steer" | "followUp"): void {
	const text = input.value.trim();
	if (!text && !images.length) return;
	// One of the extension's own / actions runs there, with what follows its name.
	const slash = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text);
	const action = slash && commands.find((c) => c.source === "action" && c.name === slash[1]);
	if (slash && action) post({ type: "action", name: action.name, args: (slash[2] ?? "").trim() });
	else {
		post({ type: "send", text, images, mode });
		images = [];
		showImages();
	}
	input.value = "";
	hideCompletions();
	updateMentions();
}

interface CompletionItem {
	label: string;
	detail?: string;
	insert: string;
	tag?: string;
}
let completing: { kind: "/" | "@"; start: number; query: string; items: CompletionItem[]; index: number; files: CompletionItem[] } | undefined;

function hideCompletions(): void {
	completing = undefined;
	completions.hidden = true;
	completions.replaceChildren();
	input.removeAttribute("aria-activedescendant");
}

const SOURCE_TAG: Record<string, string> = { action: "action", prompt: "prompt", skill: "skill", extension: "extension" };

function showCompletions(): void {
	completions.replaceChildren();
	input.removeAttribute("aria-activedescendant");
	if (!completing) {
		hideCompletions();
		return;
	}
	completions.setAttribute("aria-label", completing.kind === "/" ? "Commands" : "Files and mentions");
	if (!completing.items.length) {
		// Nothing to offer: said once, rather than an empty box (or none at all).
		if (completing.kind === "/" && !commands.length) {
			const row = el("div", "completion empty", "No commands");
			row.setAttribute("role", "option");
			row.setAttribute("aria-disabled", "true");
			row.id = "completion-empty";
			completions.append(row);
			completions.hidden = false;
		} else {
			completions.hidden = true;
		}
		return;
	}
	completing.items.forEach((it, i) => {
		const selected = i === completing?.index;
		const row = el("div", selected ? "completion selected" : "completion");
		row.id = `completion-${i}`;
		row.setAttribute("role", "option");
		row.setAttribute("aria-selected", String(selected));
		row.append(el("span", "completion-label", it.label));
		if (it.tag) {
			const tag = el("span", `completion-tag tag-${it.tag}`, it.tag);
			row.append(tag);
		}
		if (it.detail) row.append(el("span", "completion-detail", it.detail));
		row.onmousedown = (e) => {
			e.preventDefault();
			if (completing) completing.index = i;
			accept();
		};
		completions.append(row);
		if (selected) input.setAttribute("aria-activedescendant", row.id);
	});
	completions.hidden = false;
	completions.querySelector(".selected")?.scrollIntoView({ block: "nearest" });
}

function accept(): void {
	if (!completing) return;
	const it = completing.items[completing.index];
	if (!it) return hideCompletions();
	const before = input.value.slice(0, completing.start);
	const after = input.value.slice(input.selectionStart);
	input.value = before + it.insert + after;
	const pos = (before + it.insert).length;
	input.setSelectionRange(pos, pos);
	hideCompletions();
	input.focus();
	updateMentions();
}

/** / completion: the extension's actions first, then gopi's commands, each in the order they came. */
function commandItems(q: string): CompletionItem[] {
	const match = commands.filter((c) => c.name.toLowerCase().startsWith(q));
	const actions = match.filter((c) => c.source === "action");
	const rest = match.filter((c) => c.source !== "action");
	return [...actions, ...rest].slice(0, 50).map((c) => ({
		label: `/${c.name}`,
		detail: c.description,
		insert: `/${c.name} `,
		tag: c.source ? (SOURCE_TAG[c.source] ?? c.source) : undefined,
	}));
}

/** @ completion: the special mentions that match, then the files the extension found. */
function mentionItems(q: string, files: CompletionItem[]): CompletionItem[] {
	const lq = q.toLowerCase();
	const specials = SPECIAL_MENTIONS.filter((s) => s.name.startsWith(lq)).map((s) => ({ label: `@${s.name}`, detail: s.detail, insert: `@${s.name} `, tag: "mention" }));
	return [...specials, ...files];
}

function updateCompletions(): void {
	const upto = input.value.slice(0, input.selectionStart);
	const slash = /^\/(\S*)$/.exec(upto);
	if (slash) {
		const q = slash[1].toLowerCase();
		completing = { kind: "/", start: 0, query: q, items: commandItems(q), index: 0, files: [] };
		showCompletions();
		return;
	}
	const at = /(^|\s)@([^\s@]*)$/.exec(upto);
	if (at) {
		const files = completing?.kind === "@" ? completing.files : [];
		completing = { kind: "@", start: upto.length - at[2].length - 1, query: at[2], items: mentionItems(at[2], files), index: 0, files };
		showCompletions();
		post({ type: "complete", query: at[2] });
		return;
	}
	hideCompletions();
}

// The @references in the text, as chips above it; × takes one out.
function updateMentions(): void {
	// The token being typed (it ends at the caret) is not a chip yet.
	const caret = document.activeElement === input && input.selectionStart === input.selectionEnd ? input.selectionStart : -1;
	const found = composerMentions(input.value).filter((m) => m.end !== caret);
	mentionsEl.replaceChildren();
	for (const m of found) {
		const chip = el("span", `mention-chip composer-chip kind-${m.kind}`);
		chip.dataset.mention = m.label;
		chip.append(el("span", "mention-label", m.label));
		const x = el("button", "chip-remove", "×");
		x.type = "button";
		x.setAttribute("aria-label", `Remove ${m.label}`);
		x.title = `Remove ${m.label} from the message`;
		x.onclick = () => {
			const v = input.value;
			// The token goes with one space next to it.
			let s = m.start;
			let e = m.end;
			if (v[e] === " ") e++;
			else if (s > 0 && v[s - 1] === " ") s--;
			input.value = v.slice(0, s) + v.slice(e);
			input.setSelectionRange(s, s);
			input.focus();
			updateMentions();
		};
		chip.append(x);
		mentionsEl.append(chip);
	}
	mentionsEl.hidden = found.length === 0;
}

input.addEventListener("input", () => {
	updateCompletions();
	updateMentions();
});
document.addEventListener("keydown", (e) => {
	// Alt+A: to the question a tool card is waiting on.
	if (e.altKey && !e.ctrlKey && !e.metaKey && (e.key === "a" || e.key === "A" || e.code === "KeyA") && approvals.size) {
		e.preventDefault();
		focusApproval();
	}
});
input.addEventListener("keydown", (e) => {
	if (completing && !completions.hidden) {
		const n = completing.items.length;
		if ((e.key === "ArrowDown" || e.key === "ArrowUp") && n) {
			e.preventDefault();
			completing.index = (completing.index + (e.key === "ArrowDown" ? 1 : n - 1)) % n;
			showCompletions();
			return;
		}
		if (n && (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey && !e.altKey))) {
			e.preventDefault();
			accept();
			return;
		}
		if (e.key === "Escape") {
			// Closes the list only; a second Escape stops the run.
			e.preventDefault();
			e.stopPropagation();
			hideCompletions();
			return;
		}
	}
	if (e.key === "Escape" && streaming) {
		e.preventDefault();
		post({ type: "abort" });
		return;
	}
	if (e.key !== "Enter" || e.shiftKey) return;
	const ctrlSend = config.sendKey === "ctrlEnter";
	if (e.altKey) {
		e.preventDefault();
		send(streaming ? "followUp" : "prompt");
	} else if (ctrlSend ? e.ctrlKey || e.metaKey : !(e.ctrlKey || e.metaKey)) {
		e.preventDefault();
		send(streaming ? "steer" : "prompt");
	}
});
form.addEventListener("submit", (e) => {
	e.preventDefault();
	send(streaming ? "steer" : "prompt");
});
stopBtn.addEventListener("click", () => post({ type: "abort" }));

// Images: pasted or dropped, sent with the next message.
function addImageFiles(files: FileList | File[]): void {
	for (const f of Array.from(files)) {
		if (!/^image\/(png|jpeg|gif|webp)$/.test(f.type)) continue;
		const r = new FileReader();
		r.onload = () => {
			const data = String(r.result).replace(/^data:[^,]*,/, "");
			images.push({ data, mimeType: f.type });
			showImages();
		};
		r.readAsDataURL(f);
	}
}

function showImages(): void {
	imagesEl.replaceChildren();
	images.forEach((img, i) => {
		const b = el("button", "thumb-remove");
		b.type = "button";
		b.title = "Click to remove";
		b.setAttribute("aria-label", `Remove attached image ${i + 1}`);
		const t = el("img", "thumb");
		t.src = `data:${img.mimeType};base64,${img.data}`;
		t.alt = "";
		b.onclick = () => {
			images.splice(i, 1);
			showImages();
		};
		b.append(t);
		imagesEl.append(b);
	});
	imagesEl.hidden = images.length === 0;
}

input.addEventListener("paste", (e) => {
	const files = e.clipboardData?.files;
	if (files?.length) {
		addImageFiles(files);
	}
});
form.addEventListener("dragover", (e) => e.preventDefault());
form.addEventListener("drop", (e) => {
	e.preventDefault();
	if (e.dataTransfer?.files?.length) addImageFiles(e.dataTransfer.files);
});

// Links in model output go to the extension, which opens http(s) only.
log.addEventListener("click", (e) => {
	const a = (e.target as HTMLElement).closest("a[data-href]") as HTMLAnchorElement | null;
	if (a) {
		e.preventDefault();
		post({ type: "openLink", href: a.dataset.href ?? "" });
	}
});

// --- messages from the extension ---

window.addEventListener("message", (e: MessageEvent<ToWebview>) => {
	const m = e.data;
	switch (m.type) {
		case "event":
			onEvent(m.event);
			break;
		case "history":
			for (const msg of m.messages) renderMessage(msg);
			log.scrollTop = log.scrollHeight;
			break;
		case "reset":
			if (runLine?.timer) clearInterval(runLine.timer);
			runLine = undefined;
			approvals.clear();
			log.replaceChildren();
			toolCards.clear();
			current = undefined;
			setStreaming(false);
			showQueue([], []);
			// Until the new conversation has messages, the first-run view is back.
			showWelcome();
			break;
		case "commands":
			commands = m.items ?? [];
			if (completing?.kind === "/") updateCompletions();
			break;
		case "files":
			if (completing?.kind === "@" && (m.query === undefined || m.query === completing.query)) {
				completing.files = m.items.map((f) => ({ label: f, insert: `@${f} ` }));
				completing.items = mentionItems(completing.query, completing.files);
				completing.index = 0;
				showCompletions();
			}
			break;
		case "approval":
			showApproval(m);
			break;
		case "approvalDone":
			approvalDone(m.id, m.outcome);
			break;
		case "welcome":
			welcome = m.welcome;
			showWelcome();
			break;
		case "stats":
			log.append(statsCard(m.stats));
			scrollDown();
			break;
		case "insert": {
			if (m.replace) input.value = m.text;
			else {
				const s = input.selectionStart;
				input.value = input.value.slice(0, s) + m.text + input.value.slice(input.selectionEnd);
			}
			input.focus();
			updateMentions();
			break;
		}
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
		case "changes": {
			const box = el("div", "changes");
			box.append(el("div", "changes-title", `Changed ${m.files.length === 1 ? "1 file" : `${m.files.length} files`}:`));
			for (const f of m.files) {
				const b = el("button", "link change", f);
				b.type = "button";
				b.onclick = () => post({ type: "openChange", path: f, run: m.run });
				b.setAttribute("aria-label", `Show what this run changed in ${f}`);
				box.append(b);
			}
			if (m.files.length > 1) {
				const all = el("button", "link review-run", "Review all");
				all.type = "button";
				all.setAttribute("aria-label", `Review the ${m.files.length} files this run changed together`);
				all.onclick = () => post({ type: "reviewRun", run: m.run });
				box.append(all);
			}
			box.setAttribute("role", "group");
			box.setAttribute("aria-label", "Files this run changed");
			log.append(box);
			scrollDown();
			break;
		}
	}
});

// Focusing the view (gopi: Focus on Chat View, Ctrl+Alt+G) lands in the
// composer, so the chat is reachable from the keyboard alone.
window.addEventListener("focus", () => {
	if (document.activeElement === document.body || document.activeElement === null) input.focus();
});

setStreaming(false);
post({ type: "ready" });
