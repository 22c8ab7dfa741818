// A stand-in for the `vscode` module, for running the real extension
// bundle under Node. It implements the parts of the API the extension and
// vscode-languageclient use, records what the extension asks of VS Code
// (messages, commands, quick picks, diffs, status bar text), and lets a
// test script the user's answers. It is not VS Code: no editor, no UI.
"use strict";
const path = require("node:path");
const fs = require("node:fs");
const { EventEmitter: NodeEmitter } = require("node:events");

class Disposable {
	constructor(fn) {
		this._fn = fn;
	}
	static from(...ds) {
		return new Disposable(() => ds.forEach((d) => d?.dispose?.()));
	}
	dispose() {
		const f = this._fn;
		this._fn = undefined;
		f?.();
	}
}

class EventEmitter {
	constructor() {
		this._l = new Set();
		this.event = (listener, thisArg, disposables) => {
			const f = thisArg ? listener.bind(thisArg) : listener;
			this._l.add(f);
			const d = new Disposable(() => this._l.delete(f));
			if (Array.isArray(disposables)) disposables.push(d);
			return d;
		};
	}
	/** Calls every listener; returns what they returned (a test may wait for an async listener). */
	fire(v) {
		return [...this._l].map((f) => f(v));
	}
	dispose() {
		this._l.clear();
	}
}

