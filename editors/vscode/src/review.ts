// Review shows what gopi is about to do before it does it, and what it did
// after. An edit or write opens VS Code's diff editor: the file as it is on
// the left, gopi's proposal on the right. The proposal is an ordinary,
// editable document: the diff editor's own revert arrows take back a hunk,
// and anything typed there is what gets written when the user accepts
// (the approval answer carries the final text). After a run, each changed
// file opens as a diff of that run's before against that run's after.
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";

/** Proposals: editable documents that live in memory, never on disk. */
export const proposalScheme = "gopi-proposal";
/** Read-only snapshots: a file before or after a run. */
export const snapshotScheme = "gopi-review";

/** An in-memory file system for proposals, so the diff editor lets the user edit them. */
class ProposalFS implements vscode.FileSystemProvider {
	private readonly files = new Map<string, { data: Uint8Array; mtime: number }>();
	private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
	readonly onDidChangeFile = this.emitter.event;

	set(uri: vscode.Uri, text: string): void {
		this.files.set(uri.path, { data: Buffer.from(text, "utf8"), mtime: Date.now() });
	}

	delete(uri: vscode.Uri): void {
		this.files.delete(uri.path);
	}

	watch(): vscode.Disposable {
		return new vscode.Disposable(() => {});
	}

	stat(uri: vscode.Uri): vscode.FileStat {
		const f = this.files.get(uri.path);
		if (!f) throw vscode.FileSystemError.FileNotFound(uri);
		return { type: vscode.FileType.File, ctime: f.mtime, mtime: f.mtime, size: f.data.byteLength };
	}

	readDirectory(): [string, vscode.FileType][] {
		return [];
	}

	createDirectory(): void {}

	readFile(uri: vscode.Uri): Uint8Array {
		const f = this.files.get(uri.path);
		if (!f) throw vscode.FileSystemError.FileNotFound(uri);
		return f.data;
	}

	writeFile(uri: vscode.Uri, content: Uint8Array): void {
		this.files.set(uri.path, { data: content, mtime: Date.now() });
		this.emitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
	}

	rename(): void {
		throw vscode.FileSystemError.NoPermissions("a proposal cannot be renamed");
	}
}

/** A proposal on screen: its document's URI and the text gopi proposed. */
export interface Proposal {
	uri: vscode.Uri;
	proposed: string;
}

export class Review implements vscode.TextDocumentContentProvider, vscode.Disposable {
	private readonly snapshots = new Map<string, string>();
	private readonly fs = new ProposalFS();
	private seq = 0;
	private readonly regs: vscode.Disposable[];

	constructor() {
		this.regs = [
			vscode.workspace.registerTextDocumentContentProvider(snapshotScheme, this),
			vscode.workspace.registerFileSystemProvider(proposalScheme, this.fs, { isCaseSensitive: true }),
		];
	}

	provideTextDocumentContent(uri: vscode.Uri): string {
		return this.snapshots.get(uri.toString()) ?? "";
	}

	/** A read-only document holding text, named after file. */
	private snapshot(file: string, text: string, what: string): vscode.Uri {
		const uri = vscode.Uri.from({ scheme: snapshotScheme, path: file, query: `${what}-${++this.seq}` });
		this.snapshots.set(uri.toString(), text);
		return uri;
	}

	/**
	 * Opens the diff of a proposed edit or write, the proposal editable, and
	 * returns it; when the edit cannot be replayed here, the unified diff
	 * gopi sent is shown (read-only) and undefined returned.
	 */
	async showProposal(
		abs: string,
		tool: string,
		args: { content?: string; edits?: { oldText: string; newText: string }[] },
		diff?: string,
	): Promise<{ proposal?: Proposal; shown?: vscode.Uri }> {
		let current: string | undefined;
		try {
			current = fs.readFileSync(abs, "utf8");
		} catch {
			current = undefined;
		}
		let proposed: string | undefined;
		if (tool === "write" && typeof args.content === "string") {
			proposed = args.content;
		} else if (tool === "edit" && current !== undefined && Array.isArray(args.edits)) {
			proposed = applyEdits(current, args.edits);
		}
		const name = path.basename(abs);
		if (proposed === undefined) {
			if (!diff) return {};
			const uri = this.snapshot(`${abs}.diff`, diff, "diff");
			await vscode.window.showTextDocument(uri, { preview: true });
			return { shown: uri };
		}
		const left = current === undefined ? this.snapshot(abs, "", "new") : vscode.Uri.file(abs);
		// A directory per proposal keeps the file's own name (and so its language).
		const right = vscode.Uri.from({ scheme: proposalScheme, path: `/${++this.seq}/${name}`, query: abs });
		this.fs.set(right, proposed);
		await vscode.commands.executeCommand("vscode.diff", left, right, `${name} ↔ gopi's proposal (editable)`, { preview: false });
		return { proposal: { uri: right, proposed }, shown: right };
	}

