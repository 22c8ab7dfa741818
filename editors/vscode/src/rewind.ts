// Rewind puts the project's files, the conversation or both back to a
// checkpoint gopi recorded before a prompt (docs/rpc.md, "Checkpoints").
// Before anything changes, the files the restore would touch open in VS
// Code's multi-file diff editor (the checkpoint's version against the file
// now) and a modal dialog asks; a code restore can then be undone once
// (gopi: Undo Rewind) until the next run starts.
//
// The checkpoint's version of a file is served from the gopi-checkpoint:
// scheme. gopi's diff_checkpoint gives a unified diff from that version to
// the file now, so the version is the file now with the diff taken back
// (checkpointText); every context and added line is checked against the
// file, so what is shown is exact or not shown at all.
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import type { Checkpoint, FileChange, RestoreWhat } from "./gen/protocol";
import type { Session } from "./session";

/** Read-only documents: a file as a checkpoint recorded it. */
export const checkpointScheme = "gopi-checkpoint";

/** The context key that enables gopi: Undo Rewind. */
const undoKey = "gopi.canUndoRewind";

const whatItems: { label: string; description: string; what: RestoreWhat }[] = [
	{ label: "$(history) Code and conversation", description: "files and chat as they were before that message", what: "both" },
	{ label: "$(file-code) Code only", description: "the files go back; the chat stays", what: "code" },
	{ label: "$(comment-discussion) Conversation only", description: "the chat goes back; the files stay", what: "conversation" },
];

export class Rewind implements vscode.TextDocumentContentProvider, vscode.Disposable {
	/** The checkpoint versions on screen, by URI. */
	private readonly texts = new Map<string, string>();
	private seq = 0;
	/** The restore that gopi: Undo Rewind takes back, while it can. */
	/** The last rewind's undo: its checkpoint and what the rewind restored (the undo restores the same). */
	private undo: { session: Session; checkpointId: string; what: "code" | "both"; watch: vscode.Disposable } | undefined;
	private readonly reg: vscode.Disposable;

	constructor(private readonly reveal: (s: Session) => Promise<void>) {
		this.reg = vscode.workspace.registerTextDocumentContentProvider(checkpointScheme, this);
	}

	provideTextDocumentContent(uri: vscode.Uri): string {
		return this.texts.get(uri.toString()) ?? "";
	}

	/** gopi: Rewind…: the session's checkpoints, newest first, then the rewind. */
	async pick(s: Session): Promise<void> {
		const [list, messages] = await Promise.all([s.client.request("list_checkpoints"), userMessages(s)]);
		const cps = [...(list?.checkpoints ?? [])].reverse();
		if (!cps.length) {
			void vscode.window.showInformationMessage("gopi: this session has no checkpoint yet. gopi records one before each prompt that runs.");
			return;
		}
		type Item = vscode.QuickPickItem & { cp: Checkpoint };
		const items: Item[] = cps.map((cp) => ({
			label: checkpointLabel(cp, messages),
			description: when(cp.createdAt),
			detail: "$(loading~spin) counting files…",
			cp,
		}));
		const qp = vscode.window.createQuickPick<Item>();
		qp.title = "gopi: rewind to a checkpoint (newest first)";
		qp.placeholder = "The files and the conversation as they were before a message";
		qp.matchOnDescription = true;
		qp.items = items;
		qp.busy = true;
		let open = true;
		// The file counts come one checkpoint at a time, newest first, while
		// the list is already usable; each one updates its row in place.
		const counting = (async () => {
			for (let i = 0; i < items.length && open; i++) {
				let detail: string;
				try {
					const d = await s.client.request("diff_checkpoint", { checkpointId: items[i].cp.id });
					detail = fileCount(d?.files ?? []);
				} catch (err) {
					detail = `files unknown: ${(err as Error).message}`;
				}
				if (items[i].cp.note) detail += ` · ${items[i].cp.note}`;
				items[i] = { ...items[i], detail };
				if (!open) return;
				const active = qp.activeItems[0]?.cp.id;
				qp.items = [...items];
				const keep = items.find((x) => x.cp.id === active);
				if (keep) qp.activeItems = [keep];
			}
		})().finally(() => (qp.busy = false));
		const chosen = await new Promise<Item | undefined>((resolve) => {
			qp.onDidAccept(() => resolve(qp.selectedItems[0] ?? qp.activeItems[0]));
			qp.onDidHide(() => resolve(undefined));
			qp.show();
		});
		open = false;
		qp.dispose();
		void counting;
		if (chosen) await this.rewind(s, chosen.cp, chosen.label);
	}

