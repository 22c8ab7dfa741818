// Approvals: gopi asks before a tool runs, and the question stays where
// the user looks until it is answered or withdrawn. One question shows in
// three places at once: buttons on the tool card in the chat, the
// proposal's diff editor toolbar (edit and write), and a status bar item.
// Any of them answers it; all of them go away when it is answered, when
// gopi withdraws it (an abort, a timeout), or when its chat goes away.
import * as vscode from "vscode";
import type { ApprovalOutcome } from "./protocol";

/** gopi's answers and the words VS Code's review UI uses for them. */
export const answerLabels: Record<string, string> = { Allow: "Accept", "Allow always": "Always", Deny: "Reject" };

/**
 * The label of answer a to q. The sandbox's escape question (run a
 * command it stopped once more, outside it) is no review of a proposal:
 * its answers keep gopi's words, Allow once and Deny.
 */
export function answerLabel(q: Pick<ApprovalQuestion, "escape">, a: string): string {
	return q.escape ? a : (answerLabels[a] ?? a);
}

/**
 * The offered answer that a means: "Allow" (the Accept command, its key)
 * takes the escape question's "Allow once"; undefined when q offers none.
 */
export function offeredAnswer(q: Pick<ApprovalQuestion, "answers">, a: string): string | undefined {
	if (q.answers.includes(a)) return a;
	if (a === "Allow" && q.answers.includes("Allow once")) return "Allow once";
	return undefined;
}

export interface ApprovalQuestion {
	toolName: string;
	toolCallId?: string;
	title: string;
	answers: string[];
	/** The editable proposal of an edit or write, whose toolbar answers it too. */
	proposal?: vscode.Uri;
	/** The sandbox stopped the call, and gopi asks whether to run it once outside (details.sandboxEscape). */
	escape?: boolean;
}

/** What a surface needs to show a question and take it down. */
export interface ApprovalSurface {
	/** The question is up (id names it in answer()). */
	show(id: string, q: ApprovalQuestion): void;
	/** It was answered or withdrawn. */
	done(id: string, outcome: ApprovalOutcome): void;
}

/** The result of a question: the answer chosen (undefined: none) and, for an edited proposal, the final text. */
export interface ApprovalAnswer {
	answer?: string;
	outcome: ApprovalOutcome;
}

interface Pending {
	id: string;
	q: ApprovalQuestion;
	surface: ApprovalSurface;
	settle: (a: ApprovalAnswer) => void;
}

export const pendingContextKey = "gopi.approvalPending";

/**
 * The questions waiting across every chat of the window, oldest first.
 * The status bar item and the editor toolbar's commands act on the
 * oldest; a card's buttons act on their own.
 */
export class Approvals implements vscode.Disposable {
	private readonly pending: Pending[] = [];
	private seq = 0;
	readonly item: vscode.StatusBarItem;
	private readonly changed = new vscode.EventEmitter<void>();
	/** Fires when a question comes or goes. */
	readonly onDidChange = this.changed.event;

	constructor() {
		this.item = vscode.window.createStatusBarItem("gopi.approval", vscode.StatusBarAlignment.Left, 1000);
		this.item.name = "gopi: waiting for approval";
		this.item.command = "gopi.approval.show";
		this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
	}

	/**
	 * Asks q through surface and resolves with the answer. token's
	 * cancellation (gopi withdrew the question) settles it as "aborted".
	 */
	ask(q: ApprovalQuestion, surface: ApprovalSurface, token?: vscode.CancellationToken): Promise<ApprovalAnswer> {
		const id = `approval-${++this.seq}`;
		return new Promise<ApprovalAnswer>((resolve) => {
			let sub: vscode.Disposable | undefined;
			const p: Pending = {
				id,
				q,
				surface,
				settle: (a) => {
					const i = this.pending.indexOf(p);
					if (i < 0) return; // settled already
					this.pending.splice(i, 1);
					sub?.dispose();
					surface.done(id, a.outcome);
					this.refresh();
					resolve(a);
				},
			};
			this.pending.push(p);
			surface.show(id, q);
			this.refresh();
			if (token?.isCancellationRequested) p.settle({ outcome: "aborted" });
			else sub = token?.onCancellationRequested(() => p.settle({ outcome: "aborted" }));
		});
	}

	/**
	 * Answers the question id (or the oldest) with answer, one of its
	 * answers ("Allow" stands for the escape question's "Allow once").
	 * false when no such question waits, or it does not offer that answer.
	 */
	answer(answer: string, id?: string): boolean {
		const p = id ? this.pending.find((x) => x.id === id) : this.pending[0];
		const a = p && offeredAnswer(p.q, answer);
		if (!p || !a) return false;
		const outcome: ApprovalOutcome = a === "Deny" ? "rejected" : a === "Allow always" ? "always" : "accepted";
		p.settle({ answer: a, outcome });
		return true;
	}

	/** The question whose proposal uri shows, else the oldest. */
	idFor(uri: vscode.Uri | undefined): string | undefined {
		const u = uri?.toString();
		return (this.pending.find((p) => u && p.q.proposal?.toString() === u) ?? this.pending[0])?.id;
	}

	/** Withdraws every question of surface (its chat closed or restarted). */
	withdraw(surface: ApprovalSurface, outcome: ApprovalOutcome = "aborted"): void {
		for (const p of this.pending.filter((x) => x.surface === surface)) p.settle({ outcome });
	}

	/** The oldest question waiting, if any. */
	get oldest(): { id: string; q: ApprovalQuestion } | undefined {
		const p = this.pending[0];
		return p && { id: p.id, q: p.q };
	}

	get count(): number {
		return this.pending.length;
	}

	private refresh(): void {
		const p = this.pending[0];
		void vscode.commands.executeCommand("setContext", pendingContextKey, Boolean(p));
		if (!p) {
			this.item.hide();
		} else {
			const more = this.pending.length > 1 ? ` (+${this.pending.length - 1})` : "";
			// A title that already names gopi ("gopi's sandbox stopped …") is not prefixed twice.
			const title = oneLine(p.q.title);
			this.item.text = `$(question) ${/^gopi\b/i.test(title) ? "" : "gopi: "}${title}${more}`;
			this.item.tooltip = `${p.q.title}\n\nClick to answer: ${p.q.answers.map((a) => answerLabel(p.q, a)).join(", ")}.`;
			this.item.accessibilityInformation = { label: `gopi is waiting for your approval: ${p.q.title}`, role: "button" };
			this.item.show();
		}
		this.changed.fire();
	}

	dispose(): void {
		for (const p of [...this.pending]) p.settle({ outcome: "aborted" });
		this.item.dispose();
		this.changed.dispose();
	}
}

/** The first line of s, cut to 60 characters. */
function oneLine(s: string): string {
	const line = s.split("\n")[0];
	return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}
