// Command gopi is a headless coding agent that speaks the pi coding
// agent's RPC protocol. See the README for usage.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gopi-dev/gopi/core/checkpoint"
	"github.com/gopi-dev/gopi/core/sandbox"
	"github.com/gopi-dev/gopi/core/tools"
)

func main() {
	// gopi started as the sandbox's launcher (first argument
	// sandbox.LauncherArg) never gets here: core/sandbox's init confines
	// the process and executes the command before the packages that need
	// more are initialised, which keeps a confined command's start cheap.
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(argv []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	if len(argv) > 0 && argv[0] == "extensions" {
		return runExtensionsCommand(argv[1:], stdout, stderr)
	}
	if len(argv) > 0 && argv[0] == "mcp" {
		return runMCPCommand(argv[1:], stdout, stderr)
	}
	if len(argv) > 0 && slices.Contains(piCommands, argv[0]) {
		// pi runs these as commands; as a prompt they would go to the
		// model with tools enabled.
		fmt.Fprintf(stderr, "gopi: %q is a pi command (packages, config, auth) that gopi does not have; to send it as a prompt, put -- before it\n", argv[0])
		return 2
	}
	a := parseArgs(argv)
	if len(a.errors) > 0 {
		for _, e := range a.errors {
			fmt.Fprintln(stderr, "gopi:", e)
		}
		fmt.Fprintln(stderr, "Run gopi --help for usage.")
		return 2
	}
	switch {
	case a.help:
		fmt.Fprint(stdout, usage)
		return 0
	case a.version:
		printVersion(stdout, a.versionJSON)
		return 0
	case a.exportSet:
		return runExport(a, stdout, stderr)
	}
	if a.offline || truthyEnv(os.Getenv("PI_OFFLINE")) {
		// pi's --offline: what gopi starts (bash commands, the
		// extension host) sees PI_OFFLINE=1 and stays off the network
		// for its own upkeep. gopi itself only talks to model
		// providers, and only when asked to.
		_ = os.Setenv("PI_OFFLINE", "1")
		_ = os.Setenv("PI_SKIP_VERSION_CHECK", "1")
	}

	// A client that closes its end of stdout must not kill gopi with
	// SIGPIPE before it has aborted the run, killed bash process groups
	// and flushed the session: writes fail with EPIPE instead, and the
	// writer reports the client gone (see runRPC). The signal is caught
	// (and dropped), not ignored: an ignored signal stays ignored across
	// exec, so every command gopi ran would have started with SIGPIPE
	// ignored, and `yes | head -1` would never end. A caught one is back
	// at its default in the child. SIGHUP (the editor's terminal or ssh
	// session closed) is a request to stop, like SIGTERM; a second one
	// does not wait (shutdownOnSignal).
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	defer startProfiles(stderr)()
	ctx, stop := shutdownOnSignal(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	// After the commands are ended: the sandbox's temp dir goes, with
	// what they left in it.
	defer sandbox.RemoveTempDirs()
	// Last of all, after the session is closed: end what the commands gopi
	// ran left running in the background, so no child outlives gopi.
	defer tools.StopStarted(time.Second)
	// And no snapshot index kept in a temporary folder (when the agent
	// directory cannot keep it) outlives gopi either.
	defer checkpoint.RemoveTemporaryIndexes()

	app, err := setup(ctx, a, stderr)
	var usage usageError
	if errors.As(err, &usage) {
		fmt.Fprintln(stderr, "gopi:", err)
		fmt.Fprintln(stderr, "Run gopi --help for usage.")
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "gopi:", err)
		return 1
	}
	defer func() {
		// close may find the session file still missing entries (a full
		// disk): then gopi must not report success.
		app.close()
		if code == 0 {
			code = app.exitCode
		}
	}()

	if a.listModels {
		return app.listModels(stdout, a.listPattern)
	}
	mode := a.mode
	if mode == "" {
		mode = "print"
	}
	if a.print {
		mode = "print"
	}
	switch mode {
	case "rpc", "jsonrpc":
		err = app.runRPC(ctx, a, stdin, stdout)
	case "acp":
		err = app.runACP(ctx, a, stdin, stdout)
	case "json":
		err = app.runJSON(ctx, a, stdin, stdout)
	default:
		err = app.runPrint(ctx, a, stdin, stdout)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return 0
		}
		fmt.Fprintln(stderr, "gopi:", err)
		return 1
	}
	return app.exitCode
}

// piCommands are the first words pi takes as a command, not a prompt.
// (gopi has pi's mcp command: runMCPCommand.)
var piCommands = []string{"install", "remove", "uninstall", "update", "list", "config", "auth"}

// truthyEnv is pi's reading of a flag variable: 1, true or yes.
func truthyEnv(v string) bool {
	switch strings.ToLower(v) {
	case "1", "true", "yes":
		return true
	}
	return false
}
