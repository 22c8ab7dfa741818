// UI: dialogs are requests to gopi, the rest notifications. ui is the
// context pi's runner hands extensions as ctx.ui.

import { gopi } from "./methods.gen.mjs";
import { nextId, notify, request } from "./pipe.mjs";

// pi's theme, which initialize sets up (ui.theme).
let theme;
export function useTheme(t) {
	theme = t;
}

function dialog(req, opts, fallback, pick) {
	if (opts?.signal?.aborted) return Promise.resolve(fallback);
	const rid = `ui-${nextId}`;
	const p = request(gopi.uiAsk, { ...req, rid }).then(
		(r) => (r?.cancelled ? fallback : pick(r)),
		() => fallback,
	);
	if (!opts?.signal) return p;
	return new Promise((resolve) => {
		const onAbort = () => {
			notify(gopi.uiCancel, { rid });
			resolve(fallback);
		};
		opts.signal.addEventListener("abort", onAbort, { once: true });
		p.then((v) => {
			opts.signal.removeEventListener("abort", onAbort);
			resolve(v);
		});
	});
}
export const ui = {
	select: (title, options, opts) =>
		dialog({ method: "select", title, options, timeout: opts?.timeout }, opts, undefined, (r) => r.value),
	confirm: (title, message, opts) =>
		dialog({ method: "confirm", title, message, timeout: opts?.timeout }, opts, false, (r) => r.confirmed ?? false),
	input: (title, placeholder, opts) =>
		dialog({ method: "input", title, placeholder, timeout: opts?.timeout }, opts, undefined, (r) => r.value),
	editor: (title, prefill) => dialog({ method: "editor", title, prefill }, undefined, undefined, (r) => r.value),
	notify: (message, type) => notify(gopi.ui, { method: "notify", message, notifyType: type }),
	setStatus: (key, text) => notify(gopi.ui, { method: "setStatus", statusKey: key, statusText: text }),
	setWidget(key, content, options) {
		// Lines only: component factories need pi's TUI.
		if (content === undefined || Array.isArray(content)) {
			notify(gopi.ui, { method: "setWidget", widgetKey: key, widgetLines: content, widgetPlacement: options?.placement });
		}
	},
	setTitle: (title) => notify(gopi.ui, { method: "setTitle", title }),
	setEditorText: (text) => notify(gopi.ui, { method: "set_editor_text", text }),
	pasteToEditor: (text) => notify(gopi.ui, { method: "set_editor_text", text }),
	getEditorText: () => "",
	// What needs pi's terminal UI is accepted and does nothing, as in pi's
	// own RPC mode.
	onTerminalInput: () => () => {},
	setWorkingMessage() {},
	setWorkingVisible() {},
	setWorkingIndicator() {},
	setHiddenThinkingLabel() {},
	setFooter() {},
	setHeader() {},
	custom: async () => undefined,
	addAutocompleteProvider() {},
	setEditorComponent() {},
	getEditorComponent: () => undefined,
	get theme() {
		return theme;
	},
	getAllThemes: () => [],
	getTheme: () => undefined,
	setTheme: () => ({ success: false, error: "Themes need pi's terminal UI; gopi has none" }),
	getToolsExpanded: () => false,
	setToolsExpanded() {},
};

// ---- loading ----------------------------------------------------------------

