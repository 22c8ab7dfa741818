// The chat page. It renders what the extension posts (pi's events, the
// session's history, notices) and sends back what the user does. It holds
// no secrets and trusts no text: model output goes through markdown with
// HTML off, tool output through textContent.
import type { FromWebview, ImageAttachment, ToWebview } from "../protocol";
import { renderMarkdown } from "./markdown";

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

let streaming = false;
let commands: { name: string; description?: string }[] = [];
let images: ImageAttachment[] = [];

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
	const a = { el: el("div", "msg assistant"), blocks: [] as Block[] };
	log.append(a.el);
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
		const head = el("div", "tool-head");
		head.append(el("span", "tool-icon"), el("span", "tool-title"));
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
	if (title) (card.querySelector(".tool-title") as HTMLElement).textContent = title;
	if (argsText) (card.querySelector(".tool-args pre") as HTMLElement).textContent = argsText;
	return card;
}

function toolTitle(name: string, args: Record<string, unknown> | undefined): string {
	const a = args ?? {};
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
	card.classList.remove("running");
	card.classList.toggle("error", isError);
	card.classList.toggle("done", !isError);
	const res = card.querySelector(".tool-result") as HTMLDetailsElement;
	res.hidden = false;
	(res.querySelector("pre") as HTMLElement).textContent = text || "(no output)";
	res.open = isError;
	(card.querySelector(".tool-output") as HTMLElement).hidden = true;
}

