// API keys the user gives the extension live in VS Code's SecretStorage
// (the system keychain where there is one), never in settings. Each
// gopi the extension starts gets them in its environment; a key set in
// the environment VS Code started with, or in gopi.env, wins over them.
import * as vscode from "vscode";

/** The providers a key can be added for, and the variable gopi reads it from. */
export const keyProviders = [
	{ label: "Anthropic", env: "ANTHROPIC_API_KEY", hint: "sk-ant-…" },
	{ label: "OpenAI", env: "OPENAI_API_KEY", hint: "sk-…" },
	{ label: "Google Gemini", env: "GEMINI_API_KEY", hint: "AIza…" },
] as const;

const secretKey = (env: string) => `gopi.apiKey.${env}`;

export class ApiKeys {
	constructor(private readonly secrets: vscode.SecretStorage) {}

	/** The stored keys as environment variables. */
	async env(): Promise<Record<string, string>> {
		const out: Record<string, string> = {};
		for (const p of keyProviders) {
			const v = await this.secrets.get(secretKey(p.env));
			if (v) out[p.env] = v;
		}
		return out;
	}

	/** Which providers have a stored key. */
	async stored(): Promise<string[]> {
		const env = await this.env();
		return keyProviders.filter((p) => env[p.env]).map((p) => p.label);
	}

	/**
	 * Asks for a provider and its key and stores it; true when something
	 * changed (gopi needs a restart to see it). An empty key removes it.
	 */
	async ask(): Promise<boolean> {
		const have = new Set(await this.stored());
		const pick = await vscode.window.showQuickPick(
			keyProviders.map((p) => ({ label: p.label, description: have.has(p.label) ? "a key is stored" : p.env, provider: p })),
			{ title: "gopi: add an API key", placeHolder: "The provider the key is for" },
		);
		if (!pick) return false;
		const key = await vscode.window.showInputBox({
			title: `gopi: ${pick.provider.label} API key`,
			prompt: "Kept in VS Code's secret storage and given to gopi in its environment; never written to settings. Empty removes it.",
			placeHolder: pick.provider.hint,
			password: true,
			ignoreFocusOut: true,
		});
		if (key === undefined) return false;
		if (key.trim()) await this.secrets.store(secretKey(pick.provider.env), key.trim());
		else await this.secrets.delete(secretKey(pick.provider.env));
		return true;
	}
}
