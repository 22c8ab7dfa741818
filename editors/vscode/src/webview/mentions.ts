// Mentions: what the composer recognises as @references, and the blocks
// the extension appends to a sent message for them. The block format is
// shared with the Neovim plugin:
//
//   <file path="main.go" lines="5-7">
//   ```go
//   ...the lines...
//   ```
//   </file>
//
// Attribute values escape & and " (&amp;, &quot;); the fence is three or
// more backticks, possibly with a language, and closes with the same run
// of backticks, then </tag> on the next line.

export interface MentionBlock {
	tag: string;
	attrs: Record<string, string>;
	lang: string;
	body: string;
	/** Lines of body. */
	count: number;
}

const TAGS = new Set(["file", "selection", "diagnostics", "terminal", "diff", "buffer", "quickfix"]);

function unattr(v: string): string {
	return v.replace(/&(quot|amp);/g, (_, e: string) => (e === "quot" ? '"' : "&"));
}

/** Splits a sent message into what the user wrote and the blocks appended to it. */
export function parseBlocks(text: string): { text: string; blocks: MentionBlock[] } {
	if (!/\n<[a-z]+[ >]/.test(text)) return { text, blocks: [] };
	const lines = text.split("\n");
	const out: string[] = [];
	const blocks: MentionBlock[] = [];
	let i = 0;
	while (i < lines.length) {
		const open = /^<([a-z]+)((?:\s+[a-z]+="[^"]*")*)>$/.exec(lines[i]);
		const fence = open && TAGS.has(open[1]) ? /^(`{3,})([^`]*)$/.exec(lines[i + 1] ?? "") : null;
		let stop = -1;
		if (open && fence) {
			for (let j = i + 2; j + 1 < lines.length; j++) {
				if (lines[j] === fence[1] && lines[j + 1] === `</${open[1]}>`) {
					stop = j;
					break;
				}
			}
		}
		if (open && fence && stop >= 0) {
			const attrs: Record<string, string> = {};
			for (const m of open[2].matchAll(/([a-z]+)="([^"]*)"/g)) attrs[m[1]] = unattr(m[2]);
			const body = lines.slice(i + 2, stop);
			blocks.push({ tag: open[1], attrs, lang: fence[2].trim(), body: body.join("\n"), count: body.length });
			i = stop + 2;
		} else {
			out.push(lines[i]);
			i++;
		}
	}
	return { text: out.join("\n").replace(/\s+$/, ""), blocks };
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

/** "5-7" as "#L5-7", "5-5" as "#L5". */
function range(lines: string | undefined): string {
	const m = /^(\d+)(?:-(\d+))?$/.exec(lines ?? "");
	if (!m) return "";
	return !m[2] || m[1] === m[2] ? `#L${m[1]}` : `#L${m[1]}-${m[2]}`;
}

/** How a block shows as a chip in a sent message. */
export function chipLabel(b: MentionBlock): string {
	const a = b.attrs;
	switch (b.tag) {
		case "file":
			return `@${a.path ?? "?"}${range(a.lines)} · ${plural(b.count, "line")}${a.modified === "true" ? " · unsaved" : ""}`;
		case "buffer":
			return `@${a.path ?? "?"} · ${plural(b.count, "line")}${a.modified === "true" ? " · unsaved" : ""}`;
		case "selection":
			return `@selection ${a.path ?? ""}${range(a.lines)}`.trim();
		case "diagnostics":
			return `@problems ${a.count ?? b.count}${a.path ? ` · ${a.path}` : ""}`;
		case "quickfix":
			return `@quickfix ${a.count ?? b.count}`;
		case "terminal": {
			const n = /^\d+$/.test(a.lines ?? "") ? Number(a.lines) : b.count;
			return `@terminal ${a.name ?? ""} · ${plural(n, "line")}`.replace("  ", " ");
		}
		case "diff": {
			const n = Number(a.files ?? 0);
			return `@git ${n ? plural(n, "file") : "no changes"}${a.truncated === "true" ? " · cut short" : ""}`;
		}
	}
	return `@${b.tag}`;
}

/** The mentions that are not files. */
export const SPECIAL_MENTIONS: { name: string; detail: string }[] = [
	{ name: "selection", detail: "the editor's selection" },
	{ name: "problems", detail: "errors and warnings (Problems view)" },
	{ name: "terminal", detail: "the terminal's recent output" },
	{ name: "git", detail: "uncommitted changes (git diff)" },
];

export interface ComposerMention {
	/** Where the token (with its @) starts and ends in the text. */
	start: number;
	end: number;
	label: string;
	kind: "special" | "file";
}

/**
 * The @references in the composer's text: @selection, @problems,
 * @terminal, @git, and @path with an optional #L5 or #L5-7. A token starts
 * the text or follows white space (so me@example.com is not one); trailing
 * punctuation is not part of it.
 */
export function composerMentions(text: string): ComposerMention[] {
	const found: ComposerMention[] = [];
	for (const m of text.matchAll(/(^|\s)@([^\s@]+)/g)) {
		let tok = m[2].replace(/[.,;:!?)\]}'"]+$/, "");
		if (!tok) continue;
		const start = (m.index ?? 0) + m[1].length;
		const special = SPECIAL_MENTIONS.some((s) => s.name === tok);
		if (!special) {
			// A path: letters, digits and path punctuation, optionally a line range.
			const p = /^([^#]+)(#L\d+(?:-\d+)?)?$/.exec(tok);
			if (!p || !/\w/.test(p[1])) continue;
			tok = p[0];
		}
		found.push({ start, end: start + 1 + tok.length, label: `@${tok}`, kind: special ? "special" : "file" });
	}
	return found;
}
