// Markdown for model output, which is untrusted: raw HTML is shown as
// text (markdown-it's html:false), links are not followed by the page but
// handed to the extension, which opens http(s) only; remote images never
// load (the page's CSP allows none). Code blocks are highlighted.
import hljs from "highlight.js/lib/common";
import MarkdownIt from "markdown-it";

const md: MarkdownIt = new MarkdownIt({
	html: false,
	linkify: false,
	breaks: true,
	highlight(code: string, lang: string): string {
		try {
			if (lang && hljs.getLanguage(lang)) {
				return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
			}
		} catch {
			// fall through to plain, escaped text
		}
		return md.utils.escapeHtml(code);
	},
});

// Links become buttons-in-disguise: the href is kept as data for the
// click handler, never as a navigable attribute.
const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
	const t = tokens[idx];
	const href = t.attrGet("href") ?? "";
	t.attrs = (t.attrs ?? []).filter(([k]) => k !== "href");
	t.attrSet("data-href", href);
	t.attrSet("href", "#");
	t.attrSet("title", href);
	return defaultLinkOpen(tokens, idx, options, env, self);
};

// An image in model output is shown as a link to it, never loaded: the
// page makes no request on the model's behalf (the CSP would block it
// too; this does not depend on it).
md.renderer.rules.image = (tokens, idx) => {
	const t = tokens[idx];
	const src = t.attrGet("src") ?? "";
	const alt = md.utils.escapeHtml(t.content || "image");
	return `<a href="#" class="image-link" data-href="${md.utils.escapeHtml(src)}" title="${md.utils.escapeHtml(src)}">[image: ${alt}]</a>`;
};

export function renderMarkdown(src: string): string {
	return md.render(src);
}

/** Code as highlighted HTML (escaped text when the language is unknown), as a fenced block of it is shown. */
export function highlightCode(code: string, lang: string): string {
	return md.options.highlight?.(code, lang, "") || md.utils.escapeHtml(code);
}
