// Mentions carry content. pi's prompt takes text (and images) only, so
// each mention in a message is followed, when it is sent, by a tagged and
// fenced block holding what it names — the same blocks the Neovim plugin
// sends, which the chat shows as chips:
//
//   @main.go, @main.go#L5-7  <file path="main.go" lines="5-7">   the editor's text, unsaved changes included
//   @selection               <selection path="…" lines="…">      the active editor's selection
//   @problems                <diagnostics count="…">             the Problems panel
//   @terminal                <terminal name="…" lines="…">       the active terminal's recent output
//   @git                     <diff files="…">                    git diff HEAD of the workspace
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import type { TerminalLog } from "./terminal";

/** Files larger than this are not attached (the mention still goes as text). */
export const maxFileBytes = 512 * 1024;
/** git diff output past this is cut, and the block says so. */
export const maxDiffBytes = 100 * 1024;

export const specialMentions = ["selection", "problems", "terminal", "git"] as const;

/** A mention found in a message: a file (with an optional line range) or a special one. */
export type Mention = { kind: "file"; path: string; from?: number; to?: number; token: string } | { kind: (typeof specialMentions)[number]; token: string };

const trailing = /[.,;:!?)\]}'"]$/;

/**
 * The mentions in text, each once, in order. A file mention's trailing
 * punctuation is dropped a character at a time until it names a file
 * (`see @main.go.` names main.go).
 */
export function findMentions(text: string, exists: (rel: string) => boolean): Mention[] {
	const out: Mention[] = [];
	const seen = new Set<string>();
	for (const m of text.matchAll(/(^|\s)@(\S+)/g)) {
		let word = m[2];
		for (;;) {
			const special = specialMentions.find((s) => s === word);
			if (special) {
				if (!seen.has(special)) out.push({ kind: special, token: `@${special}` });
				seen.add(special);
				break;
			}
			const r = /^(.+?)(?:#L(\d+)(?:-L?(\d+))?)?$/.exec(word);
			if (r && exists(r[1])) {
				const from = r[2] ? Number(r[2]) : undefined;
				const to = r[3] ? Number(r[3]) : from;
				const key = `${r[1]}#${from ?? ""}-${to ?? ""}`;
				if (!seen.has(key)) out.push({ kind: "file", path: r[1], from, to: to !== undefined && from !== undefined && to < from ? from : to, token: `@${word}` });
				seen.add(key);
				break;
			}
			if (!trailing.test(word)) break;
			word = word.slice(0, -1);
		}
	}
	return out;
}

function attr(v: string | number): string {
	return String(v).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/\n/g, " ");
}

/** A block: <tag k="v"…>, the lines fenced with more backticks than they hold, </tag>. */
export function block(tag: string, attrs: [string, string | number | undefined][], lang: string, text: string): string {
	const a = attrs.filter(([, v]) => v !== undefined && v !== "").map(([k, v]) => ` ${k}="${attr(v as string | number)}"`);
	let longest = 2;
	for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
	const fence = "`".repeat(longest + 1);
	const body = text.endsWith("\n") ? text.slice(0, -1) : text;
	return [`<${tag}${a.join("")}>`, fence + lang, body, fence, `</${tag}>`].join("\n");
}

/** What building the blocks needs from VS Code, so tests can give it. */
export interface MentionSources {
	cwd: string;
	terminal?: TerminalLog;
}

/** A language id for a fence, from the file's extension. */
function langOf(file: string): string {
	const ext = path.extname(file).slice(1).toLowerCase();
	const map: Record<string, string> = { ts: "typescript", js: "javascript", py: "python", rs: "rust", md: "markdown", sh: "bash", yml: "yaml" };
	return map[ext] ?? ext;
}

/** A file's text: an open document's (unsaved changes included), else the disk's; undefined when too big or binary. */
function fileText(abs: string): { text: string; modified: boolean } | undefined {
	const doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === "file" && d.uri.fsPath === abs);
	if (doc) return { text: doc.getText(), modified: doc.isDirty };
	try {
		const st = fs.statSync(abs);
		if (!st.isFile() || st.size > maxFileBytes) return undefined;
		const buf = fs.readFileSync(abs);
		if (buf.includes(0)) return undefined;
		return { text: buf.toString("utf8"), modified: false };
	} catch {
		return undefined;
	}
}

function rel(cwd: string, abs: string): string {
	const r = path.relative(cwd, abs);
	return r && !r.startsWith("..") && !path.isAbsolute(r) ? r : abs;
}

