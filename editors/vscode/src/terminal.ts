// TerminalLog keeps each terminal's recent output for @terminal. VS Code
// lets an extension read a terminal only through shell integration (1.93
// and later): each command's line and its output, as it runs. On an older
// VS Code, or a shell without integration, nothing is kept and @terminal
// says so.
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

	/** The terminal's recent output, or "" when none was read. */
	recent(t: vscode.Terminal): string {
		return (this.logs.get(t) ?? []).join("\n").trimEnd();
	}

	dispose(): void {
		for (const s of this.subs) s.dispose();
		this.logs.clear();
	}
}
