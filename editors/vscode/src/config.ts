// Settings changes take effect without a manual restart: the model and
// thinking level apply to the running gopi at once; gopi.approval, which
// decides whether gopi asks before it acts, restarts gopi by itself (at
// once when it is idle, else as soon as its run ends, with a way to stop
// the run now); what else shapes how gopi starts (its binary, arguments,
// environment) needs a new process, which the user is offered.
import * as vscode from "vscode";
import type { Manager } from "./extension";
import type { SetModelParams, ThinkingLevel } from "./gen/protocol";

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
						const modelId = model.includes("/") && !provider ? model.slice(model.indexOf("/") + 1) : model;
						const prov = provider || (model.includes("/") ? model.slice(0, model.indexOf("/")) : "");
						// Without a provider gopi answers that one is required: the error below says so.
						await s.client.request("set_model", prov ? { provider: prov, modelId } : ({ modelId } as SetModelParams));
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
		if (e.affectsConfiguration("gopi.approval")) {
			const mode = c.get<string>("approval", "writes");
			for (const s of sessions) {
				if (!s.client.running) continue;
				if (!s.streaming) {
					await s.restart();
					void vscode.window.setStatusBarMessage(`gopi: approval is ${mode} now`, 5000);
					continue;
				}
				s.afterRun(() => s.restart());
				void vscode.window
					.showWarningMessage(
						`gopi: approval becomes ${mode} when the current run ends; until then it goes on as it started.`,
						"Stop the Run Now",
					)
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
