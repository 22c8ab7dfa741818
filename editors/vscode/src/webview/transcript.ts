// The conversation in the log: the user's messages (with their mention
// chips and Rewind to here), gopi's replies as they stream (markdown and
// thinking painted once a frame), tool cards found again by their call's
// id, notices, statistics and a run's changed files. It owns the reply
// being written and the cards; what the run line, the approvals and the
// composer do is theirs.
import type { AssistantMessage, AssistantMessageEvent, Message, SessionStats, ToolCall, UserMessage } from "../gen/protocol";
import { el, type NextId, type Post, scrollerOf } from "./dom";
import { renderMarkdown } from "./markdown";
import { chipLabel, parseBlocks } from "./mentions";
import { statsCard } from "./stats";
import { CODEMODE, type CallRecord, callList, callsOf, countCalls, endRow, fillRow, isCodemodeCard, isNestedRow, makeCodemode, makeRow, parseResult, showScriptResult } from "./codemode";
import { fillCard, makeCard, setResult, showOutput, toolTitle } from "./toolcard";

export interface TranscriptDeps {
	/** The log element the conversation is written into. */
	log: HTMLElement;
	post: Post;
	nextId: NextId;
	/** Something of the conversation is shown: the first-run view goes. */
	hideWelcome: () => void;
}

/** One block of an assistant message: text, thinking or a tool call. */
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

/** The text of content; an image is named in it unless shown apart (withImages false). */
export function contentText(c: unknown, withImages = true): string {
	if (typeof c === "string") return c;
	if (!Array.isArray(c)) return "";
	return c
		.map((b: { type?: string; text?: string; mimeType?: string }) =>
			b?.type === "text" ? (b.text ?? "") : b?.type === "image" && withImages ? `[image ${b.mimeType ?? ""}]` : "",
		)
		.filter(Boolean)
		.join("\n");
}

export class Transcript {
	/** Keeps the log at its end as it grows (unless the reader scrolled up). */
	readonly scrollDown: () => void;
	/** The reply being streamed, from its message_start to its message_end. */
	private current: Assistant | undefined;
	private readonly cards = new Map<string, HTMLElement>();
	/** Blocks whose text changed since the last frame. */
	private readonly dirty = new Set<Block>();
	private frame = 0;
	private readonly log: HTMLElement;

	constructor(private readonly d: TranscriptDeps) {
		this.log = d.log;
		this.scrollDown = scrollerOf(d.log);
		// Links in model output go to the extension, which opens http(s) only.
		d.log.addEventListener("click", (e) => {
			const a = (e.target as HTMLElement).closest("a[data-href]") as HTMLAnchorElement | null;
			if (a) {
				e.preventDefault();
				d.post({ type: "openLink", href: a.dataset.href ?? "" });
			}
		});
	}

	/** A new conversation: an empty log and no cards. */
	reset(): void {
		this.log.replaceChildren();
		this.cards.clear();
		this.current = undefined;
	}

	/** The run is over: a reply that never ended is not written into again. */
	settle(): void {
		this.current = undefined;
	}

	/** After a whole history: its end in view. */
	toEnd(): void {
		this.log.scrollTop = this.log.scrollHeight;
	}

	/** The card of a tool call, if one shows it. */
	card(id: string): HTMLElement | undefined {
		return this.cards.get(id);
	}

	/** The card of a tool call; when none shows it yet, a new one in the reply being written (else at the log's end). */
	cardFor(id: string, toolName: string): HTMLElement {
		let card = this.cards.get(id);
		if (!card) {
			card = this.toolCard(id, toolName, "");
			(this.current?.el ?? this.log).append(card);
		}
		return card;
	}

	// --- gopi's events ---

	messageStart(m: Message): void {
		if (m?.role === "assistant") this.current = this.newAssistant();
		else if (m?.role !== "toolResult" && m?.role !== "system") this.render(m);
	}