	/**
	 * The chat's Rewind to here: the checkpoint recorded before the user
	 * message sent at timestamp (the message's own, as stored).
	 */
	async toMessage(s: Session, timestamp: number): Promise<void> {
		const [list, messages] = await Promise.all([s.client.request("list_checkpoints"), userMessages(s)]);
		const msg = messages.find((m) => m.timestamp === timestamp);
		const cp = msg && (list?.checkpoints ?? []).find((c) => c.entryId === msg.id && c.trigger === "prompt");
		if (!msg || !cp) {
			void vscode.window.showInformationMessage(
				"gopi: no checkpoint was recorded before this message (gopi records one before each prompt that runs).",
			);
			return;
		}
		await this.rewind(s, cp, firstLine(msg.text));
	}

	/** What to restore, the changes in the diff editor, a modal confirm, then the restore. */
	async rewind(s: Session, cp: Checkpoint, label: string): Promise<void> {
		const pick = await vscode.window.showQuickPick(whatItems, { title: `gopi: rewind to before “${label}” (${when(cp.createdAt)})` });
		if (!pick) return;
		const what = pick.what;
		const code = what !== "conversation";
		let files: FileChange[] = [];
		if (code) {
			files = (await s.client.request("diff_checkpoint", { checkpointId: cp.id }))?.files ?? [];
			if (files.length) await this.show(s, cp, files, label);
		}
		const detail: string[] = [];
		if (code) {
			detail.push(
				files.length
					? `${files.length === 1 ? "1 file goes back to how it was" : `${files.length} files go back to how they were`}: ${summary(files)}.`
					: "No file differs from the checkpoint; the files stay as they are.",
			);
			const dirty = dirtyEditors(s, files);
			if (dirty.length) {
				detail.push(
					`Unsaved changes in ${dirty.join(", ")} stay in their editors and are not reloaded: saving them would overwrite the restored file.`,
				);
			}
		}
		if (what !== "code") {
			detail.push("The conversation goes back to just before this message, and its text returns to the chat's input. The later messages stay in the session file.");
		}
		if (code && files.length) detail.push("gopi: Undo Rewind puts the files back as they are now.");
		const go = "Rewind";
		const answer = await vscode.window.showWarningMessage(`Rewind ${pick.label.replace(/^\$\([^)]*\) /, "").toLowerCase()} to before “${label}”?`, { modal: true, detail: detail.join("\n\n") }, go);
		if (answer !== go) return;
		const r = await s.client.request("restore_checkpoint", { checkpointId: cp.id, restore: what });
		if (what !== "code") {
			await s.restartView();
			s.post({ type: "insert", text: r?.text ?? "", replace: true });
			await this.reveal(s);
		}
		const changed = r?.files ?? [];
		if (code && r?.undoCheckpointId && changed.length) {
			this.setUndo(s, r.undoCheckpointId, what === "both" ? "both" : "code");
			void vscode.window
				.showInformationMessage(`gopi: ${fileCount(changed)} restored to before “${label}”.`, "Undo Rewind")
				.then((c) => (c ? vscode.commands.executeCommand("gopi.undoRewind") : undefined));
		} else if (what === "conversation") {
			void vscode.window.setStatusBarMessage(`gopi: the conversation is back to before “${label}”`, 5000);
		}
	}

