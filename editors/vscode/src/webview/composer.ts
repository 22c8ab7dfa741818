// The composer: the message box and its keys (send, steer, follow up,
// stop), / and @ completion, the mentions as chips, attached images, the
// queue of steering and follow-up messages above it, and the hint and Stop
// button that follow the run. It owns what is being written; all it says
// to the extension goes through post.
import type { CommandItem, ImageAttachment } from "../protocol";
import { el, type Post } from "./dom";
import { composerMentions, SPECIAL_MENTIONS } from "./mentions";

/** The page's elements the composer works in (html.ts lays them out). */
export interface ComposerElements {
	form: HTMLFormElement;
	input: HTMLTextAreaElement;
	stop: HTMLButtonElement;
	hint: HTMLElement;
	queue: HTMLElement;
	completions: HTMLElement;
	images: HTMLElement;
	mentions: HTMLElement;
}

export interface ComposerDeps extends ComposerElements {
	post: Post;
	/** The gopi.sendKey setting: "enter" (the default) or "ctrlEnter". */
	sendKey?: string;
	/** Whether a tool card's question waits (the hint then names Alt+A). */
	questionWaiting(): boolean;
}

interface CompletionItem {
	label: string;
	detail?: string;
	insert: string;
	tag?: string;
}

interface Completing {
	kind: "/" | "@";
	/** Where the completed token starts in the text. */
	start: number;
	query: string;
	items: CompletionItem[];
	index: number;
	/** The files the extension found for an @ query. */
	files: CompletionItem[];
}

const SOURCE_TAG: Record<string, string> = { action: "action", prompt: "prompt", skill: "skill", extension: "extension" };

export class Composer {
	/** gopi runs: Enter steers, Alt+Enter follows up, Escape stops. */
	private streaming = false;
	private commands: CommandItem[] = [];
	private images: ImageAttachment[] = [];
	private completing: Completing | undefined;
	private readonly input: HTMLTextAreaElement;

	constructor(private readonly d: ComposerDeps) {
		const input = (this.input = d.input);
		input.addEventListener("input", () => {
			this.updateCompletions();
			this.updateMentions();
		});
		input.addEventListener("keydown", (e) => this.onKey(e));
		d.form.addEventListener("submit", (e) => {
			e.preventDefault();
			this.send(this.streaming ? "steer" : "prompt");
		});
		d.stop.addEventListener("click", () => d.post({ type: "abort" }));
		// Images: pasted or dropped, sent with the next message.
		input.addEventListener("paste", (e) => {
			const files = e.clipboardData?.files;
			if (files?.length) {
				this.addImageFiles(files);
			}
		});
		d.form.addEventListener("dragover", (e) => e.preventDefault());
		d.form.addEventListener("drop", (e) => {
			e.preventDefault();
			if (e.dataTransfer?.files?.length) this.addImageFiles(e.dataTransfer.files);
		});
		// Focusing the view (gopi: Focus on Chat View, Ctrl+Alt+G) lands in the
		// composer, so the chat is reachable from the keyboard alone.
		window.addEventListener("focus", () => {
			if (document.activeElement === document.body || document.activeElement === null) input.focus();
		});
	}

	/** gopi started or stopped running: the keys, the Stop button and the hint follow. */
	setStreaming(on: boolean): void {
		this.streaming = on;
		this.d.stop.hidden = !on;
		document.body.classList.toggle("streaming", on);
		this.updateHint();
	}

	updateHint(): void {
		const parts: string[] = [];
		if (this.d.questionWaiting()) parts.push("Alt+A answers the question");
		if (this.streaming) parts.push("Enter steers", "Alt+Enter follows up", "Esc stops");
		this.d.hint.textContent = parts.join(" · ");
		this.d.hint.title = this.streaming ? "Enter sends a message gopi reads before its next step; Alt+Enter queues one for after it finishes; Escape stops the run." : "";
	}