/** Places a tool call's card in the current message and fills it in. */
function placeToolCall(a: Assistant, i: number, call: { id?: string; name?: string; arguments?: Record<string, unknown> }): void {
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

function renderUser(m: { content?: unknown; [k: string]: unknown }): void {
	const e = el("div", "msg user");
	// Images are shown as thumbnails below the text, not named in it.
	const text = contentText(m.content, false);
	e.append(el("div", "user-text", text));
	if (Array.isArray(m.content)) {
		for (const b of m.content as { type?: string; data?: string; mimeType?: string }[]) {
			if (b?.type === "image" && b.data && /^image\/[a-z0-9.+-]+$/i.test(b.mimeType ?? "")) {
				const img = el("img", "thumb");
				img.src = `data:${b.mimeType};base64,${b.data}`;
				img.alt = "attached image";
				e.append(img);
			}
		}
	}
	log.append(e);
}

interface AssistantMsg {
	content?: { type: string; text?: string; thinking?: string; id?: string; name?: string; arguments?: Record<string, unknown> }[];
	stopReason?: string;
	errorMessage?: string;
}

function fillAssistant(a: Assistant, m: AssistantMsg): void {
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
	if (m.errorMessage && (m.stopReason === "error" || m.stopReason === "aborted")) {
		a.el.querySelector(":scope > .error-text")?.remove();
		a.el.append(el("div", m.stopReason === "aborted" ? "notice" : "error-text", m.stopReason === "aborted" ? "Stopped." : m.errorMessage));
	}
}

function renderMessage(m: { role?: string; [k: string]: unknown }): void {
	switch (m.role) {
		case "user":
			renderUser(m);
			break;
		case "assistant":
			fillAssistant(newAssistant(), m as AssistantMsg);
			break;
		case "toolResult": {
			const card = toolCards.get(String(m.toolCallId ?? ""));
			if (card) setResult(card, contentText(m.content), Boolean(m.isError));
			break;
		}
		case "bashExecution":
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

// --- events ---

function onEvent(ev: { type: string; [k: string]: unknown }): void {
	switch (ev.type) {
		case "agent_start":
			setStreaming(true);
			break;
		case "agent_settled":
			setStreaming(false);
			current = undefined;
			break;
		case "message_start": {
			const m = ev.message as { role?: string };
			if (m?.role === "assistant") current = newAssistant();
			else if (m?.role !== "toolResult" && m?.role !== "system") renderMessage(m);
			break;
		}
		case "message_update": {
			const e = ev.assistantMessageEvent as { type: string; contentIndex?: number; delta?: string; content?: string; toolCall?: { id?: string; name?: string; arguments?: Record<string, unknown> } };
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
			const m = ev.message as AssistantMsg & { role?: string };
			if (m?.role === "assistant") {
				current ??= newAssistant();
				fillAssistant(current, m);
				current = undefined;
			} else if (m?.role === "toolResult") {
				renderMessage(m as unknown as { role?: string; [k: string]: unknown });
			}
			scrollDown();
			break;
		}
		case "tool_execution_start": {
			const id = String(ev.toolCallId ?? "");
			const card = toolCards.get(id) ?? toolCard(id, "", "");
			if (!card.isConnected) (current?.el ?? log).append(card);
			toolCard(id, toolTitle(String(ev.toolName ?? "tool"), ev.args as Record<string, unknown>), JSON.stringify(ev.args ?? {}, null, 2));
			card.classList.add("running");
			break;
		}
		case "tool_execution_update": {
			const card = toolCards.get(String(ev.toolCallId ?? ""));
			if (!card) break;
			const out = card.querySelector(".tool-output") as HTMLElement;
			out.hidden = false;
			const text = contentText((ev.partialResult as { content?: unknown })?.content);
			out.textContent = text.length > 20000 ? `…${text.slice(-20000)}` : text;
			out.scrollTop = out.scrollHeight;
			scrollDown();
			break;
		}
		case "tool_execution_end": {
			const card = toolCards.get(String(ev.toolCallId ?? ""));
			if (card) setResult(card, contentText((ev.result as { content?: unknown })?.content), Boolean(ev.isError));
			break;
		}
		case "compaction_start":
			notice("info", ev.reason === "overflow" ? "The context overflowed: compacting…" : "Compacting the context…");
			break;
		case "compaction_end":
			if (ev.aborted) notice("warning", "Compaction was cancelled.");
			else if (ev.errorMessage) notice("error", `Compaction failed: ${String(ev.errorMessage)}`);
			else notice("info", "The context was compacted.");
			break;
		case "auto_retry_start":
			notice("warning", `Retrying in ${Math.round(Number(ev.delayMs ?? 0) / 1000)} s (attempt ${ev.attempt} of ${ev.maxAttempts}): ${String(ev.errorMessage ?? "")}`);
			break;
		case "auto_retry_end":
			if (!ev.success) notice("error", `Gave up retrying: ${String(ev.finalError ?? "")}`);
			break;
		case "queue_update":
			showQueue((ev.steering as string[]) ?? [], (ev.followUp as string[]) ?? []);
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
	hint.textContent = on ? "Enter steers · Alt+Enter queues a follow-up · Esc stops" : "";
}

// --- composer ---

function send(mode: "prompt" | "steer" | "followUp"): void {
	const text = input.value.trim();
	if (!text && !images.length) return;
	post({ type: "send", text, images, mode });
	input.value = "";
	images = [];
	showImages();
	hideCompletions();
}

let completing: { kind: "/" | "@"; start: number; items: { label: string; detail?: string; insert: string }[]; index: number } | undefined;

function hideCompletions(): void {
	completing = undefined;
	completions.hidden = true;
	completions.replaceChildren();
}

function showCompletions(): void {
	completions.replaceChildren();
	if (!completing || !completing.items.length) {
		completions.hidden = true;
		return;
	}
	completing.items.forEach((it, i) => {
		const row = el("div", i === completing?.index ? "completion selected" : "completion");
		row.setAttribute("role", "option");
		row.append(el("span", "completion-label", it.label));
		if (it.detail) row.append(el("span", "completion-detail", it.detail));
		row.onmousedown = (e) => {
			e.preventDefault();
			if (completing) completing.index = i;
			accept();
		};
		completions.append(row);
	});
	completions.hidden = false;
}

function accept(): void {
	if (!completing) return;
	const it = completing.items[completing.index];
	const before = input.value.slice(0, completing.start);
	const after = input.value.slice(input.selectionStart);
	input.value = before + it.insert + after;
	const pos = (before + it.insert).length;
	input.setSelectionRange(pos, pos);
	hideCompletions();
	input.focus();
}

function updateCompletions(): void {
	const upto = input.value.slice(0, input.selectionStart);
	const slash = /^\/(\S*)$/.exec(upto);
	if (slash) {
		const q = slash[1].toLowerCase();
		const items = commands
			.filter((c) => c.name.toLowerCase().startsWith(q))
			.slice(0, 30)
			.map((c) => ({ label: `/${c.name}`, detail: c.description, insert: `/${c.name} ` }));
		completing = { kind: "/", start: 0, items, index: 0 };
		showCompletions();
		return;
	}
	const at = /(^|\s)@([^\s@]*)$/.exec(upto);
	if (at) {
		completing = { kind: "@", start: upto.length - at[2].length - 1, items: completing?.kind === "@" ? completing.items : [], index: 0 };
		post({ type: "complete", query: at[2] });
		return;
	}
	hideCompletions();
}

input.addEventListener("input", updateCompletions);
input.addEventListener("keydown", (e) => {
	if (completing && !completions.hidden) {
		if (e.key === "ArrowDown" || e.key === "ArrowUp") {
			e.preventDefault();
			const n = completing.items.length;
			completing.index = (completing.index + (e.key === "ArrowDown" ? 1 : n - 1)) % n;
			showCompletions();
			return;
		}
		if (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey && !e.altKey)) {
			e.preventDefault();
			accept();
			return;
		}
		if (e.key === "Escape") {
			e.preventDefault();
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
		const t = el("img", "thumb");
		t.src = `data:${img.mimeType};base64,${img.data}`;
		t.alt = "image to send";
		t.title = "Click to remove";
		t.onclick = () => {
			images.splice(i, 1);
			showImages();
		};
		imagesEl.append(t);
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
			for (const msg of m.messages as { role?: string }[]) renderMessage(msg);
			log.scrollTop = log.scrollHeight;
			break;
		case "reset":
			log.replaceChildren();
			toolCards.clear();
			current = undefined;
			setStreaming(false);
			showQueue([], []);
			break;
		case "commands":
			commands = m.items;
			break;
		case "files":
			if (completing?.kind === "@") {
				completing.items = m.items.map((f) => ({ label: f, insert: `@${f} ` }));
				completing.index = 0;
				showCompletions();
			}
			break;
		case "insert": {
			if (m.replace) input.value = m.text;
			else {
				const s = input.selectionStart;
				input.value = input.value.slice(0, s) + m.text + input.value.slice(input.selectionEnd);
			}
			input.focus();
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
				box.append(b);
			}
			log.append(box);
			scrollDown();
			break;
		}
	}
});

setStreaming(false);
post({ type: "ready" });
