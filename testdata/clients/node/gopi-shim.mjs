#!/usr/bin/env node
// gopi-shim.mjs stands in for pi's cli.js: pi's RpcClient starts
// `node <cliPath> --mode rpc ...args`, and with this file as cliPath the
// agent it talks to is the gopi binary named by $GOPI_BIN.
//
// The shim hands its own stdin, stdout and stderr to gopi (the bytes never
// pass through Node), forwards SIGTERM, SIGINT and SIGHUP to it, and ends the
// way gopi ended: with its exit code, or killed by the same signal.
import { spawn } from "node:child_process";
import { constants } from "node:os";

const bin = process.env.GOPI_BIN;
if (!bin) {
	process.stderr.write("gopi-shim: GOPI_BIN must name the gopi binary\n");
	process.exit(127);
}

const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });

const forwarded = ["SIGTERM", "SIGINT", "SIGHUP"];
const forward = (signal) => {
	// The child may already be gone; kill then reports false, which is fine.
	child.kill(signal);
};
for (const signal of forwarded) process.on(signal, forward);

child.on("error", (err) => {
	process.stderr.write(`gopi-shim: cannot run ${bin}: ${err.message}\n`);
	process.exit(127);
});

child.on("exit", (code, signal) => {
	for (const s of forwarded) process.off(s, forward);
	if (signal) {
		// Die of the same signal so our parent sees what gopi saw. Should the
		// signal not end us (it is ignored elsewhere), exit as a shell would.
		process.kill(process.pid, signal);
		setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 1000);
		return;
	}
	process.exit(code ?? 1);
});
