// The pipe to gopi: JSON-RPC 2.0 messages, one a line, out on fd 4 and in
// on fd 3, and the sync requests on fds 5 and 6. It owns the request ids,
// the handlers of gopi's calls (each module that serves one adds it here)
// and the events still running, which "drain" waits for.

import * as fs from "node:fs";
import { served } from "./methods.gen.mjs";

const out = fs.createWriteStream(null, { fd: 4 });
out.on("error", () => process.exit(0)); // gopi is gone
export function send(msg) {
	const line = JSON.stringify(msg);
	if (process.env.GOPI_EXT_DEBUG) process.stderr.write(`-> ${line.slice(0, 300)}\n`);
	out.write(`${line}\n`);
}
export function notify(method, params) {
	send({ jsonrpc: "2.0", method, params });
}
// The id of our next request, sync or not (ui.mjs names a dialog after it).
export let nextId = 1;
const waiting = new Map(); // our request id -> {resolve, reject}
export function request(method, params) {
	const id = nextId++;
	return new Promise((resolve, reject) => {
		waiting.set(id, { resolve, reject });
		send({ jsonrpc: "2.0", id, method, params });
	});
}

// requestSync makes a sync request (fds 5 and 6): the thread waits for
// gopi's answer, so pi's synchronous calls can answer, or throw, at once.
const syncChunk = Buffer.alloc(64 * 1024);
let syncBuffered = Buffer.alloc(0);
export function requestSync(method, params) {
	const id = nextId++;
	const line = JSON.stringify({ jsonrpc: "2.0", id, method, params });
	if (process.env.GOPI_EXT_DEBUG) process.stderr.write(`=> ${line.slice(0, 300)}\n`);
	const out = Buffer.from(`${line}\n`);
	for (let done = 0; done < out.length; ) done += fs.writeSync(5, out, done);
	for (;;) {
		const nl = syncBuffered.indexOf(10);
		if (nl >= 0) {
			const msg = JSON.parse(syncBuffered.subarray(0, nl).toString("utf8"));
			syncBuffered = syncBuffered.subarray(nl + 1);
			if (msg.id !== id) continue;
			if (msg.error) throw new Error(msg.error.message);
			return msg.result;
		}
		const n = fs.readSync(6, syncChunk, 0, syncChunk.length, null);
		if (n === 0) throw new Error("gopi closed the pipe of sync requests");
		syncBuffered = Buffer.concat([syncBuffered, syncChunk.subarray(0, n)]);
	}
}

export const handlers = new Map(); // method -> async (params) => result
// Events gopi sent as notifications whose handlers have not finished:
// "drain" waits for them (pi awaits agent_end's handlers before it
// settles).
export const pendingEvents = new Set();

async function dispatch(msg) {
	if (process.env.GOPI_EXT_DEBUG) process.stderr.write(`<- ${JSON.stringify(msg).slice(0, 300)}\n`);
	if (msg.method === undefined) {
		const w = waiting.get(msg.id);
		if (!w) return;
		waiting.delete(msg.id);
		if (msg.error) w.reject(new Error(msg.error.message));
		else w.resolve(msg.result);
		return;
	}
	const h = handlers.get(msg.method);
	if (msg.id === undefined) {
		if (h) {
			// The handler starts at once (a state update must be in place
			// before the call that follows it), and may finish later.
			let started;
			try {
				started = Promise.resolve(h(msg.params ?? {}));
			} catch (err) {
				started = Promise.reject(err);
			}
			const done = started.catch((err) => process.stderr.write(`notification ${msg.method} failed: ${err?.stack ?? err}\n`));
			if (msg.method === served.emit) {
				pendingEvents.add(done);
				done.finally(() => pendingEvents.delete(done));
			}
			await done;
		}
		return;
	}
	if (!h) {
		send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: `unknown method ${msg.method}` } });
		return;
	}
	try {
		const result = await h(msg.params ?? {});
		send({ jsonrpc: "2.0", id: msg.id, result: result ?? null });
	} catch (err) {
		send({ jsonrpc: "2.0", id: msg.id, error: { code: -32000, message: errorText(err) } });
	}
}

export function errorText(err) {
	return err instanceof Error ? err.message : String(err);
}

let buffered = "";
const input = fs.createReadStream(null, { fd: 3, encoding: "utf8" });
input.on("data", (chunk) => {
	buffered += chunk;
	let nl = buffered.indexOf("\n");
	while (nl >= 0) {
		const line = buffered.slice(0, nl);
		buffered = buffered.slice(nl + 1);
		nl = buffered.indexOf("\n");
		if (line.trim() === "") continue;
		let msg;
		try {
			msg = JSON.parse(line);
		} catch (err) {
			process.stderr.write(`unreadable message from gopi: ${errorText(err)}\n`);
			continue;
		}
		// Messages are handled concurrently, as they arrive; a handler that
		// waits (a dialog, a tool) does not hold up the ones behind it.
		void dispatch(msg);
	}
});
// gopi closed the pipe (it exited or stopped extensions): so do we.
input.on("end", () => process.exit(0));
input.on("error", () => process.exit(0));