	messageUpdate(e: (AssistantMessageEvent & { contentIndex?: number }) | undefined): void {
		// start, done and error carry no contentIndex.
		if (!e) return;
		const a = (this.current ??= this.newAssistant());
		const i = e.contentIndex ?? 0;
		switch (e.type) {
			case "text_start":
				this.block(a, i, "text");
				break;
			case "text_delta": {
				const b = this.block(a, i, "text");
				b.src += e.delta ?? "";
				this.schedule(b);
				break;
			}
			case "text_end": {
				const b = this.block(a, i, "text");
				if (typeof e.content === "string") b.src = e.content;
				this.schedule(b);
				break;
			}
			case "thinking_start":
				this.block(a, i, "thinking");
				break;
			case "thinking_delta": {
				const b = this.block(a, i, "thinking");
				b.src += e.delta ?? "";
				this.schedule(b);
				break;
			}
			case "thinking_end": {
				const b = this.block(a, i, "thinking");
				if (typeof e.content === "string") b.src = e.content;
				this.schedule(b);
				break;
			}
			case "toolcall_start":
				this.block(a, i, "toolCall");
				break;
			case "toolcall_end":
				if (e.toolCall) this.placeToolCall(a, i, e.toolCall);
				break;
		}
	}

	/** A reply ended (message_end): the whole message replaces what streamed. */
	endReply(m: AssistantMessage): void {
		this.current ??= this.newAssistant();
		this.fillAssistant(this.current, m);
		this.current = undefined;
	}

	/** A tool call started; a nested one (parent: the call that made it, a codemode script) is a row on its parent's card. */
	toolStarted(id: string, name: string, args: unknown, parent?: string): void {
		const host = parent ? this.cards.get(parent) : undefined;
		if (host) {
			const row = this.rowFor(host, id);
			if (isNestedRow(row)) fillRow(row, name, args);
			else this.toolCard(id, toolTitle(name, args), JSON.stringify(args ?? {}, null, 2));
			// The script's list of calls can report a call's end before its start event arrives.
			if (!["done", "error", "aborted"].some((c) => row.classList.contains(c))) row.classList.add("running");
			countCalls(host);
			return;
		}
		const card = this.cards.get(id) ?? this.toolCard(id, "", "");
		if (!card.isConnected) (this.current?.el ?? this.log).append(card);
		this.toolCard(id, toolTitle(name, args), JSON.stringify(args ?? {}, null, 2));
		this.codemode(card, name, args);
		card.classList.add("running");
	}

	/** A running tool's output so far; a codemode call's is the list of its calls. */
	toolOutput(id: string, partial: { content?: unknown; details?: unknown } | undefined): void {
		const card = this.cards.get(id);
		if (!card || isNestedRow(card)) return;
		if (isCodemodeCard(card)) {
			this.syncCalls(card, callsOf(partial?.details));
			return;
		}
		showOutput(card, contentText(partial?.content));
		this.scrollDown();
	}

	toolEnded(id: string, result: { content?: unknown; details?: unknown } | undefined, isError: boolean, durationMs?: number): void {
		const card = this.cards.get(id);
		if (card) this.ended(card, result?.content, result?.details, isError, durationMs);
	}

	/** A call's result on its card: a row's, a script's or any other tool's. */
	private ended(card: HTMLElement, content: unknown, details: unknown, isError: boolean, durationMs?: number): void {
		const text = contentText(content);
		if (isNestedRow(card)) {
			endRow(card, !isError ? "ok" : /^operation aborted\.?$/i.test(text.trim()) ? "cancelled" : "error", text, durationMs);
			return;
		}
		setResult(card, text, isError);
		if (!isCodemodeCard(card)) return;
		this.syncCalls(card, callsOf(details));
		const r = parseResult(content);
		if (r) showScriptResult(card, r);
	}

	/** Makes a codemode call's card show its script (once its arguments are known). */
	private codemode(card: HTMLElement, name: string, args: unknown): void {
		const code = (args as { code?: unknown } | undefined)?.code;
		if (name === CODEMODE && typeof code === "string") makeCodemode(card, code, (text) => this.d.post({ type: "copy", text }));
	}

