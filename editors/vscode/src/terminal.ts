// TerminalLog finds a terminal's recent output for @terminal. VS Code
// lets an extension read a terminal through shell integration (1.93 and
// later): each command's line and its output, as it runs. Where that
// stream stays empty (VS Code for the browser sends it no data), the
// terminal's buffer is read the way a user would copy it: select all, copy,
// and the user's clipboard put back as it was.
import * as vscode from "vscode";

/** The shell integration API of VS Code 1.93, which this extension's minimum (1.85) types do not have. */
interface ShellExecution {
	commandLine?: { value: string };
	read(): AsyncIterable<string>;
}
interface ShellExecutionEvent {
	terminal: vscode.Terminal;
	execution: ShellExecution;
}
type ShellWindow = { onDidStartTerminalShellExecution?: vscode.Event<ShellExecutionEvent> };

/** Lines kept per terminal. */
export const keptLines = 200;

const ansi = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;

export class TerminalLog implements vscode.Disposable {
	private readonly logs = new Map<vscode.Terminal, string[]>();
	private readonly subs: vscode.Disposable[] = [];
	/** Whether this VS Code can read terminals at all. */
	readonly supported: boolean;

	constructor() {
		const start = (vscode.window as unknown as ShellWindow).onDidStartTerminalShellExecution;
		this.supported = typeof start === "function";
		if (start) this.subs.push(start((e) => void this.follow(e)));
		this.subs.push(vscode.window.onDidCloseTerminal?.((t) => this.logs.delete(t)) ?? { dispose() {} });
	}

	private async follow(e: ShellExecutionEvent): Promise<void> {
		const lines = this.logs.get(e.terminal) ?? [];
		this.logs.set(e.terminal, lines);
		const cmd = e.execution.commandLine?.value;
		if (cmd) this.push(lines, [`$ ${cmd}`]);
		let partial = "";
		try {
			for await (const chunk of e.execution.read()) {
				const text = partial + chunk.replace(ansi, "").replace(/\r\n/g, "\n");
				const parts = text.split("\n");
				partial = parts.pop() ?? "";
				this.push(lines, parts.map((l) => l.replace(/^.*\r(?!$)/, "").replace(/\r$/, "")));
			}
		} catch {
			// The terminal closed while its command ran.
		}
		if (partial) this.push(lines, [partial]);
	}

	private push(lines: string[], add: string[]): void {
		lines.push(...add);
		if (lines.length > keptLines) lines.splice(0, lines.length - keptLines);
	}

	/** What shell integration streamed of t's commands: their lines, and their output where VS Code sent it. */
	streamed(t: vscode.Terminal): string {
		return (this.logs.get(t) ?? []).join("\n").trimEnd();
	}

	/**
	 * The terminal's recent output: what shell integration streamed when it
	 * holds more than command lines, else the last lines of its buffer.
	 */
	async recent(t: vscode.Terminal): Promise<string> {
		const lines = this.logs.get(t) ?? [];
		if (lines.some((l) => !l.startsWith("$ "))) return this.streamed(t);
		const copied = await copyBuffer(t);
		if (!copied) return this.streamed(t);
		const all = copied.replace(ansi, "").replace(/\r\n/g, "\n").trimEnd().split("\n");
		return all.slice(-keptLines).join("\n");
	}

	dispose(): void {
		for (const s of this.subs) s.dispose();
		this.subs.length = 0;
		this.logs.clear();
	}
}

/** t's buffer as text, through the terminal's own Select All and Copy; the clipboard is restored. */
async function copyBuffer(t: vscode.Terminal): Promise<string> {
	const saved = await vscode.env.clipboard.readText();
	try {
		t.show(true);
		await vscode.commands.executeCommand("workbench.action.terminal.selectAll");
		await vscode.commands.executeCommand("workbench.action.terminal.copySelection");
		await vscode.commands.executeCommand("workbench.action.terminal.clearSelection");
		const text = await vscode.env.clipboard.readText();
		return text === saved ? "" : text;
	} catch {
		return "";
	} finally {
		await vscode.env.clipboard.writeText(saved);
	}
}
