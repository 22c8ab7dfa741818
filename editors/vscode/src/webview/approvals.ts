// gopi's questions before a tool runs, asked on the tool call's card: a
// button per answer, reachable with Tab and Alt+A, until the extension says
// the question was answered (here or elsewhere) or withdrawn.
import type { ApprovalOutcome, ToWebview } from "../protocol";
import { el, type NextId, type Post } from "./dom";
import { labelCard } from "./toolcard";

export interface ApprovalsDeps {
	log: HTMLElement;
	post: Post;
	nextId: NextId;
	/** The tool call's card; one is made where the reply is being written when none shows the call. */
	cardFor(id: string, toolName: string): HTMLElement;
	/** The composer: whether it has the focus with nothing typed, and giving it the focus. */
	composer: { focusedAndEmpty(): boolean; focus(): void };
	/** The questions waiting changed (the composer's hint names Alt+A while one does). */
	changed(): void;
}

export type ApprovalRequest = Extract<ToWebview, { type: "approval" }>;

interface Pending {
	card: HTMLElement;
	box: HTMLElement;
	escape: boolean;
}

const OUTCOME_TEXT: Record<ApprovalOutcome, string> = {
	accepted: "Accepted",
	always: "Always allowed",
	rejected: "Rejected",
	aborted: "Aborted",
	timedOut: "Timed out",
};

/** The sandbox's escape question: what its answer did. */
const ESCAPE_TEXT: Partial<Record<ApprovalOutcome, string>> = {
	accepted: "Ran once outside the sandbox",
	rejected: "Kept in the sandbox",
};

export class Approvals {
	/** The questions waiting, oldest first, by the extension's id. */
	private readonly pending = new Map<string, Pending>();

	constructor(private readonly d: ApprovalsDeps) {
		document.addEventListener("keydown", (e) => {
			// Alt+A: to the question a tool card is waiting on.
			if (e.altKey && !e.ctrlKey && !e.metaKey && (e.key === "a" || e.key === "A" || e.code === "KeyA") && this.pending.size) {
				e.preventDefault();
				this.focusFirst();
			}
		});
	}

	/** Whether a question waits for an answer. */
	get waiting(): boolean {
		return this.pending.size > 0;
	}

	/** A new conversation: no question waits (their cards went with the log). */
	clear(): void {
		this.pending.clear();
	}

	show(m: ApprovalRequest): void {
		const d = this.d;
		const card = d.cardFor(m.toolCallId ?? `approval:${m.id}`, m.toolName);
		this.pending.get(m.id)?.box.remove();
		card.querySelector(":scope > .approval")?.remove();
		const box = el("div", m.escape ? "approval escape" : "approval");
		box.dataset.approvalId = m.id;
		const q = el("div", "approval-question", m.title);
		q.id = d.nextId("question");
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
				d.post({ type: "approve", id: m.id, answer: o.answer });
			};
			actions.append(b);
		});
		box.append(q, actions);
		card.querySelector(":scope > .tool-head")?.after(box);
		card.classList.add("pending");
		card.dataset.approval = m.id;
		labelCard(card);
		this.pending.set(m.id, { card, box, escape: m.escape === true });
		d.changed();
		card.scrollIntoView({ block: "nearest" });
		// Focus moves to the question only when nothing is being typed and no
		// other question has it.
		const active = document.activeElement;
		const idle = !active || active === document.body || active === d.log || d.composer.focusedAndEmpty();
		if (idle || (d.log.contains(active) && !active?.closest(".approval"))) (actions.firstElementChild as HTMLElement | null)?.focus();
	}

	done(id: string, outcome: ApprovalOutcome): void {
		const p = this.pending.get(id);
		if (!p) return;
		this.pending.delete(id);
		const hadFocus = p.box.contains(document.activeElement);
		p.box.remove();
		p.card.classList.remove("pending");
		delete p.card.dataset.approval;
		const text = (p.escape ? ESCAPE_TEXT[outcome] : undefined) ?? OUTCOME_TEXT[outcome] ?? outcome;
		const done = el("div", `approval-outcome outcome-${outcome}`, text);
		p.card.querySelector(":scope > .approval-outcome")?.remove();
		p.card.querySelector(":scope > .tool-head")?.after(done);
		(p.card.querySelector(":scope > .tool-head > .tool-state") as HTMLElement).textContent = text.toLowerCase();
		// Not run: the card stops spinning (a result, if one comes, still fills it in).
		if (outcome === "aborted") p.card.classList.add("aborted");
		if (outcome === "rejected" || outcome === "timedOut") p.card.classList.add("denied");
		if (outcome !== "accepted" && outcome !== "always") p.card.classList.remove("running");
		labelCard(p.card);
		this.d.changed();
		if (hadFocus) this.focusFirst() || this.d.composer.focus();
	}

	/** Focuses the oldest waiting question's first button; false when none waits. */
	focusFirst(): boolean {
		const first = this.pending.values().next().value as Pending | undefined;
		const b = first?.box.querySelector("button") as HTMLElement | null;
		if (!b) return false;
		b.scrollIntoView({ block: "nearest" });
		b.focus();
		return true;
	}
}
