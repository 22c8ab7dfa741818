// A tool call's card: its title, arguments, live output and result. These
// functions only shape one card's DOM; which card belongs to which call is
// the transcript's (transcript.ts), the question on a card the approvals'.
import { el } from "./dom";

/** An empty card: head (icon, title, state), folded arguments, live output, folded result. */
export function makeCard(): HTMLElement {
	const card = el("div", "tool running");
	card.setAttribute("role", "group");
	const head = el("div", "tool-head");
	const icon = el("span", "tool-icon");
	icon.setAttribute("aria-hidden", "true");
	head.append(icon, el("span", "tool-title"), el("span", "tool-state"));
	const args = el("details", "tool-args");
	args.append(el("summary", undefined, "Arguments"), el("pre"));
	const out = el("pre", "tool-output");
	out.hidden = true;
	const res = el("details", "tool-result");
	res.hidden = true;
	res.append(el("summary", undefined, "Result"), el("pre"));
	card.append(head, args, out, res);
	return card;
}

/** Sets what is given: an empty title or argument text leaves the card's own. */
export function fillCard(card: HTMLElement, title: string, argsText: string): void {
	if (title) {
		(card.querySelector(":scope > .tool-head > .tool-title") as HTMLElement).textContent = title;
		labelCard(card);
	}
	if (argsText) (card.querySelector(":scope > .tool-args > pre") as HTMLElement).textContent = argsText;
}

/** A card's accessible name: its title, and its question while one waits. */
export function labelCard(card: HTMLElement): void {
	const title = card.querySelector(":scope > .tool-head > .tool-title")?.textContent || "tool call";
	const state = card.querySelector(":scope > .tool-head > .tool-state")?.textContent;
	card.setAttribute("aria-label", card.classList.contains("pending") ? `${title} (waits for your answer)` : state ? `${title} (${state})` : title);
}

export function toolTitle(name: string, args: unknown): string {
	const a = (args ?? {}) as Record<string, unknown>;
	const arg = (a.command ?? a.path ?? a.pattern ?? a.query ?? "") as string;
	return arg ? `${name}: ${String(arg).split("\n")[0]}` : name;
}

/** The tool's output so far, its last 20,000 characters. */
export function showOutput(card: HTMLElement, text: string): void {
	const out = card.querySelector(":scope > .tool-output") as HTMLElement;
	out.hidden = false;
	out.textContent = text.length > 20000 ? `…${text.slice(-20000)}` : text;
	out.scrollTop = out.scrollHeight;
}

export function setResult(card: HTMLElement, text: string, isError: boolean): void {
	// A stopped run ends its tool with this text: that is not a failure.
	const aborted = isError && /^operation aborted\.?$/i.test(text.trim());
	// Turned down by the user: the card says so; that is not a failure either.
	const denied = isError && card.classList.contains("denied");
	card.classList.remove("running");
	card.classList.toggle("error", isError && !aborted && !denied);
	card.classList.toggle("aborted", aborted);
	card.classList.toggle("done", !isError);
	const state = card.querySelector(":scope > .tool-head > .tool-state") as HTMLElement;
	if (aborted) state.textContent = "aborted";
	else if (isError && !state.textContent) state.textContent = "failed";
	const res = card.querySelector(":scope > .tool-result") as HTMLDetailsElement;
	res.hidden = false;
	(res.querySelector(":scope > pre") as HTMLElement).textContent = text || "(no output)";
	res.open = isError && !aborted && !denied;
	(card.querySelector(":scope > .tool-output") as HTMLElement).hidden = true;
	labelCard(card);
}
