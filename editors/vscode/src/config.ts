// Settings changes take effect without a manual restart: the model and
// thinking level apply to the running gopi at once; gopi.approval and
// gopi.sandbox, which decide whether gopi asks before it acts and where
// the model's commands may write, restart gopi by themselves (at
// once when it is idle, else as soon as its run ends, with a way to stop
// the run now); what else shapes how gopi starts (its binary, arguments,
// environment) needs a new process, which the user is offered.
import * as vscode from "vscode";
import type { Manager } from "./extension";
import type { GopiClient } from "./client";
import type { SetModelParams, ThinkingLevel } from "./gen/protocol";

/** Settings that decide what gopi may do without asking: a change restarts gopi by itself. */
export const guardSettings = ["gopi.approval", "gopi.sandbox"];

/** A guard setting's subject and value, as the restart's message says them ("approval", "writes"). */
function guardText(key: string, c: vscode.WorkspaceConfiguration): [string, string] {
	if (key === "gopi.approval") return ["approval", c.get<string>("approval", "writes")];
	const mode = c.get<string>("sandbox", "default");
	return ["the sandbox", mode === "default" ? "gopi's default" : mode];
}

/** Settings read when gopi starts: a change needs a restart, which the user is offered. */
export const restartSettings = ["gopi.path", "gopi.args", "gopi.env"];

export function watchSettings(m: Manager): vscode.Disposable {
	return vscode.workspace.onDidChangeConfiguration(async (e) => {
		const sessions = await m.sessions();
		if (!sessions.length) return;
		const c = vscode.workspace.getConfiguration("gopi");
		if (e.affectsConfiguration("gopi.model") || e.affectsConfiguration("gopi.provider")) {
			const model = c.get<string>("model", "");
			const provider = c.get<string>("provider", "");
			if (model) {
				for (const s of sessions) {
					if (!s.client.running) continue;
					try {
						await s.client.request("set_model", await modelParams(s.client, model, provider));
						void s.refreshStatus();
					} catch (err) {
						void vscode.window.showErrorMessage(`gopi: the model setting could not be applied: ${(err as Error).message}`);
					}
				}
			}
		}
		if (e.affectsConfiguration("gopi.thinkingLevel")) {
			// The setting's enum is gopi's levels, and "".
			const level = c.get<ThinkingLevel | "">("thinkingLevel", "");
			if (level) {
				for (const s of sessions) {
					if (!s.client.running) continue;
					try {
						await s.client.request("set_thinking_level", { level });
						void s.refreshStatus();
					} catch (err) {
						void vscode.window.showErrorMessage(`gopi: the thinking level could not be applied: ${(err as Error).message}`);
					}
				}
			}
		}
		// Approval and the sandbox decide what gopi may do unasked: a change
		// restarts gopi by itself.
		const guards = guardSettings.filter((k) => e.affectsConfiguration(k));
		if (guards.length) {
			const said = (verb: string) =>
				guards
					.map((k) => guardText(k, c))
					.map(([subject, value]) => `${subject} ${verb} ${value}`)
					.join(" and ");
			for (const s of sessions) {
				if (!s.client.running) continue;
				if (!s.streaming) {
					await s.restart();
					void vscode.window.setStatusBarMessage(`gopi: ${said("is")} now`, 5000);
					continue;
				}
				s.afterRun(() => s.restart());
				void vscode.window
					.showWarningMessage(`gopi: ${said("becomes")} when the current run ends; until then it goes on as it started.`, "Stop the Run Now")
					.then((choice) => {
						if (choice === "Stop the Run Now") void s.abort();
					});
			}
		}
		const changed = restartSettings.filter((k) => e.affectsConfiguration(k));
		if (changed.length) {
			const choice = await vscode.window.showInformationMessage(
				`gopi: ${changed.join(", ")} changed. Restart gopi to apply ${changed.length === 1 ? "it" : "them"}; the conversation goes on.`,
				"Restart gopi",
			);
			if (choice === "Restart gopi") {
				for (const s of sessions) await s.restart();
			}
		}
	});
}

/**
 * The set_model params for the model setting: "provider/id", or an id with
 * gopi.provider, name the model directly; a bare id is looked up among the
 * models gopi can use (the current provider's first when several offer it),
 * as `--model` resolves it at start.
 */
export async function modelParams(client: Pick<GopiClient, "request">, model: string, provider: string): Promise<SetModelParams> {
	if (provider) return { provider, modelId: model };
	const slash = model.indexOf("/");
	if (slash > 0) return { provider: model.slice(0, slash), modelId: model.slice(slash + 1) };
	const [{ models }, state] = await Promise.all([client.request("get_available_models"), client.request("get_state")]);
	const found = models.filter((m) => m.id === model);
	if (!found.length) throw new Error(`no available model is named ${model}; write it as provider/id or pick one with gopi: Switch Model`);
	const pick = found.find((m) => m.provider === state.model?.provider) ?? found[0];
	return { provider: pick.provider, modelId: pick.id };
}
