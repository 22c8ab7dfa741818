// Shared by the extension's Node test files: the bundle loaded with the
// stubbed `vscode` module, waiting on what the stub records, and finding
// the system's Chromium.
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/** The stub `vscode` module; the extension's `require("vscode")` gets it. */
export const vscode = require("./vscode-stub.cjs");
const Module = require("node:module");
const load = Module._load;
Module._load = function (request, parent, isMain) {
	if (request === "vscode") return vscode;
	return load.call(this, request, parent, isMain);
};

/** Loads the bundled extension (dist/extension.js) against the stub. */
export const loadExtension = () => require("../dist/extension.js");

export const WAIT_MS = 30_000;

/** Resolves when pred(x) holds for a stub event (or one of past), or rejects naming what. */
export function waitFor(what, pred, { event = "posted", past = [] } = {}) {
	const { bus } = vscode.__stub;
	for (const x of past) if (pred(x)) return Promise.resolve(x);
	return new Promise((resolve, reject) => {
		const timer = setTimeout(() => {
			bus.off(event, on);
			reject(new Error(`timed out waiting for ${what}`));
		}, WAIT_MS);
		const on = (x) => {
			if (pred(x)) {
				clearTimeout(timer);
				bus.off(event, on);
				resolve(x);
			}
		};
		bus.on(event, on);
	});
}

/** A webview message carrying a gopi event of type (and matching f). */
export const isEvent = (type, f = () => true) => (m) => m.type === "event" && m.event.type === type && f(m.event);

/** The system's Chromium (or $CHROMIUM). */
export function findChromium() {
	if (process.env.CHROMIUM) return process.env.CHROMIUM;
	for (const name of ["chromium", "chromium-browser", "google-chrome"]) {
		try {
			return execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim();
		} catch {
			// next
		}
	}
	throw new Error("no Chromium found (apt-get install chromium, or set CHROMIUM)");
}
