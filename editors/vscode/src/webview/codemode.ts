// A codemode call's card. The script the model wrote is shown as
// highlighted JavaScript; the tool calls it makes are compact rows inside
// the card (name, short arguments, state), each one still a card the
// transcript finds by its call's id, so an approval question lands on its
// row; the result is read back out of pi's text format: a status line, the
// script's texts, its console output folded, and the error of a failed
// script. These functions only shape the DOM of one card; which row
// belongs to which call is the transcript's.
import { el } from "./dom";
import { highlightCode } from "./markdown";
import { labelCard } from "./toolcard";

/** The tool whose calls get this card. */
export const CODEMODE = "codemode";

/** One of a script's calls as the codemode result's details list it. */
export interface CallRecord {
	id: string;
	name: string;
	/** The arguments as JSON text, cut to 200 characters. */
	args: string;
	status: "running" | "ok" | "error" | "cancelled" | string;
	durationMs?: number;
	error?: string;
}

/** The script's result, read out of codemode's text. */
export interface ScriptResult {
	ok: boolean;
	/** The wall time, as codemode wrote it ("1.1"). */
	seconds: string;
	/** The texts the script gave (text() and its return value), in order. */
	texts: string[];
	/** Its console lines, one string. */
	console: string;
	/** Why it failed, with its frames. */
	error: string;
}

export function isCodemodeCard(card: HTMLElement): boolean {
	return card.classList.contains("codemode");
}

export function isNestedRow(card: HTMLElement): boolean {
	return card.classList.contains("nested");
}

/** The calls listed in a result's details; [] for anything else. */
export function callsOf(details: unknown): CallRecord[] {
	const calls = (details as { calls?: unknown } | undefined)?.calls;
	if (!Array.isArray(calls)) return [];
	return calls.filter((c): c is CallRecord => typeof c?.id === "string" && typeof c?.name === "string");
}

/**
 * Makes card a codemode card showing code: the script block and the list
 * the calls go into, in place of the JSON arguments. Again with the same
 * code it changes nothing (the script is highlighted once).
 */
export function makeCodemode(card: HTMLElement, code: string, copy: (text: string) => void): void {
	card.classList.add("codemode");
	const args = card.querySelector(":scope > .tool-args") as HTMLElement | null;
	if (args) args.hidden = true;
	let script = card.querySelector(":scope > .cm-script") as HTMLDetailsElement | null;
	if (!script) {
		script = el("details", "cm-script");
		script.open = true;
		script.append(el("summary", undefined, "Script"));
		const pre = el("pre");
		const btn = el("button", "copy", "Copy");
		btn.type = "button";
		btn.title = "Copy the script";
		btn.onclick = () => copy(script?.dataset.code ?? "");
		pre.append(btn, el("code", "hljs language-javascript"));
		script.append(pre);
		(args ?? card.querySelector(":scope > .tool-head"))?.after(script);
	}
	if (script.dataset.code !== code) {
		script.dataset.code = code;
		(script.querySelector("code") as HTMLElement).innerHTML = highlightCode(code, "javascript");
	}
	callList(card);
}

/** The list of card's calls, made after its script when it has none. */
export function callList(card: HTMLElement): HTMLElement {
	let list = card.querySelector(":scope > .cm-calls") as HTMLElement | null;
	if (!list) {
		list = el("div", "cm-calls");
		list.setAttribute("role", "list");
		list.setAttribute("aria-label", "Tool calls the script made");
		list.hidden = true;
		(card.querySelector(":scope > .cm-script") ?? card.querySelector(":scope > .tool-head"))?.after(list);
	}
	return list;
}

/** A row for one of a script's calls: icon, tool name, short arguments, state; its result opens from the row. */
export function makeRow(): HTMLElement {
	const row = el("div", "tool nested running");
	row.setAttribute("role", "listitem");
	const head = el("div", "tool-head");
	const icon = el("span", "tool-icon");
	icon.setAttribute("aria-hidden", "true");
	const title = el("span", "tool-title");
	title.append(el("span", "cm-name"), " ", el("span", "cm-brief"));
	const toggle = el("button", "cm-toggle", "▸");
	toggle.type = "button";
	toggle.hidden = true;
	toggle.title = "Show or hide what the call returned";
	toggle.setAttribute("aria-expanded", "false");
	head.append(icon, title, el("span", "tool-state"), toggle);
	const res = el("pre", "cm-row-result");
	res.hidden = true;
	toggle.onclick = () => {
		res.hidden = !res.hidden;
		toggle.setAttribute("aria-expanded", String(!res.hidden));
		toggle.textContent = res.hidden ? "▸" : "▾";
	};
	row.append(head, res);
	return row;
}

/** What a call's row is shown as: its arguments' gist, on one line. */
export function briefArgs(args: unknown): string {
	let a = args;
	if (typeof args === "string") {
		try {
			a = JSON.parse(args);
		} catch {
			return args.replace(/\s+/g, " ");
		}
	}
	if (!a || typeof a !== "object") return a === undefined ? "" : String(a);
	const o = a as Record<string, unknown>;
	for (const k of ["command", "path", "pattern", "query", "url"]) {
		if (typeof o[k] === "string" && o[k]) return (o[k] as string).replace(/\s+/g, " ");
	}
	const text = JSON.stringify(o);
	return text === "{}" ? "" : text;
}