	/**
	 * The row of a nested call on host's card. A call shown before its
	 * parent was known (a question about it came first) moves under it.
	 */
	private rowFor(host: HTMLElement, id: string): HTMLElement {
		const list = callList(host);
		let row = this.cards.get(id);
		if (!row) {
			row = makeRow();
			row.dataset.id = id;
			this.cards.set(id, row);
		}
		if (row.parentElement !== list) {
			// In the order the script made the calls (their ids end in
			// "/<n>"), whatever order they started in: calls run at once
			// start in any order.
			const n = callNumber(id);
			const after = Array.from(list.children).find((r) => callNumber((r as HTMLElement).dataset.id ?? "") > n);
			list.insertBefore(row, after ?? null);
		}
		return row;
	}

	/** Brings a codemode card's rows in line with its result's list of calls (the only record of them in a history). */
	private syncCalls(card: HTMLElement, calls: CallRecord[]): void {
		for (const c of calls) {
			const known = this.cards.get(c.id);
			const row = this.rowFor(card, c.id);
			if (!isNestedRow(row)) continue;
			if (!known || !row.querySelector(".cm-name")?.textContent) fillRow(row, c.name, c.args);
			if (c.status === "running") continue;
			// The call's own end (with what it returned) may have come first: keep its text.
			const text = row.querySelector(":scope > .cm-row-result")?.textContent || c.error || "";
			const status = c.status === "ok" ? "ok" : c.status === "cancelled" ? "cancelled" : "error";
			endRow(row, status, text, c.durationMs);
		}
		countCalls(card);
		this.scrollDown();
	}

	// --- whole messages (history, message_start/end) ---

	/** One message of the conversation, whole. */
	render(m: Message): void {
		switch (m.role) {
			case "user":
				this.renderUser(m);
				break;
			case "assistant":
				this.fillAssistant(this.newAssistant(), m);
				break;
			case "toolResult": {
				const card = this.cards.get(String(m.toolCallId ?? ""));
				if (card) this.ended(card, m.content, m.details, Boolean(m.isError), m.durationMs);
				break;
			}
			case "bashExecution":
				this.d.hideWelcome();
				this.log.append(el("div", "msg bash", `$ ${String(m.command ?? "")}\n${String(m.output ?? "")}`));
				break;
			case "compactionSummary":
				this.notice("info", "Earlier messages were compacted into a summary.");
				break;
			case "branchSummary":
				this.notice("info", "Summary of another branch of this session.");
				break;
			case "custom":
				if (m.display !== false) this.log.append(el("div", "msg custom", contentText(m.content)));
				break;
		}
	}

	/** A line in the log; restart adds a Restart gopi button. */
	notice(level: string, text: string, restart = false): void {
		const n = el("div", `notice ${level}`, text);
		if (restart) {
			const b = el("button", "link", "Restart gopi");
			b.type = "button";
			b.onclick = () => this.d.post({ type: "restart" });
			n.append(" ", b);
		}
		this.log.append(n);
		this.scrollDown();
	}

	stats(s: Partial<SessionStats>): void {
		this.log.append(statsCard(s));
		this.scrollDown();
	}

	/** The files a run changed, each opening that run's change, and Review all for more than one. */
	changes(run: number, files: string[]): void {
		const box = el("div", "changes");
		box.append(el("div", "changes-title", `Changed ${files.length === 1 ? "1 file" : `${files.length} files`}:`));
		for (const f of files) {
			const b = el("button", "link change", f);
			b.type = "button";
			b.onclick = () => this.d.post({ type: "openChange", path: f, run });
			b.setAttribute("aria-label", `Show what this run changed in ${f}`);
			box.append(b);
		}
		if (files.length > 1) {
			const all = el("button", "link review-run", "Review all");
			all.type = "button";
			all.setAttribute("aria-label", `Review the ${files.length} files this run changed together`);
			all.onclick = () => this.d.post({ type: "reviewRun", run });
			box.append(all);
		}
		box.setAttribute("role", "group");
		box.setAttribute("aria-label", "Files this run changed");
		this.log.append(box);
		this.scrollDown();
	}

	// --- painting ---

	private schedule(b: Block): void {
		b.dirty = true;
		this.dirty.add(b);
		if (!this.frame) this.frame = requestAnimationFrame(() => this.flushBlocks());
	}

