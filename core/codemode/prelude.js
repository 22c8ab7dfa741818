// gopi's codemode prelude: evaluated in the script's QuickJS VM before the
// script, it builds the script's globals over one host function and hands
// the host three functions back. Nothing here is reachable by the script
// but what it defines on the global object.
//
// It evaluates to a function (bridge, toolsJSON, globalsJSON, storeJSON,
// limitsJSON) returning { settle, run, stalled }:
//   bridge("call", id, tool, argsJSON)      a tool call, answered by settle
//   bridge("global", id, name, argsJSON)    searchTools() and the like, the
//                                           arguments as a JSON array
//   bridge("output", kind, data, mimeType)  kind "text", "console", "image"
//   bridge("done", ok, valueOrErrorJSON, writesJSON)
//   settle(id, ok, payload)                 ok: payload is JSON (or
//                                           undefined); else the error text
//   run(fn)                                 runs the compiled script
//   stalled()                               fails a script that waits on
//                                           nothing that can ever settle
(function (bridge, toolsJSON, globalsJSON, storeJSON, limitsJSON) {
	"use strict";

	// First of all, the language's own objects are locked, as pi locks
	// them: every object reachable from the global object (and the
	// intrinsics only instances lead to: the iterator, generator and
	// async function prototypes, %TypedArray%) is frozen, and the
	// built-in globals become read-only. The script shares them with this
	// prelude, so a script that patched one (Array.prototype.toJSON, say)
	// could otherwise spoil what the prelude reports.
	//
	// A frozen prototype would also stop an instance from getting a
	// property of the same name by assignment (this.name = "E" in an
	// Error subclass throws). The names scripts commonly give their own
	// objects, and Object.prototype's, become accessors instead: reading
	// gives the built-in value, assigning on anything but the built-in
	// itself defines an own property there.
	(function freezeBuiltins() {
		const shadowed = new Set(["constructor", "name", "message", "toString", "toLocaleString", "valueOf", "toJSON"]);
		const visited = new Set([globalThis]);
		const todo = [];
		const visit = (value) => {
			if (value === null || (typeof value !== "object" && typeof value !== "function") || visited.has(value)) return;
			visited.add(value);
			todo.push(value);
		};
		// The accessors come from an object literal: they have no
		// prototype object of their own to walk into.
		const shadowable = (owner, key, value, enumerable) => {
			const pair = Object.getOwnPropertyDescriptor(
				{
					get slot() {
						return value;
					},
					set slot(next) {
						if (this === owner) throw new TypeError("Cannot assign to read only property '" + String(key) + "' of a built-in");
						if (this === null || (typeof this !== "object" && typeof this !== "function")) return;
						Object.defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
					},
				},
				"slot",
			);
			Object.defineProperty(owner, key, { get: pair.get, set: pair.set, enumerable, configurable: false });
			visit(pair.get);
			visit(pair.set);
		};
		for (const key of Reflect.ownKeys(globalThis)) {
			const d = Object.getOwnPropertyDescriptor(globalThis, key);
			visit(d.value);
			visit(d.get);
			visit(d.set);
			if ("value" in d && d.configurable) Object.defineProperty(globalThis, key, { writable: false, configurable: false });
		}
		visit(Object.getPrototypeOf(function* () {}));
		visit(Object.getPrototypeOf(async function () {}));
		visit(Object.getPrototypeOf(async function* () {}));
		visit(Object.getPrototypeOf(Int8Array));
		visit(Object.getPrototypeOf([][Symbol.iterator]()));
		visit(Object.getPrototypeOf(new Map()[Symbol.iterator]()));
		visit(Object.getPrototypeOf(new Set()[Symbol.iterator]()));
		visit(Object.getPrototypeOf(""[Symbol.iterator]()));
		visit(Object.getPrototypeOf(/a/[Symbol.matchAll]("")));
		if (typeof Iterator === "function") {
			if (typeof Iterator.prototype.map === "function") visit(Object.getPrototypeOf([].values().map((x) => x)));
			if (typeof Iterator.from === "function") visit(Object.getPrototypeOf(Iterator.from({ next() {} })));
		}
		while (todo.length > 0) {
			const object = todo.pop();
			visit(Object.getPrototypeOf(object));
			const descriptors = Object.getOwnPropertyDescriptors(object);
			for (const key of Reflect.ownKeys(descriptors)) {
				const d = descriptors[key];
				if (!("value" in d)) {
					visit(d.get);
					visit(d.set);
					continue;
				}
				visit(d.value);
				if (d.writable && d.configurable && (object === Object.prototype || shadowed.has(key))) {
					shadowable(object, key, d.value, d.enumerable);
				}
			}
			Object.freeze(object);
		}
	})();
	const stringify = JSON.stringify;
	const parse = JSON.parse;
	const promiseThen = Promise.prototype.then;
	const ErrorCtor = Error;
	const TypeErrorCtor = TypeError;
	const RangeErrorCtor = RangeError;
	const defineGlobal = (name, value) =>
		Object.defineProperty(globalThis, name, { value, enumerable: true, writable: false, configurable: false });
	const limits = parse(limitsJSON);

	const waiting = new Map();
	let nextID = 1;
	let over = false;
	// exit() throws this to unwind the script once it has reported success.
	const EXIT = Object.freeze({});

	function finish(ok, payload, writes) {
		if (over) return;
		over = true;
		bridge("done", ok, payload, writes);
	}

	// "Name: message" and the stack's frames, without this file's.
	function errorText(error) {
		const head = error.message ? error.name + ": " + error.message : String(error.name);
		const frames =
			typeof error.stack === "string"
				? error.stack.split("\n").filter((line) => line.trim() !== "" && !line.includes("codemode-prelude.js"))
				: [];
		return [head].concat(frames).join("\n");
	}

	// console's rendering of one argument.
	function show(value) {
		if (typeof value === "string") return value;
		if (value instanceof ErrorCtor) return errorText(value);
		if (typeof value === "number") return String(value);
		try {
			const json = stringify(value);
			return json === undefined ? String(value) : json;
		} catch {
			return String(value);
		}
	}

	// A thrown value as the JSON the host reads: name, message, stack.
	function describe(error) {
		try {
			if (error instanceof ErrorCtor) {
				return stringify({ name: String(error.name), message: String(error.message), stack: errorText(error) });
			}
			return stringify({ message: String(show(error)) });
		} catch {
			return stringify({ message: "the script threw a value that cannot be described" });
		}
	}

	function asyncCall(kind, name, spread) {
		return (...args) =>
			new Promise((resolve, reject) => {
				let json;
				try {
					const value = spread ? args : args[0];
					json = value === undefined ? undefined : stringify(value);
				} catch (error) {
					reject(error);
					return;
				}
				const id = nextID++;
				waiting.set(id, { resolve, reject });
				bridge(kind, id, name, json);
			});
	}

	// Reading a member that does not exist names the close ones, instead
	// of a later "is not a function".
	const squash = (name) => name.toLowerCase().replace(/[^a-z0-9]/g, "");
	function guarded(target, label, names, hint) {
		return new Proxy(target, {
			get(object, key, receiver) {
				if (typeof key !== "string" || key in object || key in Object.prototype || key === "then" || key === "toJSON") {
					return Reflect.get(object, key, receiver);
				}
				const want = squash(key);
				let near = names.filter((n) => squash(n) === want);
				if (near.length === 0) near = names.filter((n) => want !== "" && (squash(n).includes(want) || want.includes(squash(n))));
				let message = label + "." + key + " does not exist.";
				if (near.length > 0) message += " Did you mean " + near.slice(0, 5).map((n) => label + "." + n).join(", ") + "?";
				else if (names.length <= 20) message += " Available: " + names.join(", ") + ".";
				if (hint) message += " " + hint;
				throw new TypeErrorCtor(message);
			},
		});
	}

	const tools = Object.create(null);
	const allTools = [];
	for (const { name, jsName, description } of parse(toolsJSON)) {
		const call = asyncCall("call", name, false);
		if (!(jsName in tools)) {
			tools[jsName] = call;
			allTools.push(Object.freeze({ name: jsName, description }));
		}
		if (!(name in tools)) tools[name] = call;
	}
	Object.freeze(tools);
	Object.freeze(allTools);
	const toolsProxy = guarded(
		tools,
		"tools",
		allTools.map((t) => t.name),
		"ALL_TOOLS lists every tool; searchTools(query) finds tools by topic.",
	);

	const namespaces = new Map();
	for (const name of parse(globalsJSON)) {
		const call = asyncCall("global", name, true);
		const dot = name.indexOf(".");
		if (dot < 0) {
			defineGlobal(name, call);
			continue;
		}
		const ns = name.slice(0, dot);
		if (!namespaces.has(ns)) namespaces.set(ns, Object.create(null));
		namespaces.get(ns)[name.slice(dot + 1)] = call;
	}
	for (const [ns, members] of namespaces) {
		Object.freeze(members);
		defineGlobal(ns, guarded(members, ns, Object.keys(members)));
	}

	// The store: key -> JSON text, sizes counted in characters of key and JSON.
	const stored = new Map(Object.entries(parse(storeJSON)));
	const writes = new Map();
	let storedSize = 0;
	for (const [key, json] of stored) storedSize += key.length + json.length;
	const STORE_HINT =
		"store() keeps small state such as IDs or summaries; keep large data in variables, show images with image(), or write files with a tool.";

	function keyOf(fn, key) {
		if (typeof key !== "string") throw new TypeErrorCtor(fn + "() key must be a string");
	}

	defineGlobal("store", function store(key, value) {
		keyOf("store", key);
		const before = stored.has(key) ? key.length + stored.get(key).length : 0;
		if (value === undefined) {
			stored.delete(key);
			storedSize -= before;
			writes.set(key, undefined);
			return;
		}
		let json;
		try {
			json = stringify(value);
		} catch (error) {
			throw new TypeErrorCtor("store(" + stringify(key) + ") value is not JSON-serializable: " + show(error));
		}
		if (json === undefined) throw new TypeErrorCtor("store(" + stringify(key) + ") value is not JSON-serializable");
		if (json.length > limits.storeValue) {
			throw new RangeErrorCtor(
				"store(" + stringify(key) + ") value has " + json.length + " characters of JSON, over the limit of " + limits.storeValue + ". " + STORE_HINT,
			);
		}
		const after = storedSize - before + key.length + json.length;
		if (after > limits.storeTotal) {
			throw new RangeErrorCtor(
				"store is full: the values would pass " + limits.storeTotal + " characters of JSON. Delete keys with store(key, undefined). " + STORE_HINT,
			);
		}
		stored.set(key, json);
		storedSize = after;
		writes.set(key, json);
	});

	defineGlobal("load", function load(key) {
		keyOf("load", key);
		const json = stored.get(key);
		return json === undefined ? undefined : parse(json);
	});

	function writesJSON() {
		const list = [];
		for (const [key, json] of writes) list.push(json === undefined ? [key] : [key, json]);
		return stringify(list);
	}

	let outChars = 0;
	let outItems = 0;
	function emit(kind, data, mimeType) {
		if (over) return;
		outChars += data.length;
		outItems++;
		if (outChars > limits.outputChars || outItems > limits.outputItems) {
			const error = new RangeErrorCtor(
				"the script's output passed " + limits.outputChars + " characters or " + limits.outputItems +
					" text(), image() and console calls. Print a summary instead, or write large data to a file with a tool.",
			);
			finish(false, describe(error));
			throw error;
		}
		bridge("output", kind, data, mimeType);
	}

	defineGlobal("text", function text(value) {
		let s;
		if (value === undefined || value === null || (typeof value !== "object" && typeof value !== "function")) {
			s = String(value);
		} else {
			try {
				const json = stringify(value);
				s = json === undefined ? String(value) : json;
			} catch (error) {
				throw new TypeErrorCtor(error instanceof ErrorCtor ? error.message : String(error));
			}
		}
		emit("text", s);
	});

	const IMAGE_WANTED =
		'image() takes a base64 data: URL, an object with image_url, or an image block { type: "image", data, mimeType }';
	function imageURL(value) {
		if (typeof value === "string") return value;
		if (typeof value !== "object" || value === null || Array.isArray(value)) throw new TypeErrorCtor(IMAGE_WANTED);
		if (value.image_url !== undefined) {
			if (typeof value.image_url !== "string") throw new TypeErrorCtor(IMAGE_WANTED);
			return value.image_url;
		}
		if (value.type !== "image") {
			throw new TypeErrorCtor(typeof value.type === "string" ? 'image() takes image blocks, not "' + value.type + '"' : IMAGE_WANTED);
		}
		if (typeof value.data !== "string" || value.data === "") throw new TypeErrorCtor("image() needs the block's base64 data");
		if (value.data.toLowerCase().startsWith("data:")) return value.data;
		return "data:;base64," + value.data;
	}
	// The start of each accepted format's base64 (PNG, JPEG, GIF, WebP).
	const SIGNATURES = [
		["image/png", /^iVBORw0KGg/],
		["image/jpeg", /^[/]9j[/](?!9)/],
		["image/gif", /^R0lGOD[dl]h/],
		["image/webp", /^UklG.{8}RUJQ/],
	];
	defineGlobal("image", function image(value) {
		const url = imageURL(value);
		if (url === "") throw new TypeErrorCtor(IMAGE_WANTED);
		const colon = url.indexOf(":");
		const scheme = colon < 0 ? "" : url.slice(0, colon).toLowerCase();
		if (scheme === "http" || scheme === "https") {
			throw new TypeErrorCtor("image() does not fetch remote URLs; pass the image as a base64 data: URL");
		}
		const comma = url.indexOf(",");
		const params = comma < 0 ? [] : url.slice(colon + 1, comma).split(";");
		if (scheme !== "data" || comma < 0 || params.slice(1).every((p) => p.toLowerCase() !== "base64")) {
			throw new TypeErrorCtor("image() needs a base64 data: URL");
		}
		const data = url.slice(comma + 1).replace(/\s+/g, "");
		if (data.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) {
			throw new TypeErrorCtor("image(): the data is not valid base64");
		}
		const found = SIGNATURES.find(([, re]) => re.test(data.slice(0, 16)));
		if (!found) throw new TypeErrorCtor("image(): the data is not a PNG, JPEG, GIF or WebP image");
		emit("image", data, found[0]);
	});

	defineGlobal("exit", function exit() {
		let json;
		try {
			json = writesJSON();
		} catch (error) {
			finish(false, describe(error));
			throw EXIT;
		}
		finish(true, undefined, json);
		throw EXIT;
	});

	const consoleObject = {};
	for (const level of ["log", "info", "warn", "error", "debug"]) {
		consoleObject[level] = (...args) => emit("console", args.map(show).join(" "));
	}
	Object.freeze(consoleObject);
	defineGlobal("console", consoleObject);
	defineGlobal("tools", toolsProxy);
	defineGlobal("ALL_TOOLS", allTools);

	return {
		settle(id, ok, payload) {
			const entry = waiting.get(id);
			if (!entry) return;
			waiting.delete(id);
			if (!ok) {
				entry.reject(new ErrorCtor(payload));
				return;
			}
			let value;
			try {
				value = payload === undefined ? undefined : parse(payload);
			} catch (error) {
				entry.reject(error);
				return;
			}
			entry.resolve(value);
		},
		run(fn) {
			let promise;
			try {
				promise = fn(toolsProxy, consoleObject);
			} catch (error) {
				if (error !== EXIT) finish(false, describe(error));
				return;
			}
			promiseThen.call(
				promise,
				(value) => {
					let json;
					try {
						json = value === undefined ? undefined : stringify(value);
					} catch (error) {
						finish(false, describe(error));
						return;
					}
					finish(true, json, writesJSON());
				},
				(error) => {
					if (error !== EXIT) finish(false, describe(error));
				},
			);
		},
		stalled() {
			if (over || waiting.size > 0) return false;
			finish(
				false,
				stringify({
					name: "Error",
					message:
						"The script is waiting on a promise that can never settle: no tool call is pending, and there are no timers.",
				}),
			);
			return true;
		},
	};
})
