#!/usr/bin/env node
// The npm package's launcher: runs the gopi binary of this platform's
// package (an optional dependency, "gopi-<platform>-<arch>", installed by
// npm only where its os and cpu match), with this process's arguments and
// stdio, passes on the signals that ask it to stop, and exits as it did.
"use strict";

const { spawn } = require("child_process");
const path = require("path");

const platform = `${process.platform}-${process.arch}`;
const pkg = `gopi-${platform}`;
const exe = process.platform === "win32" ? "gopi.exe" : "gopi";

let bin;
try {
  bin = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin", exe);
} catch {
  const { optionalDependencies = {} } = require("../package.json");
  const known = Object.keys(optionalDependencies).map((name) => name.replace(/^gopi-/, ""));
  process.stderr.write(
    known.includes(platform)
      ? `gopi: the package for ${platform} (${optionalDependencies[pkg]}) is not installed; ` +
          "npm leaves optional dependencies out with --omit=optional or --no-optional: install gopi again without it\n"
      : `gopi: no gopi binary is published for ${platform} (there are: ${known.join(", ")}); ` +
          "build it from source: go install github.com/gopi-dev/gopi/cmd/gopi@latest\n",
  );
  process.exit(1);
}

const child = spawn(bin, process.argv.slice(2), { stdio: "inherit", windowsHide: true });

// SIGTERM, SIGHUP and SIGINT, which a client sends to the process it
// started (this one), are passed on once each. At a terminal Ctrl-C
// reaches gopi itself (it is in the same process group), and gopi takes a
// second signal as "stop now": there SIGINT is not passed on, only kept
// from ending the launcher before gopi has.
const terminal = Boolean(process.stdin.isTTY);
const forwarded = new Set();
const onSignal = (signal) => {
  if ((signal === "SIGINT" && terminal) || forwarded.has(signal) || child.exitCode !== null || child.signalCode !== null) {
    return;
  }
  forwarded.add(signal);
  try {
    child.kill(signal);
  } catch {
    // gone already
  }
};
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => onSignal(signal));
}

child.on("error", (err) => {
  process.stderr.write(`gopi: cannot start ${bin}: ${err.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    // End the same way, so the caller sees the signal, not a code.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