	/** The proposal's text now: what the user left of it, unsaved edits included. */
	finalText(p: Proposal): string {
		const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === p.uri.toString());
		if (doc) return doc.getText();
		return Buffer.from(this.fs.readFile(p.uri)).toString("utf8");
	}

	/** Closes the tabs showing uri without asking to save, and forgets a proposal. */
	async close(uri: vscode.Uri): Promise<void> {
		const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
		// An edited proposal is saved into memory first, so closing it asks nothing.
		if (doc?.isDirty) await doc.save();
		await closeTabsOf(uri);
		if (uri.scheme === proposalScheme) this.fs.delete(uri);
		else this.snapshots.delete(uri.toString());
	}

	/** The two sides of a run's change of a file: read-only snapshots of before and after. */
	changeUris(abs: string, before: string | undefined, after: string | undefined): [vscode.Uri, vscode.Uri] {
		const left = this.snapshot(abs, before ?? "", "before");
		const right = after === undefined ? vscode.Uri.file(abs) : this.snapshot(abs, after, "after");
		return [left, right];
	}

	/** Opens a diff of a file before a run changed it against after it. */
	async showChange(abs: string, before: string | undefined, after: string | undefined, run: number): Promise<void> {
		const [left, right] = this.changeUris(abs, before, after);
		await vscode.commands.executeCommand("vscode.diff", left, right, `${path.basename(abs)} (gopi's change, run ${run})`);
	}

	/** pi/ui/editor: the text in a real editor, returned when the user is done. */
	async editText(title: string, prefill: string, token?: vscode.CancellationToken): Promise<string | undefined> {
		const doc = await vscode.workspace.openTextDocument({ content: prefill });
		await vscode.window.showTextDocument(doc, { preview: false });
		const asked = vscode.window.showInformationMessage(`${title}: edit the document, then choose Done.`, "Done", "Cancel");
		// A withdrawn dialog (gopi's timeout, an abort) counts as Cancel.
		const withdrawn = new Promise<undefined>((resolve) => token?.onCancellationRequested(() => resolve(undefined)));
		const choice = await Promise.race([asked, withdrawn]);
		return choice === "Done" ? doc.getText() : undefined;
	}

	dispose(): void {
		for (const r of this.regs) r.dispose();
		this.snapshots.clear();
	}
}

/**
 * Applies edit's replacements in order, each to its first exact
 * occurrence; undefined when one does not match (gopi's own matching is
 * looser, and then the unified diff it sent is shown instead).
 */
export function applyEdits(text: string, edits: { oldText: string; newText: string }[]): string | undefined {
	let out = text;
	for (const e of edits) {
		if (typeof e?.oldText !== "string" || typeof e?.newText !== "string") return undefined;
		const i = out.indexOf(e.oldText);
		if (i < 0 || e.oldText === "") return undefined;
		out = out.slice(0, i) + e.newText + out.slice(i + e.oldText.length);
	}
	return out;
}

async function closeTabsOf(uri: vscode.Uri): Promise<void> {
	const tabs = vscode.window.tabGroups?.all.flatMap((g) => g.tabs) ?? [];
	const mine = tabs.filter((t) => {
		const input = t.input as { modified?: vscode.Uri; uri?: vscode.Uri } | undefined;
		return input?.modified?.toString() === uri.toString() || input?.uri?.toString() === uri.toString();
	});
	if (mine.length) await vscode.window.tabGroups.close(mine);
}
