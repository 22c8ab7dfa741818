// What every part of the chat page is handed: the channel to the
// extension, unique element ids, and a way to make elements. Nothing here
// holds state; main.ts makes one of each and passes it to the parts.
import type { FromWebview } from "../protocol";

/** Sends a message to the extension. */
export type Post = (m: FromWebview) => void;

/** Makes an element id unique in the page: prefix-1, prefix-2, … */
export type NextId = (prefix: string) => string;

/** One counter for a page: every part that names elements gets the same function. */
export function idMaker(): NextId {
	let n = 0;
	return (prefix) => `${prefix}-${++n}`;
}

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
	const e = document.createElement(tag);
	if (cls) e.className = cls;
	if (text !== undefined) e.textContent = text;
	return e;
}

/** Keeps the log at its end as it grows, unless the reader scrolled up (more than 120 px from the end). */
export function scrollerOf(log: HTMLElement): () => void {
	return () => {
		const nearBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 120;
		if (nearBottom) requestAnimationFrame(() => (log.scrollTop = log.scrollHeight));
	};
}