/** Sets a row's tool name and arguments (an empty name leaves the row's own). */
export function fillRow(row: HTMLElement, name: string, args: unknown): void {
	if (name) (row.querySelector(".cm-name") as HTMLElement).textContent = name;
	const brief = briefArgs(args);
	if (brief) (row.querySelector(".cm-brief") as HTMLElement).textContent = brief;
	labelCard(row);
}

function duration(ms: number | undefined): string {
	if (typeof ms !== "number" || !Number.isFinite(ms)) return "";
	return ms < 1000 ? `${Math.max(1, Math.round(ms))} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * A row's call ended: ok, failed or cancelled. text is what it returned
 * (or its error); a failure shows it open. A row the user turned down
 * keeps saying so.
 */
export function endRow(row: HTMLElement, status: "ok" | "error" | "cancelled", text: string, durationMs?: number): void {
	const denied = row.classList.contains("denied");
	row.classList.remove("running");
	row.classList.toggle("done", status === "ok");
	row.classList.toggle("error", status === "error" && !denied);
	row.classList.toggle("aborted", status === "cancelled");
	const state = row.querySelector(":scope > .tool-head > .tool-state") as HTMLElement;
	if (!denied) state.textContent = status === "ok" ? duration(durationMs) : status === "error" ? "failed" : "cancelled";
	const res = row.querySelector(":scope > .cm-row-result") as HTMLElement;
	const toggle = row.querySelector(":scope > .tool-head > .cm-toggle") as HTMLButtonElement;
	if (text) {
		res.textContent = text;
		toggle.hidden = false;
		const open = status === "error" && !denied;
		if (open && res.hidden) toggle.click();
	}
	labelCard(row);
}

/** Updates the card's state with how many calls its script made. */
export function countCalls(card: HTMLElement, extra = ""): void {
	const n = card.querySelectorAll(":scope > .cm-calls > .nested").length;
	const list = card.querySelector(":scope > .cm-calls") as HTMLElement | null;
	if (list) list.hidden = n === 0;
	const state = card.querySelector(":scope > .tool-head > .tool-state") as HTMLElement;
	const calls = n === 0 ? "no tool calls" : n === 1 ? "1 tool call" : `${n} tool calls`;
	if (!card.classList.contains("pending")) state.textContent = extra ? `${calls} · ${extra}` : calls;
	labelCard(card);
}

/**
 * Reads codemode's result text: a first block "Script completed" or
 * "Script failed" with the wall time, then the output (several texts each
 * headed "==> text N/M <=="), the console lines in one <console_output>
 * block, and a failed script's "Script error:". undefined for a result
 * that is not a script's (a refused script, a stopped call).
 */
export function parseResult(content: unknown): ScriptResult | undefined {
	if (!Array.isArray(content) || content[0]?.type !== "text") return undefined;
	const head = /^Script (completed|failed)\nWall time ([\d.]+) seconds\nOutput:\n?$/.exec(String(content[0].text ?? ""));
	if (!head) return undefined;
	const ok = head[1] === "completed";
	let rest = content
		.slice(1)
		.map((b: { type?: string; text?: string; mimeType?: string }) => (b?.type === "text" ? (b.text ?? "") : b?.type === "image" ? `[image ${b.mimeType ?? ""}]` : ""))
		.join("\n");
	let error = "";
	if (!ok) {
		const at = rest.startsWith("Script error:\n") ? 0 : rest.lastIndexOf("\nScript error:\n");
		if (at >= 0) {
			error = rest.slice(at).replace(/^\n?Script error:\n/, "");
			rest = rest.slice(0, at);
		}
	}
	let console = "";
	const c = /(?:^|\n)<console_output>\n([\s\S]*?)\n?<\/console_output>\n?$/.exec(rest);
	if (c) {
		console = c[1];
		rest = rest.slice(0, c.index);
	}
	const texts = /^==> text 1\/\d+ <==\n/.test(rest) ? rest.split(/(?:^|\n)==> text \d+\/\d+ <==\n/).slice(1) : rest ? [rest] : [];
	return { ok, seconds: head[2], texts, console, error };
}

/** Shows a script's result on its card: the status line, the texts, the console output folded, the error. */
export function showScriptResult(card: HTMLElement, r: ScriptResult): void {
	card.querySelector(":scope > .cm-result")?.remove();
	const box = el("div", "cm-result");
	box.setAttribute("role", "group");
	box.setAttribute("aria-label", "What the script returned");
	box.append(el("div", `cm-status ${r.ok ? "ok" : "failed"}`, r.ok ? `Script completed in ${r.seconds} s` : `Script failed after ${r.seconds} s`));
	r.texts.forEach((t, i) => {
		if (r.texts.length > 1) box.append(el("div", "cm-caption", `Text ${i + 1} of ${r.texts.length}`));
		box.append(el("pre", "cm-text", t));
	});
	if (!r.texts.length && !r.error) box.append(el("div", "cm-empty", "The script gave no output."));
	if (r.console) {
		const lines = r.console.split("\n").length;
		const d = el("details", "cm-console");
		d.append(el("summary", undefined, `Console output (${lines === 1 ? "1 line" : `${lines} lines`})`), el("pre", undefined, r.console));
		box.append(d);
	}
	if (r.error) box.append(el("pre", "cm-error", r.error));
	// The raw text stays in the card's result, folded away: this shows it.
	const raw = card.querySelector(":scope > .tool-result") as HTMLElement | null;
	if (raw) raw.hidden = true;
	(raw ?? card.lastElementChild)?.before(box);
	countCalls(card, `${r.seconds} s`);
}
