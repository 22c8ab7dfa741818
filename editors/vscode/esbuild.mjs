// Bundles the extension (Node, CommonJS, `vscode` left to the host) and the
// chat webview (browser, one script) into dist/. `node esbuild.mjs --watch`
// rebuilds on change.
import * as esbuild from "esbuild";

const watch = process.argv.includes("--watch");
const common = { bundle: true, sourcemap: true, logLevel: "warning", legalComments: "none" };

const builds = [
	{ ...common, entryPoints: ["src/extension.ts"], outfile: "dist/extension.js", platform: "node", format: "cjs", target: "node18", external: ["vscode"] },
	{ ...common, entryPoints: ["src/webview/main.ts"], outfile: "dist/webview.js", platform: "browser", format: "iife", target: "chrome114" },
];

if (watch) {
	for (const b of builds) await (await esbuild.context(b)).watch();
} else {
	await Promise.all(builds.map((b) => esbuild.build(b)));
}