	private flushBlocks(): void {
		this.frame = 0;
		for (const b of this.dirty) this.paint(b);
		this.dirty.clear();
		this.scrollDown();
	}

	private paint(b: Block): void {
		b.dirty = false;
		if (b.kind === "toolCall") return;
		b.body.innerHTML = renderMarkdown(b.src);
		// Each code block gets a Copy button (the extension writes the clipboard).
		for (const pre of Array.from(b.body.querySelectorAll("pre"))) {
			const btn = el("button", "copy", "Copy");
			btn.type = "button";
			btn.title = "Copy the code";
			btn.onclick = () => this.d.post({ type: "copy", text: pre.querySelector("code")?.textContent ?? pre.textContent ?? "" });
			pre.prepend(btn);
		}
	}

	private newAssistant(): Assistant {
		const e = el("article", "msg assistant");
		e.setAttribute("aria-label", "gopi");
		const a = { el: e, blocks: [] as Block[] };
		this.log.append(a.el);
		this.d.hideWelcome();
		return a;
	}

	private block(a: Assistant, i: number, kind: Block["kind"]): Block {
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
			wrap = body = this.toolCard("", "preparing a tool call…", "");
		}
		b = { kind, el: wrap, body, src: "", dirty: false };
		const next = a.blocks.slice(i + 1).find(Boolean);
		if (b.el !== next?.el) a.el.insertBefore(b.el, next?.el ?? null);
		a.blocks[i] = b;
		return b;
	}

	/** A card for one tool call; found again by its id. */
	private toolCard(id: string, title: string, argsText: string): HTMLElement {
		let card = id ? this.cards.get(id) : undefined;
		if (!card) {
			card = makeCard();
			if (id) {
				card.dataset.id = id;
				this.cards.set(id, card);
			}
		}
		fillCard(card, title, argsText);
		return card;
	}

	/** Places a tool call's card in a message and fills it in. */
	private placeToolCall(a: Assistant, i: number, call: ToolCall): void {
		const b = this.block(a, i, "toolCall");
		const id = call.id ?? "";
		const known = id ? this.cards.get(id) : undefined;
		if (known && known !== b.el) {
			b.el.replaceWith(known);
			b.el = b.body = known;
		} else if (id && !known) {
			b.el.dataset.id = id;
			this.cards.set(id, b.el);
		}
		const card = this.toolCard(id, toolTitle(call.name ?? "tool", call.arguments), JSON.stringify(call.arguments ?? {}, null, 2));
		this.codemode(card, call.name ?? "", call.arguments);
	}

	private renderUser(m: UserMessage): void {
		const e = el("article", "msg user");
		e.setAttribute("aria-label", "You");
		this.d.hideWelcome();
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
				body.id = this.d.nextId("mention");
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
			b.onclick = () => this.d.post({ type: "rewind", timestamp: m.timestamp });
			e.append(b);
		}
		this.log.append(e);
	}

	private fillAssistant(a: Assistant, m: AssistantMessage): void {
		(m.content ?? []).forEach((c, i) => {
			if (c.type === "text") {
				const b = this.block(a, i, "text");
				b.src = c.text ?? "";
				this.paint(b);
			} else if (c.type === "thinking") {
				const b = this.block(a, i, "thinking");
				b.src = c.thinking ?? "";
				this.paint(b);
			} else if (c.type === "toolCall") {
				this.placeToolCall(a, i, c);
			}
		});
		if (m.stopReason === "aborted") {
			a.el.querySelector(":scope > .notice")?.remove();
			a.el.append(el("div", "notice", "Stopped."));
		}
		// A failed reply with nothing in it leaves no empty message behind.
		if (m.stopReason === "error" && !a.el.querySelector(":scope > :not(.run-status)")) a.el.remove();
	}
}

/** The number a nested call's id ends with ("<parent>/<n>"); Infinity for an id without one. */
function callNumber(id: string): number {
	const n = Number(id.slice(id.lastIndexOf("/") + 1));
	return id.includes("/") && Number.isInteger(n) ? n : Number.POSITIVE_INFINITY;
}