class Uri {
	constructor(scheme, authority, p, query, fragment) {
		this.scheme = scheme;
		this.authority = authority ?? "";
		this.path = p ?? "";
		this.query = query ?? "";
		this.fragment = fragment ?? "";
	}
	get fsPath() {
		return this.path;
	}
	static file(p) {
		return new Uri("file", "", path.resolve(p));
	}
	static parse(s) {
		const u = new URL(s);
		return new Uri(u.protocol.replace(/:$/, ""), u.host, decodeURIComponent(u.pathname), u.search.replace(/^\?/, ""), u.hash.replace(/^#/, ""));
	}
	static from(c) {
		return new Uri(c.scheme, c.authority, c.path, c.query, c.fragment);
	}
	static joinPath(base, ...parts) {
		return new Uri(base.scheme, base.authority, path.join(base.path, ...parts), base.query, base.fragment);
	}
	with(c) {
		return new Uri(c.scheme ?? this.scheme, c.authority ?? this.authority, c.path ?? this.path, c.query ?? this.query, c.fragment ?? this.fragment);
	}
	toString() {
		const q = this.query ? `?${this.query}` : "";
		const f = this.fragment ? `#${this.fragment}` : "";
		return `${this.scheme}://${this.authority}${encodeURI(this.path)}${q}${f}`;
	}
	toJSON() {
		return { scheme: this.scheme, path: this.path, query: this.query };
	}
}

class Position {
	constructor(line, character) {
		this.line = line;
		this.character = character;
	}
}
class Range {
	constructor(a, b, c, d) {
		if (a instanceof Position) {
			this.start = a;
			this.end = b;
		} else {
			this.start = new Position(a, b);
			this.end = new Position(c, d);
		}
	}
}
class Selection extends Range {}
class ThemeColor {
	constructor(id) {
		this.id = id;
	}
}
class CancellationError extends Error {}
// Classes the language client extends when it loads; it never builds
// them here (no language features are registered).
class CompletionItem {}
class CodeLens {}
class DocumentLink {}
class InlayHint {}
class SymbolInformation {}
class CallHierarchyItem {}
class TypeHierarchyItem {}
class CodeAction {}
class Diagnostic {}
class CancellationTokenSource {
	constructor() {
		const e = new EventEmitter();
		this._e = e;
		this.token = { isCancellationRequested: false, onCancellationRequested: e.event };
	}
	cancel() {
		this.token.isCancellationRequested = true;
		this._e.fire();
	}
	dispose() {}
}
class RelativePattern {
	constructor(base, pattern) {
		this.baseUri = typeof base === "string" ? Uri.file(base) : (base.uri ?? base);
		this.pattern = pattern;
	}
}

/** What the extension did, in order: { kind, ...details }. */
const calls = [];
const record = (kind, details) => {
	const c = { kind, ...details };
	calls.push(c);
	bus.emit("call", c);
	return c;
};
const bus = new NodeEmitter();

/**
 * The test's script: answers to dialogs and pickers, each a function of
 * what was asked, returning the answer (or a promise of it). Unset: the
 * dialog is dismissed.
 */
const answers = {
	showInformationMessage: undefined,
	showWarningMessage: undefined,
	showErrorMessage: undefined,
	showQuickPick: undefined,
	showInputBox: undefined,
	showSaveDialog: undefined,
};

const settings = {};
const commands = new Map();
const providers = { webviewView: new Map(), textDocumentContent: new Map(), fileSystem: new Map() };
const statusItems = [];
// The extension context's SecretStorage: a map a test can read.
const secretMap = new Map();
const secrets = {
	get: async (k) => secretMap.get(k),
	store: async (k, v) => void secretMap.set(k, v),
	delete: async (k) => void secretMap.delete(k),
	onDidChange: new EventEmitter().event,
	map: secretMap,
};

function message(kind) {
	return async (msg, ...rest) => {
		let opts;
		if (rest.length && typeof rest[0] === "object" && rest[0] !== null && !("title" in rest[0])) opts = rest.shift();
		const items = rest.map((r) => (typeof r === "string" ? r : r.title));
		record(kind, { message: msg, items, options: opts });
		const f = answers[kind];
		return f ? f(msg, items, opts) : undefined;
	};
}

const outputLines = [];
function outputChannel(name) {
	return {
		name,
		append: (s) => outputLines.push(s),
		appendLine: (s) => outputLines.push(s),
		replace: () => {},
		clear: () => {},
		show: () => record("showOutput", { name }),
		hide: () => {},
		dispose: () => {},
		info: (s) => outputLines.push(s),
		warn: (s) => outputLines.push(s),
		error: (s) => outputLines.push(s),
		debug: () => {},
		trace: () => {},
		logLevel: 2,
		onDidChangeLogLevel: new EventEmitter().event,
	};
}

const noEvent = new EventEmitter().event;

function textDocument(uri, text, languageId) {
	let content = text;
	return {
		uri,
		languageId: languageId ?? "plaintext",
		version: 1,
		isUntitled: uri.scheme === "untitled",
		getText: () => content,
		_set: (t) => {
			content = t;
		},
		lineCount: content.split("\n").length,
	};
}

const window = {
	showInformationMessage: message("showInformationMessage"),
	showWarningMessage: message("showWarningMessage"),
	showErrorMessage: message("showErrorMessage"),
	async showQuickPick(items, options) {
		const list = await items;
		record("showQuickPick", { items: list, options });
		return answers.showQuickPick ? answers.showQuickPick(list, options) : undefined;
	},
	async showInputBox(options, token) {
		record("showInputBox", { options });
		return answers.showInputBox ? answers.showInputBox(options, token) : undefined;
	},
	createOutputChannel: (name) => outputChannel(name),
	// A status bar item keeps every text it was given (texts), whether it is
	// shown and whether it was disposed; each change is a "status" bus event.
	createStatusBarItem(id, alignment, priority) {
		let text = "";
		const changed = () => bus.emit("status", item);
		const item = {
			id,
			alignment,
			priority,
			tooltip: "",
			texts: [],
			visible: false,
			disposed: false,
			get text() {
				return text;
			},
			set text(v) {
				text = v;
				item.texts.push(v);
				changed();
			},
			show() {
				item.visible = true;
				changed();
			},
			hide() {
				item.visible = false;
				changed();
			},
			dispose() {
				item.visible = false;
				item.disposed = true;
				changed();
			},
		};
		statusItems.push(item);
		return item;
	},
	registerWebviewViewProvider(id, provider) {
		providers.webviewView.set(id, provider);
		return new Disposable(() => providers.webviewView.delete(id));
	},
	createWebviewPanel(viewType, title, column, options) {
		const panel = { viewType, title, options, webview: fakeWebview(), _dispose: new EventEmitter() };
		panel.onDidDispose = panel._dispose.event;
		panel.dispose = () => panel._dispose.fire();
		panel.reveal = () => {};
		record("createWebviewPanel", { panel });
		return panel;
	},
	async showTextDocument(docOrUri, options) {
		record("showTextDocument", { target: docOrUri, options });
		return { document: docOrUri };
	},
	// Progress is recorded: its options, what it reported, and a cancel
	// the test can press (VS Code's cancel button).
	withProgress: async (options, task) => {
		const cts = new CancellationTokenSource();
		const c = record("withProgress", { options, reports: [], cancel: () => cts.cancel(), done: false });
		try {
			return await task({ report: (r) => c.reports.push(r) }, cts.token);
		} finally {
			c.done = true;
		}
	},
	activeTextEditor: undefined,
	visibleTextEditors: [],
	onDidChangeActiveTextEditor: noEvent,
	onDidChangeVisibleTextEditors: noEvent,
	tabGroups: { all: [], onDidChangeTabs: noEvent, onDidChangeTabGroups: noEvent, close: async () => true },
	terminals: [],
	activeTerminal: undefined,
	onDidCloseTerminal: noEvent,
	setStatusBarMessage(text) {
		record("setStatusBarMessage", { text });
		return new Disposable(() => {});
	},
	async showSaveDialog(options) {
		record("showSaveDialog", { options });
		return answers.showSaveDialog ? answers.showSaveDialog(options) : undefined;
	},
	// A quick pick object answered like showQuickPick: the test's answer
	// (an item, or undefined) is accepted, or the pick is hidden.
	createQuickPick() {
		const accept = new EventEmitter();
		const hide = new EventEmitter();
		const qp = {
			items: [],
			activeItems: [],
			selectedItems: [],
			title: "",
			busy: false,
			matchOnDescription: false,
			onDidAccept: accept.event,
			onDidHide: hide.event,
			async show() {
				// quickPick: the live object, whose items the extension may replace while it is open.
				record("showQuickPick", { items: qp.items, options: { title: qp.title }, active: qp.activeItems, quickPick: qp });
				const pick = answers.showQuickPick ? await answers.showQuickPick(qp.items, { title: qp.title }) : undefined;
				if (pick) {
					qp.selectedItems = [pick];
					accept.fire();
				} else hide.fire();
			},
			hide: () => hide.fire(),
			dispose() {},
		};
		return qp;
	},
};

/** A webview that records what the extension posts to it. */
function fakeWebview() {
	const fromPage = new EventEmitter();
	let html = "";
	const w = {
		options: {},
		// A new page loads and, like the real script, says it is ready.
		get html() {
			return html;
		},
		set html(v) {
			html = v;
			setImmediate(() => fromPage.fire({ type: "ready" }));
		},
		cspSource: "vscode-webview://stub",
		posted: [],
		asWebviewUri: (u) => u,
		postMessage: async (m) => {
			w.posted.push(m);
			bus.emit("posted", m, w);
			return true;
		},
		onDidReceiveMessage: fromPage.event,
		/** The page sends m to the extension. */
		send: (m) => fromPage.fire(m),
	};
	return w;
}

// A test changes settings, then fires this as VS Code would.
const configChanged = new EventEmitter();

const workspace = {
	workspaceFolders: undefined,
	isTrusted: true,
	textDocuments: [],
	getConfiguration(section) {
		const get = (key, dflt) => {
			const full = section ? `${section}.${key}` : key;
			return full in settings ? settings[full] : dflt;
		};
		return { get, has: (k) => `${section}.${k}` in settings, inspect: () => undefined, update: async () => {} };
	},
	getWorkspaceFolder(uri) {
		return (workspace.workspaceFolders ?? []).find((f) => uri.fsPath.startsWith(f.uri.fsPath));
	},
	onDidChangeConfiguration: configChanged.event,
	onDidOpenTextDocument: noEvent,
	onDidCloseTextDocument: noEvent,
	onDidChangeTextDocument: noEvent,
	onDidSaveTextDocument: noEvent,
	onWillSaveTextDocument: noEvent,
	onDidChangeWorkspaceFolders: noEvent,
	createFileSystemWatcher: () => ({ onDidCreate: noEvent, onDidChange: noEvent, onDidDelete: noEvent, dispose() {} }),
	registerTextDocumentContentProvider(scheme, provider) {
		providers.textDocumentContent.set(scheme, provider);
		return new Disposable(() => providers.textDocumentContent.delete(scheme));
	},
	async openTextDocument(arg) {
		if (arg && typeof arg === "object" && !(arg instanceof Uri)) {
			const doc = textDocument(new Uri("untitled", "", `Untitled-${calls.length}`), arg.content ?? "", arg.language);
			record("openTextDocument", { doc });
			return doc;
		}
		const uri = typeof arg === "string" ? Uri.file(arg) : arg;
		const provider = providers.textDocumentContent.get(uri.scheme);
		const fsp = providers.fileSystem.get(uri.scheme);
		const text = provider
			? provider.provideTextDocumentContent(uri)
			: fsp
				? Buffer.from(fsp.readFile(uri)).toString("utf8")
				: fs.readFileSync(uri.fsPath, "utf8");
		return textDocument(uri, text);
	},
	async findFiles(include) {
		const base = include.baseUri.fsPath;
		const out = [];
		const walk = (dir) => {
			for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
				if (e.name === "node_modules" || e.name === ".git") continue;
				const p = path.join(dir, e.name);
				if (e.isDirectory()) walk(p);
				else out.push(Uri.file(p));
			}
		};
		walk(base);
		const q = include.pattern.replace(/^\*\*\/\*/, "").replace(/\*$/, "");
		return out.filter((u) => path.relative(base, u.fsPath).includes(q));
	},
	// Proposals live in an in-memory file system (review.ts): the stub
	// keeps the provider, and openTextDocument reads through it.
	registerFileSystemProvider(scheme, provider) {
		providers.fileSystem.set(scheme, provider);
		return new Disposable(() => providers.fileSystem.delete(scheme));
	},
	applyEdit: async () => true,
	fs: {},
};

const vscode = {
	version: "1.95.0",
	Disposable,
	EventEmitter,
	Uri,
	Position,
	Range,
	Selection,
	ThemeColor,
	CancellationError,
	CancellationTokenSource,
	CompletionItem,
	CodeLens,
	DocumentLink,
	InlayHint,
	SymbolInformation,
	CallHierarchyItem,
	TypeHierarchyItem,
	CodeAction,
	Diagnostic,
	RelativePattern,
	StatusBarAlignment: { Left: 1, Right: 2 },
	ViewColumn: { Active: -1, Beside: -2, One: 1, Two: 2 },
	ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
	DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
	ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
	TextDocumentSaveReason: { Manual: 1, AfterDelay: 2, FocusOut: 3 },
	FileType: { Unknown: 0, File: 1, Directory: 2, SymbolicLink: 64 },
	FileChangeType: { Changed: 1, Created: 2, Deleted: 3 },
	FileSystemError: { FileNotFound: (u) => new Error(`not found: ${u}`), NoPermissions: (m) => new Error(String(m)) },
	TabInputText: class {},
	TabInputTextDiff: class {},
	TabInputCustom: class {},
	window,
	workspace,
	commands: {
		registerCommand(id, fn) {
			commands.set(id, fn);
			return new Disposable(() => commands.delete(id));
		},
		async executeCommand(id, ...args) {
			record("executeCommand", { id, args });
			const f = commands.get(id);
			return f ? f(...args) : undefined;
		},
		getCommands: async () => [...commands.keys()],
	},
	languages: new Proxy(
		{
			match: () => 0,
			createDiagnosticCollection: () => ({ set() {}, delete() {}, clear() {}, dispose() {}, forEach() {} }),
			getLanguages: async () => [],
			getDiagnostics: () => [],
		},
		{ get: (t, k) => (k in t ? t[k] : () => new Disposable(() => {})) },
	),
	env: {
		appName: "Visual Studio Code (stub)",
		language: "en",
		machineId: "stub",
		sessionId: "stub",
		uiKind: 1,
		openExternal: async (uri) => {
			record("openExternal", { uri });
			return true;
		},
		clipboard: {
			readText: async () => "",
			writeText: async (text) => {
				record("clipboard", { text });
			},
		},
	},
	extensions: { getExtension: () => undefined, all: [] },
	// Test hooks, not part of VS Code's API.
	__stub: {
		/**
		 * Fires onDidChangeConfiguration for the keys named; resolves when
		 * the listeners are done with it (VS Code itself does not wait).
		 */
		changeSettings: (...keys) =>
			Promise.all(configChanged.fire({ affectsConfiguration: (k) => keys.some((x) => x === k || x.startsWith(`${k}.`)) })).then(() => undefined),
		secrets,
		calls,
		answers, settings, commands, providers, statusItems, bus, outputLines, fakeWebview, record },
};

/**
 * Any other part of the API (enums and classes the language client reads
 * while it sets up features this extension never registers) is a harmless
 * stand-in: readable, callable and constructible, never a promise.
 */
function standIn(name) {
	const f = function () {};
	return new Proxy(f, {
		get(t, k) {
			if (k === "then") return undefined;
			if (k === Symbol.toPrimitive || k === "toString") return () => name;
			if (k in t) return t[k];
			return standIn(`${name}.${String(k)}`);
		},
		apply: () => standIn(`${name}()`),
		construct: () => standIn(`new ${name}`),
	});
}

module.exports = new Proxy(vscode, { get: (t, k) => (k in t ? t[k] : standIn(String(k))) });