	/** Opens what restoring cp would undo: each file as cp has it against the file now. */
	private async show(s: Session, cp: Checkpoint, files: FileChange[], label: string): Promise<void> {
		this.texts.clear();
		const entries: [vscode.Uri, vscode.Uri, vscode.Uri][] = [];
		for (const f of files) {
			if (f.binary) continue;
			const abs = path.resolve(s.cwd, f.path);
			const old = checkpointVersion(abs, f);
			if (old === undefined) throw new Error(`${f.path} changed while gopi compared it; try again`);
			const left = this.doc(abs, old, `${cp.id}`);
			const right = f.status === "deleted" ? this.doc(abs, "", "deleted") : vscode.Uri.file(abs);
			entries.push([vscode.Uri.file(abs), left, right]);
		}
		if (!entries.length) return;
		// The multi-file diff editor adds the file count itself.
		const title = `gopi: rewind to before “${label}”`;
		try {
			await vscode.commands.executeCommand("vscode.changes", title, entries);
		} catch {
			// A VS Code without the multi-file diff editor: one diff per file.
			for (const [res, left, right] of entries) {
				await vscode.commands.executeCommand("vscode.diff", left, right, `${path.basename(res.fsPath)} (checkpoint ↔ now)`, { preview: false });
			}
		}
	}

	private doc(abs: string, text: string, what: string): vscode.Uri {
		const uri = vscode.Uri.from({ scheme: checkpointScheme, path: vscode.Uri.file(abs).path, query: `${what}-${++this.seq}` });
		this.texts.set(uri.toString(), text);
		return uri;
	}

	/** gopi: Undo Rewind: the files as they were just before the last rewind. */
	async undoRewind(): Promise<void> {
		const u = this.undo;
		if (!u) {
			void vscode.window.showInformationMessage("gopi: there is no rewind to undo.");
			return;
		}
		// The undo checkpoint is keyed to where the conversation was, so
		// restoring "both" brings the later messages back too.
		const r = await u.session.client.request("restore_checkpoint", { checkpointId: u.checkpointId, restore: u.what });
		this.clearUndo();
		if (u.what === "both") {
			await u.session.restartView();
			u.session.post({ type: "insert", text: "", replace: true });
		}
		void vscode.window.setStatusBarMessage(`gopi: rewind undone, ${fileCount(r?.files ?? [])} back`, 5000);
	}

	/** Undo is offered until the session's next run starts (which would change the files again). */
	private setUndo(session: Session, checkpointId: string, what: "code" | "both"): void {
		this.clearUndo();
		const watch = session.onStatus((x) => {
			if (x.streaming) this.clearUndo();
		});
		this.undo = { session, checkpointId, what, watch };
		void vscode.commands.executeCommand("setContext", undoKey, true);
	}

	private clearUndo(): void {
		if (!this.undo) return;
		this.undo.watch.dispose();
		this.undo = undefined;
		void vscode.commands.executeCommand("setContext", undoKey, false);
	}

	dispose(): void {
		this.clearUndo();
		this.reg.dispose();
		this.texts.clear();
	}
}

/** The session's user messages: entry id, timestamp (the message's) and text. */
async function userMessages(s: Session): Promise<{ id: string; timestamp: number; text: string }[]> {
	const res = await s.client.request("get_entries", {});
	const out: { id: string; timestamp: number; text: string }[] = [];
	for (const raw of res?.entries ?? []) {
		const e = raw as { type?: string; id?: string; message?: { role?: string; timestamp?: number; content?: unknown } };
		if (e.type !== "message" || e.message?.role !== "user" || typeof e.id !== "string") continue;
		out.push({ id: e.id, timestamp: Number(e.message.timestamp), text: contentText(e.message.content) });
	}
	return out;
}

function contentText(c: unknown): string {
	if (typeof c === "string") return c;
	if (!Array.isArray(c)) return "";
	return c
		.filter((b): b is { type: "text"; text: string } => b?.type === "text" && typeof b.text === "string")
		.map((b) => b.text)
		.join("");
}

function firstLine(text: string): string {
	const line = text.trim().split("\n")[0] ?? "";
	return line.length > 80 ? `${line.slice(0, 79)}…` : line || "(empty message)";
}