async function fileBlock(src: MentionSources, m: Extract<Mention, { kind: "file" }>): Promise<string | undefined> {
	const abs = path.resolve(src.cwd, m.path);
	const got = fileText(abs);
	if (!got) return undefined;
	let lines = got.text.split("\n");
	if (lines.length > 1 && lines.at(-1) === "") lines.pop();
	let range: string | undefined;
	if (m.from !== undefined) {
		const first = Math.max(1, Math.min(m.from, lines.length));
		const last = Math.max(first, Math.min(m.to ?? m.from, lines.length));
		lines = lines.slice(first - 1, last);
		range = `${first}-${last}`;
	}
	return block("file", [["path", rel(src.cwd, abs)], ["lines", range], ["modified", got.modified ? "true" : undefined]], langOf(abs), lines.join("\n"));
}

function selectionBlock(src: MentionSources): string {
	const ed = vscode.window.activeTextEditor;
	if (!ed || ed.selection.isEmpty) throw new Error("@selection: no text is selected in the active editor");
	const sel = ed.selection;
	const first = sel.start.line + 1;
	const last = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line : sel.end.line + 1;
	const text = ed.document.getText(new vscode.Range(first - 1, 0, last - 1, ed.document.lineAt(last - 1).text.length));
	const file = ed.document.uri.scheme === "file" ? rel(src.cwd, ed.document.uri.fsPath) : ed.document.uri.toString();
	return block("selection", [["path", file], ["lines", `${first}-${last}`]], ed.document.languageId, text);
}

const severities = ["error", "warning", "info", "hint"];

function problemsBlock(src: MentionSources): string {
	const lines: string[] = [];
	for (const [uri, diags] of vscode.languages.getDiagnostics()) {
		const file = uri.scheme === "file" ? rel(src.cwd, uri.fsPath) : uri.toString();
		for (const d of diags) {
			const where = `${file}:${d.range.start.line + 1}:${d.range.start.character + 1}`;
			const source = d.source ? ` [${d.source}]` : "";
			lines.push(`${where}: ${severities[d.severity] ?? "error"}: ${d.message.replace(/\n/g, " ")}${source}`);
		}
	}
	lines.sort();
	return block("diagnostics", [["count", lines.length]], "", lines.length ? lines.join("\n") : "(no problems)");
}

async function terminalBlock(src: MentionSources): Promise<string> {
	const t = vscode.window.activeTerminal;
	if (!t) throw new Error("@terminal: no terminal is open");
	const out = await src.terminal?.recent(t);
	if (!out) throw new Error(`@terminal: nothing was read from ${t.name} yet (its shell needs VS Code's shell integration; run a command in it first)`);
	const n = out.split("\n").length;
	return block("terminal", [["name", t.name], ["lines", n]], "", out);
}

function gitBlock(src: MentionSources): Promise<string> {
	return new Promise((resolve, reject) => {
		execFile(
			"git",
			["diff", "HEAD", "--no-color", "--no-ext-diff"],
			{ cwd: src.cwd, timeout: 10_000, maxBuffer: 16 * maxDiffBytes, encoding: "utf8" },
			(err, stdout, stderr) => {
				if (err) return reject(new Error(`@git: git diff failed: ${(stderr || err.message).trim()}`));
				let text = stdout;
				let cut: string | undefined;
				if (text.length > maxDiffBytes) {
					text = text.slice(0, maxDiffBytes);
					text = text.slice(0, text.lastIndexOf("\n") + 1);
					cut = "true";
				}
				const files = (stdout.match(/^diff --git /gm) ?? []).length;
				resolve(block("diff", [["files", files], ["truncated", cut]], "diff", text || "(no changes)"));
			},
		);
	});
}

/**
 * text with a block appended for each mention it carries. A mention that
 * cannot be read is reported through warn and left as text; the message
 * still goes.
 */
export async function expandMentions(text: string, src: MentionSources, warn: (msg: string) => void): Promise<string> {
	const mentions = findMentions(text, (p) => {
		try {
			return fs.statSync(path.resolve(src.cwd, p)).isFile();
		} catch {
			return false;
		}
	});
	const blocks: string[] = [];
	for (const m of mentions) {
		try {
			let b: string | undefined;
			if (m.kind === "file") b = await fileBlock(src, m);
			else if (m.kind === "selection") b = selectionBlock(src);
			else if (m.kind === "problems") b = problemsBlock(src);
			else if (m.kind === "terminal") b = await terminalBlock(src);
			else b = await gitBlock(src);
			if (b) blocks.push(b);
			else if (m.kind === "file") warn(`${m.token}: not attached (larger than ${maxFileBytes / 1024} KiB, or not text)`);
		} catch (err) {
			warn((err as Error).message);
		}
	}
	return blocks.length ? `${text}\n\n${blocks.join("\n")}` : text;
}
