// gopi's extension host: a Node process that loads pi extensions and runs
// their handlers for gopi.
//
// gopi starts it as `node host.mjs PI_PACKAGE_DIR` with two extra pipes:
// fd 3 carries gopi's messages in, fd 4 carries ours out. Both are JSON-RPC
// 2.0, one message per line, with requests in both directions. A second
// pair, fd 5 out and fd 6 in, carries the few requests pi's API must have
// answered before it returns (requestSync). Our stdout and stderr go to
// gopi's log, so an extension's console.log never reaches gopi's client.
//
// Loading and the hook semantics are pi's own: extensions are loaded by the
// loader of the pi package gopi points us at (jiti, with pi's package names
// aliased to that package), and events run through pi's ExtensionRunner.
// What pi's AgentSession would do for the runner (send messages, switch
// sessions, ask the user) becomes a request or notification to gopi. The
// state extensions read synchronously (ctx.model, ctx.sessionManager,
// isIdle, ...) is a local copy that gopi keeps current with "state"
// notifications, sent before any request that could read it.
//
// This module is the start: it checks its argument, loads the others
// (each owns one part and registers its handlers on the pipe as it loads:
// pipe.mjs the pipe, state.mjs the mirrored state, mcp.mjs the MCP servers
// extensions register, ui.mjs the dialogs, pi15.mjs pi 1.5's calls on an
// older loader, runner.mjs loading and initialize, events.mjs the events,
// tools and commands) and tells gopi it is ready.
//
// The pipe's method names come from methods.gen.mjs, generated from gopi's
// core/ext/protocol.go, which types their params and results too: a
// method is added there first (docs/architecture.md, "The extension
// protocol").

// The pipe's method names, generated from gopi's core/ext/protocol.go.
import { gopi } from "./methods.gen.mjs";
import { errorText, notify } from "./pipe.mjs";
import { piDir } from "./runner.mjs";
import "./events.mjs";

if (!piDir) {
	process.stderr.write("gopi extension host: the pi package directory is missing from the command line\n");
	process.exit(2);
}

process.on("unhandledRejection", (err) => {
	process.stderr.write(`unhandled rejection in an extension: ${err?.stack ?? err}\n`);
	notify(gopi.error, { extensionPath: "<unknown>", event: "unhandled_rejection", error: errorText(err), stack: err?.stack });
});
process.on("uncaughtException", (err) => {
	process.stderr.write(`uncaught exception in an extension: ${err?.stack ?? err}\n`);
	notify(gopi.error, { extensionPath: "<unknown>", event: "uncaught_exception", error: errorText(err), stack: err?.stack });
});

notify(gopi.ready, { pid: process.pid, node: process.version });