	/** gopi's queue (queue_update): each message with × to take it back. */
	showQueue(steering: string[], followUp: string[]): void {
		const queue = this.d.queue;
		queue.replaceChildren();
		const add = (kind: "steering" | "followUp", items: string[]) =>
			items.forEach((text, index) => {
				const row = el("div", `queued ${kind}`);
				row.append(el("span", "queued-kind", kind === "steering" ? "steer" : "follow-up"), el("span", "queued-text", text));
				const x = el("button", "queued-remove", "×");
				x.type = "button";
				x.title = "Remove from the queue";
				x.setAttribute("aria-label", `Remove from the queue: ${text}`);
				x.onclick = () => this.d.post({ type: "dequeue", kind, index });
				row.append(x);
				queue.append(row);
			});
		add("steering", steering);
		add("followUp", followUp);
		queue.hidden = steering.length + followUp.length === 0;
	}

	/** What / completes: the extension's actions and gopi's commands. */
	setCommands(items: CommandItem[]): void {
		this.commands = items;
		if (this.completing?.kind === "/") this.updateCompletions();
	}

	/** The files the extension found for an @ query; an answer to an older query is dropped. */
	setFiles(query: string | undefined, files: string[]): void {
		const c = this.completing;
		if (c?.kind === "@" && (query === undefined || query === c.query)) {
			c.files = files.map((f) => ({ label: f, insert: `@${f} ` }));
			c.items = mentionItems(c.query, c.files);
			c.index = 0;
			this.showCompletions();
		}
	}

	/** Text into the message box: at the caret, or in place of what is there (replace); the box gets the focus. */
	insert(text: string, replace = false): void {
		const input = this.input;
		if (replace) input.value = text;
		else {
			const s = input.selectionStart;
			input.value = input.value.slice(0, s) + text + input.value.slice(input.selectionEnd);
		}
		input.focus();
		this.updateMentions();
	}

	focus(): void {
		this.input.focus();
	}

	/** The message box has the focus and nothing is typed in it. */
	focusedAndEmpty(): boolean {
		return document.activeElement === this.input && !this.input.value.trim();
	}

	// --- sending ---

