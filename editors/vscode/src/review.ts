// Review shows what gopi is about to do before it does it: an edit or
// write opens VS Code's diff editor (the file as it is against the file as
// the tool would leave it) next to the question; bash shows the command.
// After a run, each changed file opens as a diff of before against now.
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import type { MessageRequest } from "./client";

export const scheme = "gopi-review";

/** How the approval gate's answers are shown: VS Code's review words. */
const labels: Record<string, string> = { Allow: "Accept", Deny: "Reject" };

export class Review implements vscode.TextDocumentContentProvider, vscode.Disposable {
	private docs = new Map<string, string>();
	private seq = 0;
	private readonly reg: vscode.Disposable;

	constructor() {
		this.reg = vscode.workspace.registerTextDocumentContentProvider(scheme, this);
	}

	provideTextDocumentContent(uri: vscode.Uri): string {
		return this.docs.get(uri.toString()) ?? "";
	}

	/** A read-only document holding text, named after file. */
	private virtual(file: string, text: string, what: string): vscode.Uri {
		const uri = vscode.Uri.from({ scheme, path: file, query: `${what}-${++this.seq}` });
		this.docs.set(uri.toString(), text);
		return uri;
	}

	/** Answers a window/showMessageRequest; undefined when dismissed. */
	async ask(cwd: string, p: MessageRequest): Promise<string | undefined> {
		const titles = (p.actions ?? []).map((a) => a.title);
		// Only gopi's approval gate (details.toolName) speaks in review words;
		// an extension's select shows its options as the extension wrote them.
		const approval = typeof p.details?.toolName === "string";
		const shown = approval ? titles.map((t) => labels[t] ?? t) : titles;
		const pick = (choice: string | undefined) => (choice === undefined ? undefined : titles[shown.indexOf(choice)]);
		const d = p.details;
		const args = (d?.args ?? {}) as { path?: string; content?: string; command?: string; edits?: { oldText: string; newText: string }[] };
		if (d && (d.toolName === "edit" || d.toolName === "write") && typeof args.path === "string") {
			const abs = path.resolve(cwd, args.path);
			const shownDiff = await this.showProposal(abs, d.toolName, args, d.diff);
			try {
				return pick(await vscode.window.showInformationMessage(p.message, ...shown));
			} finally {
				if (shownDiff) await closeTabsOf(shownDiff);
			}
		}
		if (d && d.toolName === "bash" && typeof args.command === "string") {
			return pick(await vscode.window.showWarningMessage(p.message, { modal: true, detail: args.command }, ...shown));
		}
		const show = p.type === 1 ? vscode.window.showErrorMessage : p.type === 2 ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
		return pick(await show(p.message, ...shown));
	}

	/**
	 * Opens the diff of a proposed edit or write and returns the proposed
	 * side's URI; when the edit cannot be replayed here, the unified diff
	 * gopi sent is shown instead.
	 */
	private async showProposal(
		abs: string,
		tool: string,
		args: { content?: string; edits?: { oldText: string; newText: string }[] },
		diff?: string,
	): Promise<vscode.Uri | undefined> {
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
			if (!diff) return undefined;
			const uri = this.virtual(`${abs}.diff`, diff, "diff");
			await vscode.window.showTextDocument(uri, { preview: true });
			return uri;
		}
		const left = current === undefined ? this.virtual(abs, "", "new") : vscode.Uri.file(abs);
		const right = this.virtual(abs, proposed, "proposed");
		await vscode.commands.executeCommand("vscode.diff", left, right, `${name} ↔ gopi's proposal`, { preview: true });
		return right;
	}

	/** Opens a diff of a file before this run changed it against now. */
	async showChange(abs: string, before: string | undefined): Promise<void> {
		const left = this.virtual(abs, before ?? "", "before");
		await vscode.commands.executeCommand("vscode.diff", left, vscode.Uri.file(abs), `${path.basename(abs)} (changes by gopi)`);
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
		this.reg.dispose();
		this.docs.clear();
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