/** A checkpoint's row: the message it precedes, else its own label. */
function checkpointLabel(cp: Checkpoint, messages: { id: string; text: string }[]): string {
	const m = cp.trigger === "prompt" ? messages.find((x) => x.id === cp.entryId) : undefined;
	if (m) return firstLine(m.text);
	if (cp.label) return cp.label;
	return cp.trigger === "restore" ? "before a rewind" : "made by hand";
}

function when(iso: string): string {
	const d = new Date(iso);
	return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function fileCount(files: FileChange[]): string {
	return files.length === 1 ? "1 file" : `${files.length} files`;
}

/** "a.txt (changed), b.txt (added since: removed)", at most eight named. */
function summary(files: FileChange[]): string {
	const how: Record<string, string> = { modified: "changed since", added: "added since: removed", deleted: "deleted since: back" };
	const named = files.slice(0, 8).map((f) => `${f.path} (${how[f.status] ?? f.status}${f.binary ? ", binary" : ""})`);
	if (files.length > 8) named.push(`${files.length - 8} more`);
	return named.join(", ");
}

/** The open editors of files the restore writes that hold unsaved changes. */
function dirtyEditors(s: Session, files: FileChange[]): string[] {
	const abs = new Set(files.map((f) => vscode.Uri.file(path.resolve(s.cwd, f.path)).toString()));
	return vscode.workspace.textDocuments
		.filter((d) => d.uri.scheme === "file" && d.isDirty && abs.has(d.uri.toString()))
		.map((d) => path.relative(s.cwd, d.uri.fsPath));
}

/** A file as the checkpoint has it, from the file now and gopi's diff; undefined when they disagree. */
function checkpointVersion(abs: string, f: FileChange): string | undefined {
	if (f.status === "added") return "";
	let now = "";
	if (f.status !== "deleted") {
		try {
			now = fs.readFileSync(abs, "utf8");
		} catch {
			return undefined;
		}
	}
	return f.diff ? checkpointText(now, f.diff) : now;
}

/** text split after each "\n", the last line kept without one. */
function lines(text: string): string[] {
	const out: string[] = [];
	let i = 0;
	while (i < text.length) {
		const j = text.indexOf("\n", i);
		if (j < 0) {
			out.push(text.slice(i));
			break;
		}
		out.push(text.slice(i, j + 1));
		i = j + 1;
	}
	return out;
}

/**
 * The text a unified diff started from, given the text it ends with: the
 * diff taken back. Every context and added line must match now, else the
 * answer is undefined (the file changed since the diff was made).
 */
export function checkpointText(now: string, diff: string): string | undefined {
	const cur = lines(now);
	const out: string[] = [];
	let pos = 0;
	let ops: { kind: string; text: string }[] | undefined;
	const hunks: { start: number; ops: { kind: string; text: string }[] }[] = [];
	for (const line of lines(diff)) {
		const h = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
		if (h) {
			const start = Number(h[1]);
			const count = h[2] === undefined ? 1 : Number(h[2]);
			ops = [];
			// An empty new side names the line before it.
			hunks.push({ start: count === 0 ? start : start - 1, ops });
			continue;
		}
		if (!ops) continue; // the ---/+++ header
		const kind = line[0];
		if (kind === "\\") {
			// "\ No newline at end of file": the line before has none.
			const last = ops[ops.length - 1];
			if (last) last.text = last.text.replace(/\r?\n$/, (m) => (m === "\r\n" ? "\r" : ""));
			continue;
		}
		if (kind !== " " && kind !== "-" && kind !== "+") return undefined;
		ops.push({ kind, text: line.slice(1) });
	}
	for (const h of hunks) {
		if (h.start < pos || h.start > cur.length) return undefined;
		out.push(...cur.slice(pos, h.start));
		pos = h.start;
		for (const op of h.ops) {
			if (op.kind === "-") {
				out.push(op.text);
				continue;
			}
			if (cur[pos] !== op.text) return undefined;
			if (op.kind === " ") out.push(op.text);
			pos++;
		}
	}
	out.push(...cur.slice(pos));
	return out.join("");
}