	private onKey(e: KeyboardEvent): void {
		const d = this.d;
		const c = this.completing;
		if (c && !d.completions.hidden) {
			const n = c.items.length;
			if ((e.key === "ArrowDown" || e.key === "ArrowUp") && n) {
				e.preventDefault();
				c.index = (c.index + (e.key === "ArrowDown" ? 1 : n - 1)) % n;
				this.showCompletions();
				return;
			}
			if (n && (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey && !e.altKey))) {
				e.preventDefault();
				this.accept();
				return;
			}
			if (e.key === "Escape") {
				// Closes the list only; a second Escape stops the run.
				e.preventDefault();
				e.stopPropagation();
				this.hideCompletions();
				return;
			}
		}
		if (e.key === "Escape" && this.streaming) {
			e.preventDefault();
			d.post({ type: "abort" });
			return;
		}
		if (e.key !== "Enter" || e.shiftKey) return;
		const ctrlSend = d.sendKey === "ctrlEnter";
		if (e.altKey) {
			e.preventDefault();
			this.send(this.streaming ? "followUp" : "prompt");
		} else if (ctrlSend ? e.ctrlKey || e.metaKey : !(e.ctrlKey || e.metaKey)) {
			e.preventDefault();
			this.send(this.streaming ? "steer" : "prompt");
		}
	}

	private send(mode: "prompt" | "steer" | "followUp"): void {
		const text = this.input.value.trim();
		if (!text && !this.images.length) return;
		// One of the extension's own / actions runs there, with what follows its name.
		const slash = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text);
		const action = slash && this.commands.find((c) => c.source === "action" && c.name === slash[1]);
		if (slash && action) this.d.post({ type: "action", name: action.name, args: (slash[2] ?? "").trim() });
		else {
			this.d.post({ type: "send", text, images: this.images, mode });
			this.images = [];
			this.showImages();
		}
		this.input.value = "";
		this.hideCompletions();
		this.updateMentions();
	}

	// --- / and @ completion ---

	private hideCompletions(): void {
		this.completing = undefined;
		this.d.completions.hidden = true;
		this.d.completions.replaceChildren();
		this.input.removeAttribute("aria-activedescendant");
	}

	private showCompletions(): void {
		const { completions } = this.d;
		const input = this.input;
		const c = this.completing;
		completions.replaceChildren();
		input.removeAttribute("aria-activedescendant");
		if (!c) {
			this.hideCompletions();
			return;
		}
		completions.setAttribute("aria-label", c.kind === "/" ? "Commands" : "Files and mentions");
		if (!c.items.length) {
			// Nothing to offer: said once, rather than an empty box (or none at all).
			if (c.kind === "/" && !this.commands.length) {
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
		c.items.forEach((it, i) => {
			const selected = i === c.index;
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
				if (this.completing) this.completing.index = i;
				this.accept();
			};
			completions.append(row);
			if (selected) input.setAttribute("aria-activedescendant", row.id);
		});
		completions.hidden = false;
		completions.querySelector(".selected")?.scrollIntoView({ block: "nearest" });
	}

	private accept(): void {
		const c = this.completing;
		if (!c) return;
		const it = c.items[c.index];
		if (!it) return this.hideCompletions();
		const input = this.input;
		const before = input.value.slice(0, c.start);
		const after = input.value.slice(input.selectionStart);
		input.value = before + it.insert + after;
		const pos = (before + it.insert).length;
		input.setSelectionRange(pos, pos);
		this.hideCompletions();
		input.focus();
		this.updateMentions();
	}

	/** / completion: the extension's actions first, then gopi's commands, each in the order they came. */
	private commandItems(q: string): CompletionItem[] {
		const match = this.commands.filter((c) => c.name.toLowerCase().startsWith(q));
		const actions = match.filter((c) => c.source === "action");
		const rest = match.filter((c) => c.source !== "action");
		return [...actions, ...rest].slice(0, 50).map((c) => ({
			label: `/${c.name}`,
			detail: c.description,
			insert: `/${c.name} `,
			tag: c.source ? (SOURCE_TAG[c.source] ?? c.source) : undefined,
		}));
	}

	private updateCompletions(): void {
		const upto = this.input.value.slice(0, this.input.selectionStart);
		const slash = /^\/(\S*)$/.exec(upto);
		if (slash) {
			const q = slash[1].toLowerCase();
			this.completing = { kind: "/", start: 0, query: q, items: this.commandItems(q), index: 0, files: [] };
			this.showCompletions();
			return;
		}
		const at = /(^|\s)@([^\s@]*)$/.exec(upto);
		if (at) {
			const files = this.completing?.kind === "@" ? this.completing.files : [];
			this.completing = { kind: "@", start: upto.length - at[2].length - 1, query: at[2], items: mentionItems(at[2], files), index: 0, files };
			this.showCompletions();
			this.d.post({ type: "complete", query: at[2] });
			return;
		}
		this.hideCompletions();
	}

	// --- mentions and images ---

	// The @references in the text, as chips above it; × takes one out.
	private updateMentions(): void {
		const input = this.input;
		const mentionsEl = this.d.mentions;
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
				this.updateMentions();
			};
			chip.append(x);
			mentionsEl.append(chip);
		}
		mentionsEl.hidden = found.length === 0;
	}

	private addImageFiles(files: FileList | File[]): void {
		for (const f of Array.from(files)) {
			if (!/^image\/(png|jpeg|gif|webp)$/.test(f.type)) continue;
			const r = new FileReader();
			r.onload = () => {
				const data = String(r.result).replace(/^data:[^,]*,/, "");
				this.images.push({ data, mimeType: f.type });
				this.showImages();
			};
			r.readAsDataURL(f);
		}
	}

	private showImages(): void {
		const imagesEl = this.d.images;
		imagesEl.replaceChildren();
		this.images.forEach((img, i) => {
			const b = el("button", "thumb-remove");
			b.type = "button";
			b.title = "Click to remove";
			b.setAttribute("aria-label", `Remove attached image ${i + 1}`);
			const t = el("img", "thumb");
			t.src = `data:${img.mimeType};base64,${img.data}`;
			t.alt = "";
			b.onclick = () => {
				this.images.splice(i, 1);
				this.showImages();
			};
			b.append(t);
			imagesEl.append(b);
		});
		imagesEl.hidden = this.images.length === 0;
	}
}

/** @ completion: the special mentions that match, then the files the extension found. */
function mentionItems(q: string, files: CompletionItem[]): CompletionItem[] {
	const lq = q.toLowerCase();
	const specials = SPECIAL_MENTIONS.filter((s) => s.name.startsWith(lq)).map((s) => ({ label: `@${s.name}`, detail: s.detail, insert: `@${s.name} `, tag: "mention" }));
	return [...specials, ...files];
}
